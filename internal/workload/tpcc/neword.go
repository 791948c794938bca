package tpcc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

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

func (t *newOrder) Kind() int { return kindNewOrder }

// Run runs the transaction: one call in procedure mode, else the §2.4.2.2
// profile statement by statement inside one database transaction.
func (t *newOrder) Run(ctx context.Context, c workload.Conn) error {
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

// call runs neword.call; an invalid item's error comes back mapped by the
// database package.
func (t *newOrder) call(ctx context.Context, c workload.Conn) error {
	var items, supply, qty strings.Builder
	for i, l := range t.lines {
		if i > 0 {
			items.WriteByte(',')
			supply.WriteByte(',')
			qty.WriteByte(',')
		}
		items.WriteString(strconv.FormatInt(l.item, 10))
		supply.WriteString(strconv.FormatInt(l.supply, 10))
		qty.WriteString(strconv.FormatInt(l.qty, 10))
	}
	t.out = newOrderOutput{}
	err := c.QueryRow(ctx, stmtNOCall, t.w, t.d, t.c, int64(len(t.lines)),
		items.String(), supply.String(), qty.String()).Scan(&t.out.oID)
	if err != nil {
		return fmt.Errorf("neword: call w=%d d=%d c=%d: %w", t.w, t.d, t.c, err)
	}
	return nil
}

// cents converts a money value read from the database to whole cents; the
// float64 may carry representation error, never a fraction of a cent.
func cents(v float64) int64 { return int64(math.Round(v * 100)) }

func (t *newOrder) run(ctx context.Context, c workload.Conn) error {
	w, d := t.w, t.d
	out := newOrderOutput{brandGeneric: make([]byte, len(t.lines))}
	var wTax, dTax, disc float64
	var oID int64
	var cLast, credit string
	if err := c.QueryRow(ctx, stmtNOWarehouse, w).Scan(&wTax); err != nil {
		return fmt.Errorf("neword: warehouse w=%d: %w", w, err)
	}
	if err := c.QueryRow(ctx, stmtNODistrict, w, d).Scan(&dTax, &oID); err != nil {
		return fmt.Errorf("neword: district w=%d d=%d: %w", w, d, err)
	}
	// The order number is the value read; the rollback case undoes the
	// increment too, so order numbers stay gap-free (§2.4.2.3).
	if _, err := c.Exec(ctx, stmtNODistrictUpdate, w, d); err != nil {
		return fmt.Errorf("neword: district update w=%d d=%d: %w", w, d, err)
	}
	out.oID = oID
	if err := c.QueryRow(ctx, stmtNOCustomer, w, d, t.c).Scan(&disc, &cLast, &credit); err != nil {
		return fmt.Errorf("neword: customer w=%d d=%d c=%d: %w", w, d, t.c, err)
	}
	if _, err := c.Exec(ctx, stmtNOOrder, oID, d, w, t.c, int64(len(t.lines)), t.allLocal); err != nil {
		return fmt.Errorf("neword: insert order w=%d d=%d o=%d: %w", w, d, oID, err)
	}
	if _, err := c.Exec(ctx, stmtNONewOrder, oID, d, w); err != nil {
		return fmt.Errorf("neword: insert new_order w=%d d=%d o=%d: %w", w, d, oID, err)
	}
	var sum int64 // cents
	for _, i := range t.visit {
		l := t.lines[i]
		var price float64
		var iName, iData string
		err := c.QueryRow(ctx, stmtNOItem, l.item).Scan(&price, &iName, &iData)
		if errors.Is(err, workload.ErrNoRows) {
			// §2.4.2.3: the previous lines were processed; roll back all.
			t.out = out
			return fmt.Errorf("neword: item %d is not valid (w=%d d=%d o=%d): %w", l.item, w, d, oID, workload.ErrUserAbort)
		}
		if err != nil {
			return fmt.Errorf("neword: item %d: %w", l.item, err)
		}
		var sQty int64
		var sData, dist string
		if err := c.QueryRow(ctx, stmtNOStock, d, l.item, l.supply).Scan(&sQty, &sData, &dist); err != nil {
			return fmt.Errorf("neword: stock w=%d i=%d: %w", l.supply, l.item, err)
		}
		// §2.4.2.2: take the quantity, restocking by 91 when fewer than 10
		// would remain.
		newQty := sQty - l.qty
		if sQty < l.qty+10 {
			newQty += 91
		}
		var remote int64
		if l.supply != w {
			remote = 1
		}
		if _, err := c.Exec(ctx, stmtNOStockUpdate, newQty, l.qty, remote, l.item, l.supply); err != nil {
			return fmt.Errorf("neword: stock update w=%d i=%d: %w", l.supply, l.item, err)
		}
		amount := l.qty * cents(price) // §2.4.2.2: ol_amount = ol_quantity × i_price
		sum += amount
		if strings.Contains(iData, original) && strings.Contains(sData, original) {
			out.brandGeneric[i] = 'B'
		} else {
			out.brandGeneric[i] = 'G'
		}
		if _, err := c.Exec(ctx, stmtNOOrderLine, oID, d, w, int64(i)+1, l.item, l.supply, l.qty, money64(amount), dist); err != nil {
			return fmt.Errorf("neword: insert order_line w=%d d=%d o=%d n=%d: %w", w, d, oID, i+1, err)
		}
	}
	out.total = money64(sum) * (1 - disc) * (1 + wTax + dTax)
	t.out = out
	return nil
}

// money64 is money for int64 cents.
func money64(cents int64) float64 { return float64(cents) / 100 }
