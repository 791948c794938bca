package tpcb

import (
	"context"
	"fmt"

	"github.com/sledge-bench/sledge/internal/workload"
)

// pipelined runs an update builtin as one group (workload.Grouper): every
// statement's inputs are the drawn variables, so BEGIN, the statements of
// run in the same order, and COMMIT travel together, one round trip.
// Select-only is one statement in every mode (Run).
func (t *txn) pipelined(ctx context.Context, c workload.Conn) error {
	g, ok := workload.AsGrouper(c)
	if !ok {
		return fmt.Errorf("tpcb: --mode pipeline needs a session that sends statements in groups, not %T", c)
	}
	g.Begin(workload.TxOptions{})
	g.Queue(workload.WantNothing, stmtAccountUpdate, t.delta, t.aid)
	sel := g.Queue(workload.WantRows, stmtAccountSelect, t.aid)
	if t.b == TPCBLike {
		g.Queue(workload.WantNothing, stmtTellerUpdate, t.delta, t.tid)
		g.Queue(workload.WantNothing, stmtBranchUpdate, t.delta, t.bid)
	}
	g.Queue(workload.WantNothing, stmtHistoryInsert, t.tid, t.bid, t.aid, t.delta)
	g.Commit()
	if err := g.Send(ctx); err != nil {
		return g.Rollback(ctx, fmt.Errorf("%s: aid=%d bid=%d tid=%d: %w", t.b, t.aid, t.bid, t.tid, err))
	}
	if err := g.Row(sel).Scan(&t.abalance); err != nil {
		// Committed already: the account exists, so this is a read error.
		return fmt.Errorf("%s: select account aid=%d: %w", t.b, t.aid, err)
	}
	return nil
}
