package testdb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

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
	// A statement is told apart by its name and number of arguments: in
	// batched mode each repeat count is a statement of its own.
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
	cc := &callCounter{Conn: c, seen: map[stmtArity]bool{}}
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
	seen         map[stmtArity]bool
}

// Unwrap lets a workload find the session's own interfaces behind the
// counter (workload.AsGrouper): in pipeline mode the groups are not
// counted as calls.
func (c *callCounter) Unwrap() workload.Conn { return c.Conn }

type stmtArity struct {
	stmt  string
	nargs int
}

func (c *callCounter) count(stmt string, nargs int) {
	c.calls++
	if k := (stmtArity{stmt, nargs}); !c.seen[k] {
		c.seen[k] = true
		c.first++
	}
}

func (c *callCounter) Exec(ctx context.Context, stmt string, args ...any) (int64, error) {
	c.count(stmt, len(args))
	return c.Conn.Exec(ctx, stmt, args...)
}

func (c *callCounter) QueryRow(ctx context.Context, stmt string, args ...any) workload.Row {
	c.count(stmt, len(args))
	return c.Conn.QueryRow(ctx, stmt, args...)
}

func (c *callCounter) Query(ctx context.Context, stmt string, args ...any) (workload.Rows, error) {
	c.count(stmt, len(args))
	return c.Conn.Query(ctx, stmt, args...)
}

func (c *callCounter) InTx(ctx context.Context, opts workload.TxOptions, fn func(ctx context.Context) error) error {
	c.calls += 2
	return c.Conn.InTx(ctx, opts, fn)
}

// CheckNewOrderRoundTrips asserts the round trips of New-Orders that
// NewOrders ran in mode m, as docs/cost.md gives them: one call in
// procedure mode; in client and prepared modes one per statement plus
// BEGIN and COMMIT (8 + 4 × order lines); in batched mode 10 whatever the
// lines (8 statements, BEGIN, COMMIT), 7 when it rolls back at the unused
// item. Prepared and batched modes prepare a statement the first time a
// session runs it (batched: each number of rows is a statement of its
// own): one more round trip, that time only.
func CheckNewOrderRoundTrips(t testing.TB, m workload.Mode, ex []Exchange) {
	t.Helper()
	checkNewOrderRoundTrips(t, m, ex, m == workload.ModePrepared || m == workload.ModeBatched)
}

// FirstUsePreparer is a database whose sessions in mode m also prepare a
// statement the first time they run it (MariaDB's procedure mode on
// sledge's own wire prepares its CALLs).
type FirstUsePreparer interface {
	PreparesOnFirstUse(m workload.Mode) bool
}

func checkNewOrderRoundTrips(t testing.TB, m workload.Mode, ex []Exchange, prepares bool) {
	t.Helper()
	for i, e := range ex {
		want := e.Calls
		if prepares {
			want += e.FirstUses
		}
		if e.Wire.RoundTrips != want {
			t.Errorf("New-Order %d: %d round trips, want %d (%d calls, %d first uses)", i, e.Wire.RoundTrips, want, e.Calls, e.FirstUses)
		}
		if e.Wire.BytesSent == 0 || e.Wire.BytesReceived == 0 {
			t.Errorf("New-Order %d: no bytes counted: %+v", i, e.Wire)
		}
		switch {
		case m == workload.ModeBatched && e.RolledBack && e.Calls != 7:
			t.Errorf("batched New-Order %d rolled back after %d statements, want 7", i, e.Calls)
		case m == workload.ModeBatched && !e.RolledBack && e.Calls != 10:
			t.Errorf("batched New-Order %d: %d statements, want 10", i, e.Calls)
		case i == 0:
		case m.ProcedureLike() && e.Wire.RoundTrips != 1:
			t.Errorf("%s New-Order %d: %d round trips, want 1", m, i, e.Wire.RoundTrips)
		case (m == workload.ModeClient || m == workload.ModePrepared) && !e.RolledBack && (e.Calls < 28 || e.Calls > 68 || (e.Calls-8)%4 != 0):
			t.Errorf("%s New-Order %d: %d statements, want 8 + 4 × (5..15)", m, i, e.Calls)
		}
	}
}

// TestNewOrderRoundTrips is the round-trip test of every database package:
// six New-Orders in each of modes on a fresh session, and in batched mode
// (when listed) a hundred more, which include a rollback and show that each
// repeat count is prepared once. d must hold a built one-warehouse schema.
func TestNewOrderRoundTrips(t *testing.T, d db.DB, modes []workload.Mode) {
	ctx := context.Background()
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			ex, err := NewOrders(ctx, d, m, 42, 6)
			if err != nil {
				t.Fatal(err)
			}
			fp, ok := d.(FirstUsePreparer)
			checkNewOrderRoundTrips(t, m, ex, m == workload.ModePrepared || m == workload.ModeBatched || (ok && fp.PreparesOnFirstUse(m)))
			t.Logf("%s: %+v", m, ex)
		})
	}
	if !slices.Contains(modes, workload.ModeBatched) {
		return
	}
	t.Run("batched/100", func(t *testing.T) {
		// Seed 7 draws one rollback among its first 100 New-Orders.
		ex, err := NewOrders(ctx, d, workload.ModeBatched, 7, 100)
		if err != nil {
			t.Fatal(err)
		}
		CheckNewOrderRoundTrips(t, workload.ModeBatched, ex)
		var rolledBack, firsts, trips int64
		for _, e := range ex {
			if e.RolledBack {
				rolledBack++
			}
			firsts += e.FirstUses
			trips += e.Wire.RoundTrips
		}
		// 4 statements of one arity, 4 of 1..15 rows.
		if rolledBack == 0 || firsts > 4+4*15 {
			t.Errorf("%d rollbacks (want some), %d first uses (want at most 64)", rolledBack, firsts)
		}
		t.Logf("100 batched New-Orders: %d round trips, %d of them preparing, %d rollbacks", trips, firsts, rolledBack)
	})
}
