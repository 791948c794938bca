package mysql

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// MariaDB's errors, wrapped as this package wraps them, fall into
// pgbench's classes by error number; lock wait timeouts and other errors
// into neither.
func TestFailClass(t *testing.T) {
	my := func(n uint16, state string) error {
		e := &mysql.MySQLError{Number: n, Message: "x"}
		copy(e.SQLState[:], state)
		return e
	}
	wrap := func(err error) error {
		return fmt.Errorf("script s.sql command 2: %w", &db.OpError{DB: "mysql", Op: "exec", Err: err, Kind: workload.ErrRetry})
	}
	cases := []struct {
		name string
		err  error
		want workload.FailClass
	}{
		{"deadlock (SQLSTATE 40001)", wrap(my(1213, "40001")), workload.FailDeadlock},
		{"snapshot conflict", wrap(my(1020, "HY000")), workload.FailSerialization},
		{"lock wait timeout", wrap(my(1205, "HY000")), workload.FailOther},
		{"plain error", errors.New("connection refused"), workload.FailOther},
	}
	var d db.FailClasser = &DB{}
	for _, c := range cases {
		if got := d.FailClass(c.err); got != c.want {
			t.Errorf("%s: class %d, want %d", c.name, got, c.want)
		}
	}
}
