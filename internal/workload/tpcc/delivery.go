package tpcc

import (
	"context"
	"errors"
	"fmt"

	"github.com/sledge-bench/sledge/internal/workload"
)

// delivery is one Delivery (§2.7) with its inputs. Like HammerDB it runs
// inline, all ten districts in one database transaction (§2.7.4.2 allows
// one or ten), not through a deferred queue.
type delivery struct {
	w, carrier int64
	skipped    int // districts without a new order in the last Run
}

func (t *delivery) Kind() int { return kindDelivery }

// Skipped is the number of districts the last Run skipped because they had
// no undelivered order. §5.4.5 asks to report skips above 1% of Deliveries.
func (t *delivery) Skipped() int { return t.skipped }

// Run runs the transaction: one call in procedure mode, else the §2.7.4.2
// profile for each district inside one database transaction.
func (t *delivery) Run(ctx context.Context, c workload.Conn) error {
	if c.Mode().ProcedureLike() {
		return t.call(ctx, c)
	}
	switch c.Mode() {
	case workload.ModeBatched:
		return c.InTx(ctx, workload.TxOptions{}, func(ctx context.Context) error { return t.batched(ctx, c) })
	case workload.ModePipeline:
		return t.pipelined(ctx, c)
	}
	return c.InTx(ctx, workload.TxOptions{}, func(ctx context.Context) error { return t.run(ctx, c) })
}

func (t *delivery) call(ctx context.Context, c workload.Conn) error {
	var skipped int64
	t.skipped = 0
	if err := c.QueryRow(ctx, stmtDelCall, t.w, t.carrier).Scan(&skipped); err != nil {
		return fmt.Errorf("delivery: call w=%d: %w", t.w, err)
	}
	t.skipped = int(skipped)
	return nil
}

func (t *delivery) run(ctx context.Context, c workload.Conn) error {
	w := t.w
	skipped := 0
	for d := int64(1); d <= districtsPerWH; d++ {
		var oID, cID int64
		err := c.QueryRow(ctx, stmtDelOldest, w, d).Scan(&oID)
		if errors.Is(err, workload.ErrNoRows) {
			skipped++ // §2.7.4.2: no new order here; skip this district only
			continue
		}
		if err != nil {
			return fmt.Errorf("delivery: oldest new order w=%d d=%d: %w", w, d, err)
		}
		n, err := c.Exec(ctx, stmtDelDelete, w, d, oID)
		if err != nil {
			return fmt.Errorf("delivery: delete new order w=%d d=%d o=%d: %w", w, d, oID, err)
		}
		if n != 1 {
			// Another Delivery of this warehouse took the order first: two
			// must never deliver the same order (§2.7.4.2 comment). Trying
			// again with the same inputs picks the next one.
			return fmt.Errorf("delivery: new order w=%d d=%d o=%d was delivered concurrently (%d rows deleted): %w", w, d, oID, n, workload.ErrRetry)
		}
		if err := c.QueryRow(ctx, stmtDelOrder, w, d, oID).Scan(&cID); err != nil {
			return fmt.Errorf("delivery: order w=%d d=%d o=%d: %w", w, d, oID, err)
		}
		if _, err := c.Exec(ctx, stmtDelOrderUpdate, t.carrier, w, d, oID); err != nil {
			return fmt.Errorf("delivery: order update w=%d d=%d o=%d: %w", w, d, oID, err)
		}
		if _, err := c.Exec(ctx, stmtDelOrderLineUpdate, w, d, oID); err != nil {
			return fmt.Errorf("delivery: order line update w=%d d=%d o=%d: %w", w, d, oID, err)
		}
		var sum float64
		if err := c.QueryRow(ctx, stmtDelOrderLineSum, w, d, oID).Scan(&sum); err != nil {
			return fmt.Errorf("delivery: order line sum w=%d d=%d o=%d: %w", w, d, oID, err)
		}
		if _, err := c.Exec(ctx, stmtDelCustomerUpdate, money64(cents(sum)), w, d, cID); err != nil {
			return fmt.Errorf("delivery: customer update w=%d d=%d c=%d: %w", w, d, cID, err)
		}
	}
	t.skipped = skipped
	return nil
}
