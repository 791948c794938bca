package testdb

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// Lazy starts a private server the first time a test of the package asks
// for it, and stops it when TestMain calls Stop: packages whose tests need
// a server only sometimes do not pay for it otherwise.
type Lazy struct {
	start func(context.Context) (*Server, error)
	once  sync.Once
	srv   *Server
	err   error
}

// NewLazy is a Lazy over start (StartPostgres, StartMariaDB): a server of
// the package's own, for tests that restart it, change its settings or read
// its server-wide counters.
func NewLazy(start func(context.Context) (*Server, error)) *Lazy { return &Lazy{start: start} }

// LazyPostgres is a Lazy PostgreSQL: the run's shared server when `make
// test` names one (SharedPostgresEnv), else a private one. Its tests must
// keep to databases (and roles) named for the package and the process,
// since other packages, and other shards of the same package, use it at
// the same time.
func LazyPostgres() *Lazy { return newShared(SharedPostgresEnv, "postgres", StartPostgres) }

// LazyMariaDB is LazyPostgres for MariaDB (SharedMariaDBEnv). MariaDB's
// transaction counters are server-wide: a test that asserts the database's
// TPM must use NewLazy(StartMariaDB).
func LazyMariaDB() *Lazy { return newShared(SharedMariaDBEnv, "mariadb", StartMariaDB) }

func newShared(env, kind string, start func(context.Context) (*Server, error)) *Lazy {
	return &Lazy{start: func(ctx context.Context) (*Server, error) {
		if s, err := sharedFrom(env, kind); s != nil || err != nil {
			return s, err
		}
		return start(ctx)
	}}
}

// Get returns the server, starting it once (bounded to 3 minutes); a
// server that could not start ends the test as Need does.
func (l *Lazy) Get(t testing.TB) *Server {
	t.Helper()
	l.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		l.srv, l.err = l.start(ctx)
	})
	return Need(t, l.srv, l.err)
}

// Started is the server if one was started, else nil.
func (l *Lazy) Started() *Server { return l.srv }

// Stop stops the server if one was started (a shared one keeps running).
func (l *Lazy) Stop() error { return l.srv.Stop() }

// Main runs a test package's tests (TestMain's body), then stops the
// servers the tests started; a server that fails to stop fails the run.
func Main(m *testing.M, servers ...*Lazy) {
	code := m.Run()
	for _, l := range servers {
		if err := l.Stop(); err != nil && code == 0 {
			fmt.Fprintln(os.Stderr, "stop", l.Started().Kind, err)
			code = 1
		}
	}
	os.Exit(code)
}
