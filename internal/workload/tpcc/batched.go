package tpcc

import (
	"context"
	"fmt"
	"strings"

	"github.com/sledge-bench/sledge/internal/workload"
)

// Batched mode: the same logic and inputs as client and prepared modes, as
// set-oriented SQL (go-tpc's style, and a careful application's): one
// statement reads or writes the rows of every order line or district at
// once, so the statements of a transaction no longer grow with its lines.
// Per transaction, besides BEGIN and COMMIT:
//
//   - New-Order: 8, whatever its 5–15 lines: district update, one join for
//     warehouse, district and customer, order, new order, all items
//     (IN list), all stock rows locked in one SELECT … FOR UPDATE, one
//     UPDATE for every stock row, one multi-row INSERT of the lines;
//   - Payment: 5 (warehouse and district updates, one join that reads and
//     locks the customer, the customer update, history);
//   - Order-Status: 2 (the customer with its newest order, the lines);
//   - Delivery: 6 for the ten districts (1 when none has a new order);
//   - Stock-Level: 1.
//
// With one virtual user and one seed the tables end up exactly as in the
// other modes: where a row is written several times (a stock row ordered on
// two lines) the client works out the final values in the other modes'
// visit order and writes the row once.

// batchedStatements are the statements of batched mode.
func batchedStatements() []string {
	return []string{
		stmtNODistrictUpdate, stmtNOHeader, stmtNOOrder, stmtNONewOrder, stmtNOItems, stmtNOStocks,
		stmtNOStocksUpdate, stmtNOOrderLines,
		stmtPayWarehouseUpdate, stmtPayDistrictUpdate, stmtPayCustomerWD, stmtPayCustomersWDByName,
		stmtPayCustomerUpdate, stmtPayCustomerUpdateBC, stmtPayHistory,
		stmtOSCustomerOrder, stmtOSCustomersOrderByName, stmtOSOrderLines,
		stmtDelOldestAll, stmtDelDeletes, stmtDelOrders, stmtDelOrdersUpdate, stmtDelOrderLinesUpdate,
		stmtDelCustomersUpdate,
		stmtSLLowStock,
	}
}

// batchItem is one distinct item of a New-Order.
type batchItem struct {
	id         int64
	price      float64
	name, data string
	found      bool
}

// batchStock is one distinct stock row of a New-Order: as read, then as
// each of its lines leaves it.
type batchStock struct {
	item, supply          int64
	qty, ytd, cnt, remote int64
	data, dist            string
	found                 bool
}

