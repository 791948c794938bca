// Package dbgen generates the rows of a TPC-H-derived data set exactly as
// TPC's dbgen 2.14 does, as a pure function of the scale factor. It follows
// the description in issue 15's tpch.md (parts 3, 4 and 6): one Park–Miller
// stream per column, fixed seeds, a fixed number of draws per row (so any
// row range can be generated on its own), weighted picks from dbgen's
// dists.dss and comments cut from one shared 300 MiB text pool.
package dbgen

const (
	rngMod  = 2147483647 // 2³¹ − 1
	rngMult = 16807
)

// stream is one column's Park–Miller generator.
type stream struct {
	seed   int64
	used   int64 // draws since the start of the current row
	budget int64 // draws per row (dbgen's seed table)
}

func (s *stream) next() int64 {
	s.seed = s.seed * rngMult % rngMod
	s.used++
	return s.seed
}

// unif is dbgen's UnifInt(lo, hi): one step, then a scaled float64
// truncated toward zero. The range is computed in 32-bit arithmetic, as
// dbgen does, so U[0..2³¹−1] wraps to a negative range (the vstr quirk).
func (s *stream) unif(lo, hi int64) int64 {
	r := float64(s.next()) / rngMod
	rng := int32(int32(hi) - int32(lo) + 1)
	return lo + int64(r*float64(rng))
}

// skip advances the stream by n steps: seed·16807ⁿ mod (2³¹−1).
func (s *stream) skip(n int64) {
	s.seed = s.seed * powMod(rngMult, n) % rngMod
}

// endRow advances the stream to exactly its budget for the row. No row
// draws more than its budget (at most 7 lines per order, 8 vstr draws per
// address, 92 colours per name), as the digests of every table confirm.
func (s *stream) endRow() {
	for ; s.used < s.budget; s.used++ {
		s.seed = s.seed * rngMult % rngMod
	}
	s.used = 0
}

func powMod(b, e int64) int64 {
	r := int64(1)
	b %= rngMod
	for e > 0 {
		if e&1 == 1 {
			r = r * b % rngMod
		}
		b = b * b % rngMod
		e >>= 1
	}
	return r
}

// Seed indices (tpch.md part 4.2).
const (
	sdPMfgr = iota
	sdPBrand
	sdPType
	sdPSize
	sdPCntr
	sdText
	sdPCmnt
	sdPsQty
	sdPsCost
	sdPsCmnt
	sdOUnused
	sdOClerk
	sdOCmnt
	sdODate
	sdLQty
	sdLDisc
	sdLTax
	sdLShip
	sdLSmode
	sdLPkey
	sdLSkey
	sdLSdate
	sdLCdate
	sdLRdate
	sdLRflag
	sdLCmnt
	sdCAddr
	sdCNtrg
	sdCPhne
	sdCAbal
	sdCMseg
	sdCCmnt
	sdSAddr
	sdSNtrg
	sdSPhne
	sdSAbal
	sdSCmnt
	sdPName
	sdOPrio
	sdLUnused
	sdOCkey
	sdNCmnt
	sdRCmnt
	sdOLcnt
	sdBBBNoise
	sdBBBType
	sdBBBBad
	sdBBBOffset
	numStreams
)

var seedTable = [numStreams]struct{ seed, budget int64 }{
	{1, 1}, {46831694, 1}, {1841581359, 1}, {1193163244, 1}, {727633698, 1},
	{933588178, 0}, {804159733, 2}, {1671059989, 4}, {1051288424, 4}, {1961692154, 8},
	{1227283347, 1}, {1171034773, 1}, {276090261, 2}, {1066728069, 1}, {209208115, 7},
	{554590007, 7}, {721958466, 7}, {1371272478, 7}, {675466456, 7}, {1808217256, 7},
	{2095021727, 7}, {1769349045, 7}, {904914315, 7}, {373135028, 7}, {717419739, 7},
	{1095462486, 14}, {881155353, 9}, {1489529863, 1}, {1521138112, 3}, {298370230, 1},
	{1140279430, 1}, {1335826707, 2}, {706178559, 9}, {110356601, 1}, {884434366, 3},
	{962338209, 1}, {1341315363, 2}, {709314158, 92}, {591449447, 1}, {431918286, 1},
	{851767375, 1}, {606179079, 2}, {1500869201, 2}, {1434868289, 1}, {263032577, 1},
	{753643799, 1}, {202794285, 1}, {715851524, 1},
}

// newStream returns stream idx positioned at the start of row (1-based).
func newStream(idx int, row int64) stream {
	t := seedTable[idx]
	s := stream{seed: t.seed, budget: t.budget}
	s.skip((row - 1) * t.budget)
	return s
}
