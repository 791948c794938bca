package tpcb_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/tpcb"
	"github.com/sledge-bench/sledge/internal/workload/tpcc"
)

// memConn is a session that answers every bound statement from memory: a
// workload.StmtConn that allocates nothing itself, so that what a
// transaction allocates through it is the workload's own (issue 26). It
// is not a database: it does not check the SQL, only the contract's types.
type memConn struct {
	mode  workload.Mode
	calls int
	bad   []string // destinations that allocate on the hot path
}

var _ workload.StmtConn = (*memConn)(nil)

func (m *memConn) Mode() workload.Mode { return m.mode }
func (m *memConn) Exec(context.Context, string, ...any) (int64, error) {
	m.bad = append(m.bad, "Exec: an unbound statement")
	return 1, nil
}
func (m *memConn) QueryRow(_ context.Context, stmt string, _ ...any) workload.Row {
	m.bad = append(m.bad, "QueryRow: an unbound statement "+stmt)
	return nil
}
func (m *memConn) Query(_ context.Context, stmt string, _ ...any) (workload.Rows, error) {
	m.bad = append(m.bad, "Query: an unbound statement "+stmt)
	return nil, nil
}
func (m *memConn) InTx(ctx context.Context, _ workload.TxOptions, fn func(context.Context) error) error {
	return fn(ctx)
}
func (m *memConn) Close(context.Context) error { return nil }

func (m *memConn) ExecStmt(_ context.Context, s *workload.Stmt) (int64, error) {
	m.args(s)
	return 1, nil // delivery.delete must take exactly one row
}

func (m *memConn) QueryRowStmt(_ context.Context, s *workload.Stmt) error {
	m.args(s)
	m.fill(s)
	return nil
}

func (m *memConn) QueryStmt(_ context.Context, s *workload.Stmt, row func() error) error {
	m.args(s)
	for range 2 {
		m.fill(s)
		if err := row(); err != nil {
			return err
		}
	}
	return nil
}

// args checks the argument types of the contract.
func (m *memConn) args(s *workload.Stmt) {
	for i, a := range s.Args {
		switch a.(type) {
		case *int64, *float64, *string, *[]byte, *bool, *workload.NullInt64:
		default:
			m.bad = append(m.bad, fmt.Sprintf("%s: argument %d is a %T", s.Name, i+1, a))
		}
	}
}

// fill writes plausible values: counts and ids 3, c_credit (and every other
// text) "BC" and "GC" in turn, so that Payment takes both of its paths.
func (m *memConn) fill(s *workload.Stmt) {
	m.calls++
	text := "GC"
	if m.calls%2 == 0 {
		text = "BC"
	}
	for i, d := range s.Dest {
		switch p := d.(type) {
		case *int64:
			*p = 3
		case *float64:
			*p = 12.34
		case *[]byte:
			*p = append((*p)[:0], text...)
		case *bool:
			*p = true
		case *workload.NullInt64:
			*p = workload.NullInt64{V: 3, Valid: true}
		default: // *string and *any allocate
			m.bad = append(m.bad, fmt.Sprintf("%s: destination %d is a %T", s.Name, i+1, d))
		}
	}
}

// TestNoAllocsPerTransaction: drawing a transaction and running it
// allocates nothing on the workload's side in procedure, block, prepared
// and client modes (issue 26), for every builtin of tpcb and every
// transaction of TPC-C (New-Order's 1% rollback aside: the fake knows every
// item, and an error's wrapping may allocate).
func TestNoAllocsPerTransaction(t *testing.T) {
	const perRun = 2000
	workloads := []struct {
		name string
		term func() workload.Terminal
	}{
		{"tpcb", func() workload.Terminal {
			w := tpcb.New(tpcb.Config{Scale: 2, Builtins: []tpcb.Weighted{{Builtin: tpcb.TPCBLike, Weight: 2}, {Builtin: tpcb.SimpleUpdate, Weight: 1}, {Builtin: tpcb.SelectOnly, Weight: 1}}})
			return w.NewTerminal(0, 1, 1)
		}},
		{"tpcc", func() workload.Terminal {
			w := tpcc.New(tpcc.Config{Warehouses: 4, Seed: 1})
			return w.NewTerminal(0, 1, 1)
		}},
	}
	ctx := context.Background()
	for _, wl := range workloads {
		for _, m := range []workload.Mode{workload.ModeProcedure, workload.ModeBlock, workload.ModePrepared, workload.ModeClient} {
			t.Run(wl.name+"/"+m.String(), func(t *testing.T) {
				c := &memConn{mode: m}
				term := wl.term()
				txs := func() {
					for range perRun {
						if err := term.Next().Run(ctx, c); err != nil {
							t.Fatal(err)
						}
					}
				}
				txs() // warm: buffers grown to their largest
				for _, b := range c.bad {
					t.Error(b)
				}
				if n := testing.AllocsPerRun(3, txs); n != 0 {
					t.Errorf("%.0f allocations in %d transactions, want 0", n, perRun)
				}
			})
		}
	}
}
