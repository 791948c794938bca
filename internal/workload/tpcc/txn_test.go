package tpcc

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/workload"
)

// TestTransactionsFollowStatementContract runs many transactions of every
// kind against the fake connection in each mode, and checks each call
// against the contract: the name is in Statements(m), the argument count is
// the SQLite text's, Scan takes as many destinations as the SELECT has
// columns, and client statements run inside InTx while calls do not.
func TestTransactionsFollowStatementContract(t *testing.T) {
	sqlite := sqliteStatements(t)
	w := New(Config{Warehouses: 3, Seed: 1})
	for _, m := range []workload.Mode{workload.ModeClient, workload.ModePrepared, workload.ModeProcedure, workload.ModeBatched} {
		t.Run(m.String(), func(t *testing.T) {
			allowed := w.Statements(m)
			seen := map[string]bool{}
			kinds := make([]int, numKinds)
			for vu := range 4 {
				term := w.NewTerminal(vu, 4, 7)
				for range 500 {
					tx := term.Next()
					kinds[tx.Kind()]++
					f := &fakeConn{mode: m, answer: happy}
					err := tx.Run(context.Background(), f)
					if err != nil && !errors.Is(err, workload.ErrUserAbort) {
						t.Fatalf("%T: %v", tx, err)
					}
					for _, b := range f.bad {
						t.Error(b)
					}
					if m == workload.ModeProcedure && (len(f.calls) != 1 || len(f.txs) != 0) {
						t.Fatalf("%T: procedure mode made %d calls in %d InTx", tx, len(f.calls), len(f.txs))
					}
					if m != workload.ModeProcedure && len(f.txs) != 1 {
						t.Fatalf("%T: %d InTx", tx, len(f.txs))
					}
					for _, c := range f.calls {
						seen[c.stmt] = true
						if !slices.Contains(allowed, c.stmt) {
							t.Fatalf("%s is not in Statements(%v)", c.stmt, m)
						}
						if m == workload.ModeProcedure {
							continue
						}
						if !c.inTx {
							t.Errorf("%s ran outside InTx", c.stmt)
						}
						sql := sqlite[c.stmt]
						if fixed, per := arity(sql); per > 0 {
							if k := len(c.args) - fixed; k < per || k%per != 0 {
								t.Fatalf("%s: %d arguments, the SQL takes %d and %d per repeat", c.stmt, len(c.args), fixed, per)
							}
						} else if n := len(placeholders(t, c.stmt, sql)); n != len(c.args) {
							t.Fatalf("%s: %d arguments, the SQL has %d placeholders", c.stmt, len(c.args), n)
						}
						if c.scans >= 0 {
							if n := resultColumns(sql); n != c.scans {
								t.Fatalf("%s: Scan into %d, the SQL selects %d columns", c.stmt, c.scans, n)
							}
						}
					}
				}
			}
			for k, n := range kinds {
				if n == 0 {
					t.Errorf("kind %d never drawn", k)
				}
			}
			// Every transaction statement of the mode was exercised.
			for _, s := range allowed {
				if s == stmtMetaGet || s == stmtNOPM || strings.HasPrefix(s, "check.") {
					continue
				}
				if !seen[s] {
					t.Errorf("%s never used", s)
				}
			}
		})
	}
}

