package main

import (
	"math"
	"os"
	"testing"
)

// TPC-C's ceiling (docs/tpcc.md): 12.86 new orders per minute for the ten
// terminals of a warehouse.
func TestCeilingPerTerminal(t *testing.T) {
	if got := ceilingPerTerminal(); math.Abs(got-1.286) > 0.001 {
		t.Errorf("ceiling %.4f per terminal, want 1.286", got)
	}
}

func TestProcReaders(t *testing.T) {
	if _, ok := gcLive("gc 12 @3.4s 2%: 0.1+1+0.01 ms clock, 0.2+0/1/2+0.02 ms cpu, 4->5->3 MB, 6 MB goal, 0 MB stacks, 0 MB globals, 2 P"); !ok {
		t.Error("gc trace line not read")
	}
	st, err := procStatus(os.Getpid())
	if err != nil || st.rssKB <= 0 || st.hwmKB < st.rssKB || st.threads < 1 {
		t.Errorf("own status %+v, %v", st, err)
	}
	if n, err := procTicks(os.Getpid()); err != nil || n < 0 {
		t.Errorf("own CPU ticks %d, %v", n, err)
	}
	if tps, ok := progressTPS("progress: 5.0 s, 476.2 tps, lat 3.1 ms stddev 1.0, 0 failed"); !ok || tps != "476.2 tps" {
		t.Errorf("progress line: %q %v", tps, ok)
	}
}
