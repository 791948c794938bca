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

	"github.com/sledge-bench/sledge/internal/evloop"
	"github.com/sledge-bench/sledge/internal/interrupt"
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
	VUs int
	// NoTerminals allows VUs = 0 in a timed run: the engine keeps only
	// the clock and the edges of the measured interval (a mixed
	// workload's analytic streams alone, which the runner runs beside).
	NoTerminals bool
	// Connections, when > 0, is how many sessions serve the VUs, as in a
	// transaction monitor: a VU (a terminal) takes a free session only for
	// each transaction, after its keying time and any -R schedule wait, and
	// gives it back before thinking; its latency counts from the moment it
	// asked for one. At most VUs. 0: each VU has a session of its own for
	// the whole run.
	Connections int
	Rampup      time.Duration // warm-up, not counted (timed runs only)
	Duration    time.Duration // measured interval (timed runs)
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
	// (docs/cost.md), so it is not the default. With Connections, a VU
	// holds its thread only during each transaction, so that thousands of
	// mostly idle VUs do not hold thousands of threads.
	ThreadCost bool
	// PinThreads keeps each VU on its own OS thread for the whole run
	// (runtime.LockOSThread), so that the thread a VU's blocking read
	// wakes is the one that goes on with it: no hand-over between threads
	// per round trip. For database connections that wait in blocking
	// system calls on a processor of their own (db.SetRawIO).
	PinThreads bool
	// Loops, when > 0, runs the VUs as coroutines of this many event
	// loops (internal/evloop), each on one OS thread, spread evenly: for
	// connections that wait on the loop of the VU calling (io=loop), as
	// pgbench's -j threads each poll several connections. Each VU's
	// context carries its loop (evloop.With); the engine's own waits
	// (sleeps, the session gate, the pool) go through it. With
	// PinThreads, the loops' waits begin raw (evloop.New). ThreadCost is
	// not measured on loops: a thread's usage is several VUs'.
	Loops int
	Seed  uint64
	Mix   []workload.TxType

	// LoopWait is how the loops wait (the loopwait URL option): epoll or
	// io_uring, epoll where io_uring_setup is refused (Result.LoopWait).
	LoopWait evloop.WaitKind

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
	// TxLog, when set, receives the end of every transaction of the
	// measured interval, skipped ones included (pgbench -l).
	TxLog TxLog
	// ConnectPerTx opens a new connection for every transaction (pgbench
	// -C): before each one the session's connection is closed and opened
	// again, which counts in the transaction's latency (Result.Connects
	// holds these times). A failure to connect fails the transaction, as
	// a lost connection does.
	ConnectPerTx bool
	// ClassifyFailure, when set, sorts failed transactions' errors into
	// pgbench's failure classes (--failures-detailed): Result.Failures
	// and TxEnd.Class. It runs only on failures.
	ClassifyFailure func(error) workload.FailClass
	// OnError, when set, is told of every error that ends a try of a
	// transaction (pgbench --verbose-errors). It runs on the VU's
	// goroutine, only on errors, and must be safe for concurrent use.
	OnError func(TryError)

	// Connect opens session i (0-based): VU i's own, or with Connections
	// the i-th shared one. With Cost, ctx carries the session's wire
	// counter (metrics.WireFrom). Sessions are opened side by side, a few
	// at a time (connectors), so Connect must be safe for concurrent use.
	Connect func(ctx context.Context, i int) (workload.Conn, error)
	// Terminal makes VU vu's transaction source.
	Terminal func(vu int) workload.Terminal
	// Probe reads counters at the start and at the end of the measured
	// interval (new orders, database commits…). It gets a context that is
	// never cancelled by an interrupt, so the end is always read.
	Probe func(ctx context.Context) (map[string]int64, error)

	// Scale-out (cluster.go): Ready, VUIDs and Intervals.
	Cluster
}

// DefaultStopTimeout is Plan.StopTimeout's default.
const DefaultStopTimeout = 10 * time.Second

// StopWithin is how long the run waits for transactions in flight after
// its end: StopTimeout, or its default.
func (p *Plan) StopWithin() time.Duration {
	if p.StopTimeout == 0 {
		return DefaultStopTimeout
	}
	return p.StopTimeout
}

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
	Start time.Time
	// Connected is when every session's connection was open: Connected -
	// Start is the initial connection time (pgbench's), the sessions
	// opened in parallel by a few connectors.
	Connected    time.Time
	MeasureStart time.Time
	MeasureEnd   time.Time
	End          time.Time
	Interrupted  bool // stopped by the caller's context before its end
	Before       map[string]int64
	After        map[string]int64
	Stats        metrics.Set // measured interval only, per mix type
	Errors       []ErrorCount

	// Loops, LoopWait and LoopFallback: with Plan.Loops, the loops the
	// VUs ran on, how they waited ("epoll", "io_uring") and, when
	// io_uring was asked but refused, why.
	Loops                  int
	LoopWait, LoopFallback string

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
	// SharedProcess is true when another run went on in this process
	// during the measured interval (the service runs jobs side by side):
	// Process then holds both runs' CPU, not this one's.
	SharedProcess bool
	procEpoch     int64

	// Throttling and the latency limit (Plan.Rate, Plan.LatencyLimit),
	// over the measured interval: transactions skipped because they were
	// already too late, transactions slower than the limit, and the lag of
	// the actual start behind the schedule.
	Skipped int64
	Late    int64
	Lag     Lag
	// ConnWait is how long the VUs waited for a free session before the
	// transactions counted in the measured interval (Plan.Connections > 0;
	// zero otherwise). It is part of their latency, as a TP monitor's
	// queue is part of the response time.
	ConnWait Lag
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
	// Connects is the time spent closing and opening connections before
	// the transactions of the measured interval (Plan.ConnectPerTx).
	Connects Lag
	// Failures splits the measured interval's failed transactions by
	// pgbench's classes, per mix type (Plan.ClassifyFailure); nil when
	// nothing was classified.
	Failures []FailCounts
	// EdgeAdded is how many transactions the VUs' sessions added to the
	// server's counters when they published them at the end of the
	// measured interval (workload.Publisher): After − Before counts them,
	// the VUs did not run them. EdgeGap says why a reading at an edge may
	// have missed or added transactions of the VUs; "" when both edges
	// were taken with every VU between transactions, published.
	EdgeAdded int64
	EdgeGap   string
}

