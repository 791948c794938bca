package dbgen

import (
	"slices"

	"github.com/sledge-bench/sledge/internal/workload"
)

// batchRows is how many rows of the driving table (suppliers, customers,
// parts, orders) one batch holds; partsupp batches hold 4×, lineitem
// batches the lines of batchRows orders.
const batchRows = 1000

// Column names in the spec's order (tpch.md part 3).
var (
	RegionColumns   = []string{"r_regionkey", "r_name", "r_comment"}
	NationColumns   = []string{"n_nationkey", "n_name", "n_regionkey", "n_comment"}
	SupplierColumns = []string{"s_suppkey", "s_name", "s_address", "s_nationkey", "s_phone", "s_acctbal", "s_comment"}
	CustomerColumns = []string{"c_custkey", "c_name", "c_address", "c_nationkey", "c_phone", "c_acctbal", "c_mktsegment", "c_comment"}
	PartColumns     = []string{"p_partkey", "p_name", "p_mfgr", "p_brand", "p_type", "p_size", "p_container", "p_retailprice", "p_comment"}
	PartSuppColumns = []string{"ps_partkey", "ps_suppkey", "ps_availqty", "ps_supplycost", "ps_comment"}
	OrdersColumns   = []string{"o_orderkey", "o_custkey", "o_orderstatus", "o_totalprice", "o_orderdate", "o_orderpriority", "o_clerk", "o_shippriority", "o_comment"}
	LineItemColumns = []string{"l_orderkey", "l_partkey", "l_suppkey", "l_linenumber", "l_quantity", "l_extendedprice", "l_discount", "l_tax",
		"l_returnflag", "l_linestatus", "l_shipdate", "l_commitdate", "l_receiptdate", "l_shipinstruct", "l_shipmode", "l_comment"}
)

// Tables returns the eight tables of scale sc as sledge row sources, in
// load order. Their text is printable ASCII without a backslash
// (PlainText): dbgen's word lists and its 64-character alphabet. Cells are int64 (identifiers, integers), float64 (decimals:
// cents/100, exact when printed with two places), string (text; comments
// share the text pool's memory; dates as YYYY-MM-DD, which every
// database loads into its date type and SQLite keeps as ordered text). Every
// batch is a pure function of sc and its index, so batches can be filled
// on any goroutine in any order.
func Tables(sc Scale) []workload.Table {
	nb := func(n int64) int { return int((n + batchRows - 1) / batchRows) }
	return []workload.Table{
		{Name: "region", Columns: slices.Clone(RegionColumns), Batches: 1, Rows: 5, Fill: fillRegion, PlainText: true},
		{Name: "nation", Columns: slices.Clone(NationColumns), Batches: 1, Rows: 25, Fill: fillNation, PlainText: true},
		{Name: "supplier", Columns: slices.Clone(SupplierColumns), Batches: nb(sc.Suppliers), Rows: sc.Suppliers, Fill: sc.fillSupplier, PlainText: true},
		{Name: "customer", Columns: slices.Clone(CustomerColumns), Batches: nb(sc.Customers), Rows: sc.Customers, Fill: sc.fillCustomer, PlainText: true},
		{Name: "part", Columns: slices.Clone(PartColumns), Batches: nb(sc.Parts), Rows: sc.Parts, Fill: sc.fillPart, PlainText: true},
		{Name: "partsupp", Columns: slices.Clone(PartSuppColumns), Batches: nb(sc.Parts), Rows: sc.PartSupps(), Fill: sc.fillPartSupp, PlainText: true},
		{Name: "orders", Columns: slices.Clone(OrdersColumns), Batches: nb(sc.Orders), Rows: sc.Orders, Fill: sc.fillOrders, PlainText: true},
		{Name: "lineitem", Columns: slices.Clone(LineItemColumns), Batches: nb(sc.Orders), Rows: sc.LineItems(), Fill: sc.fillLineItem, PlainText: true},
	}
}

// LineItems counts the initial lineitem rows: only the line-count stream
// (one draw per order) is needed.
func (sc Scale) LineItems() int64 {
	s := newStream(sdOLcnt, 1)
	var n int64
	for range sc.Orders {
		n += s.unif(1, 7)
		s.endRow()
	}
	return n
}

