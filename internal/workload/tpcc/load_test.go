package tpcc

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

var testLoadTime = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// newTest is a workload with a fixed load time, so two of them with the
// same seed generate identical data.
func newTest(wh int, seed uint64) *Workload {
	w := New(Config{Warehouses: wh, Seed: seed})
	w.now = func() time.Time { return testLoadTime }
	return w
}

func tableByName(t testing.TB, w *Workload, name string) workload.Table {
	t.Helper()
	for _, tb := range w.Tables() {
		if tb.Name == name {
			return tb
		}
	}
	t.Fatalf("no table %q", name)
	return workload.Table{}
}

func TestTablesOrderAndShape(t *testing.T) {
	w := newTest(3, 1)
	var names []string
	for _, tb := range w.Tables() {
		names = append(names, tb.Name)
		if tb.Batches < 1 || tb.Rows < 1 || tb.Fill == nil || len(tb.Columns) == 0 {
			t.Errorf("%s: %+v", tb.Name, tb)
		}
	}
	want := []string{"item", "warehouse", "district", "stock", "customer", "history", "orders", "new_order", "order_line", "sledge_meta"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("tables %v, want %v", names, want)
	}
}

// TestBatchesAreDeterministic: same seed ⇒ identical batches (also when the
// buffer is reused from another table), different seed ⇒ different ones.
func TestBatchesAreDeterministic(t *testing.T) {
	a, b, c := newTest(2, 42), newTest(2, 42), newTest(2, 43)
	ta, tb, tc := a.Tables(), b.Tables(), c.Tables()
	var reused [][]any
	for k := range ta {
		name := ta[k].Name
		for _, i := range []int{0, ta[k].Batches - 1} {
			t.Run(fmt.Sprintf("%s/batch=%d", name, i), func(t *testing.T) {
				x := deepCopy(ta[k].Fill(i, nil))
				reused = tb[k].Fill(i, reused) // buffer last used by another table
				if !reflect.DeepEqual(x, reused) {
					t.Fatal("same seed, different batch")
				}
				if name == "new_order" {
					return // no random column
				}
				if reflect.DeepEqual(x, tc[k].Fill(i, nil)) {
					t.Fatal("different seeds, same batch")
				}
			})
		}
	}
}

func deepCopy(rows [][]any) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = append([]any(nil), r...)
	}
	return out
}

// scanTable fills every batch of a table and hands each row to fn; it checks
// the row count against Rows and each cell's type.
func scanTable(t *testing.T, tb workload.Table, fn func(batch int, row []any)) {
	t.Helper()
	var buf [][]any
	var n int64
	for i := range tb.Batches {
		buf = tb.Fill(i, buf)
		for _, row := range buf {
			if len(row) != len(tb.Columns) {
				t.Fatalf("%s: row of %d cells for %d columns", tb.Name, len(row), len(tb.Columns))
			}
			for k, v := range row {
				switch v.(type) {
				case int64, float64, string, nil, time.Time:
				default:
					t.Fatalf("%s.%s: %T", tb.Name, tb.Columns[k], v)
				}
			}
			fn(i, row)
		}
		n += int64(len(buf))
	}
	if n != tb.Rows {
		t.Fatalf("%s: %d rows, Rows says %d", tb.Name, n, tb.Rows)
	}
}

// col returns a row accessor by column name.
func col(tb workload.Table) func(row []any, name string) any {
	idx := map[string]int{}
	for i, c := range tb.Columns {
		idx[c] = i
	}
	return func(row []any, name string) any {
		i, ok := idx[name]
		if !ok {
			panic("no column " + name)
		}
		return row[i]
	}
}

func isCharset(s, set string) bool {
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(set, rune(s[i])) {
			return false
		}
	}
	return true
}

// checkAString asserts an a-string [lo..hi].
func checkAString(t *testing.T, what string, v any, lo, hi int) {
	t.Helper()
	s := v.(string)
	if len(s) < lo || len(s) > hi || !isCharset(s, alnum) {
		t.Fatalf("%s = %q: want a-string [%d..%d]", what, s, lo, hi)
	}
}

