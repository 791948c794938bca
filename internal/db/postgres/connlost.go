package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sledge-bench/sledge/internal/workload"
)

// A lost connection (docs/reliability.md): the server restarted, shut
// down, crashed, or terminated the backend (pg_terminate_backend), or the
// network dropped the socket. kind and scriptKind mark such errors
// workload.ErrConnLost, and the sessions report themselves Broken once
// pgx has closed the connection, so that the engine reconnects at once
// instead of failing every later transaction.

// SQLSTATEs of a connection that is gone or cannot be had.
const (
	classConnException = "08"    // connection_exception: 08000, 08003, 08006, …
	codeAdminShutdown  = "57P01" // admin_shutdown: fast shutdown, pg_terminate_backend
	codeCrashShutdown  = "57P02" // crash_shutdown: another backend crashed
	codeCannotConnect  = "57P03" // cannot_connect_now: starting up, shutting down, recovering
)

// lostConnection reports whether err means the session's connection is
// gone. A timeout or a cancelled context is not: the server may still be
// there (pgx closes the connection after one, which Broken then tells).
func lostConnection(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, classConnException),
			pe.Code == codeAdminShutdown, pe.Code == codeCrashShutdown, pe.Code == codeCannotConnect:
			return true
		}
		// pgconn closes the connection on every FATAL or PANIC error
		// (idle_session_timeout, idle_in_transaction_session_timeout…).
		return pe.Severity == "FATAL" || pe.Severity == "PANIC"
	}
	if errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED) {
		return true
	}
	if pgconn.Timeout(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) && !ne.Timeout()
}

// Broken reports whether pgx (or pgwire, once it has taken the connection
// over) has closed the session's connection (after a FATAL error, a failed
// read or write, or a cancelled statement).
func (c *conn) Broken() bool {
	if c.pw != nil {
		return c.pw.broken
	}
	return c.c.IsClosed()
}

// Broken reports whether the script session's connection is closed.
func (c *scriptConn) Broken() bool {
	if c.pw != nil {
		return c.pw.broken
	}
	return c.pc.IsClosed()
}

var (
	_ workload.Breakable = (*conn)(nil)
	_ workload.Breakable = (*scriptConn)(nil)
)
