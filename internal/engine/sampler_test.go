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

// A timed run's ticks count each phase's intervals from its start, and the
// tick due at a phase's planned end waits for the change, which comes a
// moment later (the counter reading between ramp-up and measure): no
// sliver of a tick repeats a phase's last interval. A short connect is no
// tick of its own.
func TestSampleNoSliverAtPhaseEdge(t *testing.T) {
	// Long enough that a busy machine's late poll is no sliver.
	const every = 500 * time.Millisecond
	live := NewLive(&Plan{Mix: make([]workload.TxType, 1), Rampup: 3 * every, Duration: 3 * every})
	start := time.Now()
	live.setPhase(PhaseConnect, start)
	var ticks []Tick
	stop := Sample(live, every, func(tk Tick) { ticks = append(ticks, tk) })
	time.Sleep(5 * time.Millisecond)
	ramp := time.Now()
	live.setPhase(PhaseRampup, ramp)
	live.complete(0, time.Millisecond, false)
	// The engine begins measuring after the ramp-up and a counter reading.
	time.Sleep(time.Until(ramp.Add(3*every + 30*time.Millisecond)))
	measure := time.Now()
	live.setPhase(PhaseMeasure, measure)
	time.Sleep(time.Until(measure.Add(3*every + 10*time.Millisecond)))
	live.setPhase(PhaseStop, time.Now())
	time.Sleep(2 * phasePoll)
	stop()

	per := map[Phase]int{}
	for i, tk := range ticks {
		per[tk.Phase]++
		if tk.Phase == PhaseConnect {
			t.Errorf("tick %d: a connect of 5ms has a tick of its own (%s)", i, tk.Span)
		}
		if tk.Phase != PhaseStop && tk.Span < every/4 {
			t.Errorf("tick %d (%s) spans %s, under a quarter interval: a sliver at a phase's edge", i, tk.Phase, tk.Span)
		}
	}
	if per[PhaseRampup] != 3 || per[PhaseMeasure] != 3 {
		t.Errorf("%d ramp-up and %d measure ticks, want 3 and 3 (one per interval): %+v", per[PhaseRampup], per[PhaseMeasure], ticks)
	}
}
