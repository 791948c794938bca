package tpcc

import (
	"math/bits"
	"math/rand/v2"
	"slices"
)

// Spec constants (docs/tpcc.md parts 1, 5 and 6).
const (
	items             = 100_000 // §4.3.3.1: ITEM rows, fixed
	districtsPerWH    = 10      // §4.3.3.1
	customersPerDist  = 3_000   // §4.3.3.1
	ordersPerDist     = 3_000   // §4.3.3.1
	newOrdersPerDist  = 900     // §4.3.3.1: orders 2,101..3,000 are undelivered
	firstNewOrder     = ordersPerDist - newOrdersPerDist + 1
	maxWarehouses     = 10_000
	unusedItem        = items + 1 // §2.4.1.4: an unused item id makes New-Order roll back
	cLastA, cIDA      = 255, 1023 // §2.1.6: A of NURand for C_LAST and C_ID
	olIIDA            = 8191      // §2.1.6: A of NURand for OL_I_ID
	minRunDelta       = 65        // §2.1.6.1: |C_RUN − C_LOAD| in [65..119] …
	maxRunDelta       = 119
	forbiddenDeltaOne = 96 // … and not 96 …
	forbiddenDeltaTwo = 112
	original          = "ORIGINAL" // §4.3.3.1: marks 10% of i_data and s_data
)

// Character tables for generated strings. §4.3.2.2 asks for random
// alphanumeric characters; "random a-string of N letters" (states, s_dist_xx)
// reads as letters only.
const (
	alnum   = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" // 62
	letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"           // 52
	digits  = "0123456789"
)

// syllables make C_LAST from the three digits of a number (§4.3.2.3).
// Read-only.
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// appendLastName appends the C_LAST of n (0..999): one syllable per decimal
// digit, most significant first, leading zeros included (§4.3.2.3).
func appendLastName(b []byte, n int) []byte {
	b = append(b, syllables[n/100]...)
	b = append(b, syllables[n/10%10]...)
	return append(b, syllables[n%10]...)
}

// lastName is appendLastName as a string, from a table made once: a
// terminal draws one for most Payments and Order-Statuses, and the hot path
// allocates nothing (issue 26).
func lastName(n int) string { return lastNames[n] }

var lastNames = func() (out [1000]string) {
	for n := range out {
		var buf [15]byte // 3 × len("ATION")
		out[n] = string(appendLastName(buf[:0], n))
	}
	return out
}()

// rng is one PCG stream with the draws TPC-C needs. It is a value type so
// generators keep it on the stack, and it calls PCG directly (no interface)
// because data generation is the CPU hot path of a build.
type rng struct{ src rand.PCG }

// fnv1a hashes a stream name.
func fnv1a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// mix64 is the splitmix64 finalizer: a bijection that spreads every input bit.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// newRNG returns the stream for (seed, name, i): batch i of a table, VU i of
// a run, or a named constant. Different triples give unrelated streams.
func newRNG(seed uint64, name string, i uint64) rng {
	a := mix64(seed ^ mix64(fnv1a(name)))
	b := mix64(a ^ mix64(i+0x9e3779b97f4a7c15))
	var r rng
	r.src.Seed(a, b)
	return r
}

func (r *rng) uint64() uint64 { return r.src.Uint64() }

// uint64n is uniform in [0, n) without bias (Lemire's multiply-shift with
// rejection).
func (r *rng) uint64n(n uint64) uint64 {
	hi, lo := bits.Mul64(r.src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.src.Uint64(), n)
		}
	}
	return hi
}

// intn is uniform in [0, n).
func (r *rng) intn(n int) int { return int(r.uint64n(uint64(n))) }

// between is "random within [lo..hi]", inclusive (§4.3.2.5).
func (r *rng) between(lo, hi int) int { return lo + int(r.uint64n(uint64(hi-lo+1))) }

// nurand is NURand(A, x, y) with constant c (§2.1.6).
func (r *rng) nurand(a, x, y, c int) int {
	return ((r.between(0, a)|r.between(x, y))+c)%(y-x+1) + x
}

