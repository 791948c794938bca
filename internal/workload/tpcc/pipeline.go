package tpcc

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sledge-bench/sledge/internal/workload"
)

// Pipeline mode: the statements of prepared mode with the same logic, sent
// in groups (workload.Grouper). A group holds every statement whose inputs
// are known when it is sent; the next group waits for the results it
// needs. BEGIN travels with the first group and COMMIT with the last, so
// each group is one round trip (docs/modes.md lists them).

// grouper finds the session's Grouper; every database that accepts
// --mode pipeline gives one.
func grouper(c workload.Conn) (workload.Grouper, error) {
	if g, ok := workload.AsGrouper(c); ok {
		return g, nil
	}
	return nil, fmt.Errorf("tpcc: --mode pipeline needs a session that sends statements in groups, not %T", c)
}

// inGroups runs fn, which sends the transaction's groups, and rolls back
// whatever fn left open when it fails.
func inGroups(ctx context.Context, c workload.Conn, fn func(g workload.Grouper) error) error {
	g, err := grouper(c)
	if err != nil {
		return err
	}
	if err := fn(g); err != nil {
		return g.Rollback(ctx, err)
	}
	return nil
}

func (t *newOrder) pipelined(ctx context.Context, c workload.Conn) error {
	return inGroups(ctx, c, func(g workload.Grouper) error { return t.groups(ctx, g) })
}

// noLine is what group 1 tells group 2 about one order line.
type noLine struct {
	newQty, remote, amount int64
	dist                   string
}

// groups: group 1 reads and locks everything whose inputs are the
// transaction's own (warehouse, district and its increment, customer,
// each line's item and stock in visit order); group 2 writes the order,
// its lines and the stock, and commits. Two round trips.
func (t *newOrder) groups(ctx context.Context, g workload.Grouper) error {
	w, d := t.w, t.d
	out := newOrderOutput{brandGeneric: make([]byte, len(t.lines))}
	g.Begin(workload.TxOptions{})
	iw := g.Queue(workload.WantRows, stmtNOWarehouse, w)
	id := g.Queue(workload.WantRows, stmtNODistrict, w, d)
	g.Queue(workload.WantNothing, stmtNODistrictUpdate, w, d)
	ic := g.Queue(workload.WantRows, stmtNOCustomer, w, d, t.c)
	for _, i := range t.visit {
		l := t.lines[i]
		g.Queue(workload.WantRows, stmtNOItem, l.item)
		g.Queue(workload.WantRows, stmtNOStock, d, l.item, l.supply)
	}
	if err := g.Send(ctx); err != nil {
		return fmt.Errorf("neword: group 1 w=%d d=%d: %w", w, d, err)
	}
	var wTax, dTax, disc float64
	var oID int64
	var cLast, credit string
	if err := g.Row(iw).Scan(&wTax); err != nil {
		return fmt.Errorf("neword: warehouse w=%d: %w", w, err)
	}
	if err := g.Row(id).Scan(&dTax, &oID); err != nil {
		return fmt.Errorf("neword: district w=%d d=%d: %w", w, d, err)
	}
	out.oID = oID
	if err := g.Row(ic).Scan(&disc, &cLast, &credit); err != nil {
		return fmt.Errorf("neword: customer w=%d d=%d c=%d: %w", w, d, t.c, err)
	}
	lines := make([]noLine, len(t.lines)) // by ol_number - 1
	var sum int64                         // cents
	prev := -1                            // the line visited before
	for k, i := range t.visit {
		l := t.lines[i]
		var price float64
		var iName, iData string
		err := g.Row(ic+1+2*k).Scan(&price, &iName, &iData)
		if errors.Is(err, workload.ErrNoRows) {
			// §2.4.2.3: roll back all; the statements sent after this
			// one are undone with the rest.
			t.out = out
			return fmt.Errorf("neword: item %d is not valid (w=%d d=%d o=%d): %w", l.item, w, d, oID, workload.ErrUserAbort)
		}
		if err != nil {
			return fmt.Errorf("neword: item %d: %w", l.item, err)
		}
		var sQty int64
		var sData string
		ln := &lines[i]
		if err := g.Row(ic+2+2*k).Scan(&sQty, &sData, &ln.dist); err != nil {
			return fmt.Errorf("neword: stock w=%d i=%d: %w", l.supply, l.item, err)
		}
		// An order may name the same stock row twice (lines visited in
		// item order are adjacent). Prepared mode's second read sees the
		// first line's update; here both reads went before any update, but
		// the row is locked by this transaction since its first read, so
		// the quantity it holds then is the one the first line computed.
		if prev >= 0 && t.lines[prev].item == l.item && t.lines[prev].supply == l.supply {
			sQty = lines[prev].newQty
		}
		prev = int(i)
		// §2.4.2.2, as in run.
		ln.newQty = sQty - l.qty
		if sQty < l.qty+10 {
			ln.newQty += 91
		}
		if l.supply != w {
			ln.remote = 1
		}
		ln.amount = l.qty * cents(price)
		sum += ln.amount
		if strings.Contains(iData, original) && strings.Contains(sData, original) {
			out.brandGeneric[i] = 'B'
		} else {
			out.brandGeneric[i] = 'G'
		}
	}
	g.Queue(workload.WantNothing, stmtNOOrder, oID, d, w, t.c, int64(len(t.lines)), t.allLocal)
	g.Queue(workload.WantNothing, stmtNONewOrder, oID, d, w)
	for _, i := range t.visit {
		l, ln := t.lines[i], &lines[i]
		g.Queue(workload.WantNothing, stmtNOStockUpdate, ln.newQty, l.qty, ln.remote, l.item, l.supply)
		g.Queue(workload.WantNothing, stmtNOOrderLine, oID, d, w, int64(i)+1, l.item, l.supply, l.qty, money64(ln.amount), ln.dist)
	}
	g.Commit()
	if err := g.Send(ctx); err != nil {
		return fmt.Errorf("neword: group 2 w=%d d=%d o=%d: %w", w, d, oID, err)
	}
	out.total = money64(sum) * (1 - disc) * (1 + wTax + dTax)
	t.out = out
	return nil
}

