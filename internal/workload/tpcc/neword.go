package tpcc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/sledge-bench/sledge/internal/workload"
)

// newOrder is one New-Order (§2.4) with its inputs. Run reads the inputs
// only; out is rewritten by every Run.
type newOrder struct {
	w, d, c  int64
	lines    []orderLine // in ol_number order
	visit    []uint8     // indexes into lines, in the order Run visits them
	allLocal int64       // §2.4.1.7: 1 when every line is supplied by w
	out      newOrderOutput
	// Next's room for lines and visit: at most 15 lines (§2.4.1.3).
	lineBuf  [15]orderLine
	visitBuf [15]uint8
	st       *newOrderStmts
}

type orderLine struct {
	item, supply, qty int64
}

// newOrderOutput is what the terminal would show (§2.4.3.3).
type newOrderOutput struct {
	oID          int64
	total        float64 // Σ ol_amount × (1 − c_discount) × (1 + w_tax + d_tax)
	brandGeneric []byte  // per line, in ol_number order: 'B' or 'G'
}

// newOrderStmts are a New-Order's statements bound once to its inputs and
// to the variables below, which each Run rewrites (issue 26).
type newOrderStmts struct {
	olCnt            int64 // o_ol_cnt: len(lines)
	wTax, dTax, disc float64
	oID              int64
	cLast, credit    []byte
	line             orderLine // the line being visited
	olNumber         int64
	price            float64
	iName, iData     []byte
	sQty             int64
	sData, dist      []byte
	newQty, remote   int64
	amount           float64 // ol_amount
	brand            []byte  // out.brandGeneric's array
	// neword.call's lists: comma-separated decimal integers.
	items, supply, qty []byte

	warehouse, district, districtUpdate, customer, order, newOrder,
	item, stock, stockUpdate, orderLine, call *workload.Stmt

	c    workload.Conn // the session of the Run under way
	body func(ctx context.Context) error
}

// bind makes t's statements; a newOrder made without NewTerminal binds on
// its first Run.
func (t *newOrder) bind() {
	st := &newOrderStmts{}
	l := &st.line
	st.warehouse = workload.Bind(stmtNOWarehouse, []any{&t.w}, &st.wTax)
	st.district = workload.Bind(stmtNODistrict, []any{&t.w, &t.d}, &st.dTax, &st.oID)
	st.districtUpdate = workload.Bind(stmtNODistrictUpdate, []any{&t.w, &t.d})
	st.customer = workload.Bind(stmtNOCustomer, []any{&t.w, &t.d, &t.c}, &st.disc, &st.cLast, &st.credit)
	st.order = workload.Bind(stmtNOOrder, []any{&st.oID, &t.d, &t.w, &t.c, &st.olCnt, &t.allLocal})
	st.newOrder = workload.Bind(stmtNONewOrder, []any{&st.oID, &t.d, &t.w})
	st.item = workload.Bind(stmtNOItem, []any{&l.item}, &st.price, &st.iName, &st.iData)
	st.stock = workload.Bind(stmtNOStock, []any{&t.d, &l.item, &l.supply}, &st.sQty, &st.sData, &st.dist)
	st.stockUpdate = workload.Bind(stmtNOStockUpdate, []any{&st.newQty, &l.qty, &st.remote, &l.item, &l.supply})
	st.orderLine = workload.Bind(stmtNOOrderLine,
		[]any{&st.oID, &t.d, &t.w, &st.olNumber, &l.item, &l.supply, &l.qty, &st.amount, &st.dist})
	st.call = workload.Bind(stmtNOCall, []any{&t.w, &t.d, &t.c, &st.olCnt, &st.items, &st.supply, &st.qty}, &t.out.oID)
	st.body = func(ctx context.Context) error { return t.run(ctx, st.c) }
	t.st = st
}

func (t *newOrder) Kind() int { return kindNewOrder }

