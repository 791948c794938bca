package dbgen

func partVals(p *Part) []string {
	return []string{itoa(p.PartKey), p.Name, p.Mfgr, p.Brand, p.Type, itoa(p.Size), p.Container, cents(p.RetailPrice), p.Comment}
}
func partSuppVals(ps *PartSupp) []string {
	return []string{itoa(ps.PartKey), itoa(ps.SuppKey), itoa(ps.AvailQty), cents(ps.SupplyCost), ps.Comment}
}

func init() {
	part1 := func(sc Scale) *Part {
		var p Part
		NewPartGen(sc, 1).Next(&p)
		return &p
	}
	vectors = append(vectors,
		vector{"part", func(sc Scale) []string { return partVals(part1(sc)) },
			"1|goldenrod lavender spring chocolate lace|Manufacturer#1|Brand#13|PROMO BURNISHED COPPER|7|JUMBO PKG|901.00|ly. slyly ironi"},
		vector{"partsupp", func(sc Scale) []string { return partSuppVals(&part1(sc).Supps[0]) },
			"1|2|3325|771.64|, even theodolites. regular, final theodolites eat after the carefully pending foxes. furiously regular deposits sleep slyly. carefully bold realms above the ironic dependencies haggle careful"},
	)
	parts := func(sc Scale, f func(*Part)) {
		var p Part
		g := NewPartGen(sc, 1)
		for range sc.Parts {
			g.Next(&p)
			f(&p)
		}
	}
	tableRows["part"] = func(sc Scale, emit func([]string)) {
		parts(sc, func(p *Part) { emit(partVals(p)) })
	}
	tableRows["partsupp"] = func(sc Scale, emit func([]string)) {
		parts(sc, func(p *Part) {
			for i := range p.Supps {
				emit(partSuppVals(&p.Supps[i]))
			}
		})
	}
}
