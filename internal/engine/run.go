// Package engine drives virtual users: it decides when transactions start,
// how many run, what counts, and when to stop. It knows no workload and no
// database by name; both come in through the workload contracts and the
// callbacks of a Plan.
package engine

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
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
	// PinThreads keeps each VU on its own OS thread for the whole run
	// (runtime.LockOSThread), so that the thread a VU's blocking read
	// wakes is the one that goes on with it: no hand-over between threads
	// per round trip. For database connections that wait in blocking
	// system calls on a processor of their own (db.SetRawIO).
	PinThreads bool
	Seed       uint64
	Mix        []workload.TxType

	// Rate, when > 0, throttles the run to this many transactions per
	// second in all (pgbench -R): each VU starts its transactions on a
	// Poisson schedule of Rate/VUs, fixed from its start, and latency is
	// measured from the scheduled start; the wait is the schedule lag.
	Rate float64
	// LatencyLimit, when > 0, counts transactions slower than it as late
	// (pgbench -L); with Rate, a transaction already more than this behind
	// its schedule is skipped, not sent.
	LatencyLimit time.Duration
	// StopTimeout bounds how long the run waits, after its end, for
	// transactions in flight. Then their statements are cancelled and the
	// VUs still inside one are reported stuck. 0: DefaultStopTimeout.
	StopTimeout time.Duration
	// Reconnect is what a VU does when its connection is lost.
	Reconnect Reconnect
	// TxTimeout, when > 0, bounds each transaction, retries included: a
	// watchdog cancels the statements of a transaction running longer
	// (the server stopped answering, a lock is never released), which
	// then fails and its VU reconnects. It costs the hot path nothing but
	// the start time it already records.
	TxTimeout time.Duration
	// PerStatement times each named statement (pgbench -r) through a
	// wrapper around the VU's connection; see Result.Statements.
	PerStatement bool

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

// DefaultStopTimeout is Plan.StopTimeout's default.
const DefaultStopTimeout = 10 * time.Second

// Reconnect is the policy of a VU whose connection was lost: it tries again
// after Backoff, doubling up to MaxBackoff, until it is connected or the run
// ends. Giving up sooner would turn a server restart into a shorter run.
type Reconnect struct {
	Off        bool          // a lost connection stops the VU instead
	Backoff    time.Duration // first wait; 0: 100 ms
	MaxBackoff time.Duration // 0: 5 s
}

func (r Reconnect) first() time.Duration {
	if r.Backoff > 0 {
		return r.Backoff
	}
	return 100 * time.Millisecond
}

func (r Reconnect) max() time.Duration {
	if r.MaxBackoff > 0 {
		return r.MaxBackoff
	}
	return 5 * time.Second
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

	// Throttling and the latency limit (Plan.Rate, Plan.LatencyLimit),
	// over the measured interval: transactions skipped because they were
	// already too late, transactions slower than the limit, and the lag of
	// the actual start behind the schedule.
	Skipped int64
	Late    int64
	Lag     Lag
	// Reconnects is how many times VUs reconnected after losing their
	// connection (whole run); ConnLost how many transactions failed that way.
	Reconnects int64
	ConnLost   int64
	// Outage is how many whole seconds of the measured interval had no
	// completed transaction; OutageSeconds lists them (from 0 at its start).
	Outage        int
	OutageSeconds []int
	// Stuck lists the VUs (1-based) still inside a transaction when the
	// stop timeout ran out; their statements were cancelled.
	Stuck []int
	// Statements holds per-statement timings (Plan.PerStatement), by name.
	Statements []StmtStat
	// EdgeAdded is how many transactions the VUs' sessions added to the
	// server's counters when they published them at the end of the
	// measured interval (workload.Publisher): After − Before counts them,
	// the VUs did not run them. EdgeGap says why a reading at an edge may
	// have missed or added transactions of the VUs; "" when both edges
	// were taken with every VU between transactions, published.
	EdgeAdded int64
	EdgeGap   string
}

// Lag is schedule lag under throttling.
type Lag struct {
	Count int64
	Sum   time.Duration
	Max   time.Duration
}

