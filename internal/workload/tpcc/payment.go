package tpcc

import (
	"context"
	"fmt"
	"strconv"

	"github.com/sledge-bench/sledge/internal/workload"
)

// maxCData is the size of c_data (§1.3.1): a BC payment's prefix pushes the
// oldest text off the right end.
const maxCData = 500

// payment is one Payment (§2.5) with its inputs.
type payment struct {
	w, d   int64
	cw, cd int64 // the customer's warehouse and district
	byName bool
	cID    int64  // when !byName
	cLast  string // when byName
	amount int64  // h_amount in cents
	out    paymentOutput
	st     *paymentStmts
}

// paymentStmts are a Payment's statements bound once to its inputs and to
// the variables below, which each Run rewrites (issue 26).
type paymentStmts struct {
	amount                                  float64 // h_amount
	byName                                  int64   // payment.call's 0|1
	wName, dName                            []byte
	street1, street2, city, state, zip      []byte // read twice, not kept
	cust                                    payCustomerBytes
	n, offset                               int64 // customers with the name; ⌈n/2⌉ − 1
	data, newData, hData                    []byte
	warehouseUpdate, warehouse              *workload.Stmt
	districtUpdate, district                *workload.Stmt
	customerCount, customerByName, customer *workload.Stmt
	customerData, customerUpdate, updateBC  *workload.Stmt
	history, call                           *workload.Stmt
	c                                       workload.Conn // the session of the Run under way
	body                                    func(ctx context.Context) error
}

// payCustomerBytes is payCustomer read into reused buffers; c_since
// (display-only) in whatever text the database gives.
type payCustomerBytes struct {
	id                                 int64
	first, middle, last                []byte
	street1, street2, city, state, zip []byte
	phone, since, credit               []byte
	creditLim, discount, balance       float64
}

func (p *payCustomerBytes) dest() []any {
	return []any{&p.id, &p.first, &p.middle, &p.last, &p.street1, &p.street2, &p.city, &p.state, &p.zip,
		&p.phone, &p.since, &p.credit, &p.creditLim, &p.discount, &p.balance}
}

// bind makes t's statements; a payment made without NewTerminal binds on
// its first Run.
func (t *payment) bind() {
	st := &paymentStmts{}
	addr := []any{&st.street1, &st.street2, &st.city, &st.state, &st.zip}
	cust := st.cust.dest()
	st.warehouseUpdate = workload.Bind(stmtPayWarehouseUpdate, []any{&st.amount, &t.w})
	st.warehouse = workload.Bind(stmtPayWarehouse, []any{&t.w}, append([]any{&st.wName}, addr...)...)
	st.districtUpdate = workload.Bind(stmtPayDistrictUpdate, []any{&st.amount, &t.w, &t.d})
	st.district = workload.Bind(stmtPayDistrict, []any{&t.w, &t.d}, append([]any{&st.dName}, addr...)...)
	st.customerCount = workload.Bind(stmtPayCustomerCount, []any{&t.cw, &t.cd, &t.cLast}, &st.n)
	st.customerByName = workload.Bind(stmtPayCustomerByName, []any{&t.cw, &t.cd, &t.cLast, &st.offset}, cust...)
	st.customer = workload.Bind(stmtPayCustomer, []any{&t.cw, &t.cd, &t.cID}, cust...)
	st.customerData = workload.Bind(stmtPayCustomerData, []any{&t.cw, &t.cd, &st.cust.id}, &st.data)
	st.updateBC = workload.Bind(stmtPayCustomerUpdateBC, []any{&st.amount, &st.amount, &st.newData, &t.cw, &t.cd, &st.cust.id})
	st.customerUpdate = workload.Bind(stmtPayCustomerUpdate, []any{&st.amount, &st.amount, &t.cw, &t.cd, &st.cust.id})
	st.history = workload.Bind(stmtPayHistory, []any{&st.cust.id, &t.cd, &t.cw, &t.d, &t.w, &st.amount, &st.hData})
	st.call = workload.Bind(stmtPayCall, []any{&t.w, &t.d, &t.cw, &t.cd, &st.byName, &t.cID, &t.cLast, &st.amount}, &t.out.cID)
	st.body = func(ctx context.Context) error { return t.run(ctx, st.c) }
	t.st = st
}

// paymentOutput is part of what the terminal would show (§2.5.3.3).
type paymentOutput struct {
	cID     int64
	credit  string
	balance float64
}

func (t *payment) Kind() int { return kindPayment }

