package db_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	// Every scheme with a password to leak; DuckDB's URLs have none, and
	// its static library would add 5 s to each of this package's five
	// links in make test (issue 24).
	_ "github.com/sledge-bench/sledge/internal/db/mysql"    // mysql:, mariadb:
	_ "github.com/sledge-bench/sledge/internal/db/postgres" // postgres:, postgresql:
	_ "github.com/sledge-bench/sledge/internal/db/sqlite"   // sqlite:, sqlite3:
)

// FuzzOpenURL feeds any string to db.Open and db.Redact: neither may
// panic, and neither Redact's result nor Open's error may show the password
// of a URL that has one (user info, or a password/passwd query parameter).
//
// Open must not reach anything outside the test: the server drivers only
// parse at Open (PostgreSQL: pgx.ParseConfig; MariaDB: the driver's DSN
// and a connector; no connection is made until a session is opened), and
// SQLite's Open, which creates the file, gets the URL with its path moved
// into the test's temporary directory (same file name, same query).
func FuzzOpenURL(f *testing.F) {
	for _, s := range []string{
		"postgres://user:s3cret-pw@127.0.0.1:5432/tpcc",
		"postgresql://user:s3cret-pw@/tpcc?host=/var/run/postgresql",
		"postgres://user@127.0.0.1/tpcc?password=s3cret-pw&sslmode=disable",
		"postgres://user:s3cret-pw@127.0.0.1:99999/tpcc",
		"postgres://user:s3cret-pw@127.0.0.1/tpcc?routines=procedures&io=poller",
		"postgres://user:s3cret-pw@127.0.0.1/tpcc?routines=x",
		"postgres://user:s3cret-pw@127.0.0.1/tpcc?io=fast",
		"postgres://user:s3cret-pw@127.0.0.1/tpcc?connect_timeout=x",
		"postgres://user:s3cret-pw@127.0.0.1/tpcc?sslmode=bogus",
		"postgres://us%40er:p%40ss%3Aw%2Frd@[::1]:5432/db",
		"mysql://root:s3cret-pw@127.0.0.1:3306/tpcc",
		"mariadb://root:s3cret-pw@/tpcc?socket=/run/mysqld/mysqld.sock",
		"mysql://root:s3cret-pw@127.0.0.1:3306/tpcc?isolation=bogus",
		"mysql://root:s3cret-pw@127.0.0.1:3306/tpcc?isolation=read-committed&load=insert&timeout=5s",
		"mysql://root:s3cret-pw@127.0.0.1:abc/tpcc",
		"mysql://root:s3cret-pw@127.0.0.1/tp`cc",
		"mysql:opaque",
		"sqlite:///tmp/x.db",
		"sqlite:rel/x.db?journal_mode=WAL&synchronous=NORMAL",
		"sqlite3://./x.db?cache_size=-64000",
		"sqlite:///x.db?journal_mode=bogus",
		"sqlite::memory:",
		"sqlite:///a%3Fb%23c%25d.db",
		"oracle://u:s3cret-pw@h/x",
		"just-a-path.db",
		"",
		"://",
		"postgres://u:s3cret%zz@h/db",
		"postgres://u:pw@h:1/db#frag",
		"postgres://u@127.0.0.1/db?password=s3cret-pw&x=%zz",
		"sqlite:///x.db?password=s3cret-pw&x=%zz",
		"postgres://u@127.0.0.1/db?password=50%off-s3cret",
		"postgres://u@127.0.0.1/db?sslmode=bogus&password=s3cret-pw",
		"postgres: passwd=s3cret-pw",
		"host=127.0.0.1 port=5432 user=u password=s3cret-pw dbname=x",
		"root:s3cret-pw@tcp(127.0.0.1:3306)/tpcc",
		"A:::]:@0::]",           // found by fuzzing: a host followed by ": " looked like the password
		"passwd=tgre",           // found by fuzzing: the hint's "postgres://" holds the password
		"A:# passwd=&000",       // found by fuzzing: a keyword/value password past the '&' a query stops at
		"?pAsswd=     ",         // found by fuzzing: a password of spaces is not told from spacing
		"?pAsswd=;000",          // found by fuzzing: a URL query's value runs past ';' to '&'
		"postgres:?pAsswd=;000", // and so in the bad query an error quotes
	} {
		f.Add(s)
	}
	// The leaks knownLeak names were found here and fixed: they fail like
	// any other, unless SLEDGE_FUZZ_KNOWN_BUGS=skip.
	skipKnown := os.Getenv("SLEDGE_FUZZ_KNOWN_BUGS") == "skip"
	f.Fuzz(func(t *testing.T, raw string) {
		red := db.Redact(raw)
		if leak := leaked(raw, red); leak != "" {
			t.Fatalf("Redact(%q) = %q shows the password %q", raw, red, leak)
		}
		target := raw
		if u, err := url.Parse(raw); err == nil {
			switch strings.ToLower(u.Scheme) {
			case "sqlite", "sqlite3":
				target = sandboxed(t, u)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d, err := db.Open(ctx, target)
		if err != nil {
			msg := err.Error()
			// The redacted URL the message repeats was checked above;
			// what is next to it must not make the password appear
			// either ("A:::]:@0::]": host 0::] then ": " is not a leak
			// of the password "::]:").
			if leak := leaked(target, strings.ReplaceAll(msg, db.Redact(target), "<URL>")); leak != "" && !coincidence(ctx, target, leak, msg) {
				if bug := knownLeak(target, msg); bug != "" && skipKnown {
					t.Skip(bug)
				}
				t.Fatalf("Open(%q) error %q shows the password %q", target, msg, leak)
			}
			return
		}
		if err := d.Close(); err != nil {
			t.Logf("close %q: %v", target, err)
		}
	})
}

// sandboxed is a sqlite URL u with its file moved into a temporary
// directory: the same base name and query, so that names and options are
// still fuzzed, but nothing is created outside the test.
func sandboxed(t *testing.T, u *url.URL) string {
	var p string
	if u.Opaque != "" {
		up, err := url.PathUnescape(u.Opaque)
		if err != nil {
			return u.String() // refused before any file is touched
		}
		p = up
	} else {
		p = u.Host + u.Path
	}
	if p == "" || p == ":memory:" || strings.HasPrefix(p, "file:") {
		return u.String() // refused before any file is touched
	}
	name := filepath.Base(p)
	if name == "." || name == ".." || name == "/" {
		name = "x.db"
	}
	v := *u
	v.Opaque, v.Host, v.RawPath = "", "", ""
	v.Path = filepath.Join(t.TempDir(), name)
	return v.String()
}

// leaked returns a password that raw carries and out shows, or "". A
// password counts only when it is at least 4 characters long, not only
// white space, and appears nowhere else in the URL (a password "db" in
// postgres://u:db@h/db cannot be told from the database name, nor one of
// spaces from the spacing of the text).
func leaked(raw, out string) string {
	pws, texts := passwords(raw)
	for _, pw := range texts {
		// Written as is in a string that is not a URL: elsewhere is
		// anywhere but the one place it was taken from.
		if len(pw) >= 4 && strings.TrimSpace(pw) != "" && !strings.Contains(strings.Replace(raw, pw, "", 1), pw) && strings.Contains(out, pw) {
			return pw
		}
	}
	for _, pw := range pws {
		if len(pw) < 4 || strings.TrimSpace(pw) == "" {
			continue
		}
		if elsewhere(raw, pw) {
			continue
		}
		for _, form := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw), (&url.URL{User: url.UserPassword("", pw)}).String()[3:]} {
			if len(form) >= 4 && strings.Contains(out, form) {
				return pw
			}
		}
	}
	return ""
}

