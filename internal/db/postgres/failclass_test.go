package postgres

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// PostgreSQL's errors, wrapped as this package wraps them, fall into
// pgbench's classes by SQLSTATE; lock timeouts and other errors into
// neither.
func TestFailClass(t *testing.T) {
	wrap := func(err error) error {
		return fmt.Errorf("script s.sql command 2: %w", &db.OpError{DB: "postgres", Op: "exec", Err: err, Kind: workload.ErrRetry})
	}
	cases := []struct {
		name string
		err  error
		want workload.FailClass
	}{
		{"serialization", wrap(&pgconn.PgError{Code: "40001"}), workload.FailSerialization},
		{"deadlock", wrap(&pgconn.PgError{Code: "40P01"}), workload.FailDeadlock},
		{"lock timeout", wrap(&pgconn.PgError{Code: "55P03"}), workload.FailOther},
		{"division by zero", wrap(&pgconn.PgError{Code: "22012"}), workload.FailOther},
		{"plain error", errors.New("connection refused"), workload.FailOther},
	}
	var d db.FailClasser = &DB{}
	for _, c := range cases {
		if got := d.FailClass(c.err); got != c.want {
			t.Errorf("%s: class %d, want %d", c.name, got, c.want)
		}
	}
}
