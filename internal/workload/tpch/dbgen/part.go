package dbgen

// Part is one part row with its four partsupp rows; prices are in cents.
type Part struct {
	PartKey     int64
	Name        string
	Mfgr        string
	Brand       string
	Type        string
	Size        int64
	Container   string
	RetailPrice int64
	Comment     string
	Supps       [4]PartSupp
}

// PartSupp is one partsupp row; SupplyCost is in cents.
type PartSupp struct {
	PartKey    int64
	SuppKey    int64
	AvailQty   int64
	SupplyCost int64
	Comment    string
}

// PartGen generates part rows (with their partsupp rows) from a given row on.
type PartGen struct {
	row, suppliers                           int64
	name, mfgr, brand, typ, size, cntr, cmnt stream
	qty, cost, pscmnt                        stream
	colors, types, cntrs                     *dist
	perm                                     []int
	buf                                      []byte
}

// NewPartGen positions the part and partsupp streams at part row (1-based).
func NewPartGen(sc Scale, row int64) *PartGen {
	g := &PartGen{
		row: row, suppliers: sc.Suppliers,
		name: newStream(sdPName, row), mfgr: newStream(sdPMfgr, row), brand: newStream(sdPBrand, row),
		typ: newStream(sdPType, row), size: newStream(sdPSize, row), cntr: newStream(sdPCntr, row),
		cmnt: newStream(sdPCmnt, row), qty: newStream(sdPsQty, row), cost: newStream(sdPsCost, row),
		pscmnt: newStream(sdPsCmnt, row),
		colors: getDist("colors"), types: getDist("p_types"), cntrs: getDist("p_cntr"),
	}
	g.perm = make([]int, len(g.colors.names))
	return g
}

// Next fills r with the next part row and its partsupp rows.
func (g *PartGen) Next(r *Part) {
	p := g.row
	r.PartKey = p
	for i := range g.perm {
		g.perm[i] = i
	}
	n := int64(len(g.perm))
	for i := range n {
		j := g.name.unif(i, n-1)
		g.perm[i], g.perm[j] = g.perm[j], g.perm[i]
	}
	g.buf = g.buf[:0]
	for i := range 5 {
		if i > 0 {
			g.buf = append(g.buf, ' ')
		}
		g.buf = append(g.buf, g.colors.names[g.perm[i]]...)
	}
	r.Name = string(g.buf)
	m := g.mfgr.unif(1, 5)
	r.Mfgr = mfgrs[m-1]
	r.Brand = brands[10*m+g.brand.unif(1, 5)]
	r.Type = g.types.names[g.types.pick(&g.typ)]
	r.Size = g.size.unif(1, 50)
	r.Container = g.cntrs.names[g.cntrs.pick(&g.cntr)]
	r.RetailPrice = RetailPrice(p)
	r.Comment = text(&g.cmnt, 14)
	for i := range r.Supps {
		ps := &r.Supps[i]
		ps.PartKey = p
		ps.SuppKey = SuppKey(p, int64(i), g.suppliers)
		ps.AvailQty = g.qty.unif(1, 9999)
		ps.SupplyCost = g.cost.unif(100, 100_000)
		ps.Comment = text(&g.pscmnt, 124)
	}
	for _, s := range []*stream{&g.name, &g.mfgr, &g.brand, &g.typ, &g.size, &g.cntr, &g.cmnt, &g.qty, &g.cost, &g.pscmnt} {
		s.endRow()
	}
	g.row++
}

var mfgrs = [5]string{"Manufacturer#1", "Manufacturer#2", "Manufacturer#3", "Manufacturer#4", "Manufacturer#5"}

// brands[10·m+n] is Brand#mn.
var brands = func() (b [56]string) {
	for m := 1; m <= 5; m++ {
		for n := 1; n <= 5; n++ {
			b[10*m+n] = "Brand#" + string(rune('0'+m)) + string(rune('0'+n))
		}
	}
	return b
}()