// Run runs the transaction: one call in procedure mode, else the §2.5.2.2
// profile inside one database transaction.
func (t *payment) Run(ctx context.Context, c workload.Conn) error {
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

func (t *payment) call(ctx context.Context, c workload.Conn) error {
	st := t.st
	st.byName = 0
	if t.byName {
		st.byName = 1
	}
	st.amount = money64(t.amount)
	t.out = paymentOutput{}
	if err := workload.QueryRowStmt(ctx, c, st.call); err != nil {
		return fmt.Errorf("payment: call w=%d d=%d: %w", t.w, t.d, err)
	}
	return nil
}

// payCustomer is the result of payment.customer and
// payment.customer_by_name (§2.5.2.2 step 3); c_since is display-only.
type payCustomer struct {
	id                                 int64
	first, middle, last                string
	street1, street2, city, state, zip string
	phone                              string
	since                              any
	credit                             string
	creditLim, discount, balance       float64
}

func (p *payCustomer) dest() []any {
	return []any{&p.id, &p.first, &p.middle, &p.last, &p.street1, &p.street2, &p.city, &p.state, &p.zip,
		&p.phone, &p.since, &p.credit, &p.creditLim, &p.discount, &p.balance}
}

func (t *payment) run(ctx context.Context, c workload.Conn) error {
	w, d, st := t.w, t.d, t.st
	st.amount = money64(t.amount)
	if _, err := workload.ExecStmt(ctx, c, st.warehouseUpdate); err != nil {
		return fmt.Errorf("payment: warehouse update w=%d: %w", w, err)
	}
	if err := workload.QueryRowStmt(ctx, c, st.warehouse); err != nil {
		return fmt.Errorf("payment: warehouse w=%d: %w", w, err)
	}
	if _, err := workload.ExecStmt(ctx, c, st.districtUpdate); err != nil {
		return fmt.Errorf("payment: district update w=%d d=%d: %w", w, d, err)
	}
	if err := workload.QueryRowStmt(ctx, c, st.district); err != nil {
		return fmt.Errorf("payment: district w=%d d=%d: %w", w, d, err)
	}

	cust := &st.cust
	if t.byName {
		// §2.5.2.2: the row at ⌈n/2⌉ of the customers with that last name,
		// sorted by first name.
		n, err := countByName(ctx, c, st.customerCount, &st.n, t.cw, t.cd, t.cLast)
		if err != nil {
			return fmt.Errorf("payment: %w", err)
		}
		st.offset = (n+1)/2 - 1
		if err := workload.QueryRowStmt(ctx, c, st.customerByName); err != nil {
			return fmt.Errorf("payment: customer w=%d d=%d last=%s: %w", t.cw, t.cd, t.cLast, err)
		}
	} else if err := workload.QueryRowStmt(ctx, c, st.customer); err != nil {
		return fmt.Errorf("payment: customer w=%d d=%d c=%d: %w", t.cw, t.cd, t.cID, err)
	}

	if string(cust.credit) == "BC" {
		// §2.5.2.2: bad credit keeps a trail of payments at the front of c_data.
		if err := workload.QueryRowStmt(ctx, c, st.customerData); err != nil {
			return fmt.Errorf("payment: customer data w=%d d=%d c=%d: %w", t.cw, t.cd, cust.id, err)
		}
		st.newData = appendBadCreditData(st.newData[:0], cust.id, t.cd, t.cw, d, w, t.amount, st.data)
		if _, err := workload.ExecStmt(ctx, c, st.updateBC); err != nil {
			return fmt.Errorf("payment: customer update w=%d d=%d c=%d: %w", t.cw, t.cd, cust.id, err)
		}
	} else if _, err := workload.ExecStmt(ctx, c, st.customerUpdate); err != nil {
		return fmt.Errorf("payment: customer update w=%d d=%d c=%d: %w", t.cw, t.cd, cust.id, err)
	}

	// §2.5.2.2: h_data is w_name, four spaces, d_name.
	st.hData = append(append(append(st.hData[:0], st.wName...), "    "...), st.dName...)
	if _, err := workload.ExecStmt(ctx, c, st.history); err != nil {
		return fmt.Errorf("payment: insert history w=%d d=%d c=%d: %w", w, d, cust.id, err)
	}
	t.out = paymentOutput{cID: cust.id, credit: creditText(cust.credit), balance: cust.balance - st.amount}
	return nil
}

// creditText is c_credit as a string without allocating for the two
// values the population has.
func creditText(b []byte) string {
	switch string(b) {
	case "GC":
		return "GC"
	case "BC":
		return "BC"
	}
	return string(b)
}

// badCreditData puts c_id, c_d_id, c_w_id, d_id, w_id and h_amount in front
// of c_data and cuts the result to 500 characters (§2.5.2.2).
func badCreditData(cID, cd, cw, d, w, amountCents int64, data string) string {
	return string(appendBadCreditData(make([]byte, 0, maxCData+64), cID, cd, cw, d, w, amountCents, data))
}

// appendBadCreditData is badCreditData appended to b, which must not share
// data's array.
func appendBadCreditData[S string | []byte](b []byte, cID, cd, cw, d, w, amountCents int64, data S) []byte {
	for _, v := range [5]int64{cID, cd, cw, d, w} {
		b = strconv.AppendInt(b, v, 10)
		b = append(b, ' ')
	}
	b = strconv.AppendFloat(b, money64(amountCents), 'f', 2, 64)
	b = append(b, ' ')
	b = append(b, data...)
	if len(b) > maxCData {
		b = b[:maxCData]
	}
	return b
}

// countByName runs s, bound to count the customers of (w, d) named last
// into *n; there is always at least one, since customers 1..1,000 of every
// district use every name.
func countByName(ctx context.Context, c workload.Conn, s *workload.Stmt, n *int64, w, d int64, last string) (int64, error) {
	if err := workload.QueryRowStmt(ctx, c, s); err != nil {
		return 0, fmt.Errorf("count customers w=%d d=%d last=%s: %w", w, d, last, err)
	}
	if *n < 1 {
		return 0, fmt.Errorf("no customer w=%d d=%d last=%s: %w", w, d, last, workload.ErrNoRows)
	}
	return *n, nil
}
