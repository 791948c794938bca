package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/sledge-bench/sledge/internal/metrics"
)

// Cluster is what a worker of a scale-out run (docs/workers.md) adds to a
// plan. The zero value is a run of its own.
type Cluster struct {
	// Ready, when set, is called once every session is connected and
	// before any VU starts; it returns the wall-clock time at which the
	// VUs start (the coordinator's start, shared by all workers), and the
	// run waits until then: ramp-up and the measured interval count from
	// it. An error ends the run before any transaction.
	Ready func(ctx context.Context) (start time.Time, err error)
	// VUIDs, when set, are the global indices of the plan's VUs (VUIDs[i]
	// is VU i's) among all the workers': a VU's random stream (schedule,
	// think times) is that of the same VU in one process.
	VUIDs []int
	// Intervals makes each session also record the measured interval's
	// transactions into a set that Live.TakeInterval takes and resets:
	// the per-second histograms a worker sends its coordinator.
	Intervals bool
}

// vuID is VU i's global index.
func (p *Plan) vuID(i int) int {
	if i < len(p.VUIDs) {
		return p.VUIDs[i]
	}
	return i
}

// ready runs Plan.Ready and waits for the start it gives; interrupted
// when ctx ends first.
func (p *Plan) ready(ctx context.Context) (interrupted bool, err error) {
	if p.Ready == nil {
		return false, nil
	}
	at, err := p.Ready(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return true, nil
		}
		return false, err
	}
	return !sleep(ctx, time.Until(at)), nil
}

// intervals is the sessions whose interval sets Live.TakeInterval reads.
type intervals struct {
	mu       sync.Mutex
	sessions []*session
}

func (l *Live) attach(sessions []*session) {
	l.iv.mu.Lock()
	l.iv.sessions = sessions
	l.iv.mu.Unlock()
}

// TakeInterval merges what the sessions recorded in the measured interval
// since the last call into into (indexed like the mix) and resets it
// (Plan.Intervals). The session's lock is held by its VU only while it
// records a transaction's end, so taking costs the VUs next to nothing.
func (l *Live) TakeInterval(into metrics.Set) error {
	l.iv.mu.Lock()
	ss := l.iv.sessions
	l.iv.mu.Unlock()
	if len(into) < len(l.kinds) {
		return errors.New("engine: interval set shorter than the mix")
	}
	for _, s := range ss {
		s.statsMu.Lock()
		into.Merge(s.ival)
		s.ival.Reset()
		s.statsMu.Unlock()
	}
	return nil
}

// interval records a measured transaction's end into the interval set;
// called with statsMu held.
func (s *session) interval(kind int, completed bool, err error, elapsed time.Duration, retries int64) {
	st := &s.ival[kind]
	switch {
	case completed && err == nil:
		st.Commits++
		st.Record(elapsed)
	case completed:
		st.Rollbacks++
		st.Record(elapsed)
	default:
		st.Errors++
	}
	st.Retries += retries
	if retries > 0 {
		st.Retried++
	}
}

// Counts are one transaction type's live counts (every phase).
type Counts struct {
	Completed int64         `json:"completed"`
	Rollbacks int64         `json:"rollbacks,omitempty"`
	Errors    int64         `json:"errors,omitempty"`
	Retries   int64         `json:"retries,omitempty"`
	Latency   time.Duration `json:"latency_ns,omitempty"` // Σ of the completed ones'
	// Buckets are the completed ones per LiveBuckets bucket (not
	// cumulative, the last one +Inf); they add up to Completed.
	Buckets []int64 `json:"buckets,omitempty"`
}

// KindCounts reads mix type i's live counts.
func (l *Live) KindCounts(i int) Counts {
	k := &l.kinds[i]
	c := Counts{Latency: l.KindLatency(i), Rollbacks: l.Rollbacks(i), Errors: l.KindErrors(i),
		Retries: l.Retries(i), Buckets: make([]int64, len(k.buckets))}
	for b := range k.buckets {
		c.Buckets[b] = k.buckets[b].Load()
		c.Completed += c.Buckets[b]
	}
	return c
}

// Sub is c − o, field by field: what happened between two readings.
func (c Counts) Sub(o Counts) Counts {
	d := Counts{Completed: c.Completed - o.Completed, Rollbacks: c.Rollbacks - o.Rollbacks,
		Errors: c.Errors - o.Errors, Retries: c.Retries - o.Retries, Latency: c.Latency - o.Latency}
	if len(c.Buckets) > 0 {
		d.Buckets = make([]int64, len(c.Buckets))
		for b := range c.Buckets {
			d.Buckets[b] = c.Buckets[b]
			if b < len(o.Buckets) {
				d.Buckets[b] -= o.Buckets[b]
			}
		}
	}
	return d
}

// Add adds counts another process measured (a scale-out worker's, since
// its last report) to mix type i: the coordinator's live display and
// metrics follow the workers' sum, bucket by bucket (without buckets, the
// completed ones go into the bucket of their mean latency); measured says
// they completed in the measured interval.
func (l *Live) Add(i int, c Counts, measured bool) {
	k := &l.kinds[i]
	if len(c.Buckets) == len(k.buckets) {
		for b, n := range c.Buckets {
			k.buckets[b].Add(n)
		}
	} else if c.Completed > 0 {
		k.buckets[liveBucket(c.Latency/time.Duration(c.Completed))].Add(c.Completed)
	}
	if measured {
		l.measured.Add(c.Completed)
	}
	k.latency.Add(int64(c.Latency))
	k.rollbacks.Add(c.Rollbacks)
	k.errors.Add(c.Errors)
	k.retries.Add(c.Retries)
}

// SetPhase sets the phase a coordinator's live display shows (its workers
// run the engine; it does not).
func (l *Live) SetPhase(p Phase, at time.Time) { l.setPhase(p, at) }

// AddReconnects adds reconnections a worker reported.
func (l *Live) AddReconnects(n int64) { l.reconnects.Add(n) }

// AddLatencySquares adds a worker's Σ latency² (µs²) since its last report.
func (l *Live) AddLatencySquares(n int64) { l.latencySq.Add(n) }