func (t *payment) pipelined(ctx context.Context, c workload.Conn) error {
	return inGroups(ctx, c, func(g workload.Grouper) error { return t.groups(ctx, g) })
}

// groups: group 1 updates and reads the warehouse and district and reads
// the customer by id (or counts the name); by name, group 2 reads the
// customer at the middle; bad credit adds a group for c_data; the last
// group updates the customer, inserts the history row and commits. Two to
// four round trips.
func (t *payment) groups(ctx context.Context, g workload.Grouper) error {
	w, d := t.w, t.d
	amount := money64(t.amount)
	g.Begin(workload.TxOptions{})
	g.Queue(workload.WantNothing, stmtPayWarehouseUpdate, amount, w)
	iw := g.Queue(workload.WantRows, stmtPayWarehouse, w)
	g.Queue(workload.WantNothing, stmtPayDistrictUpdate, amount, w, d)
	id := g.Queue(workload.WantRows, stmtPayDistrict, w, d)
	var ic int
	if t.byName {
		ic = g.Queue(workload.WantRows, stmtPayCustomerCount, t.cw, t.cd, t.cLast)
	} else {
		ic = g.Queue(workload.WantRows, stmtPayCustomer, t.cw, t.cd, t.cID)
	}
	if err := g.Send(ctx); err != nil {
		return fmt.Errorf("payment: group 1 w=%d d=%d: %w", w, d, err)
	}
	var wName, dName, street1, street2, city, state, zip string
	if err := g.Row(iw).Scan(&wName, &street1, &street2, &city, &state, &zip); err != nil {
		return fmt.Errorf("payment: warehouse w=%d: %w", w, err)
	}
	if err := g.Row(id).Scan(&dName, &street1, &street2, &city, &state, &zip); err != nil {
		return fmt.Errorf("payment: district w=%d d=%d: %w", w, d, err)
	}
	var cust payCustomer
	if t.byName {
		n, err := scanCount(g.Row(ic), t.cw, t.cd, t.cLast)
		if err != nil {
			return fmt.Errorf("payment: %w", err)
		}
		ic = g.Queue(workload.WantRows, stmtPayCustomerByName, t.cw, t.cd, t.cLast, (n+1)/2-1)
		if err := g.Send(ctx); err != nil {
			return fmt.Errorf("payment: customer w=%d d=%d last=%s: %w", t.cw, t.cd, t.cLast, err)
		}
		if err := g.Row(ic).Scan(cust.dest()...); err != nil {
			return fmt.Errorf("payment: customer w=%d d=%d last=%s: %w", t.cw, t.cd, t.cLast, err)
		}
	} else if err := g.Row(ic).Scan(cust.dest()...); err != nil {
		return fmt.Errorf("payment: customer w=%d d=%d c=%d: %w", t.cw, t.cd, t.cID, err)
	}
	if cust.credit == "BC" {
		i := g.Queue(workload.WantRows, stmtPayCustomerData, t.cw, t.cd, cust.id)
		if err := g.Send(ctx); err != nil {
			return fmt.Errorf("payment: customer data w=%d d=%d c=%d: %w", t.cw, t.cd, cust.id, err)
		}
		var data string
		if err := g.Row(i).Scan(&data); err != nil {
			return fmt.Errorf("payment: customer data w=%d d=%d c=%d: %w", t.cw, t.cd, cust.id, err)
		}
		data = badCreditData(cust.id, t.cd, t.cw, d, w, t.amount, data)
		g.Queue(workload.WantNothing, stmtPayCustomerUpdateBC, amount, amount, data, t.cw, t.cd, cust.id)
	} else {
		g.Queue(workload.WantNothing, stmtPayCustomerUpdate, amount, amount, t.cw, t.cd, cust.id)
	}
	// §2.5.2.2: h_data is w_name, four spaces, d_name.
	g.Queue(workload.WantNothing, stmtPayHistory, cust.id, t.cd, t.cw, d, w, amount, wName+"    "+dName)
	g.Commit()
	if err := g.Send(ctx); err != nil {
		return fmt.Errorf("payment: last group w=%d d=%d c=%d: %w", w, d, cust.id, err)
	}
	t.out = paymentOutput{cID: cust.id, credit: cust.credit, balance: cust.balance - amount}
	return nil
}

