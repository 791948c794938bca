package runner

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/workload"
)

// The drivers' errors, wrapped as the database packages wrap them, fall
// into pgbench's classes by SQLSTATE (PostgreSQL) or error number
// (MariaDB); lock timeouts and other errors into neither.
func TestFailClass(t *testing.T) {
	my := func(n uint16, state string) error {
		e := &mysql.MySQLError{Number: n, Message: "x"}
		copy(e.SQLState[:], state)
		return e
	}
	wrap := func(name string, err error) error {
		return fmt.Errorf("script s.sql command 2: %w", &db.OpError{DB: name, Op: "exec", Err: err, Kind: workload.ErrRetry})
	}
	cases := []struct {
		name string
		err  error
		want engine.FailClass
	}{
		{"postgres serialization", wrap("postgres", &pgconn.PgError{Code: "40001"}), engine.FailSerialization},
		{"postgres deadlock", wrap("postgres", &pgconn.PgError{Code: "40P01"}), engine.FailDeadlock},
		{"postgres lock timeout", wrap("postgres", &pgconn.PgError{Code: "55P03"}), engine.FailOther},
		{"postgres division by zero", wrap("postgres", &pgconn.PgError{Code: "22012"}), engine.FailOther},
		{"mariadb deadlock (SQLSTATE 40001)", wrap("mysql", my(1213, "40001")), engine.FailDeadlock},
		{"mariadb snapshot conflict", wrap("mysql", my(1020, "HY000")), engine.FailSerialization},
		{"mariadb lock wait timeout", wrap("mysql", my(1205, "HY000")), engine.FailOther},
		{"plain error", errors.New("connection refused"), engine.FailOther},
	}
	for _, c := range cases {
		if got := FailClass(c.err); got != c.want {
			t.Errorf("%s: class %d, want %d", c.name, got, c.want)
		}
	}
}
