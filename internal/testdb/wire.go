package testdb

import (
	"context"
	"errors"
	"fmt"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/tpcc"
)

// Exchange is one transaction run on a counted session: what the wire
// counter saw, and what the workload asked of the Conn.
type Exchange struct {
	Wire metrics.Wire
	// Calls is the statements the workload sent (Exec, QueryRow, Query),
	// plus two per InTx (BEGIN, and COMMIT or ROLLBACK).
	Calls int64
	// FirstUses is how many of those statements the session had not run
	// before: a prepared statement costs one more round trip the first time.
	FirstUses  int64
	RolledBack bool // the workload's own rollback (ErrUserAbort)
}

// NewOrders runs n TPC-C New-Orders (terminal of VU 0 of 1, seed) in mode
// m on one virtual-user session of d opened with a wire counter, as the
// engine opens it, and returns what each cost. The schema must be built.
func NewOrders(ctx context.Context, d db.DB, m workload.Mode, seed uint64, n int) ([]Exchange, error) {
	ctl, err := d.Connect(ctx, "tpcc", m)
	if err != nil {
		return nil, err
	}
	defer ctl.Close(ctx)
	w := tpcc.New(tpcc.Config{Warehouses: 1, Seed: seed})
	if err := w.Attach(ctx, ctl); err != nil {
		return nil, fmt.Errorf("attach: %w", err)
	}
	wire := new(metrics.WireCounts)
	c, err := d.Connect(metrics.WithWire(ctx, wire), "tpcc", m)
	if err != nil {
		return nil, err
	}
	defer c.Close(ctx)
	if wd, ok := c.(metrics.Wired); !ok || wd.Wire() != wire {
		return nil, errors.New("the session does not count its traffic into the context's counter")
	}
	cc := &callCounter{Conn: c, seen: map[string]bool{}}
	term := w.NewTerminal(0, 1, seed)
	var out []Exchange
	for len(out) < n {
		tx := term.Next()
		if w.Mix()[tx.Kind()].Name != "neword" {
			continue
		}
		cc.calls, cc.first = 0, 0
		before := wire.Load()
		err := tx.Run(ctx, cc)
		if err != nil && !errors.Is(err, workload.ErrUserAbort) {
			return nil, err
		}
		out = append(out, Exchange{Wire: wire.Load().Sub(before), Calls: cc.calls, FirstUses: cc.first, RolledBack: err != nil})
	}
	return out, nil
}

// callCounter counts what a transaction asks of its Conn.
type callCounter struct {
	workload.Conn
	calls, first int64
	seen         map[string]bool
}

// Unwrap lets a workload find the session's own interfaces behind the
// counter (workload.AsGrouper): in pipeline mode the groups are not
// counted as calls.
func (c *callCounter) Unwrap() workload.Conn { return c.Conn }

func (c *callCounter) count(stmt string) {
	c.calls++
	if !c.seen[stmt] {
		c.seen[stmt] = true
		c.first++
	}
}

func (c *callCounter) Exec(ctx context.Context, stmt string, args ...any) (int64, error) {
	c.count(stmt)
	return c.Conn.Exec(ctx, stmt, args...)
}

func (c *callCounter) QueryRow(ctx context.Context, stmt string, args ...any) workload.Row {
	c.count(stmt)
	return c.Conn.QueryRow(ctx, stmt, args...)
}

func (c *callCounter) Query(ctx context.Context, stmt string, args ...any) (workload.Rows, error) {
	c.count(stmt)
	return c.Conn.Query(ctx, stmt, args...)
}

func (c *callCounter) InTx(ctx context.Context, opts workload.TxOptions, fn func(ctx context.Context) error) error {
	c.calls += 2
	return c.Conn.InTx(ctx, opts, fn)
}
