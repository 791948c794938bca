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
	st         *deliveryStmts
}

// deliveryStmts are a Delivery's statements bound once to its inputs and to
// the variables below, which each Run rewrites (issue 26).
type deliveryStmts struct {
	d, oID, cID                               int64 // the district being delivered, its order and customer
	sum, amount                               float64
	skipped                                   int64 // delivery.call's result
	oldest, delete, order, orderUpdate        *workload.Stmt
	orderLineUpdate, orderLineSum, custUpdate *workload.Stmt
	call                                      *workload.Stmt
	c                                         workload.Conn // the session of the Run under way
	body                                      func(ctx context.Context) error
}

// bind makes t's statements; a delivery made without NewTerminal binds on
// its first Run.
func (t *delivery) bind() {
	st := &deliveryStmts{}
	st.oldest = workload.Bind(stmtDelOldest, []any{&t.w, &st.d}, &st.oID)
	st.delete = workload.Bind(stmtDelDelete, []any{&t.w, &st.d, &st.oID})
	st.order = workload.Bind(stmtDelOrder, []any{&t.w, &st.d, &st.oID}, &st.cID)
	st.orderUpdate = workload.Bind(stmtDelOrderUpdate, []any{&t.carrier, &t.w, &st.d, &st.oID})
	st.orderLineUpdate = workload.Bind(stmtDelOrderLineUpdate, []any{&t.w, &st.d, &st.oID})
	st.orderLineSum = workload.Bind(stmtDelOrderLineSum, []any{&t.w, &st.d, &st.oID}, &st.sum)
	st.custUpdate = workload.Bind(stmtDelCustomerUpdate, []any{&st.amount, &t.w, &st.d, &st.cID})
	st.call = workload.Bind(stmtDelCall, []any{&t.w, &t.carrier}, &st.skipped)
	st.body = func(ctx context.Context) error { return t.run(ctx, st.c) }
	t.st = st
}

func (t *delivery) Kind() int { return kindDelivery }

// Skipped is the number of districts the last Run skipped because they had
// no undelivered order. §5.4.5 asks to report skips above 1% of Deliveries.
func (t *delivery) Skipped() int { return t.skipped }

// Run runs the transaction: one call in procedure mode, else the §2.7.4.2
// profile for each district inside one database transaction.
func (t *delivery) Run(ctx context.Context, c workload.Conn) error {
	if t.st == nil {
		t.bind()
	}
	if c.Mode().ProcedureLike() {
		return t.call(ctx, c)
	}
	switch c.Mode() {
	case workload.ModeBatched:
		return c.InTx(ctx, workload.TxOptions{}, func(ctx context.Context) error { return t.batched(ctx, c) })
	case workload.ModePipeline:
		return t.pipelined(ctx, c)
	}
	t.st.c = c
	err := c.InTx(ctx, workload.TxOptions{}, t.st.body)
	t.st.c = nil // the session is not the transaction's to keep
	return err
}

func (t *delivery) call(ctx context.Context, c workload.Conn) error {
	t.skipped = 0
	if err := workload.QueryRowStmt(ctx, c, t.st.call); err != nil {
		return fmt.Errorf("delivery: call w=%d: %w", t.w, err)
	}
	t.skipped = int(t.st.skipped)
	return nil
}

func (t *delivery) run(ctx context.Context, c workload.Conn) error {
	w, st := t.w, t.st
	skipped := 0
	for d := int64(1); d <= districtsPerWH; d++ {
		st.d = d
		err := workload.QueryRowStmt(ctx, c, st.oldest)
		if errors.Is(err, workload.ErrNoRows) {
			skipped++ // §2.7.4.2: no new order here; skip this district only
			continue
		}
		if err != nil {
			return fmt.Errorf("delivery: oldest new order w=%d d=%d: %w", w, d, err)
		}
		oID := st.oID
		n, err := workload.ExecStmt(ctx, c, st.delete)
		if err != nil {
			return fmt.Errorf("delivery: delete new order w=%d d=%d o=%d: %w", w, d, oID, err)
		}
		if n != 1 {
			// Another Delivery of this warehouse took the order first: two
			// must never deliver the same order (§2.7.4.2 comment). Trying
			// again with the same inputs picks the next one.
			return fmt.Errorf("delivery: new order w=%d d=%d o=%d was delivered concurrently (%d rows deleted): %w", w, d, oID, n, workload.ErrRetry)
		}
		if err := workload.QueryRowStmt(ctx, c, st.order); err != nil {
			return fmt.Errorf("delivery: order w=%d d=%d o=%d: %w", w, d, oID, err)
		}
		if _, err := workload.ExecStmt(ctx, c, st.orderUpdate); err != nil {
			return fmt.Errorf("delivery: order update w=%d d=%d o=%d: %w", w, d, oID, err)
		}
		if _, err := workload.ExecStmt(ctx, c, st.orderLineUpdate); err != nil {
			return fmt.Errorf("delivery: order line update w=%d d=%d o=%d: %w", w, d, oID, err)
		}
		if err := workload.QueryRowStmt(ctx, c, st.orderLineSum); err != nil {
			return fmt.Errorf("delivery: order line sum w=%d d=%d o=%d: %w", w, d, oID, err)
		}
		st.amount = money64(cents(st.sum))
		if _, err := workload.ExecStmt(ctx, c, st.custUpdate); err != nil {
			return fmt.Errorf("delivery: customer update w=%d d=%d c=%d: %w", w, d, st.cID, err)
		}
	}
	t.skipped = skipped
	return nil
}
