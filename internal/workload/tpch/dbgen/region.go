package dbgen

// Region is one region row.
type Region struct {
	RegionKey int64
	Name      string
	Comment   string
}

// Nation is one nation row.
type Nation struct {
	NationKey int64
	Name      string
	RegionKey int64
	Comment   string
}

// Regions returns the 5 regions (they do not depend on SF).
func Regions() []Region {
	d := getDist("regions")
	s := newStream(sdRCmnt, 1)
	out := make([]Region, len(d.names))
	for i, name := range d.names {
		out[i] = Region{RegionKey: int64(i), Name: name, Comment: text(&s, 72)}
		s.endRow()
	}
	return out
}

// Nations returns the 25 nations. dists.dss holds each nation's region as a
// weight; the region key is the running sum of those weights.
func Nations() []Nation {
	d := getDist("nations")
	s := newStream(sdNCmnt, 1)
	out := make([]Nation, len(d.names))
	for i, name := range d.names {
		out[i] = Nation{NationKey: int64(i), Name: name, RegionKey: d.cum[i], Comment: text(&s, 72)}
		s.endRow()
	}
	return out
}
