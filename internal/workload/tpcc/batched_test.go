package tpcc

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/sledge-bench/sledge/internal/workload"
)

// stockState is a stock row of the New-Order model below.
type stockState struct {
	qty, ytd, cnt, remote int64
}

// newOrderModel answers New-Order's statements of client and batched modes
// from one in-memory stock table, so both modes can be run on the same
// inputs and their writes compared. Items are priced 1.00 × id; item 7's
// data is "ORIGINAL".
type newOrderModel struct {
	stock map[[2]int64]*stockState // by (item, supply)
	lines map[int64][]any          // ol_number → (item, supply, qty, amount, dist)
}

func newNewOrderModel(qty int64) *newOrderModel {
	m := &newOrderModel{stock: map[[2]int64]*stockState{}, lines: map[int64][]any{}}
	for i := int64(1); i <= 20; i++ {
		for w := int64(1); w <= 2; w++ {
			m.stock[[2]int64{i, w}] = &stockState{qty: qty}
		}
	}
	return m
}

func (m *newOrderModel) itemRow(id int64) []any {
	data := "plain"
	if id == 7 {
		data = "xORIGINALx"
	}
	return []any{float64(id), fmt.Sprintf("item %d", id), data}
}

func (m *newOrderModel) answer(stmt string, args []any) ([][]any, error) {
	dist := func(i, w int64) string { return fmt.Sprintf("dist %d/%d", i, w) }
	switch stmt {
	case stmtNOItem:
		id := args[0].(int64)
		if id == unusedItem {
			return nil, nil
		}
		return one(m.itemRow(id)...)
	case stmtNOItems:
		var rows [][]any
		for _, a := range args {
			if id := a.(int64); id != unusedItem {
				rows = append(rows, append([]any{id}, m.itemRow(id)...))
			}
		}
		return rows, nil
	case stmtNOStock:
		i, w := args[1].(int64), args[2].(int64)
		return one(m.stock[[2]int64{i, w}].qty, "sORIGINAL", dist(i, w))
	case stmtNOStocks:
		var rows [][]any
		for j := 1; j < len(args); j += 2 {
			i, w := args[j].(int64), args[j+1].(int64)
			rows = append(rows, []any{i, w, m.stock[[2]int64{i, w}].qty, "sORIGINAL", dist(i, w)})
		}
		return rows, nil
	case stmtNOStockUpdate:
		s := m.stock[[2]int64{args[3].(int64), args[4].(int64)}]
		s.qty = args[0].(int64)
		s.ytd += args[1].(int64)
		s.cnt++
		s.remote += args[2].(int64)
		return nil, nil
	case stmtNOStocksUpdate:
		seen := map[[2]int64]bool{}
		for j := 0; j < len(args); j += 6 {
			k := [2]int64{args[j].(int64), args[j+1].(int64)}
			if seen[k] {
				return nil, fmt.Errorf("stock row %v written twice in one statement", k)
			}
			seen[k] = true
			s := m.stock[k]
			s.qty = args[j+2].(int64)
			s.ytd += args[j+3].(int64)
			s.cnt += args[j+4].(int64)
			s.remote += args[j+5].(int64)
		}
		return nil, nil
	case stmtNOOrderLine:
		m.lines[args[3].(int64)] = append([]any(nil), args[4:]...)
		return nil, nil
	case stmtNOOrderLines:
		for j := 0; j < len(args); j += 9 {
			m.lines[args[j+3].(int64)] = append([]any(nil), args[j+4:j+9]...)
		}
		return nil, nil
	}
	return happy(stmt, args)
}

