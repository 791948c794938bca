package testdb

import (
	"context"
	"database/sql"
	"strconv"
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