// charsPerDraw is how many characters appendChars takes from one 64-bit
// draw: they are its first base-len(table) digits, and for a table of at
// most 64 entries 7 digits are uniform to within 64^7/2^64 ≈ 2.4e-7.
const charsPerDraw = 7

// appendChars appends n characters drawn uniformly from table (at most 64
// entries). Each character is one multiply, without branches: this is the
// hottest loop of a build.
func (r *rng) appendChars(b []byte, n int, table string) []byte {
	start := len(b)
	b = slices.Grow(b, n)[:start+n]
	dst := b[start:]
	size := uint64(len(table))
	for len(dst) > 0 {
		x := r.src.Uint64()
		k := min(len(dst), charsPerDraw)
		for i := range dst[:k] {
			hi, lo := bits.Mul64(x, size)
			dst[i] = table[hi]
			x = lo
		}
		dst = dst[k:]
	}
	return b
}

// appendAString appends an a-string of random length in [lo..hi] (§4.3.2.2).
func (r *rng) appendAString(b []byte, lo, hi int) []byte {
	return r.appendChars(b, r.between(lo, hi), alnum)
}

// appendLetters appends n random letters (W/D/C_STATE, S_DIST_xx, OL_DIST_INFO).
func (r *rng) appendLetters(b []byte, n int) []byte { return r.appendChars(b, n, letters) }

// appendDigits appends an n-string of exactly n digits (§4.3.2.2).
func (r *rng) appendDigits(b []byte, n int) []byte { return r.appendChars(b, n, digits) }

// appendZip appends a zip code: 4 random digits and "11111" (§4.3.2.7).
func (r *rng) appendZip(b []byte) []byte {
	return append(r.appendDigits(b, 4), "11111"...)
}

// appendData appends an a-string [26..50] for i_data or s_data; when orig is
// set, "ORIGINAL" overwrites it at a random position (§4.3.3.1).
func (r *rng) appendData(b []byte, orig bool) []byte {
	start := len(b)
	b = r.appendAString(b, 26, 50)
	if orig {
		p := r.intn(len(b) - start - len(original) + 1)
		copy(b[start+p:], original)
	}
	return b
}

// selection picks exactly need of total rows, each subset equally likely
// (Knuth's selection sampling): how the 10% ORIGINAL and BC rows are chosen,
// so each batch holds exactly 10% (§4.3.3.1, ±5% allowed by §4.2.2).
type selection struct{ need, left int }

func (s *selection) next(r *rng) bool {
	pick := r.intn(s.left) < s.need
	s.left--
	if pick {
		s.need--
	}
	return pick
}

// cLoadFor is C_LOAD, the C of NURand for C_LAST at load (§2.1.6), derived
// from the build seed and stored in sledge_meta.
func cLoadFor(seed uint64) int {
	r := newRNG(seed, "c_load", 0)
	return r.between(0, cLastA)
}

// validRunDelta reports whether |C_RUN − C_LOAD| = d is allowed (§2.1.6.1).
func validRunDelta(d int) bool {
	if d < 0 {
		d = -d
	}
	return d >= minRunDelta && d <= maxRunDelta && d != forbiddenDeltaOne && d != forbiddenDeltaTwo
}

// runConstants are the C values of NURand for a run (§2.1.6): one per
// field, shared by every terminal of the run, so derived from the run seed
// only (and C_LOAD, which C_RUN must keep its distance from).
type runConstants struct {
	cLast, cID, olIID int
}

func newRunConstants(seed uint64, cLoad int) runConstants {
	r := newRNG(seed, "run_constants", 0)
	var k runConstants
	// §2.1.6.1: pick C_RUN uniformly among the values at a valid distance
	// from C_LOAD. There are always some: the farthest value is ≥128 away.
	var cands [cLastA + 1]int
	n := 0
	for c := 0; c <= cLastA; c++ {
		if validRunDelta(c - cLoad) {
			cands[n] = c
			n++
		}
	}
	k.cLast = cands[r.intn(n)]
	k.cID = r.between(0, cIDA)
	k.olIID = r.between(0, olIIDA)
	return k
}
