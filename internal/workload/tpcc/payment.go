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

func (t *payment) call(ctx context.Context, c workload.Conn) error {
	var byName int64
	if t.byName {
		byName = 1
	}
	t.out = paymentOutput{}
	err := c.QueryRow(ctx, stmtPayCall, t.w, t.d, t.cw, t.cd, byName, t.cID, t.cLast, money64(t.amount)).Scan(&t.out.cID)
	if err != nil {
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
	w, d := t.w, t.d
	amount := money64(t.amount)
	var wName, dName, street1, street2, city, state, zip string
	if _, err := c.Exec(ctx, stmtPayWarehouseUpdate, amount, w); err != nil {
		return fmt.Errorf("payment: warehouse update w=%d: %w", w, err)
	}
	if err := c.QueryRow(ctx, stmtPayWarehouse, w).Scan(&wName, &street1, &street2, &city, &state, &zip); err != nil {
		return fmt.Errorf("payment: warehouse w=%d: %w", w, err)
	}
	if _, err := c.Exec(ctx, stmtPayDistrictUpdate, amount, w, d); err != nil {
		return fmt.Errorf("payment: district update w=%d d=%d: %w", w, d, err)
	}
	if err := c.QueryRow(ctx, stmtPayDistrict, w, d).Scan(&dName, &street1, &street2, &city, &state, &zip); err != nil {
		return fmt.Errorf("payment: district w=%d d=%d: %w", w, d, err)
	}

	var cust payCustomer
	if t.byName {
		// §2.5.2.2: the row at ⌈n/2⌉ of the customers with that last name,
		// sorted by first name.
		n, err := countByName(ctx, c, stmtPayCustomerCount, t.cw, t.cd, t.cLast)
		if err != nil {
			return fmt.Errorf("payment: %w", err)
		}
		if err := c.QueryRow(ctx, stmtPayCustomerByName, t.cw, t.cd, t.cLast, (n+1)/2-1).Scan(cust.dest()...); err != nil {
			return fmt.Errorf("payment: customer w=%d d=%d last=%s: %w", t.cw, t.cd, t.cLast, err)
		}
	} else if err := c.QueryRow(ctx, stmtPayCustomer, t.cw, t.cd, t.cID).Scan(cust.dest()...); err != nil {
		return fmt.Errorf("payment: customer w=%d d=%d c=%d: %w", t.cw, t.cd, t.cID, err)
	}

	if cust.credit == "BC" {
		// §2.5.2.2: bad credit keeps a trail of payments at the front of c_data.
		var data string
		if err := c.QueryRow(ctx, stmtPayCustomerData, t.cw, t.cd, cust.id).Scan(&data); err != nil {
			return fmt.Errorf("payment: customer data w=%d d=%d c=%d: %w", t.cw, t.cd, cust.id, err)
		}
		data = badCreditData(cust.id, t.cd, t.cw, d, w, t.amount, data)
		if _, err := c.Exec(ctx, stmtPayCustomerUpdateBC, amount, amount, data, t.cw, t.cd, cust.id); err != nil {
			return fmt.Errorf("payment: customer update w=%d d=%d c=%d: %w", t.cw, t.cd, cust.id, err)
		}
	} else if _, err := c.Exec(ctx, stmtPayCustomerUpdate, amount, amount, t.cw, t.cd, cust.id); err != nil {
		return fmt.Errorf("payment: customer update w=%d d=%d c=%d: %w", t.cw, t.cd, cust.id, err)
	}

	// §2.5.2.2: h_data is w_name, four spaces, d_name.
	hData := wName + "    " + dName
	if _, err := c.Exec(ctx, stmtPayHistory, cust.id, t.cd, t.cw, d, w, amount, hData); err != nil {
		return fmt.Errorf("payment: insert history w=%d d=%d c=%d: %w", w, d, cust.id, err)
	}
	t.out = paymentOutput{cID: cust.id, credit: cust.credit, balance: cust.balance - amount}
	return nil
}

// badCreditData puts c_id, c_d_id, c_w_id, d_id, w_id and h_amount in front
// of c_data and cuts the result to 500 characters (§2.5.2.2).
func badCreditData(cID, cd, cw, d, w, amountCents int64, data string) string {
	b := make([]byte, 0, maxCData+64)
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
	return string(b)
}

// countByName counts the customers of (w, d) named last; there is always at
// least one, since customers 1..1,000 of every district use every name.
func countByName(ctx context.Context, c workload.Conn, stmt string, w, d int64, last string) (int64, error) {
	var n int64
	if err := c.QueryRow(ctx, stmt, w, d, last).Scan(&n); err != nil {
		return 0, fmt.Errorf("count customers w=%d d=%d last=%s: %w", w, d, last, err)
	}
	if n < 1 {
		return 0, fmt.Errorf("no customer w=%d d=%d last=%s: %w", w, d, last, workload.ErrNoRows)
	}
	return n, nil
}