// TryError is an error that ended a try of a transaction (Plan.OnError).
type TryError struct {
	VU, Kind int
	Try      int  // from 1
	Retry    bool // the transaction is tried again
	// Elapsed is the transaction's latency so far, from where its
	// latency counts (its schedule under Rate).
	Elapsed time.Duration
	Err     error
}

// FailCounts are one mix type's failed transactions by class; the
// others are the rest of its errors.
type FailCounts struct {
	Serialization, Deadlock int64
}

// Count counts one failure of class c (workload.FailOther is not counted here).
func (f *FailCounts) Count(c workload.FailClass) {
	switch c {
	case workload.FailSerialization:
		f.Serialization++
	case workload.FailDeadlock:
		f.Deadlock++
	}
}

// AddFailures adds src's counts, mix type by mix type, to dst, made when
// nil; nil src (nothing classified) leaves dst as it is.
func AddFailures(dst, src []FailCounts) []FailCounts {
	if src == nil {
		return dst
	}
	if dst == nil {
		dst = make([]FailCounts, len(src))
	}
	for k, f := range src {
		dst[k] = dst[k].Add(f)
	}
	return dst
}

// Add is f and o together.
func (f FailCounts) Add(o FailCounts) FailCounts {
	return FailCounts{Serialization: f.Serialization + o.Serialization, Deadlock: f.Deadlock + o.Deadlock}
}

// Lag is a wait before transactions: the schedule lag under throttling,
// or the wait for a free session (Result.ConnWait).
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

// Validate checks a plan for impossible values, with one-line messages in
// the words of the command-line options.
func (p *Plan) Validate() error {
	switch {
	case p.VUs < 1 && !(p.NoTerminals && p.VUs == 0):
		return errors.New("--vus must be at least 1")
	case p.VUs == 0 && p.Iterations > 0:
		return errors.New("--iterations needs virtual users: with --vus 0 give --duration")
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
	case p.Connections < 0:
		return errors.New("--connections must not be negative")
	case p.Connections > p.VUs:
		return fmt.Errorf("--connections %d is more than --vus %d: a virtual user uses one connection at a time, so at most --vus are ever used", p.Connections, p.VUs)
	case len(p.Mix) == 0:
		return errors.New("engine: empty transaction mix")
	}
	return nil
}

// pooled reports whether sessions are shared (Connections > 0).
func (p *Plan) pooled() bool { return p.Connections > 0 }

// sessions is how many sessions the run opens.
func (p *Plan) sessions() int {
	if p.pooled() {
		return p.Connections
	}
	return p.VUs
}

// runsActive counts the runs this process is executing, and runsStarted
// the runs it has started: a run whose measured interval saw another one
// cannot call the process's CPU time its own.
var runsActive, runsStarted atomic.Int64

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
	runsActive.Add(1)
	runsStarted.Add(1)
	defer runsActive.Add(-1)
	// The stop phase outlives ctx (the first Ctrl-C), but not an
	// escalation (a third one): then nothing in flight is waited for.
	x := &execution{p: p, live: live, stopTimeout: p.StopWithin(), background: interrupt.Detach(ctx),
		timed: p.Iterations == 0, res: &Result{Start: time.Now()}}
	interrupt.StopTimeout(ctx, x.stopTimeout)
	res := x.res
	live.setPhase(PhaseConnect, res.Start)
	if err := x.connect(ctx); err != nil {
		if ctx.Err() != nil {
			res.Interrupted = true
			res.End = time.Now()
			return res, nil
		}
		return nil, err
	}
	x.prepare()
	// stopVUs ends the VUs' loops; transactions in flight run on txCtx,
	// which is cancelled only when the stop timeout runs out.
	loopCtx, stopVUs := context.WithCancel(ctx)
	defer stopVUs()
	txCtx, cancelTx := context.WithCancel(x.background)
	defer cancelTx()
	x.stopVUs, x.cancelTx = stopVUs, cancelTx
	for _, s := range x.sessions {
		s.parentTx = txCtx
		s.newTxCtx(txCtx)
	}
	if p.Intervals {
		live.attach(x.sessions)
	}
	if interrupted, err := p.ready(ctx); err != nil || interrupted {
		x.closeAll()
		res.Interrupted, res.End = interrupted, time.Now()
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	if err := x.startVUs(loopCtx); err != nil {
		x.closeAll()
		return nil, err
	}
	if err := x.wait(ctx); err != nil {
		return nil, err
	}
	probeErr := x.stop(ctx)
	x.collect()
	if probeErr != nil {
		return res, probeErr
	}
	return res, nil
}

// execution is one run of a plan: what its phases (connect, prepare,
// startVUs, wait, stop, collect) share.
type execution struct {
	p           *Plan
	live        *Live
	res         *Result
	stopTimeout time.Duration
	background  context.Context // not cancelled by the caller, but by an escalated stop: the edges' readings, closing
	timed       bool            // not Plan.Iterations

	threadOK bool // the thread's usage is read around each transaction
	sessions []*session
	terms    []*terminal
	r        *runner
	stopVUs  context.CancelFunc // ends the VUs' loops
	cancelTx context.CancelFunc // cancels the transactions in flight
	allDone  chan struct{}      // closed once every VU has returned
	measured bool               // the run reached its measured interval
}