func checkLetters(t *testing.T, what string, v any, n int) {
	t.Helper()
	if s := v.(string); len(s) != n || !isCharset(s, letters) {
		t.Fatalf("%s = %q: want %d letters", what, s, n)
	}
}

func checkZip(t *testing.T, what string, v any) {
	t.Helper()
	if s := v.(string); len(s) != 9 || !isCharset(s[:4], "0123456789") || s[4:] != "11111" {
		t.Fatalf("%s = %q: want 4 digits and 11111", what, s)
	}
}

// checkMoney asserts a whole number of cents (or 1/10000 for rates) in [lo..hi].
func checkMoney(t *testing.T, what string, v any, scale, lo, hi float64) {
	t.Helper()
	f := v.(float64)
	if f < lo || f > hi || math.Abs(f*scale-math.Round(f*scale)) > 1e-6 {
		t.Fatalf("%s = %v: want [%v..%v] in steps of 1/%v", what, f, lo, hi, scale)
	}
}

// within asserts got is within rel (relative) of want.
func within(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	if math.Abs(got-want) > rel*want {
		t.Errorf("%s = %.4f, want %.4f ± %.0f%%", what, got, want, rel*100)
	}
}

func TestItem(t *testing.T) {
	tb := tableByName(t, newTest(2, 5), "item")
	c := col(tb)
	seen := make([]bool, items+1)
	orig, byBatch := 0, map[int]int{}
	scanTable(t, tb, func(batch int, row []any) {
		id := c(row, "i_id").(int64)
		if id < 1 || id > items || seen[id] {
			t.Fatalf("i_id %d repeated or out of range", id)
		}
		seen[id] = true
		if im := c(row, "i_im_id").(int64); im < 1 || im > 10_000 {
			t.Fatalf("i_im_id %d", im)
		}
		checkAString(t, "i_name", c(row, "i_name"), 14, 24)
		checkMoney(t, "i_price", c(row, "i_price"), 100, 1, 100)
		data := c(row, "i_data").(string)
		checkAString(t, "i_data", data, 26, 50)
		if strings.Contains(data, original) {
			orig++
			byBatch[batch]++
		}
	})
	within(t, "ORIGINAL share of items", float64(orig)/items, 0.10, 0.05)
	for b, n := range byBatch {
		within(t, fmt.Sprintf("ORIGINAL in item batch %d", b), float64(n)/itemBatch, 0.10, 0.05)
	}
}

func TestWarehouseAndDistrict(t *testing.T) {
	for _, wh := range []int{1, 2, 150, 1234} {
		t.Run(fmt.Sprintf("warehouses=%d", wh), func(t *testing.T) {
			w := newTest(wh, 9)
			tw := tableByName(t, w, "warehouse")
			cw := col(tw)
			next := int64(1)
			scanTable(t, tw, func(_ int, row []any) {
				if id := cw(row, "w_id").(int64); id != next {
					t.Fatalf("w_id %d, want %d", id, next)
				}
				next++
				checkAString(t, "w_name", cw(row, "w_name"), 6, 10)
				for _, s := range []string{"w_street_1", "w_street_2", "w_city"} {
					checkAString(t, s, cw(row, s), 10, 20)
				}
				checkLetters(t, "w_state", cw(row, "w_state"), 2)
				checkZip(t, "w_zip", cw(row, "w_zip"))
				checkMoney(t, "w_tax", cw(row, "w_tax"), 10_000, 0, 0.2)
				if cw(row, "w_ytd") != 300_000.0 {
					t.Fatalf("w_ytd %v", cw(row, "w_ytd"))
				}
			})
			td := tableByName(t, w, "district")
			cd := col(td)
			k := 0
			scanTable(t, td, func(_ int, row []any) {
				// Ordered by warehouse, then district.
				if cd(row, "d_w_id").(int64) != int64(k/10+1) || cd(row, "d_id").(int64) != int64(k%10+1) {
					t.Fatalf("row %d is district %v/%v", k, cd(row, "d_w_id"), cd(row, "d_id"))
				}
				k++
				checkAString(t, "d_name", cd(row, "d_name"), 6, 10)
				checkZip(t, "d_zip", cd(row, "d_zip"))
				checkMoney(t, "d_tax", cd(row, "d_tax"), 10_000, 0, 0.2)
				if cd(row, "d_ytd") != 30_000.0 || cd(row, "d_next_o_id") != int64(3001) {
					t.Fatalf("d_ytd %v d_next_o_id %v", cd(row, "d_ytd"), cd(row, "d_next_o_id"))
				}
			})
		})
	}
}

