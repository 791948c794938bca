package engine

import (
	"sync/atomic"
	"time"
)

// LiveBuckets are the upper bounds of the live latency buckets, roughly
// 1-2-5 per decade from 0.5 ms to a minute; a last bucket above them
// (+Inf) takes the rest. They are fixed, not per run, so that the
// histograms of several load generators add up bucket by bucket. Read
// only: the VUs count against them.
var LiveBuckets = [...]time.Duration{
	500 * time.Microsecond, time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute,
}

// Live is read by progress displays and exporters while a run goes on. All
// fields are updated atomically. Its counts cover every phase (ramp-up
// included), unlike the Result, which counts the measured interval.
type Live struct {
	phase      atomic.Int32
	measured   atomic.Int64 // transactions completed in the measured interval
	reconnects atomic.Int64
	started    atomic.Int64 // UnixNano of the current phase's start
	measuring  atomic.Int64 // UnixNano of the measured interval's start; 0 until it begins
	latencySq  atomic.Int64 // Σ latency², µs², for the progress line's stddev
	kinds      []liveKind   // per mix type
	vus        int          // the plan's
	iv         intervals    // Plan.Intervals: the sessions (cluster.go)
	// The planned lengths of a timed run's ramp-up and measured interval
	// (0: none, or not timed): the sampler ends the phase's last tick at
	// the phase's change rather than just before it.
	rampup, duration time.Duration
}

// liveKind is one transaction type's live counters. A completed
// transaction bumps one bucket and the latency sum: its count is the sum of
// the buckets, so the hot path pays no separate counter, and a histogram
// read at any moment agrees with the count read from it.
type liveKind struct {
	buckets   [len(LiveBuckets) + 1]atomic.Int64 // not cumulative: [i] counts latencies in (bound i-1, bound i]
	latency   atomic.Int64                       // Σ latency of the completed ones, ns
	rollbacks atomic.Int64                       // completed by the workload's own rollback
	errors    atomic.Int64                       // failed
	retries   atomic.Int64                       // extra attempts after retryable conflicts
}

// NewLive makes the live counters for a plan; pass it to Run.
func NewLive(p *Plan) *Live {
	l := &Live{kinds: make([]liveKind, len(p.Mix)), vus: p.VUs}
	if p.Iterations == 0 {
		l.rampup, l.duration = p.Rampup, p.Duration
	}
	return l
}

// plannedEnd is when phase p, begun at start, is planned to end; false
// when its length is not planned (connecting, the stop, an --iterations
// run's measured interval).
func (l *Live) plannedEnd(p Phase, start time.Time) (time.Time, bool) {
	switch {
	case p == PhaseRampup && l.rampup > 0:
		return start.Add(l.rampup), true
	case p == PhaseMeasure && l.duration > 0:
		return start.Add(l.duration), true
	}
	return time.Time{}, false
}

// VUs is the number of virtual users of the plan the counters are for.
func (l *Live) VUs() int { return l.vus }

// complete counts a completed transaction of mix type kind (rollback: by
// the workload's own rollback). It allocates nothing: the VU hot path.
func (l *Live) complete(kind int, elapsed time.Duration, rollback bool) {
	k := &l.kinds[kind]
	k.buckets[liveBucket(elapsed)].Add(1)
	k.latency.Add(int64(elapsed))
	us := elapsed.Microseconds()
	l.latencySq.Add(us * us)
	if rollback {
		k.rollbacks.Add(1)
	}
}

// liveBucket is the index of d's LiveBuckets bucket (the last one +Inf).
func liveBucket(d time.Duration) int {
	b := 0
	for b < len(LiveBuckets) && d > LiveBuckets[b] {
		b++
	}
	return b
}

// fail counts a failed transaction of mix type kind.
func (l *Live) fail(kind int) { l.kinds[kind].errors.Add(1) }

// retry counts n extra attempts of a transaction of mix type kind.
func (l *Live) retry(kind int, n int64) { l.kinds[kind].retries.Add(n) }