// scanCount reads a customer_count result as countByName does.
func scanCount(r workload.Row, w, d int64, last string) (int64, error) {
	var n int64
	if err := r.Scan(&n); err != nil {
		return 0, fmt.Errorf("count customers w=%d d=%d last=%s: %w", w, d, last, err)
	}
	if n < 1 {
		return 0, fmt.Errorf("no customer w=%d d=%d last=%s: %w", w, d, last, workload.ErrNoRows)
	}
	return n, nil
}

func (t *orderStatus) pipelined(ctx context.Context, c workload.Conn) error {
	return inGroups(ctx, c, func(g workload.Grouper) error { return t.groups(ctx, g) })
}

// groups: by id, group 1 reads the customer and the newest order, group 2
// its lines and commits (two round trips); by name, the count, the
// customer at the middle, the order and the lines each need the one before
// (four).
func (t *orderStatus) groups(ctx context.Context, g workload.Grouper) error {
	w, d := t.w, t.d
	var out orderStatusOutput
	var balance float64
	var first, middle, last string
	var entry, carrier any
	g.Begin(workload.TxOptions{ReadOnly: true})
	io := -1
	if t.byName {
		i := g.Queue(workload.WantRows, stmtOSCustomerCount, w, d, t.cLast)
		if err := g.Send(ctx); err != nil {
			return fmt.Errorf("ostat: count customers w=%d d=%d last=%s: %w", w, d, t.cLast, err)
		}
		n, err := scanCount(g.Row(i), w, d, t.cLast)
		if err != nil {
			return fmt.Errorf("ostat: %w", err)
		}
		i = g.Queue(workload.WantRows, stmtOSCustomerByName, w, d, t.cLast, (n+1)/2-1)
		if err := g.Send(ctx); err != nil {
			return fmt.Errorf("ostat: customer w=%d d=%d last=%s: %w", w, d, t.cLast, err)
		}
		if err := g.Row(i).Scan(&out.cID, &balance, &first, &middle); err != nil {
			return fmt.Errorf("ostat: customer w=%d d=%d last=%s: %w", w, d, t.cLast, err)
		}
	} else {
		out.cID = t.cID
		i := g.Queue(workload.WantRows, stmtOSCustomer, w, d, t.cID)
		io = g.Queue(workload.WantRows, stmtOSOrder, w, d, t.cID)
		if err := g.Send(ctx); err != nil {
			return fmt.Errorf("ostat: customer and order w=%d d=%d c=%d: %w", w, d, t.cID, err)
		}
		if err := g.Row(i).Scan(&balance, &first, &middle, &last); err != nil {
			return fmt.Errorf("ostat: customer w=%d d=%d c=%d: %w", w, d, t.cID, err)
		}
	}
	if io < 0 {
		io = g.Queue(workload.WantRows, stmtOSOrder, w, d, out.cID)
		if err := g.Send(ctx); err != nil {
			return fmt.Errorf("ostat: last order w=%d d=%d c=%d: %w", w, d, out.cID, err)
		}
	}
	if err := g.Row(io).Scan(&out.oID, &entry, &carrier); err != nil {
		return fmt.Errorf("ostat: last order w=%d d=%d c=%d: %w", w, d, out.cID, err)
	}
	il := g.Queue(workload.WantRows, stmtOSOrderLines, w, d, out.oID)
	g.Commit()
	if err := g.Send(ctx); err != nil {
		return fmt.Errorf("ostat: order lines w=%d d=%d o=%d: %w", w, d, out.oID, err)
	}
	rows := g.Rows(il)
	defer func() { _ = rows.Close() }()
	var item, supply, qty int64
	var amount float64
	var delivered any
	for rows.Next() {
		if err := rows.Scan(&item, &supply, &qty, &amount, &delivered); err != nil {
			return fmt.Errorf("ostat: order lines w=%d d=%d o=%d: %w", w, d, out.oID, err)
		}
		out.lines++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("ostat: order lines w=%d d=%d o=%d: %w", w, d, out.oID, err)
	}
	t.out = out
	return nil
}

