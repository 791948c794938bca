// Package testdb starts private, throwaway database servers for tests: each
// with its own data directory under a temporary directory, listening on a
// free loopback port and on a unix socket inside that directory, stopped and
// removed at the end. Never a server someone started by hand.
//
// A test package starts the servers it needs once, in TestMain, and gives
// each test its own database. Outside CI a missing server binary skips the
// tests that need it; in CI (CI set in the environment) it fails them.
package testdb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// Server is a running private server.
type Server struct {
	Kind    string // "postgres" or "mariadb"
	Version string
	Host    string // 127.0.0.1
	Port    int
	Socket  string // unix socket path (PostgreSQL: the directory holding it)
	Dir     string // temporary directory with data, socket and log
	// User and Password of a superuser account usable over TCP and the socket.
	User, Password string
	stop           func() error
	guard          *guard // stops the server if this process ends first (guard.go)

	// Fault injection (faults.go): restart stops and starts the server on
	// the same data directory, port and socket; pid is its main process.
	restart func(ctx context.Context, down time.Duration) error
	pid     func() (int, error)
	faultMu sync.Mutex
	paused  []int // processes stopped by Pause, for Resume
}

// Stop stops the server and removes its directory. A paused server is
// resumed first, so that it can shut down cleanly.
func (s *Server) Stop() error {
	if s == nil || s.stop == nil {
		return nil
	}
	_ = s.Resume()
	err := s.stop()
	s.stop = nil
	if rmErr := os.RemoveAll(s.Dir); err == nil {
		err = rmErr
	}
	if err == nil {
		// Stopped and removed here; one that failed to stop is left to
		// the guard when this process ends.
		s.guard.disarm()
	}
	return err
}

// ErrUnavailable means the server binaries are not installed here.
var ErrUnavailable = errors.New("server not installed")

// InCI reports whether tests run in CI, where servers must not be skipped.
func InCI() bool { return os.Getenv("CI") != "" }

// Need returns srv, or ends the test: skipped when the server could not be
// started because it is not installed (outside CI), failed otherwise.
func Need(t testing.TB, srv *Server, startErr error) *Server {
	t.Helper()
	if startErr == nil && srv != nil {
		return srv
	}
	if errors.Is(startErr, ErrUnavailable) && !InCI() {
		t.Skipf("skipping: %v (run scripts/install-servers.sh as root)", startErr)
	}
	t.Fatalf("private test server: %v", startErr)
	return nil
}

// FreePort asks the kernel for a free loopback TCP port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