// batch returns the first row (1-based) and the row count of batch i of a
// table of n rows.
func batch(i int, n int64) (first, count int64) {
	first = int64(i)*batchRows + 1
	return first, min(batchRows, n-first+1)
}

// Boxed cells shared by every row, so storing them does not allocate: the
// calendar's dates, quantities 1..50 and percentages 0..10 as decimals.
var (
	dateCells = func() (d [numDates]any) {
		for i := range d {
			d[i] = dates[i]
		}
		return d
	}()
	qtyCells = func() (q [51]any) {
		for i := range q {
			q[i] = float64(i)
		}
		return q
	}()
	pctCells = func() (p [11]any) {
		for i := range p {
			p[i] = money(int64(i))
		}
		return p
	}()
)

func money(cents int64) float64 { return float64(cents) / 100 }

func fillRegion(_ int, buf [][]any) [][]any {
	rs := Regions()
	buf = rows(buf, len(rs), len(RegionColumns))
	for k, r := range rs {
		row := buf[k]
		row[0], row[1], row[2] = r.RegionKey, r.Name, r.Comment
	}
	return buf
}

func fillNation(_ int, buf [][]any) [][]any {
	ns := Nations()
	buf = rows(buf, len(ns), len(NationColumns))
	for k, n := range ns {
		row := buf[k]
		row[0], row[1], row[2], row[3] = n.NationKey, n.Name, n.RegionKey, n.Comment
	}
	return buf
}

func (sc Scale) fillSupplier(i int, buf [][]any) [][]any {
	first, n := batch(i, sc.Suppliers)
	g := NewSupplierGen(first)
	buf = rows(buf, int(n), len(SupplierColumns))
	var s Supplier
	for _, row := range buf {
		g.Next(&s)
		row[0], row[1], row[2], row[3] = s.SuppKey, s.Name, s.Address, s.NationKey
		row[4], row[5], row[6] = s.Phone, money(s.AcctBal), s.Comment
	}
	return buf
}

func (sc Scale) fillCustomer(i int, buf [][]any) [][]any {
	first, n := batch(i, sc.Customers)
	g := NewCustomerGen(first)
	buf = rows(buf, int(n), len(CustomerColumns))
	var c Customer
	for _, row := range buf {
		g.Next(&c)
		row[0], row[1], row[2], row[3] = c.CustKey, c.Name, c.Address, c.NationKey
		row[4], row[5], row[6], row[7] = c.Phone, money(c.AcctBal), c.MktSegment, c.Comment
	}
	return buf
}

func (sc Scale) fillPart(i int, buf [][]any) [][]any {
	first, n := batch(i, sc.Parts)
	g := NewPartGen(sc, first)
	buf = rows(buf, int(n), len(PartColumns))
	var p Part
	for _, row := range buf {
		g.Next(&p)
		row[0], row[1], row[2], row[3], row[4] = p.PartKey, p.Name, p.Mfgr, p.Brand, p.Type
		row[5], row[6], row[7], row[8] = p.Size, p.Container, money(p.RetailPrice), p.Comment
	}
	return buf
}

func (sc Scale) fillPartSupp(i int, buf [][]any) [][]any {
	first, n := batch(i, sc.Parts)
	g := NewPartGen(sc, first)
	buf = rows(buf, int(4*n), len(PartSuppColumns))
	var p Part
	for k := 0; k < len(buf); k += 4 {
		g.Next(&p)
		for j := range p.Supps {
			ps, row := &p.Supps[j], buf[k+j]
			row[0], row[1], row[2], row[3], row[4] = ps.PartKey, ps.SuppKey, ps.AvailQty, money(ps.SupplyCost), ps.Comment
		}
	}
	return buf
}

func (sc Scale) fillOrders(i int, buf [][]any) [][]any {
	first, n := batch(i, sc.Orders)
	g := NewOrderGen(sc, first)
	buf = rows(buf, int(n), len(OrdersColumns))
	var o Order
	for _, row := range buf {
		g.Next(&o)
		OrderRow(&o, row)
	}
	return buf
}

