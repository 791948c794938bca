// Package engine drives virtual users: it decides when transactions start,
// how many run, what counts, and when to stop. It knows no workload and no
// database by name; both come in through the workload contracts and the
// callbacks of a Plan.
package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/workload"
)

// Phase is where a run is.
type Phase int32

const (
	PhaseConnect Phase = iota // opening sessions
	PhaseRampup               // running, not counted
	PhaseMeasure              // running, counted
	PhaseStop                 // no new transactions; in-flight ones finish
)

func (p Phase) String() string {
	return [...]string{"connect", "ramp-up", "measure", "stop"}[p]
}

// Plan is everything a run needs. Times are wall-clock durations.
type Plan struct {
	VUs      int
	Rampup   time.Duration // warm-up, not counted (timed runs only)
	Duration time.Duration // measured interval (timed runs)
	// Iterations, when > 0, makes each VU run exactly this many transactions
	// and stop (HammerDB's test driver); the whole run is measured.
	Iterations     int
	KeyingThinking bool // sleep the mix's keying and think times
	MaxRetries     int  // extra attempts after a retryable conflict
	// RaiseError stops a VU at its first failed transaction (HammerDB's
	// raise-error); by default the error is counted and the VU goes on.
	RaiseError bool
	// Cost measures the cost of each transaction (docs/cost.md): each VU's
	// connection is opened on a context carrying a metrics.WireCounts, and
	// the process's getrusage is read at both ends of the measured interval.
	Cost bool
	// ThreadCost (with Cost) also measures CPU time and context switches
	// per transaction type: each VU holds its own OS thread and reads
	// getrusage(RUSAGE_THREAD) around each transaction. Holding threads
	// makes every wait a thread switch, which slows the client noticeably
	// (docs/cost.md), so it is not the default.
	ThreadCost bool
	Seed       uint64
	Mix        []workload.TxType

	// Connect opens VU vu's session (vu is 0-based). With Cost, ctx
	// carries the VU's wire counter (metrics.WireFrom).
	Connect func(ctx context.Context, vu int) (workload.Conn, error)
	// Terminal makes VU vu's transaction source.
	Terminal func(vu int) workload.Terminal
	// Probe reads counters at the start and at the end of the measured
	// interval (new orders, database commits…). It gets a context that is
	// never cancelled by an interrupt, so the end is always read.
	Probe func(ctx context.Context) (map[string]int64, error)
}

// ErrorCount is one distinct error message and how often it happened.
type ErrorCount struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// Result is what a run measured.
type Result struct {
	Start        time.Time
	MeasureStart time.Time
	MeasureEnd   time.Time
	End          time.Time
	Interrupted  bool // stopped by the caller's context before its end
	Before       map[string]int64
	After        map[string]int64
	Stats        metrics.Set // measured interval only, per mix type
	Errors       []ErrorCount
	// Stopped lists the VUs (1-based) that stopped at an error (RaiseError).
	Stopped []int
	// Cost of the measured interval, with Plan.Cost: Process is the whole
	// sledge process's getrusage delta (ProcessOK when it was read); Wired
	// is true when every VU's connection was counted, ThreadUsage when
	// every VU's thread usage was read (Stats hold the per-type figures).
	Process     metrics.Usage
	ProcessOK   bool
	Wired       bool
	ThreadUsage bool
}

// Measured is the length of the measured interval.
func (r *Result) Measured() time.Duration { return r.MeasureEnd.Sub(r.MeasureStart) }

// Delta is After[k] − Before[k], and whether both were read.
func (r *Result) Delta(k string) (int64, bool) {
	a, ok1 := r.Before[k]
	b, ok2 := r.After[k]
	return b - a, ok1 && ok2
}

// Live is read by progress displays while a run goes on. All fields are
// updated atomically.
type Live struct {
	phase     atomic.Int32
	measured  atomic.Int64 // transactions completed in the measured interval
	errors    atomic.Int64
	started   atomic.Int64 // UnixNano of the current phase's start
	latency   atomic.Int64 // Σ latency of completed transactions, ns
	perKind   []atomic.Int64
	rollbacks []atomic.Int64 // per kind: completed by the workload's own rollback
}

