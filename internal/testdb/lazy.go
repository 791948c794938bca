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

// NewLazy is a Lazy over start (StartPostgres, StartMariaDB).
func NewLazy(start func(context.Context) (*Server, error)) *Lazy { return &Lazy{start: start} }

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

// Stop stops the server if one was started.
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