func TestStock(t *testing.T) {
	w := newTest(2, 5)
	tb := tableByName(t, w, "stock")
	c := col(tb)
	seen := map[[2]int64]bool{}
	orig := map[int64]int{}
	lastW := int64(1)
	scanTable(t, tb, func(_ int, row []any) {
		k := [2]int64{c(row, "s_w_id").(int64), c(row, "s_i_id").(int64)}
		if seen[k] || k[1] < 1 || k[1] > items || k[0] < lastW {
			t.Fatalf("stock key %v repeated, out of range or out of warehouse order", k)
		}
		seen[k], lastW = true, k[0]
		if q := c(row, "s_quantity").(int64); q < 10 || q > 100 {
			t.Fatalf("s_quantity %d", q)
		}
		for _, v := range row[3:13] { // s_dist_01..10
			checkLetters(t, "s_dist", v, 24)
		}
		for _, z := range []string{"s_ytd", "s_order_cnt", "s_remote_cnt"} {
			if c(row, z) != int64(0) {
				t.Fatalf("%s = %v", z, c(row, z))
			}
		}
		data := c(row, "s_data").(string)
		checkAString(t, "s_data", data, 26, 50)
		if strings.Contains(data, original) {
			orig[k[0]]++
		}
	})
	if len(seen) != 2*items {
		t.Fatalf("%d stock rows", len(seen))
	}
	for wh, n := range orig {
		within(t, fmt.Sprintf("ORIGINAL share of stock in warehouse %d", wh), float64(n)/items, 0.10, 0.05)
	}
}

func TestCustomerAndHistory(t *testing.T) {
	w := newTest(2, 8)
	tb := tableByName(t, w, "customer")
	c := col(tb)
	seen := map[[3]int64]bool{}
	bc := map[[2]int64]int{}
	valid := map[string]int{}
	for n := range 1000 {
		valid[lastName(n)] = n
	}
	nameCount := map[string]int{}
	scanTable(t, tb, func(_ int, row []any) {
		id := c(row, "c_id").(int64)
		k := [3]int64{c(row, "c_w_id").(int64), c(row, "c_d_id").(int64), id}
		if seen[k] || id < 1 || id > 3000 {
			t.Fatalf("customer %v", k)
		}
		seen[k] = true
		last := c(row, "c_last").(string)
		n, ok := valid[last]
		switch {
		case !ok:
			t.Fatalf("c_last %q is not made of syllables", last)
		case id <= 1000 && n != int(id-1):
			t.Fatalf("customer %d has c_last %q, want %q", id, last, lastName(int(id-1)))
		case id > 1000:
			nameCount[last]++
		}
		checkAString(t, "c_first", c(row, "c_first"), 8, 16)
		if c(row, "c_middle") != "OE" {
			t.Fatalf("c_middle %v", c(row, "c_middle"))
		}
		checkZip(t, "c_zip", c(row, "c_zip"))
		checkLetters(t, "c_state", c(row, "c_state"), 2)
		if p := c(row, "c_phone").(string); len(p) != 16 || !isCharset(p, "0123456789") {
			t.Fatalf("c_phone %q", p)
		}
		if c(row, "c_since") != testLoadTime {
			t.Fatalf("c_since %v", c(row, "c_since"))
		}
		switch c(row, "c_credit") {
		case "BC":
			bc[[2]int64{k[0], k[1]}]++
		case "GC":
		default:
			t.Fatalf("c_credit %v", c(row, "c_credit"))
		}
		checkMoney(t, "c_discount", c(row, "c_discount"), 10_000, 0, 0.5)
		if c(row, "c_credit_lim") != 50_000.0 || c(row, "c_balance") != -10.0 || c(row, "c_ytd_payment") != 10.0 ||
			c(row, "c_payment_cnt") != int64(1) || c(row, "c_delivery_cnt") != int64(0) {
			t.Fatalf("constant columns %v", row)
		}
		checkAString(t, "c_data", c(row, "c_data"), 300, 500)
	})
	if len(seen) != 2*10*3000 {
		t.Fatalf("%d customers", len(seen))
	}
	for k, n := range bc {
		within(t, fmt.Sprintf("BC share in district %v", k), float64(n)/3000, 0.10, 0.05)
	}
	// NURand(255, 0, 999) is skewed: the most frequent of the 1,000 names
	// among customers 1,001..3,000 is far above the 40 of a uniform draw.
	top := 0
	for _, n := range nameCount {
		top = max(top, n)
	}
	if top < 80 {
		t.Errorf("most frequent c_last among customers > 1000 occurs %d times: not NURand-skewed", top)
	}

	th := tableByName(t, w, "history")
	ch := col(th)
	scanTable(t, th, func(_ int, row []any) {
		if ch(row, "h_c_d_id") != ch(row, "h_d_id") || ch(row, "h_c_w_id") != ch(row, "h_w_id") ||
			ch(row, "h_amount") != 10.0 || ch(row, "h_date") != testLoadTime {
			t.Fatalf("history row %v", row)
		}
		checkAString(t, "h_data", ch(row, "h_data"), 12, 24)
	})
}