// TestProcedureCallArguments pins the argument lists of the five calls.
func TestProcedureCallArguments(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		tx   workload.Txn
		stmt string
		args []any
	}{
		{"neword", &newOrder{w: 1, d: 2, c: 3, lines: []orderLine{{10, 1, 5}, {7, 2, 1}}, visit: []uint8{1, 0}, allLocal: 0},
			stmtNOCall, []any{int64(1), int64(2), int64(3), int64(2), "10,7", "1,2", "5,1"}},
		{"payment/name", &payment{w: 1, d: 2, cw: 3, cd: 4, byName: true, cLast: "BARBARBAR", amount: 123456},
			stmtPayCall, []any{int64(1), int64(2), int64(3), int64(4), int64(1), int64(0), "BARBARBAR", 1234.56}},
		{"payment/id", &payment{w: 1, d: 2, cw: 1, cd: 2, cID: 99, amount: 100},
			stmtPayCall, []any{int64(1), int64(2), int64(1), int64(2), int64(0), int64(99), "", 1.0}},
		{"delivery", &delivery{w: 4, carrier: 9}, stmtDelCall, []any{int64(4), int64(9)}},
		{"slev", &stockLevel{w: 4, d: 3, threshold: 15}, stmtSLCall, []any{int64(4), int64(3), int64(15)}},
		{"ostat", &orderStatus{w: 4, d: 3, cID: 17}, stmtOSCall, []any{int64(4), int64(3), int64(0), int64(17), ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeConn{mode: workload.ModeProcedure, answer: happy}
			if err := tc.tx.Run(ctx, f); err != nil {
				t.Fatal(err)
			}
			if len(f.calls) != 1 || f.calls[0].stmt != tc.stmt || !reflect.DeepEqual(f.calls[0].args, tc.args) {
				t.Fatalf("calls %+v, want %s%v", f.calls, tc.stmt, tc.args)
			}
		})
	}
}

// TestProcedureErrorKeepsIdentity: what the database maps (ErrUserAbort
// for the invalid item) survives the wrapping.
func TestProcedureErrorKeepsIdentity(t *testing.T) {
	f := &fakeConn{mode: workload.ModeProcedure, answer: func(string, []any) ([][]any, error) {
		return nil, fmt.Errorf("procedure raised: %w", workload.ErrUserAbort)
	}}
	tx := &newOrder{w: 1, d: 1, c: 1, lines: []orderLine{{unusedItem, 1, 1}}, visit: []uint8{0}, allLocal: 1}
	if err := tx.Run(context.Background(), f); !errors.Is(err, workload.ErrUserAbort) {
		t.Fatalf("err = %v", err)
	}
}

// TestNewOrderRollback: §2.4.2.3, the lines before the unused item are
// processed, then the transaction fails with ErrUserAbort.
func TestNewOrderRollback(t *testing.T) {
	tx := &newOrder{w: 1, d: 2, c: 3, allLocal: 1,
		lines: []orderLine{{500, 1, 1}, {20, 1, 2}, {unusedItem, 1, 3}},
		visit: []uint8{1, 0, 2}}
	f := &fakeConn{mode: workload.ModePrepared, answer: happy}
	err := tx.Run(context.Background(), f)
	if !errors.Is(err, workload.ErrUserAbort) {
		t.Fatalf("err = %v, want ErrUserAbort", err)
	}
	var lines []any
	for _, c := range f.calls {
		if c.stmt == stmtNOOrderLine {
			lines = append(lines, c.args[3], c.args[4]) // ol_number, item
		}
	}
	want := []any{int64(2), int64(20), int64(1), int64(500)} // item order, ol_number kept
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("order lines (number, item) %v, want %v", lines, want)
	}
	if last := f.calls[len(f.calls)-1]; last.stmt != stmtNOItem || last.args[0] != int64(unusedItem) {
		t.Fatalf("last call %+v", last)
	}
}

