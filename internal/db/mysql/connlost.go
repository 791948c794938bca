package mysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/go-sql-driver/mysql"

	"github.com/sledge-bench/sledge/internal/workload"
)

// A lost connection (docs/reliability.md): the server restarted or shut
// down, killed the session (KILL), or the network dropped the socket.
// kind marks such errors workload.ErrConnLost (and wrap keeps them so
// rather than turning them into a "cannot reach" line), and the session
// reports itself Broken once the driver has given up on its connection,
// so that the engine reconnects at once.

// Error numbers of a connection that is gone.
const (
	erServerShutdown   = 1053 // ER_SERVER_SHUTDOWN: "Server shutdown in progress"
	erConnectionKilled = 1927 // ER_CONNECTION_KILLED (MariaDB): KILL of this session
	crServerGone       = 2006 // CR_SERVER_GONE_ERROR (client libraries)
	crServerLost       = 2013 // CR_SERVER_LOST (client libraries)
	erClientTimeout    = 4031 // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8): wait_timeout ran out
)

// lostConnection reports whether err means the session's connection is
// gone. A cancelled statement or a timeout is not: the server may still be
// there (the driver closes the connection after one, which Broken tells).
func lostConnection(err error) bool {
	if err == nil {
		return false
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case erServerShutdown, erConnectionKilled, crServerGone, crServerLost, erClientTimeout:
			return true
		}
		return false
	}
	if errors.Is(err, sqldriver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED) {
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) && !ne.Timeout()
}

// Broken reports whether the session's connection is unusable: database/sql
// closed it after the driver said it was bad, or the driver closed it
// after a failed read or write.
func (c *conn) Broken() bool { return !sessionUsable(c.c) }

// sessionUsable asks database/sql and the driver whether sc can still be
// used. It does not touch the network.
func sessionUsable(sc *sql.Conn) bool {
	if sc == nil {
		return false
	}
	err := sc.Raw(func(dc any) error {
		if v, ok := dc.(sqldriver.Validator); ok && !v.IsValid() {
			return sqldriver.ErrBadConn // database/sql then closes sc
		}
		return nil
	})
	return err == nil
}

var _ workload.Breakable = (*conn)(nil)

// The driver logs what it also returns ("packets.go:58 unexpected EOF"
// when the server goes away) on the process's stderr. sledge classifies
// and counts every error it returns (a lost connection is reconnected and
// counted in conn_lost), so those lines would only interleave with the
// progress output and the job's log.
func init() { _ = mysql.SetLogger(quietLogger{}) }

type quietLogger struct{}

func (quietLogger) Print(...any) {}
