package testdb

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestStartPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := StartPostgres(ctx)
	srv = Need(t, srv, err)
	defer func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
	}()
	if srv.Version == "" || srv.Port == 0 || srv.Socket == "" {
		t.Fatalf("incomplete server: %+v", srv)
	}
	urls := map[string]string{
		"tcp":  fmt.Sprintf("postgres://%s:%s@%s:%d/postgres", srv.User, srv.Password, srv.Host, srv.Port),
		"unix": fmt.Sprintf("postgres://%s:%s@/postgres?host=%s&port=%d", srv.User, srv.Password, url.QueryEscape(srv.Socket), srv.Port),
	}
	for name, u := range urls {
		t.Run(name, func(t *testing.T) {
			c, err := pgx.Connect(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			var fsync string
			if err := c.QueryRow(ctx, "SHOW fsync").Scan(&fsync); err != nil {
				t.Fatal(err)
			}
			if fsync != "off" {
				t.Errorf("fsync = %s, want off", fsync)
			}
		})
	}
	// Real authentication: a wrong password is refused.
	bad := fmt.Sprintf("postgres://%s:wrong@%s:%d/postgres", srv.User, srv.Host, srv.Port)
	if c, err := pgx.Connect(ctx, bad); err == nil {
		c.Close(ctx)
		t.Error("wrong password accepted")
	}
}

// A caller's settings override the defaults (benchmarks need more
// connections); the defaults stay what tests get.
func TestStartPostgresWith(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := StartPostgresWith(ctx, "max_connections 300"); err == nil {
		t.Error("a setting without = was accepted")
	}
	for _, c := range []struct {
		settings []string
		want     string
	}{
		{nil, "100"},
		{[]string{"max_connections=250"}, "250"},
	} {
		srv, err := StartPostgresWith(ctx, c.settings...)
		srv = Need(t, srv, err)
		conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s:%d/postgres", srv.User, srv.Password, srv.Host, srv.Port))
		if err != nil {
			_ = srv.Stop()
			t.Fatal(err)
		}
		var got, fsync string
		err = conn.QueryRow(ctx, "SELECT current_setting('max_connections'), current_setting('fsync')").Scan(&got, &fsync)
		conn.Close(ctx)
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want || fsync != "off" {
			t.Errorf("settings %v: max_connections %s, fsync %s; want %s and off", c.settings, got, fsync, c.want)
		}
	}
}