func (t *newOrder) batched(ctx context.Context, c workload.Conn) error {
	w, d := t.w, t.d
	out := newOrderOutput{brandGeneric: make([]byte, len(t.lines))}
	// The update takes the district's lock; the join after it reads the
	// incremented d_next_o_id (our own write), so the order number is one
	// less and the rollback case undoes the increment (§2.4.2.3).
	if _, err := c.Exec(ctx, stmtNODistrictUpdate, w, d); err != nil {
		return fmt.Errorf("neword: district update w=%d d=%d: %w", w, d, err)
	}
	var wTax, dTax, disc float64
	var next int64
	var cLast, credit string
	if err := c.QueryRow(ctx, stmtNOHeader, w, d, t.c).Scan(&wTax, &dTax, &next, &disc, &cLast, &credit); err != nil {
		return fmt.Errorf("neword: warehouse, district and customer w=%d d=%d c=%d: %w", w, d, t.c, err)
	}
	oID := next - 1
	out.oID = oID
	if _, err := c.Exec(ctx, stmtNOOrder, oID, d, w, t.c, int64(len(t.lines)), t.allLocal); err != nil {
		return fmt.Errorf("neword: insert order w=%d d=%d o=%d: %w", w, d, oID, err)
	}
	if _, err := c.Exec(ctx, stmtNONewOrder, oID, d, w); err != nil {
		return fmt.Errorf("neword: insert new_order w=%d d=%d o=%d: %w", w, d, oID, err)
	}

	// The distinct items and stock rows, in visit order; NURand repeats
	// items, so a row may serve several lines.
	n := len(t.lines)
	items := make([]batchItem, 0, n)
	stocks := make([]batchStock, 0, n)
	lineItem := make([]int, n)  // by line: index into items
	lineStock := make([]int, n) // by line: index into stocks
	for _, i := range t.visit {
		l := t.lines[i]
		lineItem[i] = -1
		for j := range items {
			if items[j].id == l.item {
				lineItem[i] = j
				break
			}
		}
		if lineItem[i] < 0 {
			lineItem[i] = len(items)
			items = append(items, batchItem{id: l.item})
		}
		lineStock[i] = -1
		for j := range stocks {
			if stocks[j].item == l.item && stocks[j].supply == l.supply {
				lineStock[i] = j
				break
			}
		}
		if lineStock[i] < 0 {
			lineStock[i] = len(stocks)
			stocks = append(stocks, batchStock{item: l.item, supply: l.supply})
		}
	}

	args := make([]any, 0, 9*n)
	for _, it := range items {
		args = append(args, it.id)
	}
	if err := t.readItems(ctx, c, items, args); err != nil {
		return err
	}
	for _, i := range t.visit {
		if it := items[lineItem[i]]; !it.found {
			// §2.4.2.3: an unused item rolls the whole order back.
			t.out = out
			return fmt.Errorf("neword: item %d is not valid (w=%d d=%d o=%d): %w", it.id, w, d, oID, workload.ErrUserAbort)
		}
	}

	args = append(args[:0], d)
	for _, s := range stocks {
		args = append(args, s.item, s.supply)
	}
	if err := t.readStocks(ctx, c, stocks, args); err != nil {
		return err
	}

	// The lines in visit order, as the other modes update the rows.
	amounts := make([]int64, n) // cents, by line
	var sum int64
	for _, i := range t.visit {
		l := t.lines[i]
		it, s := &items[lineItem[i]], &stocks[lineStock[i]]
		// §2.4.2.2: take the quantity, restocking by 91 when fewer than 10
		// would remain.
		newQty := s.qty - l.qty
		if s.qty < l.qty+10 {
			newQty += 91
		}
		s.qty = newQty
		s.ytd += l.qty
		s.cnt++
		if l.supply != w {
			s.remote++
		}
		amounts[i] = l.qty * cents(it.price) // §2.4.2.2: ol_amount = ol_quantity × i_price
		sum += amounts[i]
		if strings.Contains(it.data, original) && strings.Contains(s.data, original) {
			out.brandGeneric[i] = 'B'
		} else {
			out.brandGeneric[i] = 'G'
		}
	}

	args = args[:0]
	for _, s := range stocks {
		args = append(args, s.item, s.supply, s.qty, s.ytd, s.cnt, s.remote)
	}
	if _, err := c.Exec(ctx, stmtNOStocksUpdate, args...); err != nil {
		return fmt.Errorf("neword: update %d stock rows w=%d d=%d o=%d: %w", len(stocks), w, d, oID, err)
	}
	args = args[:0]
	for i, l := range t.lines {
		args = append(args, oID, d, w, int64(i)+1, l.item, l.supply, l.qty, money64(amounts[i]), stocks[lineStock[i]].dist)
	}
	if _, err := c.Exec(ctx, stmtNOOrderLines, args...); err != nil {
		return fmt.Errorf("neword: insert %d order lines w=%d d=%d o=%d: %w", n, w, d, oID, err)
	}
	out.total = money64(sum) * (1 - disc) * (1 + wTax + dTax)
	t.out = out
	return nil
}

