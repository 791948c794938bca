package queries

import (
	"fmt"
	"strings"

	"github.com/sledge-bench/sledge/internal/workload/tpch/dbgen"
)

// Seeds are qgen's per-query streams of query stream s with base seed r
// (docs/tpch.md part 7.1): seed[0] = r + s; for q = 1..22 seed[0] =
// next(seed[0]), and query q's stream starts there.
func Seeds(r int64, stream int) [Queries + 1]*dbgen.Stream {
	var out [Queries + 1]*dbgen.Stream
	base := dbgen.NewStream(r + int64(stream))
	for q := 1; q <= Queries; q++ {
		out[q] = dbgen.NewStream(base.Next())
	}
	return out
}

// Random draws query q's parameters by qgen's rules (docs/tpch.md part 7:
// the ranges of the specification, weighted picks from dbgen's lists)
// from its stream r, for scale factor sf. The same stream always yields
// the same parameters.
func Random(q int, sf float64, r *dbgen.Stream) Params {
	ym := func(y, m int64) string { return fmt.Sprintf("%04d-%02d-01", y, m) }
	// months counts from 1993-01 (t = 0) as qgen's date arithmetic does.
	month := func(t int64) string { return ym(1993+t/12, 1+t%12) }
	lastWord := func(s string) string { return s[strings.LastIndexByte(s, ' ')+1:] }
	brand := func() string { return fmt.Sprintf("Brand#%d%d", r.Int(1, 5), r.Int(1, 5)) }
	switch q {
	case 1:
		return Params{"DELTA": int(r.Int(60, 120))}
	case 2:
		return Params{"SIZE": int(r.Int(1, 50)), "TYPE": lastWord(r.Pick("p_types")), "REGION": r.Pick("regions")}
	case 3:
		seg := r.Pick("msegmnt")
		return Params{"SEGMENT": seg, "DATE": fmt.Sprintf("1995-03-%02d", r.Int(1, 31))}
	case 4:
		return Params{"DATE": month(r.Int(1, 58))}
	case 5:
		return Params{"REGION": r.Pick("regions"), "DATE": ym(r.Int(1993, 1997), 1)}
	case 6:
		return Params{"DATE": ym(r.Int(1993, 1997), 1), "DISCOUNT": int(r.Int(2, 9)), "QUANTITY": int(r.Int(24, 25))}
	case 7:
		n1 := r.Pick("nations2")
		n2 := n1
		for n2 == n1 {
			n2 = r.Pick("nations2")
		}
		return Params{"NATION1": n1, "NATION2": n2}
	case 8:
		n := r.Pick("nations2")
		return Params{"NATION": n, "REGION": dbgen.RegionOf(n), "TYPE": r.Pick("p_types")}
	case 9:
		return Params{"COLOR": r.Pick("colors")}
	case 10:
		return Params{"DATE": month(r.Int(1, 24))}
	case 11:
		return Params{"NATION": r.Pick("nations2"), "FRACTION": fraction(sf)}
	case 12:
		m1 := r.Pick("smode")
		m2 := m1
		for m2 == m1 {
			m2 = r.Pick("smode")
		}
		return Params{"SHIPMODE1": m1, "SHIPMODE2": m2, "DATE": ym(r.Int(1993, 1997), 1)}
	case 13:
		return Params{"WORD1": r.Pick("Q13a"), "WORD2": r.Pick("Q13b")}
	case 14:
		return Params{"DATE": month(r.Int(0, 59))}
	case 15:
		return Params{"DATE": month(r.Int(0, 57))}
	case 16:
		b := brand()
		words := strings.Fields(r.Pick("p_types"))
		return Params{"BRAND": b, "TYPE": strings.Join(words[:2], " "), "SIZES": permutation(r, 1, 50)[:8]}
	case 17:
		return Params{"BRAND": brand(), "CONTAINER": r.Pick("p_cntr")}
	case 18:
		return Params{"QUANTITY": int(r.Int(312, 315))}
	case 19:
		return Params{"BRAND1": brand(), "BRAND2": brand(), "BRAND3": brand(),
			"QUANTITY1": int(r.Int(1, 10)), "QUANTITY2": int(r.Int(10, 20)), "QUANTITY3": int(r.Int(20, 30))}
	case 20:
		return Params{"COLOR": r.Pick("colors"), "DATE": ym(r.Int(1993, 1997), 1), "NATION": r.Pick("nations2")}
	case 21:
		return Params{"NATION": r.Pick("nations2")}
	case 22:
		// Seven distinct country codes from 10..34, the first of a
		// permutation (not qgen 2.14's, which adds 10 twice: part 7).
		codes := permutation(r, 10, 34)[:7]
		s := make([]string, len(codes))
		for i, c := range codes {
			s[i] = fmt.Sprint(c)
		}
		return Params{"CODES": s}
	}
	return nil
}

// permutation of lo..hi: from the identity, swap element i with element
// U[i..n−1], for i = 0..n−1 (docs/tpch.md part 4.3).
func permutation(r *dbgen.Stream, lo, hi int) []int {
	n := hi - lo + 1
	p := make([]int, n)
	for i := range p {
		p[i] = lo + i
	}
	for i := 0; i < n; i++ {
		j := int(r.Int(int64(i), int64(n-1)))
		p[i], p[j] = p[j], p[i]
	}
	return p
}