// Phase returns the current phase and when it started.
func (l *Live) Phase() (Phase, time.Time) {
	return Phase(l.phase.Load()), time.Unix(0, l.started.Load())
}

// Completed is the number of transactions completed so far (all phases):
// the sum of the per-type counts, so the VU hot path bumps one counter, not two.
func (l *Live) Completed() int64 {
	var n int64
	for i := range l.perKind {
		n += l.perKind[i].Load()
	}
	return n
}

// Measured is the number of transactions completed in the measured interval.
func (l *Live) Measured() int64 { return l.measured.Load() }

// Errors is the number of failed transactions so far.
func (l *Live) Errors() int64 { return l.errors.Load() }

// Kind is the number of transactions of mix type i completed so far.
func (l *Live) Kind(i int) int64 { return l.perKind[i].Load() }

// Rollbacks is how many of Kind(i) rolled back on purpose (ErrUserAbort).
func (l *Live) Rollbacks(i int) int64 { return l.rollbacks[i].Load() }

// Latency is the sum of the latencies of the transactions Completed counts.
func (l *Live) Latency() time.Duration { return time.Duration(l.latency.Load()) }

func (l *Live) setPhase(p Phase, at time.Time) {
	l.started.Store(at.UnixNano())
	l.phase.Store(int32(p))
}

// Validate checks a plan for impossible values, with one-line messages in
// the words of the command-line options.
func (p *Plan) Validate() error {
	switch {
	case p.VUs < 1:
		return errors.New("--vus must be at least 1")
	case p.Iterations < 0:
		return errors.New("--iterations must not be negative")
	case p.Iterations == 0 && p.Duration <= 0:
		return errors.New("--duration must be positive")
	case p.Rampup < 0:
		return errors.New("--rampup must not be negative")
	case p.MaxRetries < 0:
		return errors.New("--max-retries must not be negative")
	case len(p.Mix) == 0:
		return errors.New("engine: empty transaction mix")
	}
	return nil
}

// NewLive makes the live counters for a plan; pass it to Run.
func NewLive(p *Plan) *Live {
	return &Live{perKind: make([]atomic.Int64, len(p.Mix)), rollbacks: make([]atomic.Int64, len(p.Mix))}
}

