package child

import (
	"os"
	"slices"
	"testing"
)

func TestReaders(t *testing.T) {
	if n, ok := GCLive("gc 12 @3.4s 2%: 0.1+1+0.01 ms clock, 0.2+0/1/2+0.02 ms cpu, 4->5->3 MB, 6 MB goal, 0 MB stacks, 0 MB globals, 2 P"); !ok || n != 3 {
		t.Errorf("gc trace line: %d %v, want 3", n, ok)
	}
	st, err := ProcStatus(os.Getpid())
	if err != nil || st.RSSKB <= 0 || st.HWMKB < st.RSSKB || st.Threads < 1 {
		t.Errorf("own status %+v, %v", st, err)
	}
	if tps, ok := ProgressTPS("progress: 5.0 s, 476.2 tps, lat 3.1 ms stddev 1.0, 0 failed"); !ok || tps != "476.2 tps" {
		t.Errorf("progress line: %q %v", tps, ok)
	}
}

// Every tool runs once a round, rotated by the round, reversed every other.
func TestRoundOrder(t *testing.T) {
	for _, c := range []struct {
		n, r int
		want []int
	}{
		{3, 1, []int{0, 1, 2}},
		{3, 2, []int{0, 2, 1}},
		{3, 3, []int{2, 0, 1}},
		{2, 2, []int{0, 1}},
		{1, 4, []int{0}},
	} {
		if got := RoundOrder(c.n, c.r); !slices.Equal(got, c.want) {
			t.Errorf("RoundOrder(%d, %d) = %v, want %v", c.n, c.r, got, c.want)
		}
	}
}
