package mysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/sledge-bench/sledge/internal/workload"
)

// Which errors mean the connection is gone: the engine reconnects on
// those (errors.Is(err, workload.ErrConnLost)), and only on those.
func TestLostConnectionKinds(t *testing.T) {
	my := func(n uint16) error { return &mysql.MySQLError{Number: n, Message: "m"} }
	for _, tt := range []struct {
		name string
		err  error
		want error // the sentinel kind returns
	}{
		{"server shutdown", my(1053), workload.ErrConnLost},
		{"connection killed", my(1927), workload.ErrConnLost},
		{"server gone", my(2006), workload.ErrConnLost},
		{"server lost", my(2013), workload.ErrConnLost},
		{"client timeout", my(4031), workload.ErrConnLost},
		{"bad conn", sqldriver.ErrBadConn, workload.ErrConnLost},
		{"invalid conn", mysql.ErrInvalidConn, workload.ErrConnLost},
		{"conn done", sql.ErrConnDone, workload.ErrConnLost},
		{"unexpected EOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), workload.ErrConnLost},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, workload.ErrConnLost},
		{"broken pipe", &net.OpError{Op: "write", Net: "unix", Err: os.NewSyscallError("write", syscall.EPIPE)}, workload.ErrConnLost},
		{"deadlock", my(erLockDeadlock), workload.ErrRetry},
		{"lock wait timeout", my(erLockWaitTimeout), workload.ErrRetry},
		{"query interrupted", my(1317), nil},
		{"no table", my(erNoSuchTable), workload.ErrNoSchema},
		{"no rows", sql.ErrNoRows, workload.ErrNoRows},
		{"deadline", context.DeadlineExceeded, nil},
		{"canceled", context.Canceled, nil},
		{"read timeout", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, nil},
		{"other", errors.New("x"), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := kind(tt.err); got != tt.want {
				t.Errorf("kind = %v, want %v", got, tt.want)
			}
			lost := tt.want == workload.ErrConnLost
			c := &conn{d: &DB{cfg: &config{drv: mysql.NewConfig(), where: "127.0.0.1:3306"}}}
			if got := errors.Is(c.wrap("exec", "s", tt.err), workload.ErrConnLost); got != lost {
				t.Errorf("wrapped: ErrConnLost %v, want %v", got, lost)
			}
			if got := errors.Is(classify(tt.err), workload.ErrConnLost); got != lost {
				t.Errorf("classified: ErrConnLost %v, want %v", got, lost)
			}
		})
	}
}
