package tpcb

import (
	"math"
	"testing"

	"github.com/sledge-bench/sledge/internal/workload"
)

// draws returns the inputs of n transactions: copies, since Next reuses
// one txn per builtin (valid until the next call), without the bound
// statements, which are the terminal's and not inputs.
func draws(term workload.Terminal, n int) []*txn {
	out := make([]*txn, n)
	for i := range out {
		tx := *term.Next().(*txn)
		tx.st = nil
		out[i] = &tx
	}
	return out
}

// TestDrawRanges: pgbench's \set lines: aid in 1..100,000·scale, bid in
// 1..scale, tid in 1..10·scale, delta in -5000..5000, each uniform and
// every bound reached.
func TestDrawRanges(t *testing.T) {
	const scale, n = 3, 300_000
	w := New(Config{Scale: scale})
	type bounds struct{ lo, hi, min, max int64 }
	b := map[string]*bounds{
		"aid":   {1, 100_000 * scale, math.MaxInt64, math.MinInt64},
		"bid":   {1, scale, math.MaxInt64, math.MinInt64},
		"tid":   {1, 10 * scale, math.MaxInt64, math.MinInt64},
		"delta": {-5000, 5000, math.MaxInt64, math.MinInt64},
	}
	perBid := make([]int, scale+1)
	var sum float64
	for _, tx := range draws(w.NewTerminal(0, 1, 42), n) {
		if tx.b != TPCBLike || tx.kind != 0 {
			t.Fatalf("drew %v kind %d", tx.b, tx.kind)
		}
		for name, v := range map[string]int64{"aid": tx.aid, "bid": tx.bid, "tid": tx.tid, "delta": tx.delta} {
			bb := b[name]
			bb.min, bb.max = min(bb.min, v), max(bb.max, v)
		}
		perBid[tx.bid]++
		sum += float64(tx.delta)
	}
	for name, bb := range b {
		if bb.min != bb.lo || (bb.max != bb.hi && name != "aid") || bb.max > bb.hi {
			t.Errorf("%s drawn in [%d, %d], want [%d, %d]", name, bb.min, bb.max, bb.lo, bb.hi)
		}
	}
	for bid := 1; bid <= scale; bid++ {
		if got := float64(perBid[bid]) / n; math.Abs(got-1.0/scale) > 0.01 {
			t.Errorf("bid %d drawn %.3f of the time, want %.3f", bid, got, 1.0/scale)
		}
	}
	// Mean delta: 0 ± 5 standard errors (sd of a uniform -5000..5000 is 2887).
	if mean := sum / n; math.Abs(mean) > 5*2887/math.Sqrt(n) {
		t.Errorf("mean delta %.1f", mean)
	}
}

// TestDrawsPerVU: a VU's inputs depend only on the seed and the VU, so
// every mode and every rerun with the same seed draws the same ones.
func TestDrawsPerVU(t *testing.T) {
	w := New(Config{Scale: 5, Builtins: []Weighted{{TPCBLike, 1}, {SimpleUpdate, 1}, {SelectOnly, 1}}})
	a := draws(w.NewTerminal(1, 4, 9), 1000)
	b := draws(w.NewTerminal(1, 4, 9), 1000)
	for i := range a {
		if *a[i] != *b[i] {
			t.Fatalf("draw %d: %+v then %+v", i, *a[i], *b[i])
		}
	}
	// The number of VUs does not change a VU's stream.
	if c := draws(w.NewTerminal(1, 2, 9), 1); *c[0] != *a[0] {
		t.Errorf("VU 1 of 2 drew %+v, of 4 %+v", *c[0], *a[0])
	}
	for _, other := range []workload.Terminal{w.NewTerminal(2, 4, 9), w.NewTerminal(1, 4, 10)} {
		same := 0
		for i, tx := range draws(other, 1000) {
			if tx.aid == a[i].aid {
				same++
			}
		}
		if same > 5 {
			t.Errorf("another VU or seed repeats %d of 1000 aids", same)
		}
	}
}

// TestMixWeights: builtins are drawn with probability weight ÷ Σ weights;
// weight 0 never; select-only draws only aid.
func TestMixWeights(t *testing.T) {
	w := New(Config{Scale: 1, Builtins: []Weighted{{TPCBLike, 3}, {SimpleUpdate, 0}, {SelectOnly, 1}}})
	const n = 80_000
	count := make([]int, 3)
	for _, tx := range draws(w.NewTerminal(0, 1, 3), n) {
		count[tx.kind]++
		if tx.b != w.mix[tx.kind].Builtin {
			t.Fatalf("kind %d is %v", tx.kind, tx.b)
		}
		if tx.b == SelectOnly && (tx.bid != 0 || tx.tid != 0 || tx.delta != 0) {
			t.Fatalf("select-only drew more than aid: %+v", *tx)
		}
		if tx.b != SelectOnly && (tx.bid != 1 || tx.tid < 1 || tx.tid > 10) {
			t.Fatalf("bad draw %+v", *tx)
		}
	}
	if count[1] != 0 {
		t.Errorf("simple-update@0 drawn %d times", count[1])
	}
	if got := float64(count[0]) / n; math.Abs(got-0.75) > 0.01 {
		t.Errorf("tpcb-like@3 of 4 drawn %.3f of the time", got)
	}
}