// TestNewOrderValues: stock rule, remote count, o_all_local, ol_amount and
// the order number read from the district.
func TestNewOrderValues(t *testing.T) {
	cases := []struct {
		sQty, olQty, wantQty int64
	}{
		{50, 5, 45},
		{16, 6, 10},  // s_quantity >= ol_quantity + 10: plain decrement
		{15, 6, 100}, // below: restock by 91
		{10, 10, 91},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("s=%d/q=%d", tc.sQty, tc.olQty), func(t *testing.T) {
			answer := func(stmt string, args []any) ([][]any, error) {
				if stmt == stmtNOStock {
					return one(tc.sQty, "data", "dist")
				}
				return happy(stmt, args)
			}
			tx := &newOrder{w: 1, d: 2, c: 3, allLocal: 0, lines: []orderLine{{8, 2, tc.olQty}}, visit: []uint8{0}}
			f := &fakeConn{mode: workload.ModeClient, answer: answer}
			if err := tx.Run(context.Background(), f); err != nil {
				t.Fatal(err)
			}
			for _, c := range f.calls {
				switch c.stmt {
				case stmtNOStockUpdate:
					want := []any{tc.wantQty, tc.olQty, int64(1), int64(8), int64(2)}
					if !reflect.DeepEqual(c.args, want) {
						t.Errorf("stock update %v, want %v", c.args, want)
					}
				case stmtNOOrder:
					want := []any{int64(3001), int64(2), int64(1), int64(3), int64(1), int64(0)}
					if !reflect.DeepEqual(c.args, want) {
						t.Errorf("order %v, want %v", c.args, want)
					}
				case stmtNOOrderLine:
					if amt := c.args[7].(float64); amt != float64(tc.olQty)*12.34 && cents(amt) != tc.olQty*1234 {
						t.Errorf("ol_amount %v for %d × 12.34", amt, tc.olQty)
					}
				}
			}
			if tx.out.oID != 3001 {
				t.Errorf("o_id %d", tx.out.oID)
			}
		})
	}
}

// TestRunIsRepeatable: after ErrRetry the engine runs the same Txn again;
// inputs must be unchanged, so both runs issue identical statements.
func TestRunIsRepeatable(t *testing.T) {
	w := New(Config{Warehouses: 4, Seed: 3})
	term := w.NewTerminal(0, 1, 11)
	for range 300 {
		tx := term.Next()
		var runs [2][]call
		for i := range runs {
			f := &fakeConn{mode: workload.ModeClient, answer: happy}
			_ = tx.Run(context.Background(), f)
			runs[i] = f.calls
		}
		if !reflect.DeepEqual(runs[0], runs[1]) {
			t.Fatalf("%T: second run differs", tx)
		}
	}
}

// TestPaymentByName: the customer at ⌈n/2⌉ (offset (n+1)/2 − 1).
func TestPaymentByName(t *testing.T) {
	for n, wantOffset := range map[int64]int64{1: 0, 2: 0, 3: 1, 4: 1, 5: 2, 6: 2} {
		answer := func(stmt string, args []any) ([][]any, error) {
			if stmt == stmtPayCustomerCount || stmt == stmtOSCustomerCount {
				return one(n)
			}
			return happy(stmt, args)
		}
		for _, tx := range []workload.Txn{
			&payment{w: 1, d: 1, cw: 1, cd: 1, byName: true, cLast: "X", amount: 100},
			&orderStatus{w: 1, d: 1, byName: true, cLast: "X"},
		} {
			f := &fakeConn{mode: workload.ModePrepared, answer: answer}
			if err := tx.Run(context.Background(), f); err != nil {
				t.Fatal(err)
			}
			for _, c := range f.calls {
				if c.stmt == stmtPayCustomerByName || c.stmt == stmtOSCustomerByName {
					if c.args[3] != wantOffset {
						t.Errorf("%T n=%d: offset %v, want %d", tx, n, c.args[3], wantOffset)
					}
				}
			}
		}
	}
}

// TestPaymentBadCredit: BC customers get the payment in front of c_data,
// cut to 500 characters; h_data is w_name, 4 spaces, d_name.
func TestPaymentBadCredit(t *testing.T) {
	answer := func(stmt string, args []any) ([][]any, error) {
		if stmt == stmtPayCustomer {
			return one(int64(7), "first", "OE", "BAR", "s1", "s2", "city", "ST", "123411111", "0123456789012345",
				"2024-01-01 00:00:00", "BC", 50000.0, 0.1, -10.0)
		}
		return happy(stmt, args)
	}
	tx := &payment{w: 1, d: 2, cw: 3, cd: 4, cID: 7, amount: 123456}
	f := &fakeConn{mode: workload.ModeClient, answer: answer}
	if err := tx.Run(context.Background(), f); err != nil {
		t.Fatal(err)
	}
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
		t.Fatal("missing update or history")
	}
	data := upd.args[2].(string)
	if len(data) != maxCData || !strings.HasPrefix(data, "7 4 3 2 1 1234.56 xxx") {
		t.Errorf("c_data %q (len %d)", data[:30], len(data))
	}
	if upd.args[0] != 1234.56 || upd.args[1] != 1234.56 {
		t.Errorf("amounts %v %v", upd.args[0], upd.args[1])
	}
	want := []any{int64(7), int64(4), int64(3), int64(2), int64(1), 1234.56, "wname    dname"}
	if !reflect.DeepEqual(hist.args, want) {
		t.Errorf("history %v, want %v", hist.args, want)
	}
	if got := badCreditData(1, 2, 3, 4, 5, 100, "old"); got != "1 2 3 4 5 1.00 old" {
		t.Errorf("badCreditData = %q", got)
	}
}

