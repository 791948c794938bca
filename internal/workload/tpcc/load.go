package tpcc

import (
	"math/bits"
	"slices"
	"strconv"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

// Batch sizes. Per-warehouse tables are batched by warehouse (and district),
// in warehouse order, so a contiguous range of batches is a contiguous range
// of warehouses: each build worker fills its own warehouses.
const (
	itemBatch      = 10_000 // item: 10 batches
	stockBatch     = 10_000 // stock: 10 batches per warehouse
	stockBatches   = items / stockBatch
	whPerWHBatch   = 1_000 // warehouse: up to 1,000 rows per batch
	whPerDistBatch = 100   // district: up to 1,000 rows per batch
)

// Column lists in spec order (§1.3.1; docs/tpcc.md part 3).
var (
	itemColumns      = []string{"i_id", "i_im_id", "i_name", "i_price", "i_data"}
	warehouseColumns = []string{"w_id", "w_name", "w_street_1", "w_street_2", "w_city", "w_state", "w_zip", "w_tax", "w_ytd"}
	districtColumns  = []string{"d_id", "d_w_id", "d_name", "d_street_1", "d_street_2", "d_city", "d_state", "d_zip", "d_tax", "d_ytd", "d_next_o_id"}
	customerColumns  = []string{"c_id", "c_d_id", "c_w_id", "c_first", "c_middle", "c_last", "c_street_1", "c_street_2", "c_city", "c_state", "c_zip",
		"c_phone", "c_since", "c_credit", "c_credit_lim", "c_discount", "c_balance", "c_ytd_payment", "c_payment_cnt", "c_delivery_cnt", "c_data"}
	historyColumns   = []string{"h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data"}
	ordersColumns    = []string{"o_id", "o_d_id", "o_w_id", "o_c_id", "o_entry_d", "o_carrier_id", "o_ol_cnt", "o_all_local"}
	newOrderColumns  = []string{"no_o_id", "no_d_id", "no_w_id"}
	orderLineColumns = []string{"ol_o_id", "ol_d_id", "ol_w_id", "ol_number", "ol_i_id", "ol_supply_w_id", "ol_delivery_d", "ol_quantity", "ol_amount", "ol_dist_info"}
	stockColumns     = []string{"s_i_id", "s_w_id", "s_quantity", "s_dist_01", "s_dist_02", "s_dist_03", "s_dist_04", "s_dist_05",
		"s_dist_06", "s_dist_07", "s_dist_08", "s_dist_09", "s_dist_10", "s_ytd", "s_order_cnt", "s_remote_cnt", "s_data"}
	metaColumns = []string{"name", "value"}
)

// gen holds what every Fill shares; it is read-only once built, so Fill
// funcs may run concurrently.
type gen struct {
	seed       uint64
	warehouses int
	cLoad      int
	loadTime   any   // time.Time, boxed once: §4.3.3.1 "time of loading"
	lastNames  []any // C_LAST of 0..999, boxed once
	ints       []any // int64(0..100,000), boxed once: ids need no allocation per cell
}

// int returns v (0..100,000) as a boxed int64 without allocating.
func (g *gen) int(v int) any { return g.ints[v] }

// Tables is the initial population (§4.3.3.1) in load order: item, the
// per-warehouse tables, and sledge_meta last, so a schema with a complete
// sledge_meta is a complete build. Every batch is a pure function of the
// seed, the table and the batch index, except the dates, which are the time
// Tables was called.
func (w *Workload) Tables() []workload.Table {
	g := &gen{
		seed:       w.cfg.Seed,
		warehouses: w.warehouses,
		cLoad:      w.cLoad,
		loadTime:   w.now().UTC().Truncate(time.Second),
		lastNames:  make([]any, 1000),
		ints:       make([]any, items+1),
	}
	for n := range g.lastNames {
		g.lastNames[n] = lastName(n)
	}
	for n := range g.ints {
		g.ints[n] = int64(n)
	}
	wh := int64(w.warehouses)
	dists := w.warehouses * districtsPerWH
	return []workload.Table{
		{Name: "item", Columns: slices.Clone(itemColumns), Batches: items / itemBatch, Rows: items, Fill: g.fillItem},
		{Name: "warehouse", Columns: slices.Clone(warehouseColumns), Batches: ceilDiv(w.warehouses, whPerWHBatch), Rows: wh, Fill: g.fillWarehouse},
		{Name: "district", Columns: slices.Clone(districtColumns), Batches: ceilDiv(w.warehouses, whPerDistBatch), Rows: wh * districtsPerWH, Fill: g.fillDistrict},
		{Name: "stock", Columns: slices.Clone(stockColumns), Batches: w.warehouses * stockBatches, Rows: wh * items, Fill: g.fillStock},
		{Name: "customer", Columns: slices.Clone(customerColumns), Batches: dists, Rows: int64(dists) * customersPerDist, Fill: g.fillCustomer},
		{Name: "history", Columns: slices.Clone(historyColumns), Batches: dists, Rows: int64(dists) * customersPerDist, Fill: g.fillHistory},
		{Name: "orders", Columns: slices.Clone(ordersColumns), Batches: dists, Rows: int64(dists) * ordersPerDist, Fill: g.fillOrders},
		{Name: "new_order", Columns: slices.Clone(newOrderColumns), Batches: dists, Rows: int64(dists) * newOrdersPerDist, Fill: g.fillNewOrder},
		{Name: "order_line", Columns: slices.Clone(orderLineColumns), Batches: dists, Rows: g.orderLineRows(), Fill: g.fillOrderLine},
		{Name: "sledge_meta", Columns: slices.Clone(metaColumns), Batches: 1, Rows: 5, Fill: g.fillMeta},
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// rows resizes buf to n rows of ncols cells. Row slices of an earlier batch
// are reused in place (the caller is done with them when it hands buf back,
// per Table.Fill); new ones are carved from one allocation. Every Fill sets
// every cell, NULLs included.
func rows(buf [][]any, n, ncols int) [][]any {
	if cap(buf) < n {
		nb := make([][]any, n)
		copy(nb, buf[:cap(buf)])
		buf = nb
	} else {
		buf = buf[:n]
	}
	var cells []any
	for i := range buf {
		if cap(buf[i]) >= ncols {
			buf[i] = buf[i][:ncols]
			continue
		}
		if len(cells) < ncols {
			cells = make([]any, ncols*(n-i))
		}
		buf[i], cells = cells[:ncols:ncols], cells[ncols:]
	}
	return buf
}

// money turns cents into the float64 a numeric(…,2) column gets; the
// division of an exact integer by 100 prints as the exact decimal.
func money(cents int) float64 { return float64(cents) / 100 }

// rate turns ten-thousandths into a numeric(4,4) value.
func rate(tenThousandths int) float64 { return float64(tenThousandths) / 10_000 }

// fillItem: 100,000 items, i_id 1..100,000 (§4.3.3.1).
func (g *gen) fillItem(i int, buf [][]any) [][]any {
	r := newRNG(g.seed, "item", uint64(i))
	buf = rows(buf, itemBatch, len(itemColumns))
	orig := selection{need: itemBatch / 10, left: itemBatch} // exactly 10% ORIGINAL
	sb := make([]byte, 0, 80)
	for k, row := range buf {
		sb = r.appendAString(sb[:0], 14, 24) // i_name
		nameEnd := len(sb)
		sb = r.appendData(sb, orig.next(&r)) // i_data
		s := string(sb)
		row[0] = g.int(i*itemBatch + k + 1)
		row[1] = g.int(r.between(1, 10_000))
		row[2] = s[:nameEnd]
		row[3] = money(r.between(100, 10_000)) // [1.00..100.00]
		row[4] = s[nameEnd:]
	}
	return buf
}

// address appends name, street 1, street 2, city, state and zip to sb and
// stores them as six cells from row[at] on (warehouse and district).
func address(r *rng, sb []byte, row []any, at int) []byte {
	var ends [6]int
	sb = r.appendAString(sb[:0], 6, 10) // name
	ends[0] = len(sb)
	for k := 1; k <= 3; k++ { // street 1, street 2, city
		sb = r.appendAString(sb, 10, 20)
		ends[k] = len(sb)
	}
	sb = r.appendLetters(sb, 2)
	ends[4] = len(sb)
	sb = r.appendZip(sb)
	ends[5] = len(sb)
	s := string(sb)
	start := 0
	for k, end := range ends {
		row[at+k] = s[start:end]
		start = end
	}
	return sb
}

// fillWarehouse: up to 1,000 warehouses per batch.
func (g *gen) fillWarehouse(i int, buf [][]any) [][]any {
	r := newRNG(g.seed, "warehouse", uint64(i))
	first := i * whPerWHBatch
	buf = rows(buf, min(whPerWHBatch, g.warehouses-first), len(warehouseColumns))
	sb := make([]byte, 0, 96)
	for k, row := range buf {
		row[0] = g.int(first + k + 1)
		sb = address(&r, sb, row, 1)
		row[7] = rate(r.between(0, 2_000)) // w_tax [0.0000..0.2000]
		row[8] = 300_000.0                 // w_ytd
	}
	return buf
}

// fillDistrict: 10 districts for each of up to 100 warehouses per batch.
func (g *gen) fillDistrict(i int, buf [][]any) [][]any {
	r := newRNG(g.seed, "district", uint64(i))
	first := i * whPerDistBatch
	buf = rows(buf, min(whPerDistBatch, g.warehouses-first)*districtsPerWH, len(districtColumns))
	sb := make([]byte, 0, 96)
	for k, row := range buf {
		row[0] = g.int(k%districtsPerWH + 1)
		row[1] = g.int(first + k/districtsPerWH + 1)
		sb = address(&r, sb, row, 2)
		row[8] = rate(r.between(0, 2_000)) // d_tax [0.0000..0.2000]
		row[9] = 30_000.0                  // d_ytd
		row[10] = g.int(ordersPerDist + 1) // d_next_o_id 3,001
	}
	return buf
}

// fillStock: batch i holds items part*10,000+1.. of warehouse i/10+1.
func (g *gen) fillStock(i int, buf [][]any) [][]any {
	r := newRNG(g.seed, "stock", uint64(i))
	wID := g.int(i/stockBatches + 1)
	first := i % stockBatches * stockBatch
	buf = rows(buf, stockBatch, len(stockColumns))
	orig := selection{need: stockBatch / 10, left: stockBatch} // exactly 10% ORIGINAL
	sb := make([]byte, 0, 10*24+50)
	for k, row := range buf {
		sb = r.appendLetters(sb[:0], 10*24) // s_dist_01..10
		sb = r.appendData(sb, orig.next(&r))
		s := string(sb)
		row[0] = g.int(first + k + 1)
		row[1] = wID
		row[2] = g.int(r.between(10, 100))
		for d := range 10 {
			row[3+d] = s[d*24 : d*24+24]
		}
		row[13] = int64(0) // s_ytd
		row[14] = int64(0) // s_order_cnt
		row[15] = int64(0) // s_remote_cnt
		row[16] = s[240:]
	}
	return buf
}

// district returns the warehouse and district of per-district batch i,
// boxed.
func (g *gen) district(i int) (w, d any) {
	return g.int(i/districtsPerWH + 1), g.int(i%districtsPerWH + 1)
}

// fillCustomer: 3,000 customers of one district.
func (g *gen) fillCustomer(i int, buf [][]any) [][]any {
	r := newRNG(g.seed, "customer", uint64(i))
	wID, dID := g.district(i)
	buf = rows(buf, customersPerDist, len(customerColumns))
	bc := selection{need: customersPerDist / 10, left: customersPerDist} // exactly 10% BC
	sb := make([]byte, 0, 700)
	var ends [8]int
	for k, row := range buf {
		cID := k + 1
		sb = r.appendAString(sb[:0], 8, 16) // c_first
		ends[0] = len(sb)
		for j := 1; j <= 3; j++ { // c_street_1, c_street_2, c_city
			sb = r.appendAString(sb, 10, 20)
			ends[j] = len(sb)
		}
		sb = r.appendLetters(sb, 2) // c_state
		ends[4] = len(sb)
		sb = r.appendZip(sb)
		ends[5] = len(sb)
		sb = r.appendDigits(sb, 16) // c_phone
		ends[6] = len(sb)
		sb = r.appendAString(sb, 300, 500) // c_data
		ends[7] = len(sb)
		s := string(sb)

		// §4.3.2.3: customers 1..1,000 take every name once, the rest are skewed.
		n := cID - 1
		if cID > 1000 {
			n = r.nurand(cLastA, 0, 999, g.cLoad)
		}
		row[0] = g.int(cID)
		row[1] = dID
		row[2] = wID
		row[3] = s[:ends[0]]
		row[4] = "OE"
		row[5] = g.lastNames[n]
		row[6] = s[ends[0]:ends[1]]
		row[7] = s[ends[1]:ends[2]]
		row[8] = s[ends[2]:ends[3]]
		row[9] = s[ends[3]:ends[4]]
		row[10] = s[ends[4]:ends[5]]
		row[11] = s[ends[5]:ends[6]]
		row[12] = g.loadTime
		if bc.next(&r) {
			row[13] = "BC"
		} else {
			row[13] = "GC"
		}
		row[14] = 50_000.0                  // c_credit_lim
		row[15] = rate(r.between(0, 5_000)) // c_discount [0.0000..0.5000]
		row[16] = -10.0                     // c_balance
		row[17] = 10.0                      // c_ytd_payment
		row[18] = int64(1)                  // c_payment_cnt
		row[19] = int64(0)                  // c_delivery_cnt
		row[20] = s[ends[6]:]
	}
	return buf
}

// fillHistory: one row per customer of one district.
func (g *gen) fillHistory(i int, buf [][]any) [][]any {
	r := newRNG(g.seed, "history", uint64(i))
	wID, dID := g.district(i)
	buf = rows(buf, customersPerDist, len(historyColumns))
	sb := make([]byte, 0, 24)
	for k, row := range buf {
		row[0] = g.int(k + 1)
		row[1] = dID
		row[2] = wID
		row[3] = dID
		row[4] = wID
		row[5] = g.loadTime
		row[6] = 10.0 // h_amount
		row[7] = string(r.appendAString(sb[:0], 12, 24))
	}
	return buf
}

// olCounts returns O_OL_CNT of orders 1..3,000 of per-district batch i, from
// a stream of its own that both orders and order_line read, so the two
// tables agree. §4.3.2.1 forbids a pre-generated pool for O_OL_CNT: each
// value is a fresh draw.
func (g *gen) olCounts(i int, out *[ordersPerDist]uint8) {
	r := newRNG(g.seed, "o_ol_cnt", uint64(i))
	// The first 12 base-11 digits of each 64-bit draw: uniform over 5..15 to
	// within 11^12/2^64 ≈ 1.7e-7, and cheap, because orderLineRows draws
	// every count of the build up front (0.1 s per 1,000 warehouses).
	const perDraw = 12
	for n := 0; n < len(out); {
		x := r.uint64()
		for k := 0; k < perDraw && n < len(out); k++ {
			hi, lo := bits.Mul64(x, 11)
			out[n] = uint8(5 + hi)
			x = lo
			n++
		}
	}
}

// orderLineRows is the exact total of order lines, for progress.
func (g *gen) orderLineRows() int64 {
	var cnt [ordersPerDist]uint8
	var total int64
	for i := range g.warehouses * districtsPerWH {
		g.olCounts(i, &cnt)
		for _, c := range cnt {
			total += int64(c)
		}
	}
	return total
}

// fillOrders: 3,000 orders of one district.
func (g *gen) fillOrders(i int, buf [][]any) [][]any {
	r := newRNG(g.seed, "orders", uint64(i))
	wID, dID := g.district(i)
	var cnt [ordersPerDist]uint8
	g.olCounts(i, &cnt)
	// §4.3.3.1: o_c_id is taken in order from a random permutation of
	// 1..3,000, so every customer has exactly one initial order.
	var perm [customersPerDist]int16
	for k := range perm {
		perm[k] = int16(k + 1)
	}
	for k := len(perm) - 1; k > 0; k-- {
		j := r.intn(k + 1)
		perm[k], perm[j] = perm[j], perm[k]
	}
	buf = rows(buf, ordersPerDist, len(ordersColumns))
	for k, row := range buf {
		oID := k + 1
		row[0] = g.int(oID)
		row[1] = dID
		row[2] = wID
		row[3] = g.int(int(perm[k]))
		row[4] = g.loadTime
		if oID < firstNewOrder {
			row[5] = g.int(r.between(1, 10)) // delivered
		} else {
			row[5] = nil
		}
		row[6] = g.int(int(cnt[k]))
		row[7] = int64(1) // o_all_local
	}
	return buf
}

// fillNewOrder: the last 900 orders of one district (§4.3.3.1).
func (g *gen) fillNewOrder(i int, buf [][]any) [][]any {
	wID, dID := g.district(i)
	buf = rows(buf, newOrdersPerDist, len(newOrderColumns))
	for k, row := range buf {
		row[0] = g.int(firstNewOrder + k)
		row[1] = dID
		row[2] = wID
	}
	return buf
}

// fillOrderLine: the lines of the 3,000 orders of one district.
func (g *gen) fillOrderLine(i int, buf [][]any) [][]any {
	r := newRNG(g.seed, "order_line", uint64(i))
	wID, dID := g.district(i)
	var cnt [ordersPerDist]uint8
	g.olCounts(i, &cnt)
	n := 0
	for _, c := range cnt {
		n += int(c)
	}
	buf = rows(buf, n, len(orderLineColumns))
	sb := make([]byte, 0, 15*24)
	k := 0
	for o, c := range cnt {
		oID := o + 1
		delivered := oID < firstNewOrder
		sb = r.appendLetters(sb[:0], int(c)*24) // ol_dist_info of every line
		s := string(sb)
		for line := range int(c) {
			row := buf[k]
			k++
			row[0] = g.int(oID)
			row[1] = dID
			row[2] = wID
			row[3] = g.int(line + 1)
			row[4] = g.int(r.between(1, items)) // uniform at load
			row[5] = wID
			row[7] = int64(5) // ol_quantity
			// The inversion (0.00 once delivered) keeps conditions 10 and 12
			// true on the initial population (docs/tpcc.md 3.7).
			if delivered {
				row[6] = g.loadTime // = o_entry_d
				row[8] = 0.0
			} else {
				row[6] = nil
				row[8] = money(r.between(1, 999_999)) // [0.01..9,999.99]
			}
			row[9] = s[line*24 : line*24+24]
		}
	}
	return buf
}

// fillMeta: what a run needs to know about the build (Attach).
func (g *gen) fillMeta(_ int, buf [][]any) [][]any {
	buf = rows(buf, 5, len(metaColumns))
	kv := [5][2]string{
		{"workload", "tpcc"},
		{"version", strconv.Itoa(dataVersion)},
		{"warehouses", strconv.Itoa(g.warehouses)},
		{"seed", strconv.FormatUint(g.seed, 10)},
		{"c_load", strconv.Itoa(g.cLoad)},
	}
	for k, row := range buf {
		row[0], row[1] = kv[k][0], kv[k][1]
	}
	return buf
}