// readItems fills items from one query; an item without a row stays
// !found.
func (t *newOrder) readItems(ctx context.Context, c workload.Conn, items []batchItem, args []any) error {
	rows, err := c.Query(ctx, stmtNOItems, args...)
	if err != nil {
		return fmt.Errorf("neword: %d items: %w", len(items), err)
	}
	defer func() { _ = rows.Close() }()
	var it batchItem
	for rows.Next() {
		if err := rows.Scan(&it.id, &it.price, &it.name, &it.data); err != nil {
			return fmt.Errorf("neword: %d items: %w", len(items), err)
		}
		for j := range items {
			if items[j].id == it.id {
				items[j] = it
				items[j].found = true
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("neword: %d items: %w", len(items), err)
	}
	return nil
}

// readStocks fills and locks the stock rows from one query; every row must
// be there.
func (t *newOrder) readStocks(ctx context.Context, c workload.Conn, stocks []batchStock, args []any) error {
	rows, err := c.Query(ctx, stmtNOStocks, args...)
	if err != nil {
		return fmt.Errorf("neword: %d stock rows w=%d: %w", len(stocks), t.w, err)
	}
	defer func() { _ = rows.Close() }()
	var s batchStock
	for rows.Next() {
		if err := rows.Scan(&s.item, &s.supply, &s.qty, &s.data, &s.dist); err != nil {
			return fmt.Errorf("neword: %d stock rows w=%d: %w", len(stocks), t.w, err)
		}
		for j := range stocks {
			if stocks[j].item == s.item && stocks[j].supply == s.supply {
				stocks[j] = s
				stocks[j].found = true
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("neword: %d stock rows w=%d: %w", len(stocks), t.w, err)
	}
	for _, s := range stocks {
		if !s.found {
			return fmt.Errorf("neword: stock w=%d i=%d: %w", s.supply, s.item, workload.ErrNoRows)
		}
	}
	return nil
}

// payRow is a row of payment.customer_wd: the warehouse's and district's
// names and addresses, the customer, and c_data for a bad-credit customer.
type payRow struct {
	wName, dName string
	addr         [10]string // street_1, street_2, city, state, zip of each: displayed only
	cust         payCustomer
	data         any
}

func (r *payRow) dest() []any {
	out := make([]any, 0, 28)
	out = append(out, &r.wName, &r.addr[0], &r.addr[1], &r.addr[2], &r.addr[3], &r.addr[4],
		&r.dName, &r.addr[5], &r.addr[6], &r.addr[7], &r.addr[8], &r.addr[9])
	out = append(out, r.cust.dest()...)
	return append(out, &r.data)
}

func (t *payment) batched(ctx context.Context, c workload.Conn) error {
	w, d := t.w, t.d
	amount := money64(t.amount)
	if _, err := c.Exec(ctx, stmtPayWarehouseUpdate, amount, w); err != nil {
		return fmt.Errorf("payment: warehouse update w=%d: %w", w, err)
	}
	if _, err := c.Exec(ctx, stmtPayDistrictUpdate, amount, w, d); err != nil {
		return fmt.Errorf("payment: district update w=%d d=%d: %w", w, d, err)
	}
	var r payRow
	if t.byName {
		// §2.5.2.2: the row at ⌈n/2⌉ of the customers with that last name,
		// sorted by first name: all of them come back, the client picks.
		rows, err := c.Query(ctx, stmtPayCustomersWDByName, w, d, t.cw, t.cd, t.cLast)
		if err != nil {
			return fmt.Errorf("payment: customers w=%d d=%d last=%s: %w", t.cw, t.cd, t.cLast, err)
		}
		var all []payRow
		for rows.Next() {
			var x payRow
			if err := rows.Scan(x.dest()...); err != nil {
				_ = rows.Close()
				return fmt.Errorf("payment: customers w=%d d=%d last=%s: %w", t.cw, t.cd, t.cLast, err)
			}
			all = append(all, x)
		}
		err = rows.Err()
		_ = rows.Close()
		if err != nil {
			return fmt.Errorf("payment: customers w=%d d=%d last=%s: %w", t.cw, t.cd, t.cLast, err)
		}
		if len(all) == 0 {
			return fmt.Errorf("payment: no customer w=%d d=%d last=%s: %w", t.cw, t.cd, t.cLast, workload.ErrNoRows)
		}
		r = all[(len(all)+1)/2-1]
	} else if err := c.QueryRow(ctx, stmtPayCustomerWD, w, d, t.cw, t.cd, t.cID).Scan(r.dest()...); err != nil {
		return fmt.Errorf("payment: customer w=%d d=%d c=%d: %w", t.cw, t.cd, t.cID, err)
	}

	cust := &r.cust
	if cust.credit == "BC" {
		var data string
		switch v := r.data.(type) {
		case string:
			data = v
		case []byte:
			data = string(v)
		default:
			return fmt.Errorf("payment: customer w=%d d=%d c=%d has bad credit but c_data came back as %T", t.cw, t.cd, cust.id, r.data)
		}
		data = badCreditData(cust.id, t.cd, t.cw, d, w, t.amount, data)
		if _, err := c.Exec(ctx, stmtPayCustomerUpdateBC, amount, amount, data, t.cw, t.cd, cust.id); err != nil {
			return fmt.Errorf("payment: customer update w=%d d=%d c=%d: %w", t.cw, t.cd, cust.id, err)
		}
	} else if _, err := c.Exec(ctx, stmtPayCustomerUpdate, amount, amount, t.cw, t.cd, cust.id); err != nil {
		return fmt.Errorf("payment: customer update w=%d d=%d c=%d: %w", t.cw, t.cd, cust.id, err)
	}
	hData := r.wName + "    " + r.dName // §2.5.2.2
	if _, err := c.Exec(ctx, stmtPayHistory, cust.id, t.cd, t.cw, d, w, amount, hData); err != nil {
		return fmt.Errorf("payment: insert history w=%d d=%d c=%d: %w", w, d, cust.id, err)
	}
	t.out = paymentOutput{cID: cust.id, credit: cust.credit, balance: cust.balance - amount}
	return nil
}

// osRow is a row of ostat.customers_order_by_name.
type osRow struct {
	cID, oID       int64
	balance        float64
	first, middle  string
	entry, carrier any
}

func (t *orderStatus) batched(ctx context.Context, c workload.Conn) error {
	w, d := t.w, t.d
	var out orderStatusOutput
	if t.byName {
		// §2.6.2.2: the row at ⌈n/2⌉ sorted by first name, as in Payment.
		rows, err := c.Query(ctx, stmtOSCustomersOrderByName, w, d, t.cLast)
		if err != nil {
			return fmt.Errorf("ostat: customers w=%d d=%d last=%s: %w", w, d, t.cLast, err)
		}
		var all []osRow
		for rows.Next() {
			var x osRow
			if err := rows.Scan(&x.cID, &x.balance, &x.first, &x.middle, &x.oID, &x.entry, &x.carrier); err != nil {
				_ = rows.Close()
				return fmt.Errorf("ostat: customers w=%d d=%d last=%s: %w", w, d, t.cLast, err)
			}
			all = append(all, x)
		}
		err = rows.Err()
		_ = rows.Close()
		if err != nil {
			return fmt.Errorf("ostat: customers w=%d d=%d last=%s: %w", w, d, t.cLast, err)
		}
		if len(all) == 0 {
			return fmt.Errorf("ostat: no customer w=%d d=%d last=%s: %w", w, d, t.cLast, workload.ErrNoRows)
		}
		x := all[(len(all)+1)/2-1]
		out.cID, out.oID = x.cID, x.oID
	} else {
		out.cID = t.cID
		var balance float64
		var first, middle, last string
		var entry, carrier any
		if err := c.QueryRow(ctx, stmtOSCustomerOrder, w, d, t.cID).Scan(&balance, &first, &middle, &last, &out.oID, &entry, &carrier); err != nil {
			return fmt.Errorf("ostat: customer w=%d d=%d c=%d: %w", w, d, t.cID, err)
		}
	}
	if out.oID == 0 {
		return fmt.Errorf("ostat: last order w=%d d=%d c=%d: %w", w, d, out.cID, workload.ErrNoRows)
	}
	n, err := t.orderLines(ctx, c, out.oID)
	if err != nil {
		return err
	}
	out.lines = n
	t.out = out
	return nil
}

func (t *delivery) batched(ctx context.Context, c workload.Conn) error {
	w := t.w
	// args is (carrier, w, d1, o1, d2, o2, …): delivery.orders_update takes
	// all of it, the other statements all but the carrier.
	args := make([]any, 0, 2+2*districtsPerWH)
	args = append(args, t.carrier, w)
	var ds [districtsPerWH]int64 // the districts delivered, in d_id order
	k := 0
	rows, err := c.Query(ctx, stmtDelOldestAll, w)
	if err != nil {
		return fmt.Errorf("delivery: oldest new orders w=%d: %w", w, err)
	}
	for rows.Next() {
		var d, o int64
		if err := rows.Scan(&d, &o); err != nil {
			_ = rows.Close()
			return fmt.Errorf("delivery: oldest new orders w=%d: %w", w, err)
		}
		if o == 0 {
			continue // §2.7.4.2: no new order here; skip this district only
		}
		if k == len(ds) {
			_ = rows.Close()
			return fmt.Errorf("delivery: oldest new orders w=%d: more than %d districts", w, districtsPerWH)
		}
		ds[k] = d
		k++
		args = append(args, d, o)
	}
	err = rows.Err()
	_ = rows.Close()
	if err != nil {
		return fmt.Errorf("delivery: oldest new orders w=%d: %w", w, err)
	}
	skipped := districtsPerWH - k
	if k == 0 {
		t.skipped = skipped
		return nil
	}

	n, err := c.Exec(ctx, stmtDelDeletes, args[1:]...)
	if err != nil {
		return fmt.Errorf("delivery: delete %d new orders w=%d: %w", k, w, err)
	}
	if n != int64(k) {
		// Another Delivery of this warehouse took an order first: two must
		// never deliver the same order (§2.7.4.2 comment). Trying again
		// with the same inputs picks the next ones.
		return fmt.Errorf("delivery: %d of %d new orders w=%d were delivered concurrently: %w", int64(k)-n, k, w, workload.ErrRetry)
	}
	var cs [districtsPerWH]int64   // o_c_id by index into ds
	var sums [districtsPerWH]int64 // Σ ol_amount in cents, likewise
	got := 0
	rows, err = c.Query(ctx, stmtDelOrders, args[1:]...)
	if err != nil {
		return fmt.Errorf("delivery: %d orders w=%d: %w", k, w, err)
	}
	for rows.Next() {
		var d, cID int64
		var sum float64
		if err := rows.Scan(&d, &cID, &sum); err != nil {
			_ = rows.Close()
			return fmt.Errorf("delivery: %d orders w=%d: %w", k, w, err)
		}
		for i := range k {
			if ds[i] == d {
				cs[i], sums[i] = cID, cents(sum)
				got++
			}
		}
	}
	err = rows.Err()
	_ = rows.Close()
	if err != nil {
		return fmt.Errorf("delivery: %d orders w=%d: %w", k, w, err)
	}
	if got != k {
		return fmt.Errorf("delivery: %d orders w=%d: %d found: %w", k, w, got, workload.ErrNoRows)
	}
	if _, err := c.Exec(ctx, stmtDelOrdersUpdate, args...); err != nil {
		return fmt.Errorf("delivery: update %d orders w=%d: %w", k, w, err)
	}
	if _, err := c.Exec(ctx, stmtDelOrderLinesUpdate, args[1:]...); err != nil {
		return fmt.Errorf("delivery: update the lines of %d orders w=%d: %w", k, w, err)
	}
	cust := make([]any, 0, 3*k+1)
	for i := range k {
		cust = append(cust, ds[i], cs[i], money64(sums[i]))
	}
	cust = append(cust, w)
	if _, err := c.Exec(ctx, stmtDelCustomersUpdate, cust...); err != nil {
		return fmt.Errorf("delivery: update %d customers w=%d: %w", k, w, err)
	}
	t.skipped = skipped
	return nil
}

func (t *stockLevel) batched(ctx context.Context, c workload.Conn) error {
	if err := c.QueryRow(ctx, stmtSLLowStock, t.w, t.d, t.threshold).Scan(&t.low); err != nil {
		return fmt.Errorf("slev: low stock w=%d d=%d: %w", t.w, t.d, err)
	}
	return nil
}
