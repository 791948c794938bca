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
	st     *orderStatusStmts
}

// orderStatusStmts are an Order-Status's statements bound once to its
// inputs and to the variables below, which each Run rewrites (issue 26).
// The dates are display-only, in whatever text the database gives.
type orderStatusStmts struct {
	byName                  int64 // ostat.call's 0|1
	n, offset               int64 // customers with the name; ⌈n/2⌉ − 1
	cID                     int64 // the customer's id, given or read
	balance                 float64
	first, middle, last     []byte
	oID                     int64
	entry                   []byte
	carrier                 workload.NullInt64
	item, supply, qty       int64 // an order line's columns
	amount                  float64
	delivered               []byte
	lines                   int
	customer, customerCount *workload.Stmt
	customerByName, order   *workload.Stmt
	orderLines, call        *workload.Stmt
	countLine               func() error
	c                       workload.Conn // the session of the Run under way
	body                    func(ctx context.Context) error
}

// bind makes t's statements; an orderStatus made without NewTerminal binds
// on its first Run.
func (t *orderStatus) bind() {
	st := &orderStatusStmts{}
	st.customer = workload.Bind(stmtOSCustomer, []any{&t.w, &t.d, &t.cID}, &st.balance, &st.first, &st.middle, &st.last)
	st.customerCount = workload.Bind(stmtOSCustomerCount, []any{&t.w, &t.d, &t.cLast}, &st.n)
	st.customerByName = workload.Bind(stmtOSCustomerByName, []any{&t.w, &t.d, &t.cLast, &st.offset},
		&st.cID, &st.balance, &st.first, &st.middle)
	st.order = workload.Bind(stmtOSOrder, []any{&t.w, &t.d, &st.cID}, &st.oID, &st.entry, &st.carrier)
	st.orderLines = workload.Bind(stmtOSOrderLines, []any{&t.w, &t.d, &st.oID},
		&st.item, &st.supply, &st.qty, &st.amount, &st.delivered)
	st.call = workload.Bind(stmtOSCall, []any{&t.w, &t.d, &st.byName, &t.cID, &t.cLast}, &t.out.oID)
	st.countLine = func() error { st.lines++; return nil }
	st.body = func(ctx context.Context) error { return t.run(ctx, st.c) }
	t.st = st
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
	if t.st == nil {
		t.bind()
	}
	if c.Mode().ProcedureLike() {
		return t.call(ctx, c)
	}
	switch c.Mode() {
	case workload.ModeBatched:
		return c.InTx(ctx, workload.TxOptions{ReadOnly: true}, func(ctx context.Context) error { return t.batched(ctx, c) })
	case workload.ModePipeline:
		return t.pipelined(ctx, c)
	}
	t.st.c = c
	err := c.InTx(ctx, workload.TxOptions{ReadOnly: true}, t.st.body)
	t.st.c = nil // the session is not the transaction's to keep
	return err
}

func (t *orderStatus) call(ctx context.Context, c workload.Conn) error {
	st := t.st
	st.byName = 0
	if t.byName {
		st.byName = 1
	}
	t.out = orderStatusOutput{cID: t.cID}
	if err := workload.QueryRowStmt(ctx, c, st.call); err != nil {
		return fmt.Errorf("ostat: call w=%d d=%d: %w", t.w, t.d, err)
	}
	return nil
}

func (t *orderStatus) run(ctx context.Context, c workload.Conn) error {
	w, d, st := t.w, t.d, t.st
	var out orderStatusOutput
	if t.byName {
		// §2.6.2.2: the row at ⌈n/2⌉ sorted by first name, as in Payment.
		n, err := countByName(ctx, c, st.customerCount, &st.n, w, d, t.cLast)
		if err != nil {
			return fmt.Errorf("ostat: %w", err)
		}
		st.offset = (n+1)/2 - 1
		if err := workload.QueryRowStmt(ctx, c, st.customerByName); err != nil {
			return fmt.Errorf("ostat: customer w=%d d=%d last=%s: %w", w, d, t.cLast, err)
		}
	} else {
		st.cID = t.cID
		if err := workload.QueryRowStmt(ctx, c, st.customer); err != nil {
			return fmt.Errorf("ostat: customer w=%d d=%d c=%d: %w", w, d, t.cID, err)
		}
	}
	out.cID = st.cID
	if err := workload.QueryRowStmt(ctx, c, st.order); err != nil {
		return fmt.Errorf("ostat: last order w=%d d=%d c=%d: %w", w, d, out.cID, err)
	}
	out.oID = st.oID
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
	st := t.st // bound by Run
	st.oID, st.lines = o, 0
	if err := workload.QueryStmt(ctx, c, st.orderLines, st.countLine); err != nil {
		return 0, fmt.Errorf("ostat: order lines w=%d d=%d o=%d: %w", t.w, t.d, o, err)
	}
	return st.lines, nil
}
