package engine

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

// StmtStat is one named statement's timing over a run (pgbench -r): every
// execution in every phase, measured by the client from the call to the
// last row read.
type StmtStat struct {
	Name     string
	Count    int64
	Total    time.Duration
	Failures int64
	// Rollbacks are executions that failed on purpose: the statement whose
	// error ended a transaction the workload rolls back itself (TPC-C's 1%
	// of New-Orders with an unused item, raised by the procedure in
	// procedure mode). They are not failures.
	Rollbacks int64
}

// Mean is the average time per execution.
func (s StmtStat) Mean() time.Duration {
	if s.Count == 0 {
		return 0
	}
	return s.Total / time.Duration(s.Count)
}

// timedConn wraps one session's connection and times each named statement
// and each transaction's BEGIN…COMMIT overhead ("begin/commit"). One VU uses
// the session at a time, so the counters need no locks; they are merged
// after the run.
type timedConn struct {
	workload.Conn
	stats map[string]*StmtStat
	// failed is the last statement that failed in the transaction running
	// now: if the transaction ends in the workload's own rollback, that
	// failure was the rollback (settle).
	failed *StmtStat
}

func newTimedConn() *timedConn { return &timedConn{stats: map[string]*StmtStat{}} }

// settle ends a transaction's accounting: when it ended in the workload's
// own rollback, the statement failure that caused it is a rollback.
func (c *timedConn) settle(err error) {
	if c.failed != nil && errors.Is(err, workload.ErrUserAbort) {
		c.failed.Failures--
		c.failed.Rollbacks++
	}
	c.failed = nil
}

func (c *timedConn) record(name string, start time.Time, err error) {
	s := c.stats[name]
	if s == nil {
		s = &StmtStat{Name: name}
		c.stats[name] = s
	}
	// A query that found no row did not fail: the workload decides what
	// that means (TPC-C's unused item is a rollback, not an error).
	if err != nil && !errors.Is(err, workload.ErrNoRows) {
		s.Failures++
		c.failed = s
		return
	}
	s.Count++
	s.Total += time.Since(start)
}

func (c *timedConn) Exec(ctx context.Context, stmt string, args ...any) (int64, error) {
	start := time.Now()
	n, err := c.Conn.Exec(ctx, stmt, args...)
	c.record(stmt, start, err)
	return n, err
}

func (c *timedConn) QueryRow(ctx context.Context, stmt string, args ...any) workload.Row {
	return &timedRow{c: c, name: stmt, start: time.Now(), row: c.Conn.QueryRow(ctx, stmt, args...)}
}

func (c *timedConn) Query(ctx context.Context, stmt string, args ...any) (workload.Rows, error) {
	start := time.Now()
	rs, err := c.Conn.Query(ctx, stmt, args...)
	if err != nil {
		c.record(stmt, start, err)
		return nil, err
	}
	return &timedRows{Rows: rs, c: c, name: stmt, start: start}, nil
}

// The bound statements (workload.StmtConn) are timed as the named ones
// are, and reach the wrapped session's own StmtConn when it has one, so
// per-statement figures do not put a run back on the boxing fallback.
func (c *timedConn) ExecStmt(ctx context.Context, s *workload.Stmt) (int64, error) {
	start := time.Now()
	n, err := workload.ExecStmt(ctx, c.Conn, s)
	c.record(s.Name, start, err)
	return n, err
}

func (c *timedConn) QueryRowStmt(ctx context.Context, s *workload.Stmt) error {
	start := time.Now()
	err := workload.QueryRowStmt(ctx, c.Conn, s)
	c.record(s.Name, start, err)
	return err
}

// QueryStmt's time runs from the call to the end of its last row, as a
// named Query's runs to its Close.
func (c *timedConn) QueryStmt(ctx context.Context, s *workload.Stmt, row func() error) error {
	start := time.Now()
	err := workload.QueryStmt(ctx, c.Conn, s, row)
	c.record(s.Name, start, err)
	return err
}

var _ workload.StmtConn = (*timedConn)(nil)

func (c *timedConn) Unwrap() workload.Conn { return c.Conn }

// Broken passes the wrapped session's answer through (workload.Breakable).
func (c *timedConn) Broken() bool {
	b, ok := c.Conn.(workload.Breakable)
	return ok && b.Broken()
}

type timedRow struct {
	c     *timedConn
	name  string
	start time.Time
	row   workload.Row
}

func (r *timedRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	r.c.record(r.name, r.start, err)
	return err
}

type timedRows struct {
	workload.Rows
	c     *timedConn
	name  string
	start time.Time
	done  bool
}

func (r *timedRows) Close() error {
	err := r.Rows.Close()
	if !r.done {
		r.done = true
		if err == nil {
			err = r.Rows.Err()
		}
		r.c.record(r.name, r.start, err)
	}
	return err
}

func (c *timedConn) mergeInto(m map[string]*StmtStat) {
	for name, s := range c.stats {
		t := m[name]
		if t == nil {
			t = &StmtStat{Name: name}
			m[name] = t
		}
		t.Count += s.Count
		t.Total += s.Total
		t.Failures += s.Failures
		t.Rollbacks += s.Rollbacks
	}
}

func sortStmts(m map[string]*StmtStat) []StmtStat {
	if len(m) == 0 {
		return nil
	}
	out := make([]StmtStat, 0, len(m))
	for _, s := range m {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
