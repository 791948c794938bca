package tpcc

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestLastName(t *testing.T) {
	cases := map[int]string{ // §4.3.2.3 examples, leading zeros count
		0:   "BARBARBAR",
		40:  "BARPRESBAR",
		371: "PRICALLYOUGHT",
		999: "EINGEINGEING",
	}
	for n, want := range cases {
		if got := lastName(n); got != want {
			t.Errorf("lastName(%d) = %q, want %q", n, got, want)
		}
	}
	seen := map[string]bool{}
	for n := range 1000 {
		seen[lastName(n)] = true
	}
	if len(seen) != 1000 {
		t.Errorf("%d distinct names for 0..999", len(seen))
	}
}

func TestNURand(t *testing.T) {
	cases := []struct{ a, x, y int }{{cLastA, 0, 999}, {cIDA, 1, 3000}, {olIIDA, 1, items}}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("A=%d", tc.a), func(t *testing.T) {
			r := newRNG(1, "nurand", uint64(tc.a))
			for _, c := range []int{0, tc.a / 2, tc.a} {
				hits := map[int]int{}
				lo, hi := tc.y, tc.x
				const n = 200_000
				for range n {
					v := r.nurand(tc.a, tc.x, tc.y, c)
					if v < tc.x || v > tc.y {
						t.Fatalf("NURand(%d,%d,%d) = %d", tc.a, tc.x, tc.y, v)
					}
					lo, hi = min(lo, v), max(hi, v)
					hits[v]++
				}
				// Non-uniform: the most frequent value is well above the
				// uniform expectation.
				top := 0
				for _, h := range hits {
					top = max(top, h)
				}
				if uniform := float64(n) / float64(tc.y-tc.x+1); float64(top) < 2*uniform {
					t.Errorf("C=%d: top frequency %d is not above 2× uniform %.1f", c, top, uniform)
				}
				if lo > tc.x+(tc.y-tc.x)/100 || hi < tc.y-(tc.y-tc.x)/100 {
					t.Errorf("C=%d: values only in [%d..%d]", c, lo, hi)
				}
			}
		})
	}
}

// TestRunConstants: §2.1.6.1 for every C_LOAD, and C values shared by all
// terminals of a run (they depend on the run seed only).
func TestRunConstants(t *testing.T) {
	for cLoad := 0; cLoad <= cLastA; cLoad++ {
		spread := map[int]bool{}
		for seed := range uint64(40) {
			k := newRunConstants(seed, cLoad)
			d := k.cLast - cLoad
			if d < 0 {
				d = -d
			}
			if k.cLast < 0 || k.cLast > cLastA || d < 65 || d > 119 || d == 96 || d == 112 {
				t.Fatalf("C_LOAD %d seed %d: C_RUN %d (delta %d)", cLoad, seed, k.cLast, d)
			}
			if k.cID < 0 || k.cID > cIDA || k.olIID < 0 || k.olIID > olIIDA {
				t.Fatalf("C_ID %d, C_OL_I_ID %d", k.cID, k.olIID)
			}
			spread[k.cLast] = true
		}
		if len(spread) < 10 {
			t.Errorf("C_LOAD %d: only %d distinct C_RUN over 40 seeds", cLoad, len(spread))
		}
	}
	if validRunDelta(96) || validRunDelta(-112) || !validRunDelta(-65) || !validRunDelta(119) || validRunDelta(120) {
		t.Error("validRunDelta")
	}
	w := New(Config{Warehouses: 5, Seed: 1})
	a := w.NewTerminal(0, 10, 99).(*terminal)
	b := w.NewTerminal(7, 10, 99).(*terminal)
	if a.k != b.k {
		t.Errorf("terminals of one run disagree on C: %+v %+v", a.k, b.k)
	}
	if c := w.NewTerminal(0, 10, 100).(*terminal); c.k == a.k {
		t.Errorf("different run seeds, same constants %+v", c.k)
	}
}

func TestCLoad(t *testing.T) {
	seen := map[int]bool{}
	for seed := range uint64(2000) {
		c := cLoadFor(seed)
		if c < 0 || c > cLastA {
			t.Fatalf("C_LOAD %d", c)
		}
		seen[c] = true
	}
	if len(seen) < 250 {
		t.Errorf("C_LOAD takes %d of 256 values", len(seen))
	}
}

func TestStrings(t *testing.T) {
	r := newRNG(3, "strings", 0)
	counts := map[byte]int{}
	lens := map[int]int{}
	for range 20_000 {
		b := r.appendAString(nil, 10, 20)
		lens[len(b)]++
		for _, c := range b {
			counts[c]++
		}
	}
	if len(lens) != 11 {
		t.Errorf("a-string [10..20] lengths %v", lens)
	}
	if len(counts) != len(alnum) {
		t.Fatalf("%d distinct characters, want %d", len(counts), len(alnum))
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	for c, n := range counts {
		within(t, fmt.Sprintf("share of %q", c), float64(n)/float64(total), 1.0/float64(len(alnum)), 0.05)
	}
	for range 1000 {
		z := string(r.appendZip(nil))
		if len(z) != 9 || !isCharset(z[:4], digits) || z[4:] != "11111" {
			t.Fatalf("zip %q", z)
		}
		if d := string(r.appendDigits(nil, 16)); len(d) != 16 || !isCharset(d, digits) {
			t.Fatalf("n-string %q", d)
		}
		if l := string(r.appendLetters(nil, 24)); len(l) != 24 || !isCharset(l, letters) {
			t.Fatalf("letters %q", l)
		}
		data := string(r.appendData([]byte("prefix"), true))
		if !strings.HasPrefix(data, "prefix") || !strings.Contains(data[6:], original) || len(data)-6 < 26 || len(data)-6 > 50 {
			t.Fatalf("data %q", data)
		}
	}
}

func TestSelectionIsExact(t *testing.T) {
	r := newRNG(1, "sel", 0)
	pos := make([]int, 10)
	for range 2000 {
		s := selection{need: 10, left: 100}
		n := 0
		for i := range 100 {
			if s.next(&r) {
				n++
				pos[i/10]++
			}
		}
		if n != 10 {
			t.Fatalf("selected %d of 100, want 10", n)
		}
	}
	for i, p := range pos { // every position equally likely
		within(t, fmt.Sprintf("selections in positions %d0..%d9", i, i), float64(p), 2000, 0.1)
	}
}

func TestBetweenIsUniform(t *testing.T) {
	r := newRNG(1, "between", 0)
	var hist [11]int
	const n = 110_000
	for range n {
		v := r.between(5, 15)
		if v < 5 || v > 15 {
			t.Fatalf("between(5,15) = %d", v)
		}
		hist[v-5]++
	}
	for i, h := range hist {
		if math.Abs(float64(h)-n/11) > 0.05*n/11 {
			t.Errorf("value %d drawn %d times", i+5, h)
		}
	}
}
