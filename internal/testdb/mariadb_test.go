package testdb

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

func TestStartMariaDB(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := StartMariaDB(ctx)
	srv = Need(t, srv, err)
	defer func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	}()
	if srv.Kind != "mariadb" || srv.Version == "" || srv.Port == 0 || srv.Socket == "" {
		t.Fatalf("incomplete server: %+v", srv)
	}
	for _, tc := range []struct{ net, addr string }{
		{"tcp", srv.Host + ":" + strconv.Itoa(srv.Port)},
		{"unix", srv.Socket},
	} {
		t.Run(tc.net, func(t *testing.T) {
			c := mysql.NewConfig()
			c.User, c.Passwd, c.Net, c.Addr = srv.User, srv.Password, tc.net, tc.addr
			db, err := sql.Open("mysql", c.FormatDSN())
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var one int
			if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("SELECT 1 over %s: %v", tc.net, err)
			}
			// Without the password the server must refuse.
			c.Passwd = ""
			bad, _ := sql.Open("mysql", c.FormatDSN())
			defer bad.Close()
			if err := bad.PingContext(ctx); err == nil {
				t.Fatalf("root without password accepted over %s", tc.net)
			}
		})
	}
}

// A bootstrap that fails says why in the error: the server's own [ERROR]
// lines and the free space, not mariadb-install-db's generic help text
// (a CI run once showed only that). Both attempts are made.
func TestInstallMariaDBNamesTheError(t *testing.T) {
	installDB := lookPath("mariadb-install-db", "mysql_install_db")
	if installDB == "" || lookPath("mariadbd", "mysqld") == "" {
		Need(t, nil, ErrUnavailable)
	}
	data := filepath.Join(t.TempDir(), "data")
	args := []string{"--no-defaults", "--datadir=" + data, "--skip-test-db", "--innodb-no-such-option=1"}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	err := installMariaDB(context.Background(), installDB, data, args)
	if err == nil {
		t.Fatal("install with an unknown option succeeded")
	}
	for _, want := range []string{"attempt 2 of 2", "[ERROR]", "innodb-no-such-option", "MiB free"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "downloads.mariadb.org") {
		t.Errorf("error shows the generic help text instead of the cause: %v", err)
	}
}

func TestInstallErrors(t *testing.T) {
	for _, tc := range []struct{ name, out, want string }{
		{"error lines", "Installing\n2026 0 [ERROR] unknown variable 'x=1'\n2026 0 [ERROR] Aborting\n\nhelp text\nmore help", "2026 0 [ERROR] unknown variable 'x=1' | 2026 0 [ERROR] Aborting"},
		{"no error lines", "a\nb\nc\nd\ne\nf\ng", "c | d | e | f | g"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := installErrors([]byte(tc.out)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