func (l *Live) setPhase(p Phase, at time.Time) {
	if p == PhaseMeasure {
		l.measuring.Store(at.UnixNano())
	}
	l.started.Store(at.UnixNano())
	l.phase.Store(int32(p))
}

// Phase returns the current phase and when it started.
func (l *Live) Phase() (Phase, time.Time) {
	return Phase(l.phase.Load()), time.Unix(0, l.started.Load())
}

// MeasureStart is when the measured interval began; false before it has.
// A display that was not polled during the interval still learns its
// length from it (an interrupted run's last line).
func (l *Live) MeasureStart() (time.Time, bool) {
	n := l.measuring.Load()
	return time.Unix(0, n), n != 0
}

// SetMeasured makes the measured count n: a --workers coordinator's, once
// the workers' final figures are merged, so that its display's last line
// counts what the summary does (the ticks lag behind the finals).
func (l *Live) SetMeasured(n int64) { l.measured.Store(n) }

// Types is the number of mix types the counters are kept for.
func (l *Live) Types() int { return len(l.kinds) }

// Completed is the number of transactions completed so far (all phases).
func (l *Live) Completed() int64 {
	var n int64
	for i := range l.kinds {
		n += l.Kind(i)
	}
	return n
}

// Measured is the number of transactions completed in the measured interval.
func (l *Live) Measured() int64 { return l.measured.Load() }

// Errors is the number of failed transactions so far.
func (l *Live) Errors() int64 {
	var n int64
	for i := range l.kinds {
		n += l.kinds[i].errors.Load()
	}
	return n
}

// Reconnects is the number of reconnections after a lost connection so far.
func (l *Live) Reconnects() int64 { return l.reconnects.Load() }

// Kind is the number of transactions of mix type i completed so far
// (commits and rollbacks).
func (l *Live) Kind(i int) int64 {
	var n int64
	for b := range l.kinds[i].buckets {
		n += l.kinds[i].buckets[b].Load()
	}
	return n
}

// Rollbacks is how many of Kind(i) rolled back on purpose (ErrUserAbort).
func (l *Live) Rollbacks(i int) int64 { return l.kinds[i].rollbacks.Load() }

// KindErrors is how many transactions of mix type i failed so far.
func (l *Live) KindErrors(i int) int64 { return l.kinds[i].errors.Load() }

// Retries is how many extra attempts transactions of mix type i took after
// retryable conflicts (deadlocks, serialization failures) so far.
func (l *Live) Retries(i int) int64 { return l.kinds[i].retries.Load() }

// KindLatency is the sum of the latencies of the transactions Kind(i) counts.
func (l *Live) KindLatency(i int) time.Duration { return time.Duration(l.kinds[i].latency.Load()) }

// Buckets fills into (grown to len(LiveBuckets)+1 if shorter) with the
// cumulative counts of mix type i's completed transactions per bucket of
// LiveBuckets, the last one +Inf, and returns it with their count and
// latency sum, read together: count is the last bucket's, so a scrape's
// histogram agrees with itself even while VUs count.
func (l *Live) Buckets(i int, into []uint64) (cum []uint64, count uint64, sum time.Duration) {
	k := &l.kinds[i]
	if len(into) < len(k.buckets) {
		into = make([]uint64, len(k.buckets))
	}
	cum = into[:len(k.buckets)]
	sum = time.Duration(k.latency.Load())
	var n uint64
	for b := range k.buckets {
		n += uint64(k.buckets[b].Load())
		cum[b] = n
	}
	return cum, n, sum
}

// LatencySquares is the sum of the squared latencies (µs²) of the
// transactions Completed counts.
func (l *Live) LatencySquares() int64 { return l.latencySq.Load() }

// Latency is the sum of the latencies of the transactions Completed counts.
func (l *Live) Latency() time.Duration {
	var d time.Duration
	for i := range l.kinds {
		d += l.KindLatency(i)
	}
	return d
}