// Mean is the average lag.
func (l Lag) Mean() time.Duration {
	if l.Count == 0 {
		return 0
	}
	return l.Sum / time.Duration(l.Count)
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
	phase      atomic.Int32
	measured   atomic.Int64 // transactions completed in the measured interval
	errors     atomic.Int64
	reconnects atomic.Int64
	started    atomic.Int64 // UnixNano of the current phase's start
	latency    atomic.Int64 // Σ latency of completed transactions, ns
	latencySq  atomic.Int64 // Σ latency², µs², for the progress line's stddev
	perKind    []atomic.Int64
	rollbacks  []atomic.Int64 // per kind: completed by the workload's own rollback
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

// Reconnects is the number of reconnections after a lost connection so far.
func (l *Live) Reconnects() int64 { return l.reconnects.Load() }

// Kind is the number of transactions of mix type i completed so far.
func (l *Live) Kind(i int) int64 { return l.perKind[i].Load() }

// Rollbacks is how many of Kind(i) rolled back on purpose (ErrUserAbort).
func (l *Live) Rollbacks(i int) int64 { return l.rollbacks[i].Load() }

// LatencySquares is the sum of the squared latencies (µs²) of the
// transactions Completed counts.
func (l *Live) LatencySquares() int64 { return l.latencySq.Load() }

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
	case p.Rate < 0 || math.IsNaN(p.Rate) || math.IsInf(p.Rate, 0):
		return errors.New("--rate must be a positive number of transactions per second")
	case p.LatencyLimit < 0:
		return errors.New("--latency-limit must not be negative")
	case p.StopTimeout < 0:
		return errors.New("--stop-timeout must not be negative")
	case p.TxTimeout < 0:
		return errors.New("--tx-timeout must not be negative")
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
// transactions start, the ones in flight finish (and count), and
// the result covers what was measured until then, with Interrupted set.
// Nothing waits forever: transactions still in flight Plan.StopTimeout
// after the end are cancelled and their VUs reported stuck, and the
// counters are read under the same bound. A failure to connect or to probe
// ends the run with an error; errors inside transactions are counted and
// the VU goes on (after reconnecting when its connection was lost).
func Run(ctx context.Context, p *Plan, live *Live) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if live == nil {
		live = NewLive(p)
	}
	stopTimeout := p.StopTimeout
	if stopTimeout == 0 {
		stopTimeout = DefaultStopTimeout
	}
	background := context.WithoutCancel(ctx)
	res := &Result{Start: time.Now()}
	live.setPhase(PhaseConnect, res.Start)

	vus := make([]*vu, p.VUs)
	closeAll := func() {
		// Closing is bounded too: a hung server must not hold the exit.
		closeWithin(background, vus, stopTimeout)
	}
	threadOK := false
	if p.Cost && p.ThreadCost {
		_, threadOK = metrics.ThreadUsage()
	}
	for i := range vus {
		v := &vu{
			id: i, plan: p, live: live, stats: metrics.NewSet(len(p.Mix)), thread: threadOK, gate: make(chan struct{}, 1),
			rng: rand.New(rand.NewPCG(p.Seed, uint64(i)+0x5eed)),
		}
		if p.Cost {
			v.wire = new(metrics.WireCounts)
		}
		vus[i] = v
		if err := v.connect(ctx); err != nil {
			closeAll()
			if ctx.Err() != nil {
				res.Interrupted = true
				res.End = time.Now()
				return res, nil
			}
			return nil, fmt.Errorf("connect virtual user %d: %w", i+1, err)
		}
		v.term = p.Terminal(i)
	}
	res.ThreadUsage = threadOK
	res.Wired = p.Cost
	for _, v := range vus {
		res.Wired = res.Wired && v.wired
	}

	// stop ends the VUs' loops; transactions in flight run on txCtx, which
	// is cancelled only when the stop timeout runs out.
	loopCtx, stop := context.WithCancel(ctx)
	defer stop()
	txCtx, cancelTx := context.WithCancel(background)
	defer cancelTx()

	var wg sync.WaitGroup
	start := time.Now()
	timed := p.Iterations == 0
	if timed && p.Rampup > 0 {
		live.setPhase(PhaseRampup, start)
	} else {
		if err := beginMeasure(background, p, live, res, vus, stopTimeout); err != nil {
			closeAll()
			return nil, err
		}
	}
	for _, v := range vus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v.loop(loopCtx, txCtx)
		}()
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	if p.TxTimeout > 0 {
		go watchdog(vus, p.TxTimeout, allDone)
	}

	if timed {
		if p.Rampup > 0 {
			select {
			case <-time.After(p.Rampup):
				if err := beginMeasure(background, p, live, res, vus, stopTimeout); err != nil {
					stop()
					waitVUs(allDone, vus, cancelTx, time.Now().Add(stopTimeout))
					closeAll()
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
	stop()
	// One deadline for the whole stop phase: the transactions in flight,
	// the last counter reading and closing the sessions all fit in it (the
	// reading and the closing get at least a moment each), so a server
	// that stopped answering holds the run for about --stop-timeout.
	stopDeadline := end.Add(stopTimeout)
	var last *edge
	if measured {
		// The transactions in flight end inside the measured interval and
		// count, as pgbench counts them: the interval ends when the last
		// of them has, so the counters read next hold the same ones.
		last = holdVUs(vus, stopDeadline)
		end = time.Now()
	}
	live.setPhase(PhaseStop, end)
	if measured && res.ProcessOK {
		u, err := metrics.ProcessUsage()
		res.Process, res.ProcessOK = u.Sub(res.Process), err == nil
	}
	stuck, finished := waitVUs(allDone, vus, cancelTx, stopDeadline)
	res.Stuck = stuck
	var probeErr error
	if measured {
		if p.Probe != nil {
			last.publish(background, remaining(stopDeadline))
			res.EdgeAdded = last.added
			if res.EdgeGap == "" {
				res.EdgeGap = last.gap("end")
			}
			// A server that cannot be told to publish does so when a
			// session ends: in iterations mode nothing is left to run,
			// so the sessions close before the end is read.
			if last.unpublished > 0 && !timed && finished {
				closeWithin(background, vus, remaining(stopDeadline))
			}
		}
		res.MeasureEnd = end
		res.After, probeErr = probe(background, p, remaining(stopDeadline))
	}
	closeWithin(background, vus, remaining(stopDeadline))
	res.End = time.Now()

	res.Stats = metrics.NewSet(len(p.Mix))
	errs := map[string]int64{}
	var ok, answered []uint32
	stmts := map[string]*StmtStat{}
	for _, v := range vus {
		// A VU still inside a transaction is abandoned: what it recorded
		// until now counts, and it records nothing more (statsMu).
		v.statsMu.Lock()
		v.abandoned = true
		v.statsMu.Unlock()
		if v.stopped {
			res.Stopped = append(res.Stopped, v.id+1)
		}
		res.Stats.Merge(v.stats)
		for m, n := range v.errs {
			errs[m] += n
		}
		res.Skipped += v.skipped
		res.Late += v.late
		res.Lag.Count += v.lag.Count
		res.Lag.Sum += v.lag.Sum
		res.Lag.Max = max(res.Lag.Max, v.lag.Max)
		res.ConnLost += v.connLost
		ok = addSeconds(ok, v.okSec)
		answered = addSeconds(answered, v.ansSec)
		if v.timed != nil {
			v.timed.mergeInto(stmts)
		}
	}
	res.Reconnects = live.Reconnects()
	res.Errors = sortErrors(errs)
	res.Statements = sortStmts(stmts)
	if measured {
		// Whole seconds only: the last fraction of a second is too short
		// to call an outage when nothing happened to finish in it.
		// A second in which the server answered, if only with errors, is
		// not an outage: an outage is a lost or unreachable server.
		secs := int(res.Measured() / time.Second)
		for s := 0; s < secs; s++ {
			if (s >= len(ok) || ok[s] == 0) && (s >= len(answered) || answered[s] == 0) {
				res.Outage++
				res.OutageSeconds = append(res.OutageSeconds, s)
			}
		}
	}
	if probeErr != nil {
		return res, probeErr
	}
	return res, nil
}

// addSeconds adds the per-second counts of one VU to the run's.
func addSeconds(to, from []uint32) []uint32 {
	for i, n := range from {
		for len(to) <= i {
			to = append(to, 0)
		}
		to[i] += n
	}
	return to
}

// waitVUs waits for every VU to return, until deadline; then it notes the
// VUs still inside a transaction (stuck), cancels the statements in flight
// and waits a little more. finished reports whether all returned.
func waitVUs(allDone <-chan struct{}, vus []*vu, cancelTx func(), deadline time.Time) (stuck []int, finished bool) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-allDone:
		return nil, true
	case <-t.C:
	}
	for _, v := range vus {
		if v.busy() {
			stuck = append(stuck, v.id+1)
		}
	}
	cancelTx()
	select {
	case <-allDone:
		return stuck, true
	case <-time.After(cancelGrace):
		return stuck, false
	}
}

// remaining is the time left until deadline, but at least minStopStep:
// reading the counters and closing the sessions each get a moment even
// when waiting for the VUs used up the stop timeout.
func remaining(deadline time.Time) time.Duration {
	return max(time.Until(deadline), minStopStep)
}

const minStopStep = time.Second

// cancelGrace is how long cancelled statements get to return before their
// VUs are given up as stuck.
const cancelGrace = 2 * time.Second

// closeWithin closes every VU's connection, in parallel, waiting at most d.
func closeWithin(ctx context.Context, vus []*vu, d time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	for _, v := range vus {
		if v == nil {
			continue
		}
		c := v.takeConn()
		if c == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.Close(ctx)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (l *Live) phaseIs(p Phase) bool { return Phase(l.phase.Load()) == p }

// beginMeasure reads the counters at the start of the measured interval,
// with the VUs held between transactions (edge.go), and starts it.
func beginMeasure(ctx context.Context, p *Plan, live *Live, res *Result, vus []*vu, timeout time.Duration) error {
	if p.Probe != nil {
		first := holdVUs(vus, time.Now().Add(timeout))
		defer first.release()
		first.publish(ctx, timeout)
		res.EdgeGap = first.gap("start")
	}
	before, err := probe(ctx, p, timeout)
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

func probe(ctx context.Context, p *Plan, timeout time.Duration) (map[string]int64, error) {
	if p.Probe == nil {
		return map[string]int64{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	m, err := p.Probe(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("read counters: no answer within %s (--stop-timeout)", timeout)
		}
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
	term  workload.Terminal
	stats metrics.Set
	rng   *rand.Rand
	wire  *metrics.WireCounts // nil: not counted
	wired bool                // the connection counts into wire
	// thread: the VU holds its OS thread and reads its usage around each
	// transaction.
	thread bool
	errs   map[string]int64
	// stopped is set when the VU ended at an error (RaiseError).
	stopped bool
	// since is the start (UnixNano) of the transaction running now, 0
	// between transactions: the stuck report and the watchdog read it.
	since atomic.Int64
	// txCtx is the context of the VU's transactions: the run's, with a
	// cancel of its own for the watchdog; timedOut says the watchdog did it.
	txCtx    context.Context
	cancelTx context.CancelFunc
	timedOut atomic.Bool
	parentTx context.Context
	txMu     sync.Mutex // guards cancelTx between the VU and the watchdog
	// statsMu guards the counters below against the end of the run reading
	// them while a VU it gave up on returns; abandoned tells the VU to
	// record nothing more.
	statsMu   sync.Mutex
	abandoned bool

	connMu sync.Mutex // guards conn against closeWithin after a stop timeout
	conn   workload.Conn
	// gate is held by the VU around each transaction and by the engine at
	// the edges of the measured interval (edge.go).
	gate  chan struct{}
	timed *timedConn // the PerStatement wrapper around conn, or nil

	// Throttling and latency limit, measured interval only.
	sched    time.Time // next scheduled start (Rate)
	skipped  int64
	late     int64
	lag      Lag
	connLost int64
	okSec    []uint32 // completed transactions per second of the measured interval
	// ansSec: transactions per second of the measured interval that failed
	// with the server's answer (an SQL error), not a lost connection.
	ansSec []uint32
}

// connect opens the VU's connection (again, after a loss), counting into
// the same wire counter.
func (v *vu) connect(ctx context.Context) error {
	cctx := ctx
	if v.wire != nil {
		cctx = metrics.WithWire(ctx, v.wire)
	}
	c, err := v.plan.Connect(cctx, v.id)
	if err != nil {
		return err
	}
	if wd, ok := c.(metrics.Wired); ok && v.wire != nil {
		v.wired = wd.Wire() == v.wire
	}
	if v.plan.PerStatement {
		if v.timed == nil {
			v.timed = newTimedConn()
		}
		v.timed.Conn = c
		c = v.timed
	}
	v.connMu.Lock()
	v.conn = c
	v.connMu.Unlock()
	return nil
}

func (v *vu) takeConn() workload.Conn {
	v.connMu.Lock()
	defer v.connMu.Unlock()
	c := v.conn
	v.conn = nil
	return c
}

func (v *vu) loop(ctx, txCtx context.Context) {
	p := v.plan
	v.parentTx = txCtx
	v.newTxCtx(txCtx)
	defer func() { v.cancelTx() }()
	if v.thread || p.PinThreads {
		// RUSAGE_THREAD describes one OS thread: the goroutine must stay on
		// it for a transaction's delta to be its own.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	perVU := 0.0
	if p.Rate > 0 {
		perVU = p.Rate / float64(p.VUs)
		v.sched = time.Now()
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
		var sched time.Time
		if perVU > 0 {
			// Poisson arrivals: exponential gaps with mean 1/perVU.
			v.sched = v.sched.Add(time.Duration(-math.Log(1-v.rng.Float64()) / perVU * float64(time.Second)))
			sched = v.sched
			if p.LatencyLimit > 0 && time.Since(sched) > p.LatencyLimit {
				if v.live.phaseIs(PhaseMeasure) {
					v.skipped++
				}
				continue
			}
			if !sleep(ctx, time.Until(sched)) {
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		if v.timedOut.Load() {
			v.timedOut.Store(false)
			v.newTxCtx(v.parentTx)
		}
		select {
		case v.gate <- struct{}{}:
		case <-ctx.Done():
			return
		}
		if ctx.Err() != nil {
			<-v.gate
			return
		}
		ok, lost := v.execute(v.txCtx, tx, kind, sched)
		<-v.gate
		if lost {
			if p.Reconnect.Off || !v.reconnect(ctx) {
				v.stopped = true
				return
			}
		} else if !ok && p.RaiseError {
			v.stopped = true
			return
		}
		if p.KeyingThinking && !sleep(ctx, v.think(p.Mix[kind].Think)) {
			return
		}
	}
}

// reconnect replaces a lost connection, with doubling backoff, until it
// succeeds or the run ends. It reports whether the VU has a connection.
func (v *vu) reconnect(ctx context.Context) bool {
	// The engine may be using the session at an edge: take the gate.
	select {
	case v.gate <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	if c := v.takeConn(); c != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		_ = c.Close(cctx)
		cancel()
	}
	<-v.gate
	wait := v.plan.Reconnect.first()
	for {
		if !sleep(ctx, wait) {
			return false
		}
		cctx, cancel := context.WithTimeout(ctx, connectTimeout)
		err := v.connect(cctx)
		cancel()
		if err == nil {
			v.live.reconnects.Add(1)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		wait = min(2*wait, v.plan.Reconnect.max())
	}
}

// connectTimeout bounds one reconnection attempt.
const connectTimeout = 10 * time.Second

// execute runs one transaction to its end, retrying conflicts, and records
// it if it completed inside the measured interval. It reports whether the
// transaction completed (committed or rolled back on purpose), and whether
// it failed because the connection was lost. sched, when set, is the
// scheduled start (throttling): latency is measured from it.
func (v *vu) execute(ctx context.Context, tx workload.Txn, kind int, sched time.Time) (completed, lost bool) {
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
	// closeWithin may take the connection of a VU it gave up on.
	v.connMu.Lock()
	conn := v.conn
	v.connMu.Unlock()
	start := time.Now()
	v.since.Store(start.UnixNano())
	retries := int64(0)
	var err error
	for {
		err = tx.Run(ctx, conn)
		if err == nil || !errors.Is(err, workload.ErrRetry) || retries >= int64(v.plan.MaxRetries) {
			break
		}
		retries++
	}
	now := time.Now()
	v.since.Store(0)
	if v.timed != nil {
		v.timed.settle(err)
	}
	if err != nil && v.timedOut.Load() {
		// The watchdog cancelled this transaction's statements: say so
		// (the loop gives the next one a fresh context).
		err = fmt.Errorf("transaction ran longer than --tx-timeout %s and was cancelled: %w", v.plan.TxTimeout, err)
	}
	v.statsMu.Lock()
	defer v.statsMu.Unlock()
	if v.abandoned {
		return completed, false // the run has ended without this VU
	}
	elapsed := now.Sub(start)
	if !sched.IsZero() {
		elapsed = now.Sub(sched)
	}
	// Counted only when it finished inside the measured interval: ramp-up
	// is warm-up; the interval ends when the transactions in flight at its
	// end have, unless they outlast the stop timeout.
	counted := v.live.phaseIs(PhaseMeasure)
	s := &v.stats[kind]
	completed = err == nil || errors.Is(err, workload.ErrUserAbort)
	switch {
	case completed:
		v.live.perKind[kind].Add(1)
		v.live.latency.Add(int64(elapsed))
		us := elapsed.Microseconds()
		v.live.latencySq.Add(us * us)
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
			v.markOK(now)
			if v.plan.LatencyLimit > 0 && elapsed > v.plan.LatencyLimit {
				v.late++
			}
			if !sched.IsZero() {
				l := start.Sub(sched)
				v.lag.Count++
				v.lag.Sum += l
				v.lag.Max = max(v.lag.Max, l)
			}
		}
	default:
		v.live.errors.Add(1)
		lost = isConnLost(err, conn)
		// Errors are counted in every phase when the VU stops on them:
		// the user must see why it stopped.
		if counted || v.plan.RaiseError {
			s.Errors++
			if lost {
				v.connLost++
			}
			v.noteError(err)
		}
		if counted && !lost {
			v.ansSec = markSecond(v.ansSec, v.live, now)
		}
	}
	if counted {
		s.Retries += retries
		if retries > 0 {
			s.Retried++
		}
		s.Wire = s.Wire.Add(v.wire.Load().Sub(wire0))
		if useOK {
			if u, ok := metrics.ThreadUsage(); ok {
				s.Thread = s.Thread.Add(u.Sub(use0))
			}
		}
	}
	return completed, lost
}

// markOK counts a completed transaction in its second of the measured
// interval, for the outage report.
func (v *vu) markOK(now time.Time) { v.okSec = markSecond(v.okSec, v.live, now) }

// markSecond counts one in secs at now's second of the measured interval.
func markSecond(secs []uint32, live *Live, now time.Time) []uint32 {
	_, since := live.Phase()
	i := int(now.Sub(since) / time.Second)
	if i < 0 {
		return secs
	}
	for len(secs) <= i {
		secs = append(secs, 0)
	}
	secs[i]++
	return secs
}

// isConnLost tells whether err means the session is gone: the database
// package said so, the connection reports itself closed, or the error is
// one of the network's.
func isConnLost(err error, c workload.Conn) bool {
	if errors.Is(err, workload.ErrConnLost) {
		return true
	}
	if b, ok := c.(workload.Breakable); ok && b.Broken() {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, driver.ErrBadConn)
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

// busy reports whether the VU is inside a transaction.
func (v *vu) busy() bool { return v.since.Load() != 0 }

// newTxCtx gives the VU a fresh transaction context under parent.
func (v *vu) newTxCtx(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	v.txMu.Lock()
	v.txCtx, v.cancelTx = ctx, cancel
	v.txMu.Unlock()
}

// watchdog cancels the transactions that run longer than limit, checking
// a few times a second until done is closed.
func watchdog(vus []*vu, limit time.Duration, done <-chan struct{}) {
	every := min(max(limit/4, 10*time.Millisecond), time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			for _, v := range vus {
				if t := v.since.Load(); t != 0 && now.UnixNano()-t > int64(limit) && !v.timedOut.Load() {
					v.timedOut.Store(true)
					v.txMu.Lock()
					cancel := v.cancelTx
					v.txMu.Unlock()
					if cancel != nil {
						cancel()
					}
				}
			}
		}
	}
}
