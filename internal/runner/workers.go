package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/cluster"
	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/interrupt"
	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/workload"
)

// ClusterOptions are run's scale-out flags (docs/workers.md).
type ClusterOptions struct {
	Workers       int           // --workers N: the run is split among N workers
	Listen        string        // --listen HOST:PORT: coordinator for external workers
	Coordinator   string        // --coordinator HOST:PORT: this process is a worker
	WorkerIndex   int           // --worker-index K (else $JOB_COMPLETION_INDEX)
	WorkerTimeout time.Duration // --worker-timeout: how long to wait for workers (or the coordinator)

	workersSet, indexSet bool
}

// role is what a process is in a scale-out run.
type role int

const (
	roleAlone       role = iota // no --workers
	roleLocal                   // coordinator starting its own worker processes
	roleCoordinator             // coordinator waiting for external workers (--listen)
	roleWorker                  // worker (--coordinator)
)

// clusterFlags binds the scale-out flags.
func clusterFlags(fs *pflag.FlagSet, o *ClusterOptions) {
	fs.IntVar(&o.Workers, "workers", 0, "split the run among N worker processes that run it as one (docs/workers.md): alone, sledge starts N local workers; with --listen it waits for N external ones; with --coordinator it is one of them")
	fs.StringVar(&o.Listen, "listen", "", "with --workers: be the coordinator for N external workers, listening on HOST:PORT (port default 7077; Kubernetes: :7077)")
	fs.StringVar(&o.Coordinator, "coordinator", "", "with --workers: be a worker of the coordinator at HOST:PORT (port default 7077)")
	fs.IntVar(&o.WorkerIndex, "worker-index", 0, "with --coordinator: this worker's index, 0 to N-1 (default: $JOB_COMPLETION_INDEX, a Kubernetes Indexed Job's)")
	fs.DurationVar(&o.WorkerTimeout, "worker-timeout", time.Minute, "how long the coordinator waits for all workers to connect and be ready (a worker, for the coordinator to answer)")
}

// set notes which scale-out flags were given.
func (o *ClusterOptions) set(f *pflag.FlagSet) {
	o.workersSet = f.Changed("workers")
	o.indexSet = f.Changed("worker-index")
}

// check validates the scale-out flags (bad input: one line, exit 2) and
// says what this process is.
func (o *RunOptions) checkCluster(getenv func(string) string) (role, error) {
	c := &o.Cluster
	switch {
	case c.workersSet && c.Workers < 1:
		return 0, Usagef("--workers must be at least 1")
	case !c.workersSet && c.Coordinator != "":
		return 0, Usagef("--coordinator needs --workers N, the number of workers in all")
	case !c.workersSet && c.Listen != "":
		return 0, Usagef("--listen needs --workers N, the number of workers to wait for")
	case c.Listen != "" && c.Coordinator != "":
		return 0, Usagef("give --listen (coordinator) or --coordinator (worker), not both")
	case c.indexSet && c.Coordinator == "":
		return 0, Usagef("--worker-index applies to a worker (--coordinator)")
	case c.WorkerTimeout <= 0:
		return 0, Usagef("--worker-timeout must be positive")
	}
	if !c.workersSet {
		return roleAlone, nil
	}
	switch {
	case c.Workers > o.VUs:
		return 0, Usagef("--workers %d is more than --vus %d: each worker needs a virtual user", c.Workers, o.VUs)
	case o.Log:
		return 0, Usagef("-l/--log with --workers: not supported (each worker would write its own log)")
	case o.PerCommand:
		return 0, Usagef("-r/--report-per-command with --workers: not supported yet")
	}
	if c.Coordinator == "" {
		if c.Listen != "" {
			addr, err := withPort(c.Listen)
			if err != nil {
				return 0, Usagef("--listen %q: want HOST:PORT, such as :%d", c.Listen, cluster.DefaultPort)
			}
			c.Listen = addr
			return roleCoordinator, nil
		}
		return roleLocal, nil
	}
	addr, err := withPort(c.Coordinator)
	if err != nil {
		return 0, Usagef("--coordinator %q: want HOST:PORT, such as sledge-coordinator:%d", c.Coordinator, cluster.DefaultPort)
	}
	c.Coordinator = addr
	if !c.indexSet {
		s := getenv("JOB_COMPLETION_INDEX")
		if s == "" {
			return 0, Usagef("a worker needs --worker-index or $JOB_COMPLETION_INDEX")
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, Usagef("$JOB_COMPLETION_INDEX %q is not a worker index", s)
		}
		c.WorkerIndex = n
	}
	if c.WorkerIndex < 0 || c.WorkerIndex >= c.Workers {
		return 0, Usagef("--worker-index %d out of range 0-%d (--workers %d)", c.WorkerIndex, c.Workers-1, c.Workers)
	}
	return roleWorker, nil
}

