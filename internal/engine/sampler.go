package engine

import (
	"sync"
	"time"
)

// Tick is one interval of a run's transaction counter: what completed since
// the previous tick.
type Tick struct {
	At     time.Time
	Span   time.Duration // since the previous tick
	Phase  Phase         // the phase most of the interval's transactions completed in
	ByType []int64       // transactions completed (commits and rollbacks), per mix type
	// Rollbacks are the ByType that rolled back on purpose (TPC-C's 1% of
	// New-Orders), per mix type: a business counter leaves them out.
	Rollbacks []int64
	// Latency is the sum of the latencies of ByType's transactions, per
	// type: with ByType, the interval's mean latency per type.
	Latency []time.Duration
	// Measured is how many of them completed in the measured interval: what
	// the run's summary counts, exactly.
	Measured int64
	Errors   int64 // transactions that failed
}

// Completed is the number of transactions completed in the tick.
func (t Tick) Completed() int64 {
	var n int64
	for _, c := range t.ByType {
		n += c
	}
	return n
}

// phasePoll is how often Sample looks for a phase change: a tick ends
// within this time of a change, so that few ticks span two phases.
const phasePoll = 20 * time.Millisecond

// Sample reads live every interval and calls fn, from its own goroutine,
// with the counts since the previous reading: the once-a-second transaction
// counter. A change of phase ends a tick early, and the ticks of each
// phase count its own intervals from its start. A tick due just before a
// phase's planned end (a timed run's ramp-up and measured interval) waits
// for the change instead, which comes a poll or a counter reading later:
// ending it on time would leave a sliver of a tick at the change, a second
// row for the same second. The moments before the first phase begins
// (connecting, when short) are in no tick: nothing completes then. stop
// reads a last interval and waits for fn to return, so that the ticks add
// up to live's totals. It only reads atomics and does not change the run.
func Sample(live *Live, every time.Duration, fn func(Tick)) (stop func()) {
	last, lastRb := make([]int64, live.Types()), make([]int64, live.Types())
	lastLat := make([]time.Duration, live.Types())
	lastErr, lastMeasured := live.Errors(), live.Measured()
	for i := range last {
		last[i], lastRb[i], lastLat[i] = live.Kind(i), live.Rollbacks(i), live.KindLatency(i)
	}
	lastAt := time.Now()
	lastPhase, _ := live.Phase()
	read := func(now time.Time, phase Phase) {
		t := Tick{At: now, Span: now.Sub(lastAt), ByType: make([]int64, len(last)), Rollbacks: make([]int64, len(last)),
			Latency: make([]time.Duration, len(last))}
		for i := range last {
			n, rb, lat := live.Kind(i), live.Rollbacks(i), live.KindLatency(i)
			t.ByType[i], last[i] = n-last[i], n
			t.Rollbacks[i], lastRb[i] = rb-lastRb[i], rb
			t.Latency[i], lastLat[i] = lat-lastLat[i], lat
		}
		e, m := live.Errors(), live.Measured()
		t.Errors, t.Measured = e-lastErr, m-lastMeasured
		t.Phase = tickPhase(lastPhase, phase, t.Completed(), t.Measured)
		lastErr, lastMeasured, lastAt, lastPhase = e, m, now, phase
		fn(t)
	}
	next := lastAt.Add(every) // the current phase's next tick
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(min(every, phasePoll))
		defer tk.Stop()
		for {
			select {
			case <-done:
				phase, _ := live.Phase()
				read(time.Now(), phase)
				return
			case now := <-tk.C:
				phase, since := live.Phase()
				switch {
				case phase != lastPhase && lastPhase == PhaseConnect && since.Sub(lastAt) < every/2:
					// A short connect is no row of its own: the first
					// phase's ticks start with it (its counts carry over).
					lastAt, lastPhase = since, phase
					next = since.Add(every)
				case phase != lastPhase:
					read(now, phase)
					next = since.Add(every)
				case now.Before(next.Add(-phasePoll / 2)):
				case dueAtEnd(live, phase, since, next, now, every):
					// The phase's change ends this tick.
				default:
					read(now, phase)
					for next = next.Add(every); !next.After(now); next = next.Add(every) {
					}
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
		})
	}
}

// dueAtEnd reports whether the tick due at next is the phase's last, to be
// ended by the phase's change: the phase is planned to end less than a
// quarter interval after it, and has not overrun that end by half an
// interval (a slow counter reading, a busy machine).
func dueAtEnd(live *Live, phase Phase, since, next, now time.Time, every time.Duration) bool {
	end, ok := live.plannedEnd(phase, since)
	return ok && end.Sub(next) < every/4 && now.Before(end.Add(every/2))
}

// tickPhase names the phase of a tick that began in phase from and ended in
// phase to: the one most of its transactions completed in. The poll may
// run late on a busy machine, so a tick can hold much of two phases.
// Nothing completes while connecting, and only the transactions in flight
// complete after the stop.
func tickPhase(from, to Phase, completed, measured int64) Phase {
	switch {
	case from == to:
		return from
	case completed > 0 && 2*measured >= completed:
		return PhaseMeasure
	case from == PhaseConnect:
		return to
	}
	return from
}