// Run executes the plan. Cancelling ctx stops the run early: no new
// transactions start, the ones in flight finish (they are not counted), and
// the result covers what was measured until then, with Interrupted set.
// A failure to connect or to probe ends the run with an error; errors inside
// transactions are counted and the VU goes on.
func Run(ctx context.Context, p *Plan, live *Live) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if live == nil {
		live = NewLive(p)
	}
	background := context.WithoutCancel(ctx)
	res := &Result{Start: time.Now()}
	live.setPhase(PhaseConnect, res.Start)

	conns := make([]workload.Conn, p.VUs)
	wires := make([]*metrics.WireCounts, p.VUs)
	defer func() {
		for _, c := range conns {
			if c != nil {
				_ = c.Close(background)
			}
		}
	}()
	for i := range conns {
		cctx := ctx
		if p.Cost {
			cctx = metrics.WithWire(ctx, new(metrics.WireCounts))
		}
		c, err := p.Connect(cctx, i)
		if err != nil {
			if ctx.Err() != nil {
				res.Interrupted = true
				res.End = time.Now()
				return res, nil
			}
			return nil, fmt.Errorf("connect virtual user %d: %w", i+1, err)
		}
		conns[i] = c
		// Counted only when the database package dialed with the counter.
		if wd, ok := c.(metrics.Wired); ok && p.Cost {
			wires[i] = wd.Wire()
		}
	}
	_, threads := metrics.ThreadUsage()
	threads = threads && p.Cost && p.ThreadCost
	res.ThreadUsage = threads
	res.Wired = p.Cost
	for _, w := range wires {
		res.Wired = res.Wired && w != nil
	}

	vus := make([]*vu, p.VUs)
	for i := range vus {
		vus[i] = &vu{
			id: i, plan: p, live: live, conn: conns[i], term: p.Terminal(i),
			stats: metrics.NewSet(len(p.Mix)), wire: wires[i], thread: threads,
			rng: rand.New(rand.NewPCG(p.Seed, uint64(i)+0x5eed)),
		}
	}

	// stop ends the VUs' loops; transactions in flight run on a context that
	// is not cancelled, so they finish normally.
	loopCtx, stop := context.WithCancel(ctx)
	defer stop()

	var wg sync.WaitGroup
	start := time.Now()
	timed := p.Iterations == 0
	if timed && p.Rampup > 0 {
		live.setPhase(PhaseRampup, start)
	} else {
		if err := beginMeasure(background, p, live, res); err != nil {
			return nil, err
		}
	}
	for _, v := range vus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v.loop(loopCtx, background)
		}()
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()

	if timed {
		if p.Rampup > 0 {
			select {
			case <-time.After(p.Rampup):
				if err := beginMeasure(background, p, live, res); err != nil {
					stop()
					<-allDone
					return nil, err
				}
			case <-ctx.Done():
			case <-allDone:
			}
		}
		if live.phaseIs(PhaseMeasure) {
			select {
			case <-time.After(p.Duration):
			case <-ctx.Done():
			case <-allDone:
			}
		}
	} else {
		select {
		case <-allDone:
		case <-ctx.Done():
		}
	}
	res.Interrupted = ctx.Err() != nil
	measured := live.phaseIs(PhaseMeasure)
	end := time.Now()
	live.setPhase(PhaseStop, end)
	stop()
	if measured && res.ProcessOK {
		u, err := metrics.ProcessUsage()
		res.Process, res.ProcessOK = u.Sub(res.Process), err == nil
	}
	var probeErr error
	if measured {
		// In iterations mode every VU has finished: nothing is in flight.
		// Their sessions are closed before the end is read, because some
		// servers publish a session's counters only now and then, but
		// always when it ends (PostgreSQL: at most once a second).
		// In a timed run the transactions in flight now are not counted.
		if !timed {
			<-allDone
			for i, c := range conns {
				_ = c.Close(background)
				conns[i] = nil
			}
		}
		res.MeasureEnd = end
		res.After, probeErr = probe(background, p)
	}
	<-allDone
	res.End = time.Now()

	res.Stats = metrics.NewSet(len(p.Mix))
	errs := map[string]int64{}
	for _, v := range vus {
		if v.stopped {
			res.Stopped = append(res.Stopped, v.id+1)
		}
		res.Stats.Merge(v.stats)
		for m, n := range v.errs {
			errs[m] += n
		}
	}
	res.Errors = sortErrors(errs)
	if probeErr != nil {
		return res, probeErr
	}
	return res, nil
}

func (l *Live) phaseIs(p Phase) bool { return Phase(l.phase.Load()) == p }

func beginMeasure(ctx context.Context, p *Plan, live *Live, res *Result) error {
	before, err := probe(ctx, p)
	if err != nil {
		return err
	}
	res.Before = before
	if p.Cost {
		// Holds the start until the end replaces it with the delta.
		u, err := metrics.ProcessUsage()
		res.Process, res.ProcessOK = u, err == nil
	}
	res.MeasureStart = time.Now()
	live.setPhase(PhaseMeasure, res.MeasureStart)
	return nil
}

func probe(ctx context.Context, p *Plan) (map[string]int64, error) {
	if p.Probe == nil {
		return map[string]int64{}, nil
	}
	m, err := p.Probe(ctx)
	if err != nil {
		return nil, fmt.Errorf("read counters: %w", err)
	}
	return m, nil
}

// maxErrorMessages bounds the distinct messages a VU keeps, so a run that
// fails every transaction with a new message cannot grow without limit.
const maxErrorMessages = 20

type vu struct {
	id    int
	plan  *Plan
	live  *Live
	conn  workload.Conn
	term  workload.Terminal
	stats metrics.Set
	rng   *rand.Rand
	wire  *metrics.WireCounts // nil: not counted
	// thread: the VU holds its OS thread and reads its usage around each
	// transaction.
	thread bool
	errs   map[string]int64
	// stopped is set when the VU ended at an error (RaiseError).
	stopped bool
}