// passwords are the passwords in raw: in a URL, the user info's and the
// values of password/passwd query parameters, parsed, and as written when
// the query does not parse; in text, the passwords of connection strings
// that are not URLs but that users paste: a libpq keyword/value string
// (host=h password=pw) and a go-sql-driver DSN (user:pw@tcp(host:port)/db,
// which parses as scheme "user" and opaque "pw@tcp(…)/db").
func passwords(raw string) (inURL, inText []string) {
	if !strings.Contains(raw, "://") {
		for _, f := range strings.Fields(raw) {
			if k, v, ok := strings.Cut(f, "="); ok && (k == "password" || k == "passwd") {
				inText = append(inText, strings.Trim(v, "'"))
			}
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, inText // Redact masks everything between "//" and "@"
	}
	if u.Opaque != "" && !slices.Contains(db.Schemes(), strings.ToLower(u.Scheme)) {
		if i := strings.LastIndex(u.Opaque, "@"); i > 0 {
			inText = append(inText, u.Opaque[:i])
		}
	}
	var out []string
	if u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			out = append(out, p)
		}
	}
	for _, pair := range strings.Split(u.RawQuery, "&") {
		k, v, _ := strings.Cut(pair, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if !strings.EqualFold(k, "password") && !strings.EqualFold(k, "passwd") {
			continue
		}
		if uv, err := url.QueryUnescape(v); err == nil {
			v = uv
		}
		if v != "" {
			out = append(out, v)
		}
	}
	return out, inText
}

