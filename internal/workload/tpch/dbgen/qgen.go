package dbgen

// Stream is a bare Park–Miller stream for qgen's parameter draws (docs/
// tpch.md part 7.1): the same generator, UnifInt and weighted picks as
// the data's, with no per-row budget.
type Stream struct{ s stream }

// NewStream starts a stream at seed, folded into 1..2³¹−2.
func NewStream(seed int64) *Stream {
	seed %= rngMod
	if seed <= 0 {
		seed += rngMod - 1
	}
	return &Stream{s: stream{seed: seed}}
}

// Next advances the stream one step and returns its new value.
func (q *Stream) Next() int64 { return q.s.next() }

// Int is U[lo..hi], one step, as dbgen's UnifInt.
func (q *Stream) Int(lo, hi int64) int64 { return q.s.unif(lo, hi) }

// Pick draws one entry of the dists.dss list (regions, nations2,
// p_types, colors, Q13a…) with dbgen's weights, one step. It panics on a
// list dists.dss does not have: the callers name fixed lists.
func (q *Stream) Pick(list string) string {
	d := getDist(list)
	return d.names[d.pick(&q.s)]
}

// RegionOf is the region of a nation, from dists.dss alone (the nations'
// weights step through the region keys), without the text pool that
// Nations needs: Q8's REGION is its NATION's.
func RegionOf(nation string) string {
	n, r := getDist("nations"), getDist("regions")
	for i, name := range n.names {
		if name == nation && n.cum[i] >= 0 && int(n.cum[i]) < len(r.names) {
			return r.names[n.cum[i]]
		}
	}
	return ""
}
