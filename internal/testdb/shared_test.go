package testdb

import (
	"context"
	"errors"
	"testing"
)

// A Lazy of LazyPostgres/LazyMariaDB takes the run's shared server when the
// environment names one (its Stop leaves it running, fault injection
// refuses it), starts its own otherwise, and refuses a variable that names
// another kind of server.
func TestLazySharedServer(t *testing.T) {
	pg := &Server{Kind: "postgres", Version: "17", Host: "127.0.0.1", Port: 5999, Socket: "/tmp/x", User: "u", Password: "p"}
	v, err := SharedEnv(pg)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(SharedPostgresEnv, v)
	t.Setenv(SharedMariaDBEnv, v)

	l := LazyPostgres()
	got := l.Get(t)
	if got.Kind != pg.Kind || got.Version != pg.Version || got.Host != pg.Host || got.Port != pg.Port ||
		got.Socket != pg.Socket || got.User != pg.User || got.Password != pg.Password {
		t.Errorf("shared server %+v, want %+v", got, pg)
	}
	if err := l.Stop(); err != nil {
		t.Errorf("stop of a shared server: %v", err)
	}
	if err := got.Restart(context.Background()); err == nil {
		t.Error("a shared server restarted")
	}
	if s, err := sharedFrom(SharedMariaDBEnv, "mariadb"); s != nil || err == nil {
		t.Errorf("a PostgreSQL named as MariaDB: %v, %v", s, err)
	}

	// Unset: the Lazy starts its own.
	t.Setenv(SharedPostgresEnv, "")
	own := errors.New("started")
	l = newShared(SharedPostgresEnv, "postgres", func(context.Context) (*Server, error) { return nil, own })
	l.once.Do(func() { l.srv, l.err = l.start(context.Background()) })
	if !errors.Is(l.err, own) {
		t.Errorf("without the variable: %v, want its own start", l.err)
	}
}