func (t *delivery) pipelined(ctx context.Context, c workload.Conn) error {
	return inGroups(ctx, c, func(g workload.Grouper) error { return t.groups(ctx, g) })
}

// groups: group 1 finds (and locks) each district's oldest new order;
// group 2 deletes them and reads and updates their orders and lines;
// group 3 credits the customers and commits. Three round trips.
func (t *delivery) groups(ctx context.Context, g workload.Grouper) error {
	w := t.w
	var oIDs, cIDs [districtsPerWH]int64
	var sums [districtsPerWH]float64
	var found [districtsPerWH]bool
	var at [districtsPerWH]int // result index of each district's statement
	g.Begin(workload.TxOptions{})
	for d := range districtsPerWH {
		at[d] = g.Queue(workload.WantRows, stmtDelOldest, w, int64(d+1))
	}
	if err := g.Send(ctx); err != nil {
		return fmt.Errorf("delivery: oldest new orders w=%d: %w", w, err)
	}
	skipped := 0
	for d := range districtsPerWH {
		err := g.Row(at[d]).Scan(&oIDs[d])
		if errors.Is(err, workload.ErrNoRows) {
			skipped++ // §2.7.4.2: no new order here; skip this district only
			continue
		}
		if err != nil {
			return fmt.Errorf("delivery: oldest new order w=%d d=%d: %w", w, d+1, err)
		}
		found[d] = true
	}
	if skipped < districtsPerWH {
		// The deletes first: their row counts are read (and MariaDB sends
		// statements whose counts are read apart from those with rows).
		var del [districtsPerWH]int
		for d := range districtsPerWH {
			if found[d] {
				del[d] = g.Queue(workload.WantCount, stmtDelDelete, w, int64(d+1), oIDs[d])
			}
		}
		var ord, sum [districtsPerWH]int
		for d := range districtsPerWH {
			if !found[d] {
				continue
			}
			dd, o := int64(d+1), oIDs[d]
			ord[d] = g.Queue(workload.WantRows, stmtDelOrder, w, dd, o)
			g.Queue(workload.WantNothing, stmtDelOrderUpdate, t.carrier, w, dd, o)
			g.Queue(workload.WantNothing, stmtDelOrderLineUpdate, w, dd, o)
			sum[d] = g.Queue(workload.WantRows, stmtDelOrderLineSum, w, dd, o)
		}
		if err := g.Send(ctx); err != nil {
			return fmt.Errorf("delivery: deliver orders w=%d: %w", w, err)
		}
		for d := range districtsPerWH {
			if !found[d] {
				continue
			}
			if n := g.Count(del[d]); n != 1 {
				// As in run: another Delivery took the order first.
				return fmt.Errorf("delivery: new order w=%d d=%d o=%d was delivered concurrently (%d rows deleted): %w", w, d+1, oIDs[d], n, workload.ErrRetry)
			}
			if err := g.Row(ord[d]).Scan(&cIDs[d]); err != nil {
				return fmt.Errorf("delivery: order w=%d d=%d o=%d: %w", w, d+1, oIDs[d], err)
			}
			if err := g.Row(sum[d]).Scan(&sums[d]); err != nil {
				return fmt.Errorf("delivery: order line sum w=%d d=%d o=%d: %w", w, d+1, oIDs[d], err)
			}
		}
		for d := range districtsPerWH {
			if found[d] {
				g.Queue(workload.WantNothing, stmtDelCustomerUpdate, money64(cents(sums[d])), w, int64(d+1), cIDs[d])
			}
		}
	}
	g.Commit()
	if err := g.Send(ctx); err != nil {
		return fmt.Errorf("delivery: customers w=%d: %w", w, err)
	}
	t.skipped = skipped
	return nil
}