// TestBatchedNewOrderWritesWhatClientWrites: on the same inputs, batched
// mode leaves the stock rows and order lines client mode leaves, items
// repeated on several lines (same or other supplier) and restocking
// included, and shows the terminal the same output.
func TestBatchedNewOrderWritesWhatClientWrites(t *testing.T) {
	tests := []struct {
		name  string
		qty   int64 // every stock row's quantity before
		lines []orderLine
	}{
		{"distinct", 50, []orderLine{{3, 1, 5}, {9, 1, 2}, {7, 1, 1}, {12, 1, 10}, {1, 1, 4}}},
		{"same item twice", 50, []orderLine{{3, 1, 5}, {9, 1, 2}, {3, 1, 7}, {12, 1, 10}, {1, 1, 4}}},
		{"same item, other supplier", 50, []orderLine{{3, 1, 5}, {3, 2, 2}, {3, 1, 7}, {12, 1, 10}, {7, 2, 4}}},
		{"restock on the second line", 20, []orderLine{{5, 1, 6}, {5, 1, 6}, {5, 1, 9}, {7, 1, 1}, {8, 1, 10}}},
		{"one item on every line", 15, []orderLine{{4, 1, 10}, {4, 1, 10}, {4, 1, 10}, {4, 1, 10}, {4, 1, 10}, {4, 1, 10}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tx := newOrderFor(1, 3, 7, tt.lines)
			var outs []newOrderOutput
			var models []*newOrderModel
			for _, m := range []workload.Mode{workload.ModeClient, workload.ModeBatched} {
				model := newNewOrderModel(tt.qty)
				f := &fakeConn{mode: m, answer: model.answer}
				if err := tx.Run(context.Background(), f); err != nil {
					t.Fatalf("%s: %v", m, err)
				}
				for _, b := range f.bad {
					t.Error(b)
				}
				outs = append(outs, tx.out)
				models = append(models, model)
			}
			if !reflect.DeepEqual(models[0].lines, models[1].lines) {
				t.Errorf("order lines differ:\nclient  %v\nbatched %v", models[0].lines, models[1].lines)
			}
			for k, s := range models[0].stock {
				if b := models[1].stock[k]; *b != *s {
					t.Errorf("stock %v: client %+v, batched %+v", k, *s, *b)
				}
			}
			if !reflect.DeepEqual(outs[0], outs[1]) {
				t.Errorf("output: client %+v, batched %+v", outs[0], outs[1])
			}
		})
	}
}

// newOrderFor is a New-Order with the given lines, visited as a terminal
// visits them.
func newOrderFor(w, d, c int64, lines []orderLine) *newOrder {
	tx := &newOrder{w: w, d: d, c: c, lines: lines, visit: make([]uint8, len(lines)), allLocal: 1}
	for i, l := range lines {
		tx.visit[i] = uint8(i)
		if l.supply != w {
			tx.allLocal = 0
		}
	}
	sortVisit(tx)
	return tx
}

// TestBatchedNewOrderRollback: an unused item rolls back with ErrUserAbort
// once the items are read, before any stock row is locked or written.
func TestBatchedNewOrderRollback(t *testing.T) {
	tx := &newOrder{w: 1, d: 2, c: 3, allLocal: 1,
		lines: []orderLine{{500, 1, 1}, {20, 1, 2}, {unusedItem, 1, 3}},
		visit: []uint8{1, 0, 2}}
	f := &fakeConn{mode: workload.ModeBatched, answer: happy}
	err := tx.Run(context.Background(), f)
	if !errors.Is(err, workload.ErrUserAbort) {
		t.Fatalf("err = %v, want ErrUserAbort", err)
	}
	var stmts []string
	for _, c := range f.calls {
		stmts = append(stmts, c.stmt)
	}
	want := []string{stmtNODistrictUpdate, stmtNOHeader, stmtNOOrder, stmtNONewOrder, stmtNOItems}
	if !reflect.DeepEqual(stmts, want) {
		t.Fatalf("statements %v, want %v", stmts, want)
	}
	if items := f.calls[4].args; !reflect.DeepEqual(items, []any{int64(20), int64(500), int64(unusedItem)}) {
		t.Errorf("items %v, want the distinct items in visit order", items)
	}
	if tx.out.oID != 3001 {
		t.Errorf("o_id %d, want d_next_o_id − 1 = 3001", tx.out.oID)
	}
}