func (sc Scale) fillLineItem(i int, buf [][]any) [][]any {
	first, n := batch(i, sc.Orders)
	g := NewOrderGen(sc, first)
	buf = buf[:0]
	var o Order
	for range n {
		g.Next(&o)
		for j := range o.NumLines {
			buf = appendRow(buf, len(LineItemColumns))
			LineItemRow(&o.Lines[j], buf[len(buf)-1])
		}
	}
	return buf
}

// OrderRow stores o's columns as cells in row (len(OrdersColumns) cells);
// refresh function 1 uses it too.
func OrderRow(o *Order, row []any) {
	row[0], row[1], row[2], row[3] = o.OrderKey, o.CustKey, flags[o.OrderStatus], money(o.TotalPrice)
	row[4], row[5], row[6], row[7], row[8] = dateCells[o.OrderDate], o.OrderPriority, o.Clerk, o.ShipPriority, o.Comment
}

// LineItemRow stores l's columns as cells in row (len(LineItemColumns) cells).
func LineItemRow(l *LineItem, row []any) {
	row[0], row[1], row[2], row[3] = l.OrderKey, l.PartKey, l.SuppKey, l.LineNumber
	row[4], row[5], row[6], row[7] = qtyCells[l.Quantity], money(l.ExtendedPrice), pctCells[l.Discount], pctCells[l.Tax]
	row[8], row[9] = flags[l.ReturnFlag], flags[l.LineStatus]
	row[10], row[11], row[12] = dateCells[l.ShipDate], dateCells[l.CommitDate], dateCells[l.ReceiptDate]
	row[13], row[14], row[15] = l.ShipInstruct, l.ShipMode, l.Comment
}

// flags holds the one-letter strings, so storing a flag does not allocate.
var flags = func() (f [256]string) {
	for _, c := range "AFNOPR" {
		f[c] = string(c)
	}
	return f
}()

// rows resizes buf to n rows of ncols cells, reusing earlier rows' cells.
func rows(buf [][]any, n, ncols int) [][]any {
	buf = buf[:0]
	for range n {
		buf = appendRow(buf, ncols)
	}
	return buf
}

// appendRow extends buf by one row of ncols cells, reusing the row slice
// already in buf's spare capacity when there is one.
func appendRow(buf [][]any, ncols int) [][]any {
	if len(buf) < cap(buf) {
		buf = buf[:len(buf)+1]
		if r := buf[len(buf)-1]; cap(r) >= ncols {
			buf[len(buf)-1] = r[:ncols]
			return buf
		}
		buf[len(buf)-1] = make([]any, ncols)
		return buf
	}
	return append(buf, make([]any, ncols))
}

// RefreshTables returns the rows refresh function 1 inserts for update set
// n (1-based, tpch.md part 6) as row sources: the set's orders, then their
// lineitems, in batches of batchRows orders. RF2 deletes the orders of
// sc.RefreshDeletes(n) and their lines.
func RefreshTables(sc Scale, n int64) []workload.Table {
	cnt := sc.RefreshCount()
	nb := int((cnt + batchRows - 1) / batchRows)
	gen := func(i int) (*OrderGen, int64) {
		first, k := batch(i, cnt)
		keyRow := (n-1)*cnt + first
		return newOrderGen(sc, keyRow, sc.Orders+keyRow, 1), k
	}
	var lines int64
	s := newStream(sdOLcnt, sc.Orders+(n-1)*cnt+1)
	for range cnt {
		lines += s.unif(1, 7)
		s.endRow()
	}
	return []workload.Table{
		{Name: "orders", Columns: slices.Clone(OrdersColumns), Batches: nb, Rows: cnt, PlainText: true,
			Fill: func(i int, buf [][]any) [][]any {
				g, k := gen(i)
				buf = rows(buf, int(k), len(OrdersColumns))
				var o Order
				for _, row := range buf {
					g.Next(&o)
					OrderRow(&o, row)
				}
				return buf
			}},
		{Name: "lineitem", Columns: slices.Clone(LineItemColumns), Batches: nb, Rows: lines, PlainText: true,
			Fill: func(i int, buf [][]any) [][]any {
				g, k := gen(i)
				buf = buf[:0]
				var o Order
				for range k {
					g.Next(&o)
					for j := range o.NumLines {
						buf = appendRow(buf, len(LineItemColumns))
						LineItemRow(&o.Lines[j], buf[len(buf)-1])
					}
				}
				return buf
			}},
	}
}
