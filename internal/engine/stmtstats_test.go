package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/sledge-bench/sledge/internal/workload"
)

// stmtSession answers bound statements itself and counts how it was called.
type stmtSession struct {
	fakeConn
	bound int
	fail  error
}

func (s *stmtSession) ExecStmt(context.Context, *workload.Stmt) (int64, error) {
	s.bound++
	return 1, s.fail
}

func (s *stmtSession) QueryRowStmt(context.Context, *workload.Stmt) error {
	s.bound++
	return s.fail
}

func (s *stmtSession) QueryStmt(_ context.Context, _ *workload.Stmt, row func() error) error {
	s.bound++
	if s.fail != nil {
		return s.fail
	}
	return row()
}

// Per-statement timing keeps a session's own StmtConn on the path and
// counts bound statements under their names, failures and missing rows as
// the named calls do.
func TestTimedConnPassesBoundStatements(t *testing.T) {
	for _, c := range []struct {
		name     string
		fail     error
		failures int64
	}{
		{"ok", nil, 0},
		{"no rows", workload.ErrNoRows, 0},
		{"failed", errors.New("boom"), 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &stmtSession{fail: c.fail}
			tc := newTimedConn()
			tc.Conn = s
			st := workload.Bind("x.select", nil)
			ctx := t.Context()
			_, _ = workload.ExecStmt(ctx, tc, st)
			_ = workload.QueryRowStmt(ctx, tc, st)
			_ = workload.QueryStmt(ctx, tc, st, func() error { return nil })
			if s.bound != 3 {
				t.Errorf("the session's StmtConn ran %d of 3 calls", s.bound)
			}
			got := tc.stats["x.select"]
			if got == nil || got.Failures != c.failures || got.Count != 3-c.failures {
				t.Errorf("stats %+v, want %d counted and %d failures", got, 3-c.failures, c.failures)
			}
		})
	}
}
