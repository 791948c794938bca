package db_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/db"
	// The server databases and SQLite; DuckDB's URLs are tested in its
	// package (TestParseURL), which alone links its static library.
	_ "github.com/sledge-bench/sledge/internal/db/mysql"    // mysql:, mariadb:
	_ "github.com/sledge-bench/sledge/internal/db/postgres" // postgres:, postgresql:
	_ "github.com/sledge-bench/sledge/internal/db/sqlite"   // sqlite:, sqlite3:
)

// A URL that cannot name a database is a *db.URLError saying what is wrong,
// and never quotes a password, even one that parses as a port.
func TestParseURLSaysWhatIsWrong(t *testing.T) {
	for _, c := range []struct {
		raw, want, secret string
	}{
		{"postgres://u:pw1@127.0.0.1:99999/x", `bad port "99999": want a number from 1 to 65535`, "pw1"},
		{"postgres://u:pw1@127.0.0.1:0/x", `bad port "0"`, "pw1"},
		{"mysql://root:pw1@127.0.0.1:abc/x", `bad port "abc"`, "pw1"},
		{"postgres://[::1]:65536/x", `bad port "65536"`, ""},
		{"foo://x", `unknown scheme "foo": known schemes are mariadb, mysql, postgres, postgresql, sqlite, sqlite3`, ""},
		{"just-a-path.db", "no scheme", ""},
		{"127.0.0.1:5432/x", "not a URL", ""},
		{"host=h port=5 password=pw1 dbname=x", "a libpq keyword/value string", "pw1"},
		{"root:pw1@tcp(127.0.0.1:3306)/x", "a go-sql-driver DSN", "pw1"},
		// Passwords with an unescaped / or ? parse as host and port.
		{"postgres://u:se/cret99@h/db", "a password with an unescaped", "se/cret99"},
		{"postgres://u:12345/x@h/db", "a password with an unescaped", "12345"},
		{"postgres://u:abc?def@h:5/x", "a password with an unescaped", "abc?def"},
	} {
		_, err := db.ParseURL(c.raw)
		var ue *db.URLError
		if !errors.As(err, &ue) {
			t.Errorf("%s: %v, want a URLError", c.raw, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q does not say %q", c.raw, err, c.want)
		}
		for _, piece := range strings.FieldsFunc(c.secret, func(r rune) bool { return r == '/' || r == '?' }) {
			if len(piece) >= 3 && strings.Contains(err.Error(), piece) {
				t.Errorf("%s: %q shows the password", c.raw, err)
			}
		}
	}
	for _, ok := range []string{"postgres://u:pw@127.0.0.1:5432/x", "mysql://root@/x?socket=/tmp/s", "sqlite:///tmp/x.db", "postgres://u:p%2Fw@h:1/x"} {
		if _, err := db.ParseURL(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// Pasteable leaves the password out and names the variable to put it in.
func TestPasteable(t *testing.T) {
	for _, c := range []struct{ raw, url, env string }{
		{"postgres://u:pw@h:5/x", "postgres://u@h:5/x", "PGPASSWORD"},
		{"mysql://root:pw@h:5/x?tls=false", "mysql://root@h:5/x?tls=false", "MYSQL_PWD"},
		{"postgres://u@h/x?password=pw&sslmode=disable", "postgres://u@h/x?sslmode=disable", "PGPASSWORD"},
		{"postgres://u@h/x", "postgres://u@h/x", ""},
		{"sqlite:///tmp/x.db", "sqlite:///tmp/x.db", ""},
	} {
		u, env := db.Pasteable(c.raw)
		if u != c.url || env != c.env {
			t.Errorf("%s: %q %q, want %q %q", c.raw, u, env, c.url, c.env)
		}
	}
}
