package engine

import (
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

// A latency falls in the first bucket whose bound it does not exceed
// (Prometheus' "le"); the counts come back cumulative, the last one the
// count, with the sum beside them.
func TestLiveBuckets(t *testing.T) {
	last := len(LiveBuckets)
	for _, c := range []struct {
		d    time.Duration
		want int // bucket index
	}{
		{0, 0},
		{500 * time.Microsecond, 0},
		{500*time.Microsecond + 1, 1},
		{time.Millisecond, 1},
		{3 * time.Millisecond, 3},
		{time.Second, 10},
		{time.Minute, last - 1},
		{time.Minute + 1, last},
		{time.Hour, last},
	} {
		live := NewLive(&Plan{Mix: make([]workload.TxType, 2)})
		live.complete(1, c.d, false)
		cum, n, sum := live.Buckets(1, nil)
		if n != 1 || sum != c.d || len(cum) != last+1 {
			t.Errorf("%s: count %d, sum %s, %d buckets; want 1, %s, %d", c.d, n, sum, len(cum), c.d, last+1)
		}
		for b, v := range cum {
			want := uint64(0)
			if b >= c.want {
				want = 1
			}
			if v != want {
				t.Errorf("%s: cumulative bucket %d (le %v) is %d, want %d", c.d, b, bound(b), v, want)
			}
		}
		if _, n0, _ := live.Buckets(0, nil); n0 != 0 || live.Kind(0) != 0 || live.Kind(1) != 1 {
			t.Errorf("%s: counted in the wrong type", c.d)
		}
	}
	for i := 1; i < last; i++ {
		if LiveBuckets[i] <= LiveBuckets[i-1] {
			t.Errorf("LiveBuckets not increasing at %d: %v", i, LiveBuckets)
		}
	}
}

func bound(b int) any {
	if b < len(LiveBuckets) {
		return LiveBuckets[b]
	}
	return "+Inf"
}

// Counting a transaction on the VU hot path allocates nothing, and neither
// does reading the buckets into a slice the reader keeps.
func TestLiveAllocatesNothing(t *testing.T) {
	live := NewLive(&Plan{Mix: make([]workload.TxType, 3)})
	into := make([]uint64, len(LiveBuckets)+1)
	if n := testing.AllocsPerRun(1000, func() {
		live.complete(2, 7*time.Millisecond, true)
		live.fail(1)
		live.retry(0, 2)
		into, _, _ = live.Buckets(2, into)
	}); n != 0 {
		t.Errorf("%v allocations per transaction, want 0", n)
	}
}
