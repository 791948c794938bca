package dbgen

// Supplier is one supplier row; AcctBal is in cents.
type Supplier struct {
	SuppKey   int64
	Name      string
	Address   string
	NationKey int64
	Phone     string
	AcctBal   int64
	Comment   string
}

// SupplierGen generates supplier rows from a given row on.
type SupplierGen struct {
	row                                  int64
	addr, nation, phone, bal, cmnt       stream
	bbbBad, bbbType, bbbNoise, bbbOffset stream
	buf                                  []byte
}

// NewSupplierGen positions the supplier streams at row (1-based).
func NewSupplierGen(row int64) *SupplierGen {
	return &SupplierGen{
		row:  row,
		addr: newStream(sdSAddr, row), nation: newStream(sdSNtrg, row), phone: newStream(sdSPhne, row),
		bal: newStream(sdSAbal, row), cmnt: newStream(sdSCmnt, row),
		bbbBad: newStream(sdBBBBad, row), bbbType: newStream(sdBBBType, row),
		bbbNoise: newStream(sdBBBNoise, row), bbbOffset: newStream(sdBBBOffset, row),
	}
}

// Next fills r with the next supplier row.
func (g *SupplierGen) Next(r *Supplier) {
	r.SuppKey = g.row
	r.Name = padded("Supplier#", g.row)
	g.buf = vstr(g.buf[:0], &g.addr, 25)
	r.Address = string(g.buf)
	r.NationKey = g.nation.unif(0, 24)
	r.Phone = phone(&g.phone, r.NationKey)
	r.AcctBal = g.bal.unif(-99_999, 999_999)
	c := text(&g.cmnt, 63)
	// The "Better Business Bureau" rule: all four draws, every row.
	n := int64(len(c))
	bad := g.bbbBad.unif(1, 10_000)
	typ := g.bbbType.unif(0, 100)
	noise := g.bbbNoise.unif(0, n-19)
	off := g.bbbOffset.unif(0, n-(19+noise))
	if bad <= 10 {
		b := []byte(c)
		copy(b[off:], "Customer ")
		if typ < 50 {
			copy(b[off+9+noise:], "Complaints")
		} else {
			copy(b[off+9+noise:], "Recommends")
		}
		c = string(b)
	}
	r.Comment = c
	for _, s := range []*stream{&g.addr, &g.nation, &g.phone, &g.bal, &g.cmnt, &g.bbbBad, &g.bbbType, &g.bbbNoise, &g.bbbOffset} {
		s.endRow()
	}
	g.row++
}

// Customer is one customer row; AcctBal is in cents.
type Customer struct {
	CustKey    int64
	Name       string
	Address    string
	NationKey  int64
	Phone      string
	AcctBal    int64
	MktSegment string
	Comment    string
}

// CustomerGen generates customer rows from a given row on.
type CustomerGen struct {
	row                                 int64
	addr, nation, phone, bal, seg, cmnt stream
	segs                                *dist
	buf                                 []byte
}

// NewCustomerGen positions the customer streams at row (1-based).
func NewCustomerGen(row int64) *CustomerGen {
	return &CustomerGen{
		row:  row,
		addr: newStream(sdCAddr, row), nation: newStream(sdCNtrg, row), phone: newStream(sdCPhne, row),
		bal: newStream(sdCAbal, row), seg: newStream(sdCMseg, row), cmnt: newStream(sdCCmnt, row),
		segs: getDist("msegmnt"),
	}
}

// Next fills r with the next customer row.
func (g *CustomerGen) Next(r *Customer) {
	r.CustKey = g.row
	r.Name = padded("Customer#", g.row)
	g.buf = vstr(g.buf[:0], &g.addr, 25)
	r.Address = string(g.buf)
	r.NationKey = g.nation.unif(0, 24)
	r.Phone = phone(&g.phone, r.NationKey)
	r.AcctBal = g.bal.unif(-99_999, 999_999)
	r.MktSegment = g.segs.names[g.segs.pick(&g.seg)]
	r.Comment = text(&g.cmnt, 73)
	for _, s := range []*stream{&g.addr, &g.nation, &g.phone, &g.bal, &g.seg, &g.cmnt} {
		s.endRow()
	}
	g.row++
}
