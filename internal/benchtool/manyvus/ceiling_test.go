package main

import (
	"math"
	"os"
	"testing"

	"github.com/sledge-bench/sledge/internal/benchtool/child"
)

// TPC-C's ceiling (docs/tpcc.md): 12.86 new orders per minute for the ten
// terminals of a warehouse.
func TestCeilingPerTerminal(t *testing.T) {
	if got := ceilingPerTerminal(); math.Abs(got-1.286) > 0.001 {
		t.Errorf("ceiling %.4f per terminal, want 1.286", got)
	}
}

func TestProcTicks(t *testing.T) {
	if n, err := child.ProcTicks(os.Getpid()); err != nil || n < 0 {
		t.Errorf("own CPU ticks %d, %v", n, err)
	}
}