// connect opens every session; on a failure it closes the ones opened.
func (x *execution) connect(ctx context.Context) error {
	p := x.p
	if p.Cost && p.ThreadCost && p.Loops == 0 {
		_, x.threadOK = metrics.ThreadUsage()
	}
	x.sessions = make([]*session, p.sessions())
	for i := range x.sessions {
		x.sessions[i] = newSession(i, p, x.live, x.threadOK)
	}
	if failed, err := openSessions(ctx, x.sessions); err != nil {
		x.closeAll()
		if p.pooled() {
			return fmt.Errorf("open connection %d: %w", failed+1, err)
		}
		return fmt.Errorf("connect virtual user %d: %w", failed+1, err)
	}
	x.res.Connected = time.Now()
	return nil
}

// closeAll closes every session. Closing is bounded too: a hung server
// must not hold the exit.
func (x *execution) closeAll() {
	closeWithin(x.background, x.sessions, x.stopTimeout)
}

// prepare makes the VUs' terminals and, with Plan.Connections, the pool
// of sessions they share.
func (x *execution) prepare() {
	p, sessions, res := x.p, x.sessions, x.res
	x.r = &runner{plan: p, live: x.live, sessions: sessions, thread: x.threadOK}
	x.terms = make([]*terminal, p.VUs)
	for i := range x.terms {
		t := &terminal{id: i, term: p.Terminal(i), rng: rand.New(rand.NewPCG(p.Seed, uint64(p.vuID(i))+0x5eed))}
		if !p.pooled() {
			t.own = sessions[i]
		}
		x.terms[i] = t
	}
	if p.pooled() {
		r := x.r
		r.pool = make(chan *session, len(sessions))
		for _, s := range sessions {
			r.pool <- s
		}
		r.left.Store(int64(len(sessions)))
		r.gone = make(chan struct{})
	}
	res.ThreadUsage = x.threadOK
	res.Wired = p.Cost
	for _, s := range sessions {
		res.Wired = res.Wired && s.wired
	}
}

// startVUs starts the ramp-up, or the measured interval when there is
// none, and every VU's loop on loopCtx.
func (x *execution) startVUs(loopCtx context.Context) error {
	p := x.p
	var wg sync.WaitGroup
	start := time.Now()
	if x.timed && p.Rampup > 0 {
		x.live.setPhase(PhaseRampup, start)
	} else {
		if err := beginMeasure(x.background, p, x.live, x.res, x.sessions, x.stopTimeout); err != nil {
			return err
		}
	}
	if p.Loops > 0 {
		if err := x.startLoops(loopCtx, &wg); err != nil {
			return err
		}
	} else {
		for _, t := range x.terms {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.loop(loopCtx, x.r)
			}()
		}
	}
	allDone := make(chan struct{})
	x.allDone = allDone
	go func() { wg.Wait(); close(allDone) }()
	if p.TxTimeout > 0 {
		go watchdog(x.sessions, p.TxTimeout, allDone)
	}
	return nil
}

// startLoops starts Plan.Loops event loops, each on a goroutine locked to
// its thread, and the VUs as their coroutines, terminal i on loop i mod
// Loops; wg is done when a loop's VUs have all returned.
func (x *execution) startLoops(loopCtx context.Context, wg *sync.WaitGroup) error {
	loops := make([]*evloop.Loop, min(x.p.Loops, len(x.terms)))
	for i := range loops {
		l, err := evloop.New(x.p.PinThreads, x.p.LoopWait)
		if err != nil {
			for _, l := range loops[:i] {
				l.Close()
			}
			return err
		}
		loops[i] = l
	}
	// One context per loop: its coroutines share it, and the loop
	// watches it once for all of them.
	ctxs := make([]context.Context, len(loops))
	for i, l := range loops {
		ctxs[i] = evloop.With(loopCtx, l)
	}
	for i, t := range x.terms {
		t.lp = loops[i%len(loops)]
		ctx := ctxs[i%len(loops)]
		t.lp.Go(func() { t.loop(ctx, x.r) })
	}
	x.r.loops = loops
	x.res.Loops, x.res.LoopWait, x.res.LoopFallback = len(loops), loops[0].WaitKind().String(), loops[0].Fallback()
	for _, l := range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer l.Close()
			l.Run()
		}()
	}
	return nil
}