// TestOrders: o_c_id is a permutation, carriers and NULLs by o_id, and the
// three order tables agree.
func TestOrders(t *testing.T) {
	w := newTest(2, 13)
	to, tn, tl := tableByName(t, w, "orders"), tableByName(t, w, "new_order"), tableByName(t, w, "order_line")
	co, cn, cl := col(to), col(tn), col(tl)

	type key struct{ w, d, o int64 }
	olCnt := map[key]int64{}
	custs := map[[2]int64]map[int64]bool{}
	var cntHist [16]int
	scanTable(t, to, func(_ int, row []any) {
		k := key{co(row, "o_w_id").(int64), co(row, "o_d_id").(int64), co(row, "o_id").(int64)}
		if _, dup := olCnt[k]; dup {
			t.Fatalf("order %v twice", k)
		}
		n := co(row, "o_ol_cnt").(int64)
		if n < 5 || n > 15 {
			t.Fatalf("o_ol_cnt %d", n)
		}
		olCnt[k] = n
		cntHist[n]++
		dk := [2]int64{k.w, k.d}
		if custs[dk] == nil {
			custs[dk] = map[int64]bool{}
		}
		custs[dk][co(row, "o_c_id").(int64)] = true
		carrier := co(row, "o_carrier_id")
		if k.o < 2101 {
			if cid, ok := carrier.(int64); !ok || cid < 1 || cid > 10 {
				t.Fatalf("order %v: o_carrier_id %v", k, carrier)
			}
		} else if carrier != nil {
			t.Fatalf("order %v: o_carrier_id %v, want NULL", k, carrier)
		}
		if co(row, "o_all_local") != int64(1) || co(row, "o_entry_d") != testLoadTime {
			t.Fatalf("order %v: %v", k, row)
		}
	})
	if len(custs) != 20 {
		t.Fatalf("%d districts", len(custs))
	}
	for dk, cs := range custs {
		if len(cs) != 3000 { // 3,000 orders, 3,000 distinct customers in 1..3000
			t.Fatalf("district %v: %d distinct o_c_id", dk, len(cs))
		}
	}
	for n := 5; n <= 15; n++ { // uniform over 5..15
		within(t, fmt.Sprintf("share of o_ol_cnt=%d", n), float64(cntHist[n])/60_000, 1.0/11, 0.1)
	}

	perDist := map[[2]int64]int{}
	scanTable(t, tn, func(_ int, row []any) {
		k := key{cn(row, "no_w_id").(int64), cn(row, "no_d_id").(int64), cn(row, "no_o_id").(int64)}
		if k.o < 2101 || k.o > 3000 {
			t.Fatalf("new order %v", k)
		}
		if _, ok := olCnt[k]; !ok {
			t.Fatalf("new order %v has no order", k)
		}
		perDist[[2]int64{k.w, k.d}]++
	})
	for dk, n := range perDist {
		if n != 900 {
			t.Fatalf("district %v: %d new orders", dk, n)
		}
	}

	lines := map[key]int64{}
	var sumAmount, undelivered float64
	scanTable(t, tl, func(_ int, row []any) {
		k := key{cl(row, "ol_w_id").(int64), cl(row, "ol_d_id").(int64), cl(row, "ol_o_id").(int64)}
		lines[k]++
		if cl(row, "ol_number") != lines[k] {
			t.Fatalf("order %v: ol_number %v, want %d", k, cl(row, "ol_number"), lines[k])
		}
		if i := cl(row, "ol_i_id").(int64); i < 1 || i > items {
			t.Fatalf("ol_i_id %d", i)
		}
		if cl(row, "ol_supply_w_id") != k.w || cl(row, "ol_quantity") != int64(5) {
			t.Fatalf("line %v: %v", k, row)
		}
		checkLetters(t, "ol_dist_info", cl(row, "ol_dist_info"), 24)
		if k.o < 2101 {
			if cl(row, "ol_delivery_d") != testLoadTime || cl(row, "ol_amount") != 0.0 {
				t.Fatalf("delivered line %v: %v", k, row)
			}
		} else {
			if cl(row, "ol_delivery_d") != nil {
				t.Fatalf("undelivered line %v: ol_delivery_d %v", k, cl(row, "ol_delivery_d"))
			}
			checkMoney(t, "ol_amount", cl(row, "ol_amount"), 100, 0.01, 9999.99)
			sumAmount += cl(row, "ol_amount").(float64)
			undelivered++
		}
	})
	for k, n := range olCnt {
		if lines[k] != n {
			t.Fatalf("order %v: o_ol_cnt %d, %d lines", k, n, lines[k])
		}
	}
	if len(lines) != len(olCnt) {
		t.Fatalf("%d orders with lines, %d orders", len(lines), len(olCnt))
	}
	within(t, "mean undelivered ol_amount", sumAmount/undelivered, 5000, 0.02)
	within(t, "order lines per warehouse", float64(tl.Rows)/2, 300_000, 0.01)
}