// TestDelivery: districts without new orders are skipped and counted; a
// delete that removed no row is a retryable conflict.
func TestDelivery(t *testing.T) {
	empty := map[int64]bool{3: true, 7: true}
	answer := func(stmt string, args []any) ([][]any, error) {
		if stmt == stmtDelOldest && empty[args[1].(int64)] {
			return nil, nil
		}
		return happy(stmt, args)
	}
	tx := &delivery{w: 2, carrier: 5}
	f := &fakeConn{mode: workload.ModePrepared, answer: answer}
	if err := tx.Run(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	if tx.Skipped() != 2 {
		t.Errorf("skipped %d, want 2", tx.Skipped())
	}
	n := 0
	for _, c := range f.calls {
		if c.stmt == stmtDelCustomerUpdate {
			n++
			if c.args[0] != 123.45 {
				t.Errorf("customer update amount %v", c.args[0])
			}
		}
	}
	if n != 8 {
		t.Errorf("%d customers updated, want 8", n)
	}
	if len(f.txs) != 1 {
		t.Errorf("%d transactions, want one for all ten districts", len(f.txs))
	}

	lost := &fakeConn{mode: workload.ModePrepared, answer: func(stmt string, args []any) ([][]any, error) {
		if stmt == stmtDelDelete {
			return one(int64(0))
		}
		return happy(stmt, args)
	}}
	if err := tx.Run(context.Background(), lost); !errors.Is(err, workload.ErrRetry) {
		t.Fatalf("err = %v, want ErrRetry", err)
	}
}

// TestReadOnlyTransactions: Order-Status and Stock-Level ask for read-only
// transactions, the others for read-write.
func TestReadOnlyTransactions(t *testing.T) {
	cases := []struct {
		tx       workload.Txn
		readOnly bool
	}{
		{&newOrder{w: 1, d: 1, c: 1, lines: []orderLine{{1, 1, 1}}, visit: []uint8{0}, allLocal: 1}, false},
		{&payment{w: 1, d: 1, cw: 1, cd: 1, cID: 1, amount: 100}, false},
		{&delivery{w: 1, carrier: 1}, false},
		{&orderStatus{w: 1, d: 1, cID: 1}, true},
		{&stockLevel{w: 1, d: 1, threshold: 10}, true},
	}
	for _, tc := range cases {
		f := &fakeConn{mode: workload.ModeClient, answer: happy}
		if err := tc.tx.Run(context.Background(), f); err != nil {
			t.Fatal(err)
		}
		if len(f.txs) != 1 || f.txs[0].ReadOnly != tc.readOnly {
			t.Errorf("%T: transactions %+v, want ReadOnly=%v", tc.tx, f.txs, tc.readOnly)
		}
	}
}

// TestStockLevelWindow: the last 20 orders, [next−20, next).
func TestStockLevelWindow(t *testing.T) {
	tx := &stockLevel{w: 2, d: 5, threshold: 12}
	f := &fakeConn{mode: workload.ModeClient, answer: happy}
	if err := tx.Run(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	want := []any{int64(2), int64(5), int64(2981), int64(3001), int64(12)}
	if got := f.calls[1].args; !reflect.DeepEqual(got, want) {
		t.Fatalf("slev.count %v, want %v", got, want)
	}
}