// wait waits out the ramp-up (then begins the measured interval) and the
// measured interval, or in an iterations run every VU's last transaction;
// each ends early when ctx is cancelled or every VU has returned.
func (x *execution) wait(ctx context.Context) error {
	p, live, allDone := x.p, x.live, x.allDone
	if len(x.terms) == 0 {
		allDone = nil // no VU (NoTerminals): the clock alone ends the run
	}
	if x.timed {
		if p.Rampup > 0 {
			select {
			case <-time.After(p.Rampup):
				if err := beginMeasure(x.background, p, live, x.res, x.sessions, x.stopTimeout); err != nil {
					x.stopVUs()
					waitVUs(allDone, x.background.Done(), x.sessions, x.cancelTx, time.Now().Add(x.stopTimeout))
					x.closeAll()
					return err
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
	return nil
}

// stop ends the run: the VUs start nothing more, the transactions in
// flight end the measured interval, whose counters are read, and the
// sessions close, all within the stop timeout. The error: the end's
// counters could not be read.
func (x *execution) stop(ctx context.Context) error {
	p, live, res, sessions, background := x.p, x.live, x.res, x.sessions, x.background
	res.Interrupted = ctx.Err() != nil
	measured := live.phaseIs(PhaseMeasure)
	x.measured = measured
	end := time.Now()
	x.stopVUs()
	// One deadline for the whole stop phase: the transactions in flight,
	// the last counter reading and closing the sessions all fit in it (the
	// reading and the closing get at least a moment each), so a server
	// that stopped answering holds the run for about --stop-timeout.
	stopDeadline := end.Add(x.stopTimeout)
	var last *edge
	if measured {
		// The transactions in flight end inside the measured interval and
		// count, as pgbench counts them: the interval ends when the last
		// of them has, so the counters read next hold the same ones.
		last = holdSessions(background, sessions, stopDeadline)
		end = time.Now()
	}
	live.setPhase(PhaseStop, end)
	if measured && res.ProcessOK {
		u, err := metrics.ProcessUsage()
		res.Process, res.ProcessOK = u.Sub(res.Process), err == nil
		res.SharedProcess = res.SharedProcess || runsActive.Load() > 1 || runsStarted.Load() != res.procEpoch
	}
	stuck, finished := waitVUs(x.allDone, x.background.Done(), sessions, x.cancelTx, stopDeadline)
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
			if last.unpublished > 0 && !x.timed && finished {
				closeWithin(background, sessions, remaining(stopDeadline))
			}
		}
		res.MeasureEnd = end
		res.After, probeErr = ReadProbe(background, p, remaining(stopDeadline))
	}
	closeWithin(background, sessions, remaining(stopDeadline))
	res.End = time.Now()
	return probeErr
}

// collect gathers what the sessions and the VUs recorded into the result:
// the statistics, errors, waits and failures, and the seconds of outage.
func (x *execution) collect() {
	p, res := x.p, x.res
	res.Stats = metrics.NewSet(len(p.Mix))
	errs := map[string]int64{}
	var ok, answered []uint32
	stmts := map[string]*StmtStat{}
	for _, s := range x.sessions {
		// A session still inside a transaction is abandoned: what was
		// recorded on it until now counts, and nothing more is (statsMu).
		s.statsMu.Lock()
		s.abandoned = true
		s.statsMu.Unlock()
		res.Stats.Merge(s.stats)
		for m, n := range s.errs {
			errs[m] += n
		}
		res.Late += s.late
		res.Lag = res.Lag.Add(s.lag)
		res.ConnWait = res.ConnWait.Add(s.wait)
		res.ConnLost += s.connLost
		res.Connects = res.Connects.Add(s.connects)
		res.Failures = AddFailures(res.Failures, s.fails)
		ok = addSeconds(ok, s.okSec)
		answered = addSeconds(answered, s.ansSec)
		if s.timed != nil {
			s.timed.mergeInto(stmts)
		}
	}
	for _, t := range x.terms {
		if t.stopped {
			res.Stopped = append(res.Stopped, t.id+1)
		}
		res.Skipped += t.skipped
	}
	res.Reconnects = x.live.Reconnects()
	res.Errors = SortErrors(errs)
	res.Statements = sortStmts(stmts)
	if x.measured {
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
}

// connectors bounds the sessions being opened at once: enough to open
// hundreds quickly, few enough not to flood the server's listen queue.
const connectors = 32

// openSessions opens every session, connectors at a time. The first
// failure stops the opening (the attempts in flight are cancelled) and is
// returned with its session's index.
func openSessions(ctx context.Context, sessions []*session) (failed int, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		sem = make(chan struct{}, connectors)
	)
	failed = -1
	for i, s := range sessions {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break // a failure, or the caller's cancel
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if cerr := s.connect(ctx); cerr != nil {
				mu.Lock()
				defer mu.Unlock()
				// The first failure is the cause; the attempts it
				// cancels fail after it and are not.
				if failed < 0 {
					failed, err = i, cerr
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	if failed < 0 && ctx.Err() != nil {
		return 0, ctx.Err() // the caller's: interrupted
	}
	return failed, err
}

// runner is what the VUs of one run share.
type runner struct {
	plan     *Plan
	live     *Live
	sessions []*session
	// thread: read the thread's usage around each transaction
	// (Plan.ThreadCost where the system has RUSAGE_THREAD).
	thread bool
	// With Plan.Connections: the free sessions, how many are still
	// usable, and gone, closed when none is (a lost session is not
	// replaced with --reconnect off), so waiting VUs stop.
	pool chan *session
	left atomic.Int64
	gone chan struct{}
	// loops are the run's event loops (Plan.Loops): poked when a session
	// goes back to the pool, so that their VUs waiting for one look.
	loops []*evloop.Loop
}

// acquire waits for a free session; nil when the run ends or none is left.
// A VU on an event loop (lp) waits through it.
func (r *runner) acquire(ctx context.Context, lp *evloop.Loop) *session {
	if lp != nil {
		select {
		case s := <-r.pool:
			return s
		default:
		}
		var s *session
		lp.WaitFor(ctx, func() bool {
			select {
			case s = <-r.pool:
				return true
			case <-r.gone:
				return true
			default:
				return false
			}
		})
		return s
	}
	select {
	case s := <-r.pool:
		return s
	case <-ctx.Done():
		return nil
	case <-r.gone:
		return nil
	}
}

// release gives a shared session back; a VU's own session stays with it.
func (r *runner) release(s *session) {
	if r.pool != nil {
		r.pool <- s // never blocks: the pool holds every session
		for _, l := range r.loops {
			l.Poke()
		}
	}
}

// retire takes a shared session that lost its connection for good out of
// service; the VUs stop when it was the last.
func (r *runner) retire() {
	if r.pool != nil && r.left.Add(-1) == 0 {
		close(r.gone)
		for _, l := range r.loops {
			l.Poke()
		}
	}
}

// Add is l and o together: their counts and sums added, the larger max.
func (l Lag) Add(o Lag) Lag {
	return Lag{Count: l.Count + o.Count, Sum: l.Sum + o.Sum, Max: max(l.Max, o.Max)}
}

// addSeconds adds the per-second counts of one session to the run's.
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
// VUs still inside a transaction (stuck: the VU holding each busy session),
// cancels the statements in flight and waits a little more. finished
// reports whether all returned. When abandon is closed (the stop
// escalated) it cancels them at once and does not wait for them.
func waitVUs(allDone, abandon <-chan struct{}, sessions []*session, cancelTx func(), deadline time.Time) (stuck []int, finished bool) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	abandoned := false
	select {
	case <-allDone:
		return nil, true
	case <-t.C:
	case <-abandon:
		abandoned = true
	}
	for _, s := range sessions {
		if s.busy() {
			stuck = append(stuck, int(s.holder.Load())+1)
		}
	}
	sort.Ints(stuck)
	cancelTx()
	if abandoned {
		select {
		case <-allDone:
			return stuck, true
		default:
			return stuck, false
		}
	}
	select {
	case <-allDone:
		return stuck, true
	case <-time.After(cancelGrace):
		return stuck, false
	case <-abandon:
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

// stepCtx is the context of one step of the stop phase that must not be
// cut short by an escalation (reading the final counters): not cancelled
// with ctx, it ends after d, or minStopStep after the stop escalated.
func stepCtx(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
	abandon := interrupt.Abandoned(ctx)
	if abandon == nil {
		return c, cancel
	}
	go func() {
		select {
		case <-abandon:
			t := time.NewTimer(minStopStep)
			defer t.Stop()
			select {
			case <-t.C:
				cancel()
			case <-c.Done():
			}
		case <-c.Done():
		}
	}()
	return c, cancel
}

// cancelGrace is how long cancelled statements get to return before their
// VUs are given up as stuck.
const cancelGrace = 2 * time.Second

// closeWithin closes every session's connection, in parallel, waiting at
// most d.
func closeWithin(ctx context.Context, sessions []*session, d time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	for _, s := range sessions {
		c := s.takeConn()
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
// with every session held between transactions (edge.go), and starts it.
func beginMeasure(ctx context.Context, p *Plan, live *Live, res *Result, sessions []*session, timeout time.Duration) error {
	if p.Probe != nil {
		first := holdSessions(ctx, sessions, time.Now().Add(timeout))
		defer first.release()
		first.publish(ctx, timeout)
		res.EdgeGap = first.gap("start")
	}
	before, err := ReadProbe(ctx, p, timeout)
	if err != nil {
		return err
	}
	res.Before = before
	if p.Cost {
		// Holds the start until the end replaces it with the delta.
		u, err := metrics.ProcessUsage()
		res.Process, res.ProcessOK = u, err == nil
		res.procEpoch, res.SharedProcess = runsStarted.Load(), runsActive.Load() > 1
	}
	res.MeasureStart = time.Now()
	if p.TxLog != nil {
		p.TxLog.Begin(res.MeasureStart) // before any VU sees the phase
	}
	live.setPhase(PhaseMeasure, res.MeasureStart)
	return nil
}

// ReadProbe reads p.Probe (none: an empty reading) within timeout.
func ReadProbe(ctx context.Context, p *Plan, timeout time.Duration) (map[string]int64, error) {
	if p.Probe == nil {
		return map[string]int64{}, nil
	}
	ctx, cancel := stepCtx(ctx, timeout)
	defer cancel()
	m, err := p.Probe(ctx)
	if err != nil {
		if ctx.Err() != nil && interrupt.IsAbandoned(ctx) {
			return nil, fmt.Errorf("read counters: no answer within %s of stopping without waiting", minStopStep)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("read counters: no answer within %s (--stop-timeout)", timeout)
		}
		return nil, fmt.Errorf("read counters: %w", err)
	}
	return m, nil
}

// maxErrorMessages bounds the distinct messages a session keeps, so a run
// that fails every transaction with a new message cannot grow without limit.
const maxErrorMessages = 20

// terminal is one virtual user: what it is and decides by itself (its
// transaction source, random stream and schedule). It is small, so that a
// run can have thousands; what is measured is kept by the sessions.
type terminal struct {
	id   int
	term workload.Terminal
	rng  *rand.Rand
	// own is the VU's own session (Plan.Connections == 0); nil: it takes
	// a shared one for each transaction.
	own *session
	// stopped is set when the VU ended at an error (RaiseError, or a lost
	// connection with --reconnect off).
	stopped bool
	sched   time.Time // next scheduled start (Rate)
	skipped int64     // measured interval: too late to send (Rate with LatencyLimit)
	timer   *time.Timer
	// lp is the event loop the VU is a coroutine of (Plan.Loops), nil
	// when it has a goroutine of its own.
	lp *evloop.Loop
}

// session is one connection and everything recorded on it. One VU at a
// time uses it (its own, or the one holding it from the pool), so recording
// takes no lock and the memory of a run grows with its sessions, not its VUs.
type session struct {
	id    int
	plan  *Plan
	live  *Live
	stats metrics.Set
	wire  *metrics.WireCounts // nil: not counted
	wired bool                // the connection counts into wire
	// thread: read the thread's usage around each transaction; pooled:
	// hold the thread only then (a VU's own session: for its whole loop).
	thread bool
	pooled bool
	errs   map[string]int64
	// since is the start (UnixNano) of the transaction running now, 0
	// between transactions: the stuck report and the watchdog read it;
	// holder is the VU (0-based) it runs for.
	since  atomic.Int64
	holder atomic.Int64
	// txCtx is the context of the session's transactions: the run's, with a
	// cancel of its own for the watchdog; timedOut says the watchdog did it.
	txCtx    context.Context
	cancelTx context.CancelFunc
	timedOut atomic.Bool
	parentTx context.Context
	txMu     sync.Mutex // guards cancelTx between the VU and the watchdog
	// loopTx is txCtx carrying loopTxLoop, the loop of the VU that used
	// the session last (txCtxOn), made from loopTxOf.
	loopTx, loopTxOf context.Context
	loopTxLoop       *evloop.Loop
	// statsMu guards the counters below against the end of the run reading
	// them while a VU it gave up on returns; abandoned tells the VU to
	// record nothing more.
	statsMu   sync.Mutex
	abandoned bool
	ival      metrics.Set // Plan.Intervals: since the last Live.TakeInterval (statsMu)

	connMu sync.Mutex // guards conn against closeWithin after a stop timeout
	conn   workload.Conn
	// gate is held by the VU using the session around each transaction and
	// by the engine at the edges of the measured interval (edge.go).
	gate  chan struct{}
	timed *timedConn // the PerStatement wrapper around conn, or nil

	// Measured interval only: late transactions (LatencyLimit), schedule
	// lag (Rate), the wait for a free session (pooled), transactions lost
	// with the connection, and per second the completed transactions and
	// those that failed with the server's answer (an SQL error), for the
	// outage report.
	late     int64
	lag      Lag
	wait     Lag
	connLost int64
	connects Lag          // ConnectPerTx: closing and opening connections
	fails    []FailCounts // by mix type, once a failure was classified
	okSec    []uint32
	ansSec   []uint32
}

func newSession(i int, p *Plan, live *Live, thread bool) *session {
	s := &session{id: i, plan: p, live: live, stats: metrics.NewSet(len(p.Mix)), thread: thread,
		pooled: p.pooled(), gate: make(chan struct{}, 1)}
	if p.Intervals {
		s.ival = metrics.NewSet(len(p.Mix))
	}
	if p.Cost {
		s.wire = new(metrics.WireCounts)
	}
	return s
}

// connect opens the session's connection (again, after a loss), counting
// into the same wire counter.
func (s *session) connect(ctx context.Context) error {
	cctx := ctx
	if s.wire != nil {
		cctx = metrics.WithWire(ctx, s.wire)
	}
	c, err := s.plan.Connect(cctx, s.id)
	if err != nil {
		return err
	}
	if wd, ok := c.(metrics.Wired); ok && s.wire != nil {
		s.wired = wd.Wire() == s.wire
	}
	if s.plan.PerStatement {
		if s.timed == nil {
			s.timed = newTimedConn()
		}
		s.timed.Conn = c
		c = s.timed
	}
	s.connMu.Lock()
	s.conn = c
	s.connMu.Unlock()
	return nil
}

func (s *session) takeConn() workload.Conn {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	c := s.conn
	s.conn = nil
	return c
}

func (t *terminal) loop(ctx context.Context, r *runner) {
	p := r.plan
	if t.own != nil && (r.thread || p.PinThreads) && t.lp == nil {
		// RUSAGE_THREAD describes one OS thread: the goroutine must stay on
		// it for a transaction's delta to be its own; PinThreads keeps a
		// VU that waits raw on the thread its read wakes. A pooled
		// session's VU holds its thread per transaction instead (execute).
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	perVU := 0.0
	if p.Rate > 0 {
		perVU = p.Rate / float64(p.VUs)
		t.sched = time.Now()
	}
	// pause is the think time of the transaction before, slept together
	// with the next one's keying time: one wake-up per cycle rather than
	// two, which counts with thousands of VUs.
	var pause time.Duration
	for n := 0; p.Iterations == 0 || n < p.Iterations; n++ {
		if ctx.Err() != nil {
			return
		}
		tx := t.term.Next()
		kind := tx.Kind()
		if p.KeyingThinking {
			if !t.sleep(ctx, pause+p.Mix[kind].Keying) {
				return
			}
			pause = 0
		}
		var sched time.Time
		if perVU > 0 {
			// Poisson arrivals: exponential gaps with mean 1/perVU.
			t.sched = t.sched.Add(time.Duration(-math.Log(1-t.rng.Float64()) / perVU * float64(time.Second)))
			sched = t.sched
			if p.LatencyLimit > 0 && time.Since(sched) > p.LatencyLimit {
				if r.live.phaseIs(PhaseMeasure) {
					t.skipped++
					if p.TxLog != nil {
						p.TxLog.Tx(t.id, TxEnd{Kind: kind, End: time.Now(), Status: TxSkipped})
					}
				}
				continue
			}
			if !t.sleep(ctx, time.Until(sched)) {
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		s := t.own
		at := txTimes{sched: sched}
		if s == nil {
			// A TP monitor's queue: the wait for a session is part of
			// the transaction's response time.
			at.asked = time.Now()
			if s = r.acquire(ctx, t.lp); s == nil {
				return
			}
		}
		if s.timedOut.Load() {
			s.timedOut.Store(false)
			s.newTxCtx(s.parentTx)
		}
		if !s.takeGate(ctx, t.lp) {
			r.release(s)
			return
		}
		if ctx.Err() != nil {
			<-s.gate
			r.release(s)
			return
		}
		s.holder.Store(int64(t.id))
		if p.ConnectPerTx {
			// pgbench -C: the connection is part of the transaction,
			// and of its latency.
			at.connect = time.Now()
			if err := s.renew(ctx, t.id, kind); err != nil {
				<-s.gate
				if ctx.Err() != nil { // the run ended while connecting
					r.release(s)
					return
				}
				if p.Reconnect.Off || !s.reconnect(ctx) {
					t.stopped = true
					r.retire()
					return
				}
				r.release(s)
				continue
			}
		}
		ok, lost := s.execute(s.txCtxOn(t.lp), t.id, tx, kind, at)
		<-s.gate
		if lost {
			// The VU that lost the connection reconnects it before
			// anyone else may use the session.
			if p.Reconnect.Off || !s.reconnect(ctx) {
				t.stopped = true
				r.retire()
				return
			}
		}
		r.release(s)
		if !ok && !lost && p.RaiseError {
			t.stopped = true
			return
		}
		if p.KeyingThinking {
			pause = t.think(p.Mix[kind].Think)
		}
	}
	// The last transaction's think time, as every other's (an iterations
	// run ends when its VUs have thought).
	t.sleep(ctx, pause)
}

// sleep waits d or until ctx is done, on the VU's own timer: reused, as
// thousands of VUs sleep between transactions. It reports whether the full
// time passed.
func (t *terminal) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	if t.lp != nil {
		return t.lp.Sleep(ctx, d)
	}
	if t.timer == nil {
		t.timer = time.NewTimer(d)
	} else {
		t.timer.Reset(d) // fired and drained, or stopped: no stale tick (Go ≥ 1.23)
	}
	select {
	case <-t.timer.C:
		return true
	case <-ctx.Done():
		t.timer.Stop()
		return false
	}
}

// reconnect replaces a lost connection, with doubling backoff, until it
// succeeds or the run ends. It reports whether the session has a connection.
func (s *session) reconnect(ctx context.Context) bool {
	// The engine may be using the session at an edge: take the gate.
	if !s.takeGate(ctx, evloop.From(ctx)) {
		return false
	}
	if c := s.takeConn(); c != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		_ = c.Close(cctx)
		cancel()
	}
	<-s.gate
	wait := s.plan.Reconnect.first()
	for {
		if !sleep(ctx, wait) {
			return false
		}
		cctx, cancel := context.WithTimeout(ctx, connectTimeout)
		err := s.connect(cctx)
		cancel()
		if err == nil {
			s.live.reconnects.Add(1)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		wait = min(2*wait, s.plan.Reconnect.max())
	}
}

// renew replaces the session's connection with a new one before a
// transaction (Plan.ConnectPerTx), timing the close and the open. A
// failure to connect counts as a failed transaction on a lost connection.
func (s *session) renew(ctx context.Context, vu, kind int) error {
	start := time.Now()
	if c := s.takeConn(); c != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		_ = c.Close(cctx)
		cancel()
	}
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	err := s.connect(cctx)
	cancel()
	took := time.Since(start)
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	if s.abandoned || (err != nil && ctx.Err() != nil) {
		return err // the run ended: no transaction failed
	}
	counted := s.live.phaseIs(PhaseMeasure)
	if counted {
		s.connects = s.connects.Add(Lag{Count: 1, Sum: took, Max: took})
	}
	if err == nil {
		return nil
	}
	err = fmt.Errorf("connect: %w", err)
	s.countFailure(kind, err, true, counted, workload.FailOther)
	if s.plan.OnError != nil {
		s.plan.OnError(TryError{VU: vu, Kind: kind, Try: 1, Elapsed: took, Err: err})
	}
	return err
}

// countFailure counts a failed transaction of mix type kind, its error of
// class c, lost when it lost the connection: live, and in the result when
// counted. Errors are counted in every phase when the VU stops on them
// (RaiseError): the user must see why it stopped. The caller holds statsMu.
func (s *session) countFailure(kind int, err error, lost, counted bool, c workload.FailClass) {
	s.live.fail(kind)
	if !counted && !s.plan.RaiseError {
		return
	}
	s.stats[kind].Errors++
	if lost {
		s.connLost++
	}
	s.noteError(err)
	if c != workload.FailOther {
		if s.fails == nil {
			s.fails = make([]FailCounts, len(s.stats))
		}
		s.fails[kind].Count(c)
	}
}

// txTimes are the moments before a transaction's first statement that its
// latency may count from; zero when not set.
type txTimes struct {
	sched   time.Time // its scheduled start (Plan.Rate)
	asked   time.Time // when its VU asked for a shared session (pooled)
	connect time.Time // when its own connection began to open (Plan.ConnectPerTx)
}

// from is when the latency starts: the first moment set, else start.
func (at txTimes) from(start time.Time) time.Time {
	switch {
	case !at.sched.IsZero():
		return at.sched
	case !at.asked.IsZero():
		return at.asked
	case !at.connect.IsZero():
		return at.connect
	}
	return start
}

// connectTimeout bounds one reconnection attempt.
const connectTimeout = 10 * time.Second

// execute runs one transaction to its end on the session, retrying
// conflicts, and records it if it completed inside the measured interval.
// It reports whether the transaction completed (committed or rolled back on
// purpose), and whether it failed because the connection was lost. Latency
// is measured from the first of at's moments that is set, else from the
// transaction's first statement.
func (s *session) execute(ctx context.Context, vu int, tx workload.Txn, kind int, at txTimes) (completed, lost bool) {
	if s.thread && s.pooled {
		// Only for the transaction: a pooled VU spends most of its
		// time waiting, and must not hold a thread meanwhile.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	// The usage is read outside the timed span: getrusage is a system call.
	var (
		wire0 metrics.Wire
		use0  metrics.Usage
		useOK bool
	)
	if s.thread {
		use0, useOK = metrics.ThreadUsage()
	}
	wire0 = s.wire.Load()
	// closeWithin may take the connection of a session it gave up on.
	s.connMu.Lock()
	conn := s.conn
	s.connMu.Unlock()
	start := time.Now()
	s.since.Store(start.UnixNano())
	from := at.from(start)
	sched, asked := at.sched, at.asked
	retries := int64(0)
	var err error
	for {
		err = tx.Run(ctx, conn)
		if err == nil || !errors.Is(err, workload.ErrRetry) || retries >= int64(s.plan.MaxRetries) {
			break
		}
		if s.plan.OnError != nil && ctx.Err() == nil {
			s.plan.OnError(TryError{VU: vu, Kind: kind, Try: int(retries) + 1, Retry: true, Elapsed: time.Since(from), Err: err})
		}
		retries++
	}
	now := time.Now()
	s.since.Store(0)
	if s.timed != nil {
		s.timed.settle(err)
	}
	if err != nil && s.timedOut.Load() {
		// The watchdog cancelled this transaction's statements: say so
		// (the next transaction on the session gets a fresh context).
		err = fmt.Errorf("transaction ran longer than --tx-timeout %s and was cancelled: %w", s.plan.TxTimeout, err)
	}
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	if s.abandoned {
		return completed, false // the run has ended without this session
	}
	elapsed := now.Sub(from)
	// Counted only when it finished inside the measured interval: ramp-up
	// is warm-up; the interval ends when the transactions in flight at its
	// end have, unless they outlast the stop timeout.
	counted := s.live.phaseIs(PhaseMeasure)
	st := &s.stats[kind]
	completed = err == nil || errors.Is(err, workload.ErrUserAbort)
	class := workload.FailOther
	switch {
	case completed:
		s.live.complete(kind, elapsed, err != nil)
		if counted {
			if err == nil {
				st.Commits++
			} else {
				st.Rollbacks++ // the workload's own rollback: a completed transaction
			}
			st.Record(elapsed)
			s.live.measured.Add(1)
			s.markOK(now)
			if s.plan.LatencyLimit > 0 && elapsed > s.plan.LatencyLimit {
				s.late++
			}
			if !sched.IsZero() {
				s.lag = s.lag.Add(Lag{Count: 1, Sum: start.Sub(sched), Max: start.Sub(sched)})
			}
		}
	default:
		lost = isConnLost(err, conn)
		if s.plan.ClassifyFailure != nil {
			class = s.plan.ClassifyFailure(err)
		}
		s.countFailure(kind, err, lost, counted, class)
		if s.plan.OnError != nil && ctx.Err() == nil {
			s.plan.OnError(TryError{VU: vu, Kind: kind, Try: int(retries) + 1, Elapsed: elapsed, Err: err})
		}
		if counted && !lost {
			s.ansSec = markSecond(s.ansSec, s.live, now)
		}
	}
	if retries > 0 {
		s.live.retry(kind, retries)
	}
	if counted && s.plan.TxLog != nil {
		e := TxEnd{Kind: kind, End: now, Retries: retries, Status: TxFailed, Class: class}
		if completed {
			e.Status, e.Latency = TxOK, elapsed
			if !sched.IsZero() {
				e.Lag = start.Sub(sched)
			}
		}
		s.plan.TxLog.Tx(vu, e)
	}
	if counted {
		if !asked.IsZero() {
			s.wait = s.wait.Add(Lag{Count: 1, Sum: start.Sub(asked), Max: start.Sub(asked)})
		}
		st.Retries += retries
		if retries > 0 {
			st.Retried++
		}
		st.Wire = st.Wire.Add(s.wire.Load().Sub(wire0))
		if s.ival != nil {
			s.interval(kind, completed, err, elapsed, retries)
		}
		if useOK {
			if u, ok := metrics.ThreadUsage(); ok {
				st.Thread = st.Thread.Add(u.Sub(use0))
			}
		}
	}
	return completed, lost
}

// markOK counts a completed transaction in its second of the measured
// interval, for the outage report.
func (s *session) markOK(now time.Time) { s.okSec = markSecond(s.okSec, s.live, now) }

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

func (s *session) noteError(err error) {
	if s.errs == nil {
		s.errs = map[string]int64{}
	}
	msg := err.Error()
	if _, ok := s.errs[msg]; !ok && len(s.errs) >= maxErrorMessages {
		msg = "(other errors)"
	}
	s.errs[msg]++
}

// think draws a think time: negative exponential with the given mean,
// truncated at ten times the mean (TPC-C 5.2.5.4).
func (t *terminal) think(mean time.Duration) time.Duration {
	if mean <= 0 {
		return 0
	}
	r := 1 - t.rng.Float64() // (0, 1]
	d := -math.Log(r) * float64(mean)
	if d > 10*float64(mean) {
		d = 10 * float64(mean)
	}
	return time.Duration(d)
}

// sleep waits d or until ctx is done, on ctx's event loop if it carries
// one; it reports whether the full time passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	if l := evloop.From(ctx); l != nil {
		return l.Sleep(ctx, d)
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

// SortErrors lists counted error messages, the most frequent first.
func SortErrors(m map[string]int64) []ErrorCount {
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

// busy reports whether a transaction runs on the session.
func (s *session) busy() bool { return s.since.Load() != 0 }

// takeGate takes the session's gate, waiting through the VU's event loop
// lp when it has one (the engine holds the gate briefly at the edges of
// the measured interval); false when ctx ended first.
func (s *session) takeGate(ctx context.Context, lp *evloop.Loop) bool {
	if lp == nil {
		select {
		case s.gate <- struct{}{}:
			return true
		case <-ctx.Done():
			return false
		}
	}
	select {
	case s.gate <- struct{}{}:
		return true
	default:
	}
	return lp.WaitFor(ctx, func() bool {
		select {
		case s.gate <- struct{}{}:
			return true
		default:
			return false
		}
	})
}

// txCtxOn is the session's transaction context carrying the VU's event
// loop lp (nil: the context itself), made once per loop and context: a
// pooled session moves between VUs, and so between loops.
func (s *session) txCtxOn(lp *evloop.Loop) context.Context {
	if lp == nil {
		return s.txCtx
	}
	if s.loopTx == nil || s.loopTxOf != s.txCtx || s.loopTxLoop != lp {
		s.loopTx, s.loopTxOf, s.loopTxLoop = evloop.With(s.txCtx, lp), s.txCtx, lp
	}
	return s.loopTx
}

// newTxCtx gives the session a fresh transaction context under parent.
func (s *session) newTxCtx(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	s.txMu.Lock()
	s.txCtx, s.cancelTx = ctx, cancel
	s.txMu.Unlock()
}

// watchdog cancels the transactions that run longer than limit, checking
// a few times a second until done is closed.
func watchdog(sessions []*session, limit time.Duration, done <-chan struct{}) {
	every := min(max(limit/4, 10*time.Millisecond), time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			for _, s := range sessions {
				if t := s.since.Load(); t != 0 && now.UnixNano()-t > int64(limit) && !s.timedOut.Load() {
					s.timedOut.Store(true)
					s.txMu.Lock()
					cancel := s.cancelTx
					s.txMu.Unlock()
					if cancel != nil {
						cancel()
					}
				}
			}
		}
	}
}
