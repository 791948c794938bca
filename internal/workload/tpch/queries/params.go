package queries

import (
	"fmt"
	"strings"
)

// Lists gives qgen's word lists, by their dists.dss names ("regions",
// "nations", "p_types", "colors", "msegmnt", "smode", "p_cntr", "Q13a",
// "Q13b"), for weighted picks (docs/tpch.md part 4.3): the generator's
// distributions serve both.
type Lists interface {
	// Pick draws one entry of list with one step of r (weighted, as dbgen).
	Pick(list string, r *Stream) string
}

// Stream is one Park–Miller "minimal standard" generator (docs/tpch.md
// part 4.1): s ← s·16807 mod (2³¹−1).
type Stream struct{ s int64 }

// NewStream starts a stream at seed (1..2³¹−2; other values are folded in).
func NewStream(seed int64) *Stream {
	seed %= 2147483647
	if seed <= 0 {
		seed += 2147483646
	}
	return &Stream{s: seed}
}

func (r *Stream) next() int64 {
	r.s = r.s * 16807 % 2147483647
	return r.s
}

// Int is U[lo..hi], one step, as dbgen's UnifInt (truncation of a float).
func (r *Stream) Int(lo, hi int64) int64 {
	return lo + int64(float64(r.next())/2147483647.0*float64(hi-lo+1))
}

// Seeds are qgen's per-query streams of query stream s with base seed r
// (docs/tpch.md part 7.1): seed[0] = r + s; for q = 1..22 seed[0] =
// next(seed[0]), and query q's stream starts there.
func Seeds(r int64, stream int) [Queries + 1]*Stream {
	var out [Queries + 1]*Stream
	base := NewStream(r + int64(stream))
	for q := 1; q <= Queries; q++ {
		base.next()
		out[q] = NewStream(base.s)
	}
	return out
}

// Random draws query q's parameters by qgen's rules (docs/tpch.md part 7:
// the ranges of the specification, the picks from the lists) from its
// stream r, for scale factor sf. The same stream always yields the same
// parameters.
func Random(q int, sf float64, r *Stream, l Lists) Params {
	ym := func(y, m int64) string { return fmt.Sprintf("%04d-%02d-01", y, m) }
	// months counts from 1993-01 (t = 0) as qgen's date arithmetic does.
	month := func(t int64) string { return ym(1993+t/12, 1+t%12) }
	lastWord := func(s string) string { return s[strings.LastIndexByte(s, ' ')+1:] }
	brand := func() string { return fmt.Sprintf("Brand#%d%d", r.Int(1, 5), r.Int(1, 5)) }
	switch q {
	case 1:
		return Params{"DELTA": int(r.Int(60, 120))}
	case 2:
		return Params{"SIZE": int(r.Int(1, 50)), "TYPE": lastWord(l.Pick("p_types", r)), "REGION": l.Pick("regions", r)}
	case 3:
		seg := l.Pick("msegmnt", r)
		return Params{"SEGMENT": seg, "DATE": fmt.Sprintf("1995-03-%02d", r.Int(1, 31))}
	case 4:
		return Params{"DATE": month(r.Int(1, 58))}
	case 5:
		return Params{"REGION": l.Pick("regions", r), "DATE": ym(r.Int(1993, 1997), 1)}
	case 6:
		return Params{"DATE": ym(r.Int(1993, 1997), 1), "DISCOUNT": int(r.Int(2, 9)), "QUANTITY": int(r.Int(24, 25))}
	case 7:
		n1 := l.Pick("nations", r)
		n2 := n1
		for n2 == n1 {
			n2 = l.Pick("nations", r)
		}
		return Params{"NATION1": n1, "NATION2": n2}
	case 8:
		n := l.Pick("nations", r)
		return Params{"NATION": n, "REGION": regionOf(n), "TYPE": l.Pick("p_types", r)}
	case 9:
		return Params{"COLOR": l.Pick("colors", r)}
	case 10:
		return Params{"DATE": month(r.Int(1, 24))}
	case 11:
		return Params{"NATION": l.Pick("nations", r), "FRACTION": fraction(sf)}
	case 12:
		m1 := l.Pick("smode", r)
		m2 := m1
		for m2 == m1 {
			m2 = l.Pick("smode", r)
		}
		return Params{"SHIPMODE1": m1, "SHIPMODE2": m2, "DATE": ym(r.Int(1993, 1997), 1)}
	case 13:
		return Params{"WORD1": l.Pick("Q13a", r), "WORD2": l.Pick("Q13b", r)}
	case 14:
		return Params{"DATE": month(r.Int(0, 59))}
	case 15:
		return Params{"DATE": month(r.Int(0, 57))}
	case 16:
		b := brand()
		words := strings.Fields(l.Pick("p_types", r))
		return Params{"BRAND": b, "TYPE": strings.Join(words[:2], " "), "SIZES": permutation(r, 1, 50)[:8]}
	case 17:
		return Params{"BRAND": brand(), "CONTAINER": l.Pick("p_cntr", r)}
	case 18:
		return Params{"QUANTITY": int(r.Int(312, 315))}
	case 19:
		return Params{"BRAND1": brand(), "BRAND2": brand(), "BRAND3": brand(),
			"QUANTITY1": int(r.Int(1, 10)), "QUANTITY2": int(r.Int(10, 20)), "QUANTITY3": int(r.Int(20, 30))}
	case 20:
		return Params{"COLOR": l.Pick("colors", r), "DATE": ym(r.Int(1993, 1997), 1), "NATION": l.Pick("nations", r)}
	case 21:
		return Params{"NATION": l.Pick("nations", r)}
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
func permutation(r *Stream, lo, hi int) []int {
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

// regionOf is the region of a nation (the specification's NATION table:
// n_regionkey), for Q8, whose REGION is its NATION's.
func regionOf(nation string) string {
	regions := []string{"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"}
	byNation := map[string]int{
		"ALGERIA": 0, "ARGENTINA": 1, "BRAZIL": 1, "CANADA": 1, "EGYPT": 4, "ETHIOPIA": 0, "FRANCE": 3,
		"GERMANY": 3, "INDIA": 2, "INDONESIA": 2, "IRAN": 4, "IRAQ": 4, "JAPAN": 2, "JORDAN": 4, "KENYA": 0,
		"MOROCCO": 0, "MOZAMBIQUE": 0, "PERU": 1, "CHINA": 2, "ROMANIA": 3, "SAUDI ARABIA": 4, "VIETNAM": 2,
		"RUSSIA": 3, "UNITED KINGDOM": 3, "UNITED STATES": 1,
	}
	if k, ok := byNation[nation]; ok {
		return regions[k]
	}
	return ""
}