// TestBatchedDelivery: districts without a new order are skipped, the rest
// handled by one statement each, and fewer deleted rows than asked is a
// retryable conflict.
func TestBatchedDelivery(t *testing.T) {
	empty := map[int64]bool{3: true, 7: true}
	answer := func(stmt string, args []any) ([][]any, error) {
		if stmt == stmtDelOldestAll {
			var rows [][]any
			for d := int64(1); d <= districtsPerWH; d++ {
				o := int64(2100 + d)
				if empty[d] {
					o = 0
				}
				rows = append(rows, []any{d, o})
			}
			return rows, nil
		}
		return happy(stmt, args)
	}
	tx := &delivery{w: 2, carrier: 5}
	f := &fakeConn{mode: workload.ModeBatched, answer: answer}
	if err := tx.Run(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	if tx.Skipped() != 2 {
		t.Errorf("skipped %d, want 2", tx.Skipped())
	}
	byStmt := map[string][]any{}
	for _, c := range f.calls {
		if _, dup := byStmt[c.stmt]; dup {
			t.Errorf("%s sent twice", c.stmt)
		}
		byStmt[c.stmt] = c.args
	}
	pairs := []any{int64(2)}
	var cust []any
	for d := int64(1); d <= districtsPerWH; d++ {
		if !empty[d] {
			pairs = append(pairs, d, 2100+d)
			cust = append(cust, d, int64(9), 123.45)
		}
	}
	cust = append(cust, int64(2))
	for stmt, want := range map[string][]any{
		stmtDelDeletes:          pairs,
		stmtDelOrders:           pairs,
		stmtDelOrdersUpdate:     append([]any{int64(5)}, pairs...),
		stmtDelOrderLinesUpdate: pairs,
		stmtDelCustomersUpdate:  cust,
	} {
		if !reflect.DeepEqual(byStmt[stmt], want) {
			t.Errorf("%s %v, want %v", stmt, byStmt[stmt], want)
		}
	}

	lost := &fakeConn{mode: workload.ModeBatched, answer: func(stmt string, args []any) ([][]any, error) {
		if stmt == stmtDelDeletes {
			return one(int64(7))
		}
		return answer(stmt, args)
	}}
	if err := tx.Run(context.Background(), lost); !errors.Is(err, workload.ErrRetry) {
		t.Fatalf("err = %v, want ErrRetry", err)
	}

	none := &fakeConn{mode: workload.ModeBatched, answer: func(stmt string, args []any) ([][]any, error) {
		if stmt == stmtDelOldestAll {
			return [][]any{{int64(1), int64(0)}, {int64(2), int64(0)}}, nil
		}
		return nil, errors.New("no statement after an empty warehouse")
	}}
	if err := tx.Run(context.Background(), none); err != nil || tx.Skipped() != districtsPerWH {
		t.Errorf("no new orders: err %v, skipped %d", err, tx.Skipped())
	}
}

// TestBatchedPayment: by name, the customer at ⌈n/2⌉ of the rows; bad
// credit takes c_data from the same row; h_data from the join.
func TestBatchedPayment(t *testing.T) {
	tx := &payment{w: 1, d: 2, cw: 1, cd: 2, byName: true, cLast: "BARBARBAR", amount: 123456}
	f := &fakeConn{mode: workload.ModeBatched, answer: happy}
	if err := tx.Run(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	// happy returns customers 7, 8, 9: the middle one, 8, has bad credit.
	var upd, hist *call
	for i := range f.calls {
		switch f.calls[i].stmt {
		case stmtPayCustomerUpdateBC:
			upd = &f.calls[i]
		case stmtPayHistory:
			hist = &f.calls[i]
		case stmtPayCustomerUpdate:
			t.Error("GC update for a BC customer")
		}
	}
	if upd == nil || hist == nil {
		t.Fatalf("calls %+v", f.calls)
	}
	if data := upd.args[2].(string); len(data) != maxCData || data[:22] != "8 2 1 2 1 1234.56 xxxx" {
		t.Errorf("c_data %q", data[:22])
	}
	want := []any{int64(8), int64(2), int64(1), int64(2), int64(1), 1234.56, "wname    dname"}
	if !reflect.DeepEqual(hist.args, want) {
		t.Errorf("history %v, want %v", hist.args, want)
	}
	if tx.out.cID != 8 || tx.out.credit != "BC" {
		t.Errorf("output %+v", tx.out)
	}
	if len(f.calls) != 5 {
		t.Errorf("%d statements, want 5", len(f.calls))
	}
}

// TestBatchedOrderStatus: by name the middle customer's newest order, whose
// lines are then read; a customer without orders is ErrNoRows.
func TestBatchedOrderStatus(t *testing.T) {
	tx := &orderStatus{w: 1, d: 2, byName: true, cLast: "BARBARBAR"}
	f := &fakeConn{mode: workload.ModeBatched, answer: happy}
	if err := tx.Run(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	// happy returns customers 6 and 7: ⌈2/2⌉ is the first.
	if tx.out.cID != 6 || tx.out.oID != 40 || tx.out.lines != 2 {
		t.Errorf("output %+v, want customer 6, order 40, 2 lines", tx.out)
	}
	if last := f.calls[len(f.calls)-1]; last.stmt != stmtOSOrderLines || !reflect.DeepEqual(last.args, []any{int64(1), int64(2), int64(40)}) {
		t.Errorf("last call %+v", last)
	}
	noOrder := &fakeConn{mode: workload.ModeBatched, answer: func(stmt string, args []any) ([][]any, error) {
		if stmt == stmtOSCustomerOrder {
			return one(-10.0, "first", "OE", "BARBARBAR", int64(0), nil, nil)
		}
		return happy(stmt, args)
	}}
	if err := (&orderStatus{w: 1, d: 2, cID: 5}).Run(context.Background(), noOrder); !errors.Is(err, workload.ErrNoRows) {
		t.Errorf("customer without orders: %v, want ErrNoRows", err)
	}
}
