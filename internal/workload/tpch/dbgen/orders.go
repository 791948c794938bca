package dbgen

// Order is one orders row with its lines; TotalPrice is in cents, OrderDate
// a day index (see Date).
type Order struct {
	OrderKey      int64
	CustKey       int64
	OrderStatus   byte
	TotalPrice    int64
	OrderDate     int
	OrderPriority string
	Clerk         string
	ShipPriority  int64
	Comment       string
	NumLines      int
	Lines         [7]LineItem
}

// LineItem is one lineitem row: ExtendedPrice in cents, Discount and Tax in
// percent, dates as day indices (see Date).
type LineItem struct {
	OrderKey      int64
	PartKey       int64
	SuppKey       int64
	LineNumber    int64
	Quantity      int64
	ExtendedPrice int64
	Discount      int64
	Tax           int64
	ReturnFlag    byte
	LineStatus    byte
	ShipDate      int
	CommitDate    int
	ReceiptDate   int
	ShipInstruct  string
	ShipMode      string
	Comment       string
}

// OrderGen generates orders rows (with their lines).
type OrderGen struct {
	sc                                              Scale
	row                                             int64 // key index i
	seq                                             int64
	ckey, date, prio, clerk, cmnt, lcnt, unused     stream
	qty, disc, tax, ship, smode, lcmnt              stream
	pkey, skey, sdate, cdate, rdate, rflag, lunused stream
	prios, instrs, smodes, rflags                   *dist
}

// NewOrderGen positions the orders and lineitem streams at order row
// (1-based) of the initial load.
func NewOrderGen(sc Scale, row int64) *OrderGen {
	return newOrderGen(sc, row, row, 0)
}

// NewRefreshGen returns the generator of refresh set n (1-based, part 6):
// sc.RefreshCount() orders keyed with seq 1, their streams positioned after the
// initial population.
func NewRefreshGen(sc Scale, n int64) *OrderGen {
	i := (n-1)*sc.RefreshCount() + 1
	return newOrderGen(sc, i, sc.Orders+i, 1)
}

// RefreshDeletes returns the order keys refresh set n deletes.
func (sc Scale) RefreshDeletes(n int64) []int64 {
	c := sc.RefreshCount()
	out := make([]int64, 0, c)
	for i := (n-1)*c + 1; i <= n*c; i++ {
		out = append(out, OrderKey(i, 0))
	}
	return out
}

func newOrderGen(sc Scale, keyRow, rngRow, seq int64) *OrderGen {
	r := rngRow
	return &OrderGen{
		sc: sc, row: keyRow, seq: seq,
		ckey: newStream(sdOCkey, r), date: newStream(sdODate, r), prio: newStream(sdOPrio, r),
		clerk: newStream(sdOClerk, r), cmnt: newStream(sdOCmnt, r), lcnt: newStream(sdOLcnt, r),
		unused: newStream(sdOUnused, r),
		qty:    newStream(sdLQty, r), disc: newStream(sdLDisc, r), tax: newStream(sdLTax, r),
		ship: newStream(sdLShip, r), smode: newStream(sdLSmode, r), lcmnt: newStream(sdLCmnt, r),
		pkey: newStream(sdLPkey, r), skey: newStream(sdLSkey, r), sdate: newStream(sdLSdate, r),
		cdate: newStream(sdLCdate, r), rdate: newStream(sdLRdate, r), rflag: newStream(sdLRflag, r),
		lunused: newStream(sdLUnused, r),
		prios:   getDist("o_oprio"), instrs: getDist("instruct"), smodes: getDist("smode"), rflags: getDist("rflag"),
	}
}

// Next fills o with the next order and its lines.
func (g *OrderGen) Next(o *Order) {
	o.OrderKey = OrderKey(g.row, g.seq)
	nc := g.sc.Customers
	c := g.ckey.unif(1, nc)
	for d := int64(1); c%3 == 0; d = -d {
		c = min(c+d, nc)
	}
	o.CustKey = c
	o.OrderDate = int(g.date.unif(92001, 94406) - 92001)
	o.OrderPriority = g.prios.names[g.prios.pick(&g.prio)]
	o.Clerk = padded("Clerk#", g.clerk.unif(1, g.sc.Clerks))
	o.Comment = text(&g.cmnt, 49)
	o.ShipPriority = 0
	n := int(g.lcnt.unif(1, 7))
	o.NumLines = n
	var total int64
	nF := 0
	for j := range n {
		l := &o.Lines[j]
		l.OrderKey = o.OrderKey
		l.LineNumber = int64(j + 1)
		l.Quantity = g.qty.unif(1, 50)
		l.Discount = g.disc.unif(0, 10)
		l.Tax = g.tax.unif(0, 8)
		l.ShipInstruct = g.instrs.names[g.instrs.pick(&g.ship)]
		l.ShipMode = g.smodes.names[g.smodes.pick(&g.smode)]
		l.Comment = text(&g.lcmnt, 27)
		l.PartKey = g.pkey.unif(1, g.sc.Parts)
		l.SuppKey = SuppKey(l.PartKey, g.skey.unif(0, 3), g.sc.Suppliers)
		l.ExtendedPrice = l.Quantity * RetailPrice(l.PartKey)
		l.ShipDate = o.OrderDate + int(g.sdate.unif(1, 121))
		l.CommitDate = o.OrderDate + int(g.cdate.unif(30, 90))
		l.ReceiptDate = l.ShipDate + int(g.rdate.unif(1, 30))
		if l.ReceiptDate <= currentDate {
			l.ReturnFlag = g.rflags.names[g.rflags.pick(&g.rflag)][0]
		} else {
			l.ReturnFlag = 'N'
		}
		if l.ShipDate <= currentDate {
			l.LineStatus = 'F'
			nF++
		} else {
			l.LineStatus = 'O'
		}
		total += (l.ExtendedPrice * (100 - l.Discount) / 100) * (100 + l.Tax) / 100
	}
	o.TotalPrice = total
	switch nF {
	case n:
		o.OrderStatus = 'F'
	case 0:
		o.OrderStatus = 'O'
	default:
		o.OrderStatus = 'P'
	}
	for _, s := range []*stream{&g.ckey, &g.date, &g.prio, &g.clerk, &g.cmnt, &g.lcnt, &g.unused,
		&g.qty, &g.disc, &g.tax, &g.ship, &g.smode, &g.lcmnt, &g.pkey, &g.skey, &g.sdate, &g.cdate,
		&g.rdate, &g.rflag, &g.lunused} {
		s.endRow()
	}
	g.row++
}