func TestMetaTable(t *testing.T) {
	w := newTest(7, 12345)
	tb := tableByName(t, w, "sledge_meta")
	got := map[string]any{}
	scanTable(t, tb, func(_ int, row []any) { got[row[0].(string)] = row[1] })
	want := map[string]any{"workload": "tpcc", "version": fmt.Sprint(dataVersion), "warehouses": "7", "seed": "12345",
		"c_load": fmt.Sprint(cLoadFor(12345))}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("sledge_meta %v, want %v", got, want)
	}
}

// BenchmarkWarehouse generates every row of one warehouse (its share of
// item included) on one goroutine: the CPU cost of a build per warehouse.
func BenchmarkWarehouse(b *testing.B) {
	w := newTest(1, 1)
	tables := w.Tables()
	var buf [][]any
	b.ReportAllocs()
	for b.Loop() {
		var n int64
		for _, tb := range tables {
			for i := range tb.Batches {
				buf = tb.Fill(i, buf)
				n += int64(len(buf))
			}
		}
		b.ReportMetric(float64(n), "rows/op")
	}
}

// BenchmarkFill is per table, per batch.
func BenchmarkFill(b *testing.B) {
	for _, tb := range newTest(1, 1).Tables() {
		b.Run(tb.Name, func(b *testing.B) {
			var buf [][]any
			b.ReportAllocs()
			for b.Loop() {
				buf = tb.Fill(0, buf)
			}
		})
	}
}

// TestFillConcurrently: build workers call Fill on different batches at the
// same time (run with -race); the result is the same as one at a time.
func TestFillConcurrently(t *testing.T) {
	w := newTest(2, 21)
	for _, name := range []string{"district", "customer", "orders"} {
		tb := tableByName(t, w, name)
		want := make([][][]any, tb.Batches)
		for i := range want {
			want[i] = deepCopy(tb.Fill(i, nil))
		}
		got := make([][][]any, tb.Batches)
		done := make(chan int)
		for i := range got {
			go func() {
				got[i] = tb.Fill(i, nil)
				done <- i
			}()
		}
		for range got {
			<-done
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: concurrent batches differ", name)
		}
	}
}
