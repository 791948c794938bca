package engine

import (
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

// The ticks add up to the live totals, the last interval included, and a
// phase change ends a tick, so each tick's counts belong to its phase.
func TestSampleAddsUpPerPhase(t *testing.T) {
	live := NewLive(&Plan{Mix: make([]workload.TxType, 3)})
	for range 5 {
		live.complete(0, time.Millisecond, false) // before sampling: in no tick
	}
	var ticks []Tick
	stop := Sample(live, 5*time.Millisecond, func(tk Tick) { ticks = append(ticks, tk) })
	add := func(kind int, n int64) {
		for range n {
			live.complete(kind, time.Millisecond, false)
		}
	}
	// Counts change well inside a phase, never within a poll of a change.
	const settle = 40 * time.Millisecond
	time.Sleep(settle)
	add(0, 3)
	time.Sleep(settle)
	live.setPhase(PhaseMeasure, time.Now())
	time.Sleep(settle)
	for range 7 {
		add(1, 1)
		live.measured.Add(1)
		time.Sleep(2 * time.Millisecond)
	}
	live.fail(0)
	live.fail(2)
	time.Sleep(settle)
	live.setPhase(PhaseStop, time.Now())
	time.Sleep(settle)
	add(2, 1)
	stop()
	stop() // idempotent

	got := map[Phase][3]int64{}
	var errs, measured int64
	for _, tk := range ticks {
		measured += tk.Measured
		c := got[tk.Phase]
		for i, n := range tk.ByType {
			c[i] += n
		}
		got[tk.Phase] = c
		errs += tk.Errors
	}
	want := map[Phase][3]int64{PhaseConnect: {3, 0, 0}, PhaseMeasure: {0, 7, 0}, PhaseStop: {0, 0, 1}}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("phase %s: %v, want %v", p, got[p], w)
		}
	}
	if errs != 2 || measured != 7 {
		t.Errorf("%d errors and %d measured, want 2 and 7", errs, measured)
	}
	if len(ticks) < 10 {
		t.Errorf("only %d ticks of 5ms in ~200ms", len(ticks))
	}
}

// A tick that spans a phase change belongs to the phase most of its
// transactions completed in.
func TestTickPhase(t *testing.T) {
	cases := []struct {
		from, to            Phase
		completed, measured int64
		want                Phase
	}{
		{PhaseMeasure, PhaseMeasure, 10, 10, PhaseMeasure},
		{PhaseConnect, PhaseRampup, 20, 0, PhaseRampup},    // nothing completes while connecting
		{PhaseConnect, PhaseMeasure, 20, 20, PhaseMeasure}, // --rampup 0s
		{PhaseConnect, PhaseStop, 0, 0, PhaseStop},         // interrupted while connecting
		{PhaseRampup, PhaseMeasure, 20, 5, PhaseRampup},
		{PhaseRampup, PhaseMeasure, 20, 15, PhaseMeasure},
		{PhaseMeasure, PhaseStop, 30, 28, PhaseMeasure}, // a late poll: mostly measured
		{PhaseMeasure, PhaseStop, 0, 0, PhaseMeasure},
		{PhaseRampup, PhaseStop, 12, 0, PhaseRampup}, // interrupted during ramp-up
	}
	for _, c := range cases {
		if got := tickPhase(c.from, c.to, c.completed, c.measured); got != c.want {
			t.Errorf("%s→%s with %d completed, %d measured: %s, want %s", c.from, c.to, c.completed, c.measured, got, c.want)
		}
	}
}