// elsewhere reports whether pw appears in raw outside the places a
// password is kept, i.e. in the URL with the user info's password and the
// password query values taken out.
func elsewhere(raw, pw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return true
	}
	v := *u
	if v.User != nil {
		v.User = url.User(v.User.Username())
	}
	var keep []string
	for _, pair := range strings.Split(v.RawQuery, "&") {
		k, _, _ := strings.Cut(pair, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if strings.EqualFold(k, "password") || strings.EqualFold(k, "passwd") {
			continue
		}
		keep = append(keep, pair)
	}
	v.RawQuery = strings.Join(keep, "&")
	rest := v.String() + " " + raw[:strings.Index(raw, ":")+1]
	for _, form := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw)} {
		if strings.Contains(rest, form) {
			return true
		}
	}
	// Also the decoded pieces: a path or a host may spell it unescaped.
	for _, s := range []string{v.Path, v.Host, v.Opaque, v.Fragment, v.User.String()} {
		if strings.Contains(s, pw) {
			return true
		}
	}
	if q, err := url.ParseQuery(v.RawQuery); err == nil {
		for k, vs := range q {
			if strings.Contains(k, pw) {
				return true
			}
			for _, x := range vs {
				if strings.Contains(x, pw) {
					return true
				}
			}
		}
	}
	return false
}

// knownLeak names the reported bug, not fixed yet, behind a leak of a
// known kind, or "". Remove a kind once it is fixed.
func knownLeak(raw, out string) string {
	if strings.Contains(out, "cannot parse `") && strings.Contains(strings.ToLower(raw), "passwd") && !strings.Contains(raw, "://") {
		return "bug: postgres parseURL: an opaque postgres: URL reaches pgx.ParseConfig as a keyword/value string, whose error quotes it; " +
			"pgx masks password= but not passwd=, and redactErr replaces only the user info's password"
	}
	return ""
}

// coincidence reports whether msg shows pw only because the message's own
// text holds it: the same input with another password of pw's length gives
// a message that shows pw as often.
func coincidence(ctx context.Context, target, pw, msg string) bool {
	other := "Q"
	if strings.Contains(pw, other) {
		other = "z"
	}
	alt := strings.Replace(target, pw, strings.Repeat(other, len(pw)), 1)
	altMsg := ""
	if d, err := db.Open(ctx, alt); err != nil {
		altMsg = err.Error()
	} else {
		_ = d.Close()
	}
	return strings.Count(altMsg, pw) >= strings.Count(msg, pw)
}