// Run runs the transaction: one call in procedure mode, else the §2.4.2.2
// profile statement by statement inside one database transaction.
func (t *newOrder) Run(ctx context.Context, c workload.Conn) error {
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

// call runs neword.call; an invalid item's error comes back mapped by the
// database package.
func (t *newOrder) call(ctx context.Context, c workload.Conn) error {
	st := t.st
	st.items, st.supply, st.qty = st.items[:0], st.supply[:0], st.qty[:0]
	for i, l := range t.lines {
		if i > 0 {
			st.items = append(st.items, ',')
			st.supply = append(st.supply, ',')
			st.qty = append(st.qty, ',')
		}
		st.items = strconv.AppendInt(st.items, l.item, 10)
		st.supply = strconv.AppendInt(st.supply, l.supply, 10)
		st.qty = strconv.AppendInt(st.qty, l.qty, 10)
	}
	st.olCnt = int64(len(t.lines))
	t.out = newOrderOutput{}
	if err := workload.QueryRowStmt(ctx, c, st.call); err != nil {
		return fmt.Errorf("neword: call w=%d d=%d c=%d: %w", t.w, t.d, t.c, err)
	}
	return nil
}

// cents converts a money value read from the database to whole cents; the
// float64 may carry representation error, never a fraction of a cent.
func cents(v float64) int64 { return int64(math.Round(v * 100)) }

// original as bytes, for the stock and item data read into []byte.
var originalBytes = []byte(original)

func (t *newOrder) run(ctx context.Context, c workload.Conn) error {
	w, d, st := t.w, t.d, t.st
	n := len(t.lines)
	if cap(st.brand) < n {
		st.brand = make([]byte, n)
	}
	out := newOrderOutput{brandGeneric: st.brand[:n]}
	clear(out.brandGeneric)
	st.olCnt = int64(n)
	if err := workload.QueryRowStmt(ctx, c, st.warehouse); err != nil {
		return fmt.Errorf("neword: warehouse w=%d: %w", w, err)
	}
	if err := workload.QueryRowStmt(ctx, c, st.district); err != nil {
		return fmt.Errorf("neword: district w=%d d=%d: %w", w, d, err)
	}
	// The order number is the value read; the rollback case undoes the
	// increment too, so order numbers stay gap-free (§2.4.2.3).
	if _, err := workload.ExecStmt(ctx, c, st.districtUpdate); err != nil {
		return fmt.Errorf("neword: district update w=%d d=%d: %w", w, d, err)
	}
	oID := st.oID
	out.oID = oID
	if err := workload.QueryRowStmt(ctx, c, st.customer); err != nil {
		return fmt.Errorf("neword: customer w=%d d=%d c=%d: %w", w, d, t.c, err)
	}
	if _, err := workload.ExecStmt(ctx, c, st.order); err != nil {
		return fmt.Errorf("neword: insert order w=%d d=%d o=%d: %w", w, d, oID, err)
	}
	if _, err := workload.ExecStmt(ctx, c, st.newOrder); err != nil {
		return fmt.Errorf("neword: insert new_order w=%d d=%d o=%d: %w", w, d, oID, err)
	}
	var sum int64 // cents
	for _, i := range t.visit {
		l := t.lines[i]
		st.line = l
		err := workload.QueryRowStmt(ctx, c, st.item)
		if errors.Is(err, workload.ErrNoRows) {
			// §2.4.2.3: the previous lines were processed; roll back all.
			t.out = out
			return fmt.Errorf("neword: item %d is not valid (w=%d d=%d o=%d): %w", l.item, w, d, oID, workload.ErrUserAbort)
		}
		if err != nil {
			return fmt.Errorf("neword: item %d: %w", l.item, err)
		}
		if err := workload.QueryRowStmt(ctx, c, st.stock); err != nil {
			return fmt.Errorf("neword: stock w=%d i=%d: %w", l.supply, l.item, err)
		}
		// §2.4.2.2: take the quantity, restocking by 91 when fewer than 10
		// would remain.
		st.newQty = st.sQty - l.qty
		if st.sQty < l.qty+10 {
			st.newQty += 91
		}
		st.remote = 0
		if l.supply != w {
			st.remote = 1
		}
		if _, err := workload.ExecStmt(ctx, c, st.stockUpdate); err != nil {
			return fmt.Errorf("neword: stock update w=%d i=%d: %w", l.supply, l.item, err)
		}
		amount := l.qty * cents(st.price) // §2.4.2.2: ol_amount = ol_quantity × i_price
		sum += amount
		if bytes.Contains(st.iData, originalBytes) && bytes.Contains(st.sData, originalBytes) {
			out.brandGeneric[i] = 'B'
		} else {
			out.brandGeneric[i] = 'G'
		}
		st.olNumber, st.amount = int64(i)+1, money64(amount)
		if _, err := workload.ExecStmt(ctx, c, st.orderLine); err != nil {
			return fmt.Errorf("neword: insert order_line w=%d d=%d o=%d n=%d: %w", w, d, oID, i+1, err)
		}
	}
	out.total = money64(sum) * (1 - st.disc) * (1 + st.wTax + st.dTax)
	t.out = out
	return nil
}

// money64 is money for int64 cents.
func money64(cents int64) float64 { return float64(cents) / 100 }