func (t *stockLevel) pipelined(ctx context.Context, c workload.Conn) error {
	return inGroups(ctx, c, func(g workload.Grouper) error { return t.groups(ctx, g) })
}

// groups: the district's next order id, then the count and the commit.
// Two round trips.
func (t *stockLevel) groups(ctx context.Context, g workload.Grouper) error {
	g.Begin(workload.TxOptions{ReadOnly: true})
	i := g.Queue(workload.WantRows, stmtSLDistrict, t.w, t.d)
	if err := g.Send(ctx); err != nil {
		return fmt.Errorf("slev: district w=%d d=%d: %w", t.w, t.d, err)
	}
	var next int64
	if err := g.Row(i).Scan(&next); err != nil {
		return fmt.Errorf("slev: district w=%d d=%d: %w", t.w, t.d, err)
	}
	i = g.Queue(workload.WantRows, stmtSLCount, t.w, t.d, next-20, next, t.threshold)
	g.Commit()
	if err := g.Send(ctx); err != nil {
		return fmt.Errorf("slev: count w=%d d=%d: %w", t.w, t.d, err)
	}
	if err := g.Row(i).Scan(&t.low); err != nil {
		return fmt.Errorf("slev: count w=%d d=%d: %w", t.w, t.d, err)
	}
	return nil
}
