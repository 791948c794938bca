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