func (v *vu) loop(ctx, background context.Context) {
	p := v.plan
	if v.thread {
		// RUSAGE_THREAD describes one OS thread: the goroutine must stay on
		// it for a transaction's delta to be its own.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	for n := 0; p.Iterations == 0 || n < p.Iterations; n++ {
		if ctx.Err() != nil {
			return
		}
		tx := v.term.Next()
		kind := tx.Kind()
		if p.KeyingThinking && !sleep(ctx, p.Mix[kind].Keying) {
			return
		}
		if ctx.Err() != nil {
			return
		}
		if !v.execute(background, tx, kind) && p.RaiseError {
			v.stopped = true
			return
		}
		if p.KeyingThinking && !sleep(ctx, v.think(p.Mix[kind].Think)) {
			return
		}
	}
}

// execute runs one transaction to its end, retrying conflicts, and records
// it if it completed inside the measured interval. It reports whether the
// transaction completed (committed or rolled back on purpose).
func (v *vu) execute(ctx context.Context, tx workload.Txn, kind int) bool {
	// The usage is read outside the timed span: getrusage is a system call.
	var (
		wire0 metrics.Wire
		use0  metrics.Usage
		useOK bool
	)
	if v.thread {
		use0, useOK = metrics.ThreadUsage()
	}
	wire0 = v.wire.Load()
	start := time.Now()
	retries := int64(0)
	var err error
	for {
		err = tx.Run(ctx, v.conn)
		if err == nil || !errors.Is(err, workload.ErrRetry) || retries >= int64(v.plan.MaxRetries) {
			break
		}
		retries++
	}
	elapsed := time.Since(start)
	// Counted only when it finished inside the measured interval: ramp-up
	// is warm-up, and transactions still in flight at the end do not count.
	counted := v.live.phaseIs(PhaseMeasure)
	s := &v.stats[kind]
	completed := err == nil || errors.Is(err, workload.ErrUserAbort)
	switch {
	case completed:
		v.live.perKind[kind].Add(1)
		v.live.latency.Add(int64(elapsed))
		if err != nil {
			v.live.rollbacks[kind].Add(1)
		}
		if counted {
			if err == nil {
				s.Commits++
			} else {
				s.Rollbacks++ // the workload's own rollback: a completed transaction
			}
			s.Record(elapsed)
			v.live.measured.Add(1)
		}
	default:
		v.live.errors.Add(1)
		// Errors are counted in every phase when the VU stops on them:
		// the user must see why it stopped.
		if counted || v.plan.RaiseError {
			s.Errors++
			v.noteError(err)
		}
	}
	if counted {
		s.Retries += retries
		s.Wire = s.Wire.Add(v.wire.Load().Sub(wire0))
		if useOK {
			if u, ok := metrics.ThreadUsage(); ok {
				s.Thread = s.Thread.Add(u.Sub(use0))
			}
		}
	}
	return completed
}

func (v *vu) noteError(err error) {
	if v.errs == nil {
		v.errs = map[string]int64{}
	}
	msg := err.Error()
	if _, ok := v.errs[msg]; !ok && len(v.errs) >= maxErrorMessages {
		msg = "(other errors)"
	}
	v.errs[msg]++
}

// think draws a think time: negative exponential with the given mean,
// truncated at ten times the mean (TPC-C 5.2.5.4).
func (v *vu) think(mean time.Duration) time.Duration {
	if mean <= 0 {
		return 0
	}
	r := 1 - v.rng.Float64() // (0, 1]
	t := -math.Log(r) * float64(mean)
	if t > 10*float64(mean) {
		t = 10 * float64(mean)
	}
	return time.Duration(t)
}

// sleep waits d or until ctx is done; it reports whether the full time passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func sortErrors(m map[string]int64) []ErrorCount {
	out := make([]ErrorCount, 0, len(m))
	for msg, n := range m {
		out = append(out, ErrorCount{Message: msg, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Message < out[j].Message
	})
	return out
}
