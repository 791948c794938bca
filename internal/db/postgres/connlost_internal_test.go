package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sledge-bench/sledge/internal/workload"
)

// Which errors mean the connection is gone: the engine reconnects on
// those (errors.Is(err, workload.ErrConnLost)), and only on those.
func TestLostConnectionKinds(t *testing.T) {
	pg := func(code, severity string) error {
		return &pgconn.PgError{Code: code, Severity: severity, Message: "m"}
	}
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	for _, tt := range []struct {
		name string
		err  error
		want error // the sentinel kind returns
	}{
		{"admin shutdown", pg("57P01", "FATAL"), workload.ErrConnLost},
		{"crash shutdown", pg("57P02", "FATAL"), workload.ErrConnLost},
		{"cannot connect now", pg("57P03", "FATAL"), workload.ErrConnLost},
		{"connection failure", pg("08006", "FATAL"), workload.ErrConnLost},
		{"connection does not exist", pg("08003", "ERROR"), workload.ErrConnLost},
		{"idle session timeout", pg("57P05", "FATAL"), workload.ErrConnLost},
		{"closed by pgx", fmt.Errorf("x: %w", pgconn.ErrConnClosed), workload.ErrConnLost},
		{"unexpected EOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), workload.ErrConnLost},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, workload.ErrConnLost},
		{"broken pipe", &net.OpError{Op: "write", Net: "unix", Err: os.NewSyscallError("write", syscall.EPIPE)}, workload.ErrConnLost},
		{"closed socket", fmt.Errorf("x: %w", net.ErrClosed), workload.ErrConnLost},
		{"serialization", pg(codeSerialization, "ERROR"), workload.ErrRetry},
		{"deadlock", pg(codeDeadlock, "ERROR"), workload.ErrRetry},
		{"lock timeout", pg(codeLockNotAvail, "ERROR"), workload.ErrRetry},
		{"query canceled", pg("57014", "ERROR"), nil},
		{"no table", pg(codeUndefinedTab, "ERROR"), workload.ErrNoSchema},
		{"no rows", pgx.ErrNoRows, workload.ErrNoRows},
		{"deadline", context.DeadlineExceeded, nil},
		{"canceled", context.Canceled, nil},
		{"read timeout", timeout, nil},
		{"other", errors.New("x"), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := kind(tt.err); got != tt.want {
				t.Errorf("kind = %v, want %v", got, tt.want)
			}
			lost := tt.want == workload.ErrConnLost
			if got := errors.Is(wrap("exec", "s", tt.err), workload.ErrConnLost); got != lost {
				t.Errorf("wrapped: ErrConnLost %v, want %v", got, lost)
			}
			if got := errors.Is(classify(tt.err), workload.ErrConnLost); got != lost {
				t.Errorf("classified: ErrConnLost %v, want %v", got, lost)
			}
			if got := errors.Is(scriptKind(tt.err), workload.ErrConnLost); got != lost {
				t.Errorf("scriptKind: ErrConnLost %v, want %v", got, lost)
			}
		})
	}
}