// withPort is addr with the default port (7077) when it names none.
func withPort(addr string) (string, error) {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr, nil
	}
	if strings.Contains(addr, ":") && !strings.HasPrefix(addr, "[") {
		return "", fmt.Errorf("bad address %q", addr) // an IPv6 address needs brackets
	}
	addr = net.JoinHostPort(strings.Trim(addr, "[]"), strconv.Itoa(cluster.DefaultPort))
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", err
	}
	return addr, nil
}

// SpecHash is the hash of what must be the same in every process of a
// scale-out run: the workload, sledge's version and the run options that
// change what is run (not the seed, which the coordinator gives, nor what
// only the coordinator shows).
func SpecHash(o *RunOptions, w workload.Workload) string {
	c := *o
	c.Seed, c.SeedSet, c.RandomSeed, c.Explicit, c.JSON = 0, false, "", false, false
	c.Progress, c.Metrics, c.MetricsLinger, c.CPUProfile, c.Thresholds = 0, "", 0, "", nil
	c.Cluster = ClusterOptions{Workers: o.Cluster.Workers}
	c.Agent = AgentOptions{} // the coordinator's alone: its workers never reach the agent
	b, _ := json.Marshal(c)
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", Version(), w.Name())
	if d, ok := w.(workload.Describer); ok {
		fmt.Fprintln(h, d.Description())
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// WorkerJSON is one worker of a scale-out run in the result (run --json's
// "workers").
type WorkerJSON struct {
	Index        int    `json:"index"`
	VUs          int    `json:"vus"`
	Share        string `json:"share"`
	Transactions int64  `json:"transactions"` // completed in the measured interval, as received
	State        string `json:"state"`        // finished, vanished
	// Missed is the share of the measured interval the coordinator has
	// nothing of from a vanished worker (0: finished).
	Missed float64 `json:"missed"`
	Host   string  `json:"host,omitempty"`
}

// checkShares refuses, as bad input, a run that cannot be split so (more
// workers than warehouses, a worker without a virtual user): a
// coordinator checks every worker's share before any starts.
func checkShares(o *RunOptions, r role, w workload.Workload) error {
	n := o.Cluster.Workers
	first, last := 0, n-1
	switch r {
	case roleAlone:
		return nil
	case roleWorker:
		first, last = o.Cluster.WorkerIndex, o.Cluster.WorkerIndex
	}
	for k := first; k <= last; k++ {
		if _, _, err := workload.Share(w, k, n, o.VUs); err != nil {
			return Usagef("%v", err)
		}
	}
	return nil
}

// runPlan runs the plan as this process's role says: alone, as a worker,
// or as the coordinator, which runs no VUs itself.
func runPlan(ctx context.Context, env RunEnv, o *RunOptions, r role, w workload.Workload, url string, plan *engine.Plan, live *engine.Live, sc *ServerCost, mx *mixedRun) (*engine.Result, []WorkerJSON, error) {
	switch r {
	case roleWorker:
		res, err := runWorker(ctx, o, w, plan, live, mx)
		return res, nil, err
	case roleLocal, roleCoordinator:
		return runCoordinator(ctx, env, o, r, w, url, plan, live, sc, mx)
	}
	mx.begin(plan.Seed)
	res, err := engine.Run(ctx, plan, live)
	mx.stop(o.StopTimeout)
	return res, nil, err
}

// runWorker runs this worker's share of the plan, started and reported to
// the coordinator.
func runWorker(ctx context.Context, o *RunOptions, w workload.Workload, plan *engine.Plan, live *engine.Live, mx *mixedRun) (*engine.Result, error) {
	c := &o.Cluster
	k, n, total := c.WorkerIndex, c.Workers, o.VUs
	ids, desc, err := workload.Share(w, k, n, total)
	if err != nil {
		return nil, Usagef("%v", err)
	}
	conn, err := cluster.Dial(ctx, c.Coordinator, c.WorkerTimeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	host, _ := os.Hostname()
	if err := conn.Send(cluster.Msg{Type: cluster.TypeHello, Version: cluster.Version, Index: k, Workers: n,
		Spec: SpecHash(o, w), PID: os.Getpid(), Host: host}); err != nil {
		return nil, fmt.Errorf("coordinator %s: %w", c.Coordinator, err)
	}
	m, err := conn.Recv(time.Now().Add(c.WorkerTimeout))
	switch {
	case err != nil:
		return nil, fmt.Errorf("coordinator %s: no answer to hello: %w", c.Coordinator, err)
	case m.Type == cluster.TypeAbort:
		return nil, fmt.Errorf("coordinator %s refused worker %d: %s", c.Coordinator, k, m.Reason)
	case m.Type != cluster.TypeAccept:
		return nil, fmt.Errorf("coordinator %s: expected accept, got %q", c.Coordinator, m.Type)
	}
	seed := m.Seed
	o.Seed, plan.Seed = seed, seed
	plan.VUs, plan.VUIDs = len(ids), ids
	plan.Terminal = func(i int) workload.Terminal { return w.NewTerminal(ids[i], total, seed) }
	if o.Rate > 0 {
		// The same rate per VU as in one process.
		plan.Rate = o.Rate * float64(len(ids)) / float64(total)
	}
	if o.Connections > 0 {
		plan.Connections = min(len(ids), max(1, int(math.Round(float64(o.Connections)*float64(len(ids))/float64(total)))))
	}
	plan.Intervals = true
	// The server's ids of the sessions, for the coordinator's sampling of
	// where they wait (a reconnected session's new id is not sent, so it
	// is not asked for: with -C that would be a round trip per transaction).
	var (
		idsMu    sync.Mutex
		sessions []int64
		sent     atomic.Bool // the ready is out
	)
	if connect := plan.Connect; plan.Cost && connect != nil {
		plan.Connect = func(ctx context.Context, i int) (workload.Conn, error) {
			c, err := connect(ctx, i)
			if s, ok := c.(db.ServerSessioner); ok && err == nil && !sent.Load() {
				if id, err := s.ServerSession(ctx); err == nil {
					idsMu.Lock()
					sessions = append(sessions, id)
					idsMu.Unlock()
				}
			}
			return c, err
		}
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// At each edge of the measured interval the engine holds the VUs'
	// sessions between transactions, publishes their counters and probes:
	// a worker's probe tells the coordinator and waits until it has read
	// the database's counters with every worker held so.
	edged := make(chan struct{}, 2)
	gone := make(chan struct{})
	edges := 0
	plan.Probe = func(ctx context.Context) (map[string]int64, error) {
		edges++
		which := "start"
		if edges > 1 {
			which = "end"
		}
		if err := conn.Send(cluster.Msg{Type: cluster.TypeEdge, Edge: which}); err != nil {
			return nil, fmt.Errorf("coordinator: %w", err)
		}
		select {
		case <-edged:
			return map[string]int64{}, nil
		case <-gone:
			return nil, errors.New("the coordinator is gone")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	stopTicks := make(chan struct{})
	ticksDone := make(chan struct{})
	started := false
	plan.Ready = func(ctx context.Context) (time.Time, error) {
		sent.Store(true)
		idsMu.Lock()
		ready := cluster.Msg{Type: cluster.TypeReady, VUs: len(ids), Share: desc, Sessions: sessions}
		idsMu.Unlock()
		if err := conn.Send(ready); err != nil {
			return time.Time{}, fmt.Errorf("coordinator: %w", err)
		}
		// The coordinator waits at most --worker-timeout for the others
		// to connect, and as long again for them to be ready.
		m, err := conn.Recv(time.Now().Add(2*c.WorkerTimeout + 10*time.Second))
		switch {
		case err != nil:
			return time.Time{}, fmt.Errorf("coordinator: no start: %w", err)
		case m.Type == cluster.TypeAbort:
			// Stopped from outside, as by Ctrl-C: the cause is elsewhere.
			return time.Time{}, &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("the coordinator aborted the run: %s", m.Reason)}
		case m.Type != cluster.TypeStart:
			return time.Time{}, fmt.Errorf("coordinator: expected start, got %q", m.Type)
		}
		started = true
		go func() {
			// An abort, or a coordinator gone, stops the run as Ctrl-C does.
			for {
				m, err := conn.Recv(time.Time{})
				switch {
				case err != nil:
					close(gone)
					cancel()
					return
				case m.Type == cluster.TypeAbort:
					cancel() // the coordinator still reads the end
				case m.Type == cluster.TypeEdged:
					edged <- struct{}{}
				}
			}
		}()
		go sendTicks(conn, live, len(plan.Mix), stopTicks, ticksDone)
		mx.begin(seed) // the streams start with the others', on the run's seed
		return time.Unix(0, m.At), nil
	}
	res, runErr := engine.Run(runCtx, plan, live)
	mx.stop(o.StopTimeout) // its queries go with the final
	if started {
		close(stopTicks)
		<-ticksDone
	}
	if res != nil && started {
		final := finalOf(res, ids)
		final.Queries = mx.wire()
		if err := conn.Send(cluster.Msg{Type: cluster.TypeFinal, Index: k, Final: final}); err != nil && runErr == nil {
			runErr = fmt.Errorf("coordinator: %w", err)
		}
	}
	return res, runErr
}

// sendTicks reports every second until stop: the measured interval since
// the last tick and the live counts.
func sendTicks(conn *cluster.Conn, live *engine.Live, types int, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	set := metrics.NewSet(types)
	for seq := 1; ; seq++ {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		set.Reset()
		if err := live.TakeInterval(set); err != nil {
			return
		}
		wire, err := cluster.EncodeSet(set)
		if err != nil {
			return
		}
		counts := make([]engine.Counts, types)
		for i := range counts {
			counts[i] = live.KindCounts(i)
		}
		ph, _ := live.Phase()
		if conn.Send(cluster.Msg{Type: cluster.TypeTick, Seq: seq, Phase: ph.String(), Types: wire,
			Live: counts, Reconnects: live.Reconnects(), LatencySq: live.LatencySquares()}) != nil {
			return
		}
	}
}

// finalOf is a worker's result for the coordinator, its VUs numbered
// globally.
func finalOf(res *engine.Result, ids []int) *cluster.Final {
	wire, _ := cluster.EncodeSet(res.Stats)
	global := func(vus []int) []int {
		var out []int
		for _, v := range vus {
			if v-1 >= 0 && v-1 < len(ids) {
				out = append(out, ids[v-1]+1)
			}
		}
		return out
	}
	return &cluster.Final{Types: wire, Errors: res.Errors, Started: unixNano(res.Start), Connected: unixNano(res.Connected),
		MeasureStart: unixNano(res.MeasureStart), MeasureEnd: unixNano(res.MeasureEnd), Interrupted: res.Interrupted,
		Skipped: res.Skipped, Late: res.Late, Lag: res.Lag, ConnWait: res.ConnWait, Reconnects: res.Reconnects,
		ConnLost: res.ConnLost, OutageSeconds: res.OutageSeconds, Stuck: global(res.Stuck), Stopped: global(res.Stopped),
		Process: res.Process, ProcessOK: res.ProcessOK, Wired: res.Wired, ThreadUsage: res.ThreadUsage,
		EdgeAdded: res.EdgeAdded, EdgeGap: res.EdgeGap, Connects: res.Connects, Failures: res.Failures}
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// startMargin is how far ahead the coordinator sets the start: enough for
// the start message to reach every worker first.
const startMargin = 500 * time.Millisecond

// member is the coordinator's record of one worker.
type member struct {
	peer      *cluster.Peer
	ticked    metrics.Set     // the measured interval's ticks, merged
	lastLive  []engine.Counts // the last tick's live counts
	lastRecon int64
	lastSq    int64
	lastTick  time.Time // when the last tick of the measured interval came
	edge      string    // the last edge it reached: "start", "end"
	final     *cluster.Final
	stats     metrics.Set // the final's
	gone      bool        // connection ended
}

type event struct {
	k   int
	m   cluster.Msg
	err error
	at  time.Time
}

// runCoordinator gathers the workers, starts them together, follows their
// ticks and merges their finals into one result; it reads the database's
// counters itself at both ends of the measured interval.
func runCoordinator(ctx context.Context, env RunEnv, o *RunOptions, r role, w workload.Workload, url string, plan *engine.Plan, live *engine.Live, sc *ServerCost, mx *mixedRun) (*engine.Result, []WorkerJSON, error) {
	co, err := listenWorkers(env, o, r)
	if err != nil {
		return nil, nil, err
	}
	defer co.Close()
	res := &engine.Result{Start: time.Now()}
	actx, cancelAccept := context.WithCancel(ctx)
	defer cancelAccept()
	var kids *children
	if r == roleLocal {
		kids, err = spawnWorkers(o, env, co.Addr(), url)
		if err != nil {
			return nil, nil, err
		}
		kids.abandon = interrupt.Abandoned(ctx)
		defer kids.stop(env.Stderr)
		go func() {
			select {
			case <-kids.failed:
				cancelAccept()
			case <-actx.Done():
			}
		}()
	}
	peers, interrupted, err := gatherWorkers(ctx, actx, o, w, co, kids)
	if err != nil {
		return nil, nil, err
	}
	if interrupted {
		res.Interrupted, res.End = true, time.Now()
		return res, nil, nil
	}
	for _, p := range peers {
		sc.RegisterIDs(p.Sessions)
	}
	res.Connected = time.Now()
	// As in the engine: the stop outlives ctx but not an escalation.
	cr := &coordination{o: o, plan: plan, live: live, res: res, peers: peers, timed: o.Iterations == 0, mx: mx,
		stopTimeout: plan.StopWithin(), background: interrupt.Detach(ctx),
		edge: &edges{done: map[string]bool{}}}
	interrupt.StopTimeout(ctx, cr.stopTimeout+finalGrace) // the coordinator runs no engine to say it
	if err := cr.startWorkers(); err != nil {
		return nil, nil, err
	}
	defer close(cr.quit)
	defer func() {
		for _, p := range peers {
			_ = p.Close()
		}
	}()
	if err := cr.follow(ctx); err != nil {
		return nil, nil, err
	}
	return cr.collect()
}

// listenWorkers listens for the workers: on --listen, or on a port of the
// loopback interface for the local ones.
func listenWorkers(env RunEnv, o *RunOptions, r role) (*cluster.Coordinator, error) {
	c := &o.Cluster
	addr := c.Listen
	if r == roleLocal {
		addr = "127.0.0.1:0"
	}
	co, err := cluster.Listen(addr)
	if err != nil {
		return nil, err
	}
	if r == roleCoordinator && !o.JSON && env.Stderr != nil {
		fmt.Fprintf(env.Stderr, "waiting for %d workers on %s (--worker-timeout %s)\n", c.Workers, co.Addr(), c.WorkerTimeout)
	}
	return co, nil
}

// gatherWorkers accepts every worker (on actx, cancelled when a local
// worker fails) and waits until all are ready; then it listens no more.
// interrupted: ctx was cancelled while gathering (no peers, no error).
func gatherWorkers(ctx, actx context.Context, o *RunOptions, w workload.Workload, co *cluster.Coordinator, kids *children) (peers []*cluster.Peer, interrupted bool, err error) {
	c := &o.Cluster
	peers, err = co.Accept(actx, c.Workers, SpecHash(o, w), o.Seed, c.WorkerTimeout)
	if err == nil {
		err = cluster.WaitReady(peers, c.WorkerTimeout)
	}
	if err != nil {
		if kids != nil && ctx.Err() == nil {
			// A worker that failed closes its connection a moment before
			// its exit is seen: its own message says more.
			select {
			case <-kids.failed:
			case <-time.After(time.Second):
			}
		}
		if kids != nil && kids.firstErr() != nil {
			return nil, false, kids.firstErr()
		}
		if ctx.Err() != nil {
			return nil, true, nil
		}
		return nil, false, err
	}
	_ = co.Close() // no more workers
	return peers, false, nil
}

// coordination is the coordinator's run once its workers are ready: the
// result it builds, the workers and the edges of the measured interval.
type coordination struct {
	mx          *mixedRun // the workers' analytic queries, merged as their finals come
	o           *RunOptions
	plan        *engine.Plan
	live        *engine.Live
	res         *engine.Result
	peers       []*cluster.Peer
	timed       bool // not --iterations
	stopTimeout time.Duration
	background  context.Context // the probe's: not cancelled by an interrupt, but by an escalation

	start, measureStart time.Time
	members             []*member
	events              chan event
	quit                chan struct{} // the readers stop when the coordinator does
	edge                *edges
	startErr, edgeErr   error
	deadlineT           *time.Timer // timed: the end, the stop timeout and a grace
	interrupted         bool
}

func (cr *coordination) probe() (map[string]int64, error) {
	return engine.ReadProbe(cr.background, cr.plan, cr.stopTimeout)
}

// startWorkers tells every worker when to start and reads each one's
// messages into cr.events.
func (cr *coordination) startWorkers() error {
	o, peers, n := cr.o, cr.peers, len(cr.peers)
	cr.start = time.Now().Add(startMargin)
	if err := cluster.Broadcast(peers, cluster.Msg{Type: cluster.TypeStart, At: cr.start.UnixNano()}); err != nil {
		cluster.AbortAll(peers, "not every worker could be started")
		return err
	}
	cr.measureStart = cr.start // until the start edge says when
	if cr.timed {
		cr.measureStart = cr.start.Add(o.Rampup)
	}
	cr.members = make([]*member, n)
	cr.events = make(chan event, 4*n)
	cr.quit = make(chan struct{})
	for k, p := range peers {
		cr.members[k] = &member{peer: p, ticked: metrics.NewSet(len(cr.plan.Mix)), lastLive: make([]engine.Counts, len(cr.plan.Mix))}
		go func() {
			for {
				m, err := p.Recv(time.Time{})
				select {
				case cr.events <- event{k: k, m: m, err: err, at: time.Now()}:
				case <-cr.quit:
					return
				}
				if err != nil || m.Type == cluster.TypeFinal {
					return
				}
			}
		}()
	}
	return nil
}

// The edges of the measured interval: each worker's engine holds its
// sessions between transactions and says so; once every worker still
// there is held (or after half the stop timeout: a worker's own wait is
// the stop timeout), the coordinator reads the database's counters and
// lets them go on. In an iterations run the workers end one by one: the
// end is read once all have finished.

// doEdge reads the counters at edge name; missing workers were not held.
func (cr *coordination) doEdge(name string, missing int) {
	o, res, edge := cr.o, cr.res, cr.edge
	edge.stop()
	m, err := cr.probe()
	now := time.Now()
	switch name {
	case "start":
		res.Before, cr.startErr = m, err
		cr.measureStart = now
		cr.live.SetPhase(engine.PhaseMeasure, now)
		if cr.deadlineT != nil { // the workers' interval starts now
			cr.deadlineT.Reset(time.Until(now.Add(o.Duration + cr.stopTimeout + finalGrace)))
		}
	case "end":
		res.After, cr.edgeErr = m, err
	}
	edge.done[name] = true
	for _, mb := range cr.members {
		if mb.edge == name && !mb.gone {
			_ = mb.peer.Send(cluster.Msg{Type: cluster.TypeEdged, Edge: name})
		}
	}
	if missing > 0 && res.EdgeGap == "" {
		res.EdgeGap = fmt.Sprintf("%d worker%s not held at the %s of the measured interval", missing, plural(missing), name)
	}
}

// unheld counts the workers still running that have not reached the
// pending edge.
func (cr *coordination) unheld() int {
	n := 0
	for _, mb := range cr.members {
		if !mb.gone && mb.final == nil && mb.edge != cr.edge.pending {
			n++
		}
	}
	return n
}

func (cr *coordination) checkEdge() {
	if cr.edge.pending != "" && cr.unheld() == 0 {
		cr.doEdge(cr.edge.pending, 0)
	}
}

// follow follows the workers until every one has ended (sent its final
// or gone), the deadline passes or, after an interrupt, the stop timeout
// and a grace: their ticks, their edges, their finals. An error: the
// start of the measured interval could not be read.
func (cr *coordination) follow(ctx context.Context) error {
	o, live, edge, members, peers, n := cr.o, cr.live, cr.edge, cr.members, cr.peers, len(cr.members)
	start, timed, stopTimeout := cr.start, cr.timed, cr.stopTimeout
	if timed && o.Rampup > 0 {
		live.SetPhase(engine.PhaseRampup, start)
	}
	var deadline <-chan time.Time
	if timed {
		// Until the start edge: the start of its wait at the latest.
		cr.deadlineT = time.NewTimer(time.Until(start.Add(o.Rampup + stopTimeout + o.Duration + stopTimeout + finalGrace)))
		defer cr.deadlineT.Stop()
		deadline = cr.deadlineT.C
	}
	var stopAfter <-chan time.Time // after an interrupt: the same bound
	done := 0
	ctxDone := ctx.Done()
	for done < n {
		select {
		case ev := <-cr.events:
			m := members[ev.k]
			if ev.err != nil {
				m.gone = true
				done++
				cr.checkEdge()
				continue
			}
			switch ev.m.Type {
			case cluster.TypeTick:
				m.tick(ev, live)
			case cluster.TypeEdge:
				m.edge = ev.m.Edge
				if edge.done[m.edge] || m.edge == "end" && !timed {
					_ = m.peer.Send(cluster.Msg{Type: cluster.TypeEdged, Edge: m.edge})
					continue
				}
				if edge.pending == "" {
					edge.begin(m.edge, stopTimeout/2)
				}
				cr.checkEdge()
			case cluster.TypeFinal:
				if ev.m.Final == nil {
					continue
				}
				st, err := cluster.DecodeSet(ev.m.Final.Types, len(cr.plan.Mix))
				if err != nil {
					m.gone = true
				} else {
					m.final, m.stats = ev.m.Final, st
					cr.mx.merge(ev.m.Final.Queries)
				}
				done++
				cr.checkEdge()
			}
		case <-edge.timeout():
			cr.doEdge(edge.pending, cr.unheld())
		case <-ctxDone:
			cr.interrupted, ctxDone = true, nil
			_ = cluster.Broadcast(peers, cluster.Msg{Type: cluster.TypeAbort, Reason: "the coordinator was interrupted"})
			t := time.NewTimer(stopTimeout + finalGrace)
			defer t.Stop()
			stopAfter = t.C
		case <-deadline:
			return nil
		case <-stopAfter:
			return nil
		case <-cr.background.Done(): // an escalated stop
			// Escalated: the finals not in yet are not waited for. (The
			// interrupt is seen here first when both were ready at once.)
			if !cr.interrupted {
				cr.interrupted = true
				_ = cluster.Broadcast(peers, cluster.Msg{Type: cluster.TypeAbort, Reason: "the coordinator was interrupted"})
			}
			return nil
		}
		if cr.startErr != nil {
			// The start could not be read: nothing can be measured.
			cluster.AbortAll(peers, cr.startErr.Error())
			return cr.startErr
		}
	}
	return nil
}

// collect ends the measured interval (reading the counters if no edge
// did) and merges the workers' finals, and the ticks of those that
// vanished, into the result.
func (cr *coordination) collect() (*engine.Result, []WorkerJSON, error) {
	res, members, measureStart := cr.res, cr.members, cr.measureStart
	cr.edge.stop()
	measured := res.Before != nil
	res.Interrupted = cr.interrupted
	res.MeasureStart = measureStart
	res.MeasureEnd = time.Now()
	var latest time.Time
	for _, m := range members {
		if m.final != nil && m.final.MeasureEnd != 0 {
			if e := time.Unix(0, m.final.MeasureEnd); e.After(latest) {
				latest = e
			}
		}
	}
	if !latest.IsZero() {
		res.MeasureEnd = latest
	}
	cr.live.SetPhase(engine.PhaseStop, time.Now())
	probeErr := cr.edgeErr
	switch {
	case !measured:
		res.MeasureEnd = res.MeasureStart
	case res.After == nil:
		// Iterations, or no worker reached the end edge (vanished, stuck).
		res.After, probeErr = cr.probe()
	}
	// The window the workers were to measure, for a vanished one's missed share.
	winEnd := res.MeasureEnd
	if cr.timed && !cr.interrupted {
		winEnd = measureStart.Add(cr.o.Duration)
	}
	details := merge(res, members, cr.plan.Mix, measureStart, winEnd)
	if measured {
		cr.live.SetMeasured(res.Stats.Total().Completed())
	}
	res.End = time.Now()
	if probeErr == nil {
		probeErr = vanishedErr(details)
	}
	return res, details, probeErr
}

// edges is the coordinator's wait for the workers at an edge of the
// measured interval.
type edges struct {
	pending string // the edge being waited for, "" none
	timer   *time.Timer
	done    map[string]bool
}

func (e *edges) begin(name string, d time.Duration) {
	e.pending = name
	e.timer = time.NewTimer(d)
}

func (e *edges) stop() {
	if e.timer != nil {
		e.timer.Stop()
	}
	e.timer, e.pending = nil, ""
}

// timeout is the pending wait's timer; nil (never ready) when none.
func (e *edges) timeout() <-chan time.Time {
	if e.timer == nil {
		return nil
	}
	return e.timer.C
}

// vanishedErr is exit 1 when workers vanished: the result is out, with
// what they had sent, but it is not the whole run.
func vanishedErr(details []WorkerJSON) error {
	var gone []string
	for _, d := range details {
		if d.State == "vanished" {
			gone = append(gone, fmt.Sprintf("worker %d (%s) vanished, missing %.0f%% of its share of the measured interval", d.Index, d.Share, 100*d.Missed))
		}
	}
	if len(gone) == 0 {
		return nil
	}
	return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%s; the result holds what it sent", strings.Join(gone, "; "))}
}

// finalGrace is how long after the stop timeout the coordinator waits for
// finals before it reports the workers that sent none vanished.
const finalGrace = 5 * time.Second

// tick takes a worker's tick: its measured interval goes into the merge
// (used if no final comes), its live counts into the coordinator's display.
func (m *member) tick(ev event, live *engine.Live) {
	measuring := ev.m.Phase == engine.PhaseMeasure.String() || ev.m.Phase == engine.PhaseStop.String()
	if st, err := cluster.DecodeSet(ev.m.Types, len(m.ticked)); err == nil {
		m.ticked.Merge(st)
		if measuring {
			m.lastTick = ev.at
		}
	}
	for i, c := range ev.m.Live {
		if i >= len(m.lastLive) {
			break
		}
		live.Add(i, c.Sub(m.lastLive[i]), measuring)
		m.lastLive[i] = c
	}
	live.AddReconnects(ev.m.Reconnects - m.lastRecon)
	m.lastRecon = ev.m.Reconnects
	live.AddLatencySquares(ev.m.LatencySq - m.lastSq)
	m.lastSq = ev.m.LatencySq
}

// merge builds the run's result from the workers' finals, and from the
// ticks of those that vanished: merged histograms and summed counts, never
// averages.
func merge(res *engine.Result, members []*member, mix []workload.TxType, winStart, winEnd time.Time) []WorkerJSON {
	res.Stats = metrics.NewSet(len(mix))
	errs := map[string]int64{}
	res.ProcessOK, res.Wired, res.ThreadUsage = true, true, true
	var outage map[int]int // second → workers with an outage in it
	finished := 0
	var slowest time.Duration
	var details []WorkerJSON
	for k, m := range members {
		d := WorkerJSON{Index: k, VUs: m.peer.VUs, Share: m.peer.Share, Host: m.peer.Host}
		if m.final == nil {
			d.State = "vanished"
			res.Stats.Merge(m.ticked)
			d.Transactions = m.ticked.Total().Completed()
			res.Reconnects += m.lastRecon
			res.ProcessOK, res.Wired, res.ThreadUsage = false, false, false
			d.Missed = 1
			if res.EdgeGap == "" {
				res.EdgeGap = fmt.Sprintf("worker %d vanished", k)
			}
			if win := winEnd.Sub(winStart); win > 0 && !m.lastTick.IsZero() {
				got := m.lastTick.Sub(winStart)
				d.Missed = math.Min(1, math.Max(0, 1-float64(got)/float64(win)))
			}
			details = append(details, d)
			continue
		}
		f := m.final
		d.State = "finished"
		res.Stats.Merge(m.stats)
		d.Transactions = m.stats.Total().Completed()
		for _, e := range f.Errors {
			errs[e.Message] += e.Count
		}
		res.Skipped += f.Skipped
		res.Late += f.Late
		res.Lag = res.Lag.Add(f.Lag)
		res.ConnWait = res.ConnWait.Add(f.ConnWait)
		res.Reconnects += f.Reconnects
		res.ConnLost += f.ConnLost
		res.Connects = res.Connects.Add(f.Connects)
		res.Failures = engine.AddFailures(res.Failures, f.Failures)
		res.Stuck = append(res.Stuck, f.Stuck...)
		res.Stopped = append(res.Stopped, f.Stopped...)
		// The initial connection time is the slowest worker's: its
		// sessions were opened in parallel with the others'.
		if f.Started != 0 && f.Connected != 0 {
			if d := time.Duration(f.Connected - f.Started); d > slowest {
				slowest = d
			}
		}
		res.EdgeAdded += f.EdgeAdded
		if res.EdgeGap == "" && f.EdgeGap != "" {
			res.EdgeGap = fmt.Sprintf("worker %d: %s", k, f.EdgeGap)
		}
		res.Process = res.Process.Add(f.Process)
		res.ProcessOK = res.ProcessOK && f.ProcessOK
		res.Wired = res.Wired && f.Wired
		res.ThreadUsage = res.ThreadUsage && f.ThreadUsage
		if outage == nil {
			outage = map[int]int{}
		}
		for _, s := range f.OutageSeconds {
			outage[s]++
		}
		finished++
		details = append(details, d)
	}
	if slowest > 0 {
		res.Start = res.Connected.Add(-slowest)
	}
	// A second is an outage when no worker completed anything in it.
	for s, k := range outage {
		if k == finished && finished == len(members) {
			res.OutageSeconds = append(res.OutageSeconds, s)
		}
	}
	sort.Ints(res.OutageSeconds)
	res.Outage = len(res.OutageSeconds)
	sort.Ints(res.Stuck)
	sort.Ints(res.Stopped)
	if len(errs) > 0 {
		res.Errors = engine.SortErrors(errs)
	}
	return details
}

var errNoExecutable = errors.New("cannot find sledge's own executable to start workers")

// workerArgs are a local worker's arguments: run's, without the ones
// only the coordinator uses, and the worker's own.
func workerArgs(base []string, addr string, k, n int) []string {
	out := append([]string{}, base...)
	return append(out, "--coordinator", addr, "--worker-index", strconv.Itoa(k), "--workers", strconv.Itoa(n))
}

// trimOutput is the last lines of a worker's output, for a message.
func trimOutput(s string, lines int) []string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return all
}
