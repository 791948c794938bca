package dbgen

import (
	"fmt"
	"slices"
	"testing"
)

func orderVals(o *Order) []string {
	return []string{itoa(o.OrderKey), itoa(o.CustKey), string(o.OrderStatus), cents(o.TotalPrice), Date(o.OrderDate),
		o.OrderPriority, o.Clerk, itoa(o.ShipPriority), o.Comment}
}
func lineVals(l *LineItem, qty string) []string {
	return []string{itoa(l.OrderKey), itoa(l.PartKey), itoa(l.SuppKey), itoa(l.LineNumber), qty,
		cents(l.ExtendedPrice), cents(l.Discount), cents(l.Tax), string(l.ReturnFlag), string(l.LineStatus),
		Date(l.ShipDate), Date(l.CommitDate), Date(l.ReceiptDate), l.ShipInstruct, l.ShipMode, l.Comment}
}

func init() {
	order := func(g *OrderGen) *Order {
		var o Order
		g.Next(&o)
		return &o
	}
	qty := func(l *LineItem) string { return itoa(l.Quantity) } // as dbgen prints it
	vectors = append(vectors,
		vector{"orders", func(sc Scale) []string { return orderVals(order(NewOrderGen(sc, 1))) },
			"1|370|O|172799.49|1996-01-02|5-LOW|Clerk#000000951|0|nstructions sleep furiously among "},
		vector{"lineitem", func(sc Scale) []string {
			l := &order(NewOrderGen(sc, 1)).Lines[0]
			return lineVals(l, qty(l))
		}, "1|1552|93|1|17|24710.35|0.04|0.02|N|O|1996-03-13|1996-02-12|1996-03-22|DELIVER IN PERSON|TRUCK|egular courts above the"},
		vector{"RF1 set 1, first order", func(sc Scale) []string { return orderVals(order(NewRefreshGen(sc, 1))) },
			"9|1385|F|179366.58|1994-05-15|5-LOW|Clerk#000000639|0|slyly ironic foxes. "},
		vector{"RF1 set 1, its line 1", func(sc Scale) []string {
			l := &order(NewRefreshGen(sc, 1)).Lines[0]
			return lineVals(l, qty(l))
		}, "9|31|57|1|33|30723.99|0.07|0.01|R|F|1994-05-17|1994-07-19|1994-05-18|DELIVER IN PERSON|AIR|efully final platelets are slyly"},
	)
	orders := func(sc Scale, f func(*Order)) {
		var o Order
		g := NewOrderGen(sc, 1)
		for range sc.Orders {
			g.Next(&o)
			f(&o)
		}
	}
	tableRows["orders"] = func(sc Scale, emit func([]string)) {
		orders(sc, func(o *Order) { emit(orderVals(o)) })
	}
	tableRows["lineitem"] = func(sc Scale, emit func([]string)) {
		orders(sc, func(o *Order) {
			for i := range o.NumLines {
				l := &o.Lines[i]
				emit(lineVals(l, cents(100*l.Quantity)))
			}
		})
	}
}

// tpch.md part 6 at SF 0.01: 10 orders per set; set 1 inserts keys 9–15
// and 40–42 and deletes 1–7 and 32–34, set 2 inserts 43–47 and 72–76 and
// deletes 35–39 and 64–68; sets 1..4 have 37, 44, 37 and 35 lines.
func TestRefreshSets(t *testing.T) {
	sc, err := NewScale(0.01)
	if err != nil {
		t.Fatal(err)
	}
	span := func(ranges ...[2]int64) (out []int64) {
		for _, r := range ranges {
			for k := r[0]; k <= r[1]; k++ {
				out = append(out, k)
			}
		}
		return out
	}
	for _, tc := range []struct {
		set           int64
		inserts, dels []int64
		lines         int
	}{
		{1, span([2]int64{9, 15}, [2]int64{40, 42}), span([2]int64{1, 7}, [2]int64{32, 34}), 37},
		{2, span([2]int64{43, 47}, [2]int64{72, 76}), span([2]int64{35, 39}, [2]int64{64, 68}), 44},
		{3, nil, nil, 37},
		{4, nil, nil, 35},
	} {
		t.Run(fmt.Sprintf("set=%d", tc.set), func(t *testing.T) {
			g := NewRefreshGen(sc, tc.set)
			var o Order
			var keys []int64
			lines := 0
			for range sc.RefreshCount() {
				g.Next(&o)
				keys = append(keys, o.OrderKey)
				lines += o.NumLines
			}
			if tc.inserts != nil && !slices.Equal(keys, tc.inserts) {
				t.Errorf("inserts %v, want %v", keys, tc.inserts)
			}
			if d := sc.RefreshDeletes(tc.set); tc.dels != nil && !slices.Equal(d, tc.dels) {
				t.Errorf("deletes %v, want %v", d, tc.dels)
			}
			if lines != tc.lines {
				t.Errorf("%d lines, want %d", lines, tc.lines)
			}
		})
	}
}

// tpch.md parts 1 and 4.7: lineitem counts from the line-count stream, and
// order 1's customer depends on the scale (370 at SF 0.01, 36901 at SF 1).
func TestOrdersScale(t *testing.T) {
	for _, tc := range []struct {
		sf    float64
		lines int64
		cust1 int64
	}{{0.01, 60_175, 370}, {0.1, 600_572, 0}, {1, 6_001_215, 36_901}} {
		sc, err := NewScale(tc.sf)
		if err != nil {
			t.Fatal(err)
		}
		if n := sc.LineItems(); n != tc.lines {
			t.Errorf("SF %v: %d lineitems, want %d", tc.sf, n, tc.lines)
		}
		var o Order
		NewOrderGen(sc, 1).Next(&o)
		if tc.cust1 != 0 && o.CustKey != tc.cust1 {
			t.Errorf("SF %v: order 1 has customer %d, want %d", tc.sf, o.CustKey, tc.cust1)
		}
	}
}
