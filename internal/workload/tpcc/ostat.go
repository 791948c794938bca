package tpcc

import (
	"context"
	"fmt"

	"github.com/sledge-bench/sledge/internal/workload"
)

// orderStatus is one Order-Status (§2.6) with its inputs.
type orderStatus struct {
	w, d   int64
	byName bool
	cID    int64  // when !byName
	cLast  string // when byName
	out    orderStatusOutput
}

// orderStatusOutput is part of what the terminal would show (§2.6.3.3).
type orderStatusOutput struct {
	cID   int64
	oID   int64
	lines int
}

func (t *orderStatus) Kind() int { return kindOrderStatus }

// Run runs the transaction: one call in procedure mode, else the §2.6.2.2
// profile inside one read-only database transaction, which keeps it
// serializable against New-Order (isolation tests 1, 2 and 9).
func (t *orderStatus) Run(ctx context.Context, c workload.Conn) error {
	if c.Mode().ProcedureLike() {
		return t.call(ctx, c)
	}
	switch c.Mode() {
	case workload.ModeBatched:
		return c.InTx(ctx, workload.TxOptions{ReadOnly: true}, func(ctx context.Context) error { return t.batched(ctx, c) })
	case workload.ModePipeline:
		return t.pipelined(ctx, c)
	}
	return c.InTx(ctx, workload.TxOptions{ReadOnly: true}, func(ctx context.Context) error { return t.run(ctx, c) })
}

func (t *orderStatus) call(ctx context.Context, c workload.Conn) error {
	var byName int64
	if t.byName {
		byName = 1
	}
	t.out = orderStatusOutput{cID: t.cID}
	if err := c.QueryRow(ctx, stmtOSCall, t.w, t.d, byName, t.cID, t.cLast).Scan(&t.out.oID); err != nil {
		return fmt.Errorf("ostat: call w=%d d=%d: %w", t.w, t.d, err)
	}
	return nil
}

func (t *orderStatus) run(ctx context.Context, c workload.Conn) error {
	w, d := t.w, t.d
	var out orderStatusOutput
	var balance float64
	var first, middle, last string
	if t.byName {
		// §2.6.2.2: the row at ⌈n/2⌉ sorted by first name, as in Payment.
		n, err := countByName(ctx, c, stmtOSCustomerCount, w, d, t.cLast)
		if err != nil {
			return fmt.Errorf("ostat: %w", err)
		}
		if err := c.QueryRow(ctx, stmtOSCustomerByName, w, d, t.cLast, (n+1)/2-1).Scan(&out.cID, &balance, &first, &middle); err != nil {
			return fmt.Errorf("ostat: customer w=%d d=%d last=%s: %w", w, d, t.cLast, err)
		}
	} else {
		out.cID = t.cID
		if err := c.QueryRow(ctx, stmtOSCustomer, w, d, t.cID).Scan(&balance, &first, &middle, &last); err != nil {
			return fmt.Errorf("ostat: customer w=%d d=%d c=%d: %w", w, d, t.cID, err)
		}
	}
	var entry, carrier any
	if err := c.QueryRow(ctx, stmtOSOrder, w, d, out.cID).Scan(&out.oID, &entry, &carrier); err != nil {
		return fmt.Errorf("ostat: last order w=%d d=%d c=%d: %w", w, d, out.cID, err)
	}
	n, err := t.orderLines(ctx, c, out.oID)
	if err != nil {
		return err
	}
	out.lines = n
	t.out = out
	return nil
}

// orderLines reads the lines of order o and returns how many there are.
func (t *orderStatus) orderLines(ctx context.Context, c workload.Conn, o int64) (int, error) {
	w, d := t.w, t.d
	rows, err := c.Query(ctx, stmtOSOrderLines, w, d, o)
	if err != nil {
		return 0, fmt.Errorf("ostat: order lines w=%d d=%d o=%d: %w", w, d, o, err)
	}
	defer func() { _ = rows.Close() }()
	var item, supply, qty int64
	var amount float64
	var delivered any
	n := 0
	for rows.Next() {
		if err := rows.Scan(&item, &supply, &qty, &amount, &delivered); err != nil {
			return 0, fmt.Errorf("ostat: order lines w=%d d=%d o=%d: %w", w, d, o, err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("ostat: order lines w=%d d=%d o=%d: %w", w, d, o, err)
	}
	return n, nil
}
