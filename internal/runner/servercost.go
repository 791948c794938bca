package runner

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/sysprobe"
	"github.com/sledge-bench/sledge/internal/workload"
)

// The server's side of the cost per transaction (docs/cost.md, "Server
// side"): the server processes' CPU and context switches from /proc when
// the server is local, the database's own statement counters, and where
// the virtual users' sessions wait, sampled during the measured interval.

// serverSampleEvery is the wait sampler's shortest period: often enough
// for a few hundred samples of a few sessions in a short run, rare enough
// that its one query costs the server well under 1% of a core.
const serverSampleEvery = 100 * time.Millisecond

// serverSampleSessions is how many session states a second the wait
// sampler aims at: with more sessions than serverSampleSessions/10 its
// period grows (at most a second), so that 200 sessions are read once a
// second rather than ten times (each reading is a query whose rows are
// every session: issue 26).
const serverSampleSessions = 160

// samplePeriod is the wait sampler's period for n sessions.
func samplePeriod(n int) time.Duration {
	d := time.Second * time.Duration(max(n, 1)) / serverSampleSessions
	return min(max(d, serverSampleEvery), time.Second)
}

// Sampling in-process (a local server): the thread-state sampler's rate
// and reads per tick, 100 thread states a second. sledge agent samples at
// sysprobe's 100 Hz (its own process); in sledge's process the reading is
// the client's CPU, so it takes the samples the shares need (a few
// thousand in a minute) rather than 1,600 a second (issue 26).
const (
	localStateHz       = 20
	localStatesPerTick = 5
)

// stacksFoldTimeout is how long --stacks waits at the end for the folded
// stacks at least (perf script over the recording).
const stacksFoldTimeout = 30 * time.Second

// ServerWaitsJSON is where the virtual users' sessions were found in the
// samples of the measured interval ("server_waits" in --json): shares of
// session samples, summing to 1.
type ServerWaitsJSON struct {
	Samples    int      `json:"samples"`  // sampling instants
	Sessions   int      `json:"sessions"` // session samples, the shares' denominator
	IntervalMs float64  `json:"interval_ms"`
	CPU        float64  `json:"cpu"`    // running: active, no wait event
	Client     float64  `json:"client"` // waiting for the client (network and client)
	Lock       float64  `json:"lock"`
	IO         *float64 `json:"io"` // null where the source cannot tell I/O from running
	Other      float64  `json:"other"`
	Source     string   `json:"source"`
	Note       string   `json:"note,omitempty"`
}

// ServerCost collects the server's figures of one run: the database's own
// counters and wait samples through its probe, and the server's processes
// and the hosts through sysprobe (watch.go).
type ServerCost struct {
	stderr io.Writer
	live   *engine.Live
	probe  db.ServerProbe
	why    string // every database figure is absent, and why
	cpuWhy string // the server's processes' figures are absent, and why

	fol       *followers
	server    *watched   // the agent's watch, or the in-process one of a local server; nil: none
	check     *watched   // --agent on a local server: the in-process cross-check
	client    *watched   // sledge's own processes and host
	agent     *agentConn // --agent
	local     bool       // the server's processes are visible here
	workers   bool       // a scale-out coordinator: the client is other processes
	stacks    bool       // --stacks, and the source may record them
	stacksWhy string     // why there are none
	folded    *sysprobe.Folded

	stacksAsked bool

	mu         sync.Mutex
	sessions   map[int64]bool
	edges      int
	roles      map[int]string // the server's processes the database listed, by role
	before     db.ServerCounters
	after      db.ServerCounters
	sentB      int64 // probe's statements after the first reading
	sentA      int64
	countersOK bool
	waits      db.WaitSample
	samples    int
	every      time.Duration // the wait sampler's period
	sampleErr  string
	stop       chan struct{}
	done       chan struct{}
}

// ServerCostOptions are what a run gives its ServerCost beside the
// database: the agent opened before the run, --stacks, --stop-timeout.
type ServerCostOptions struct {
	Agent       *agentConn
	Stacks      bool
	StopTimeout time.Duration // each read of a source at most this long
	Workers     bool          // a scale-out coordinator
}

// NewServerCost opens the probe of a run and its sysprobe watches. It
// never fails: a server that cannot be read leaves its figures absent,
// with the reason.
func NewServerCost(ctx context.Context, stderr io.Writer, d db.DB, info db.Info, live *engine.Live, o ServerCostOptions) *ServerCost {
	sc := &ServerCost{stderr: stderr, live: live, sessions: map[int64]bool{}, roles: map[int]string{},
		agent: o.Agent, workers: o.Workers, stacksAsked: o.Stacks}
	if o.StopTimeout <= 0 {
		o.StopTimeout = engine.DefaultStopTimeout
	}
	sc.fol = &followers{live: live, start: time.Now(), timeout: o.StopTimeout, stderr: stderr}
	defer func() { sc.fol.run(sc.server, sc.client) }()
	sc.openClient(ctx)
	if o.Agent != nil {
		sc.server = &watched{src: o.Agent.watch, role: "server"}
		sc.stacks, sc.stacksWhy = o.Stacks && o.Agent.stacksWhy == "", o.Agent.stacksWhy
	}
	if info.Transport == "embedded" {
		sc.why = "embedded: no separate server"
		sc.noStacks(o.Stacks, sc.why)
		return sc
	}
	coster, ok := d.(db.ServerCoster)
	if !ok {
		sc.why = info.Driver + " does not report its side of the cost"
	} else if p, err := coster.OpenServerProbe(ctx); err != nil {
		sc.why = "could not connect to read the server's figures"
		sc.logf("server figures: %v", err)
	} else {
		sc.probe = p
	}
	if sc.probe == nil {
		if sc.server == nil {
			sc.cpuWhy = sc.why
			sc.noStacks(o.Stacks, sc.why)
		}
		return sc
	}
	// Where is the server? The processes a first sample lists say.
	_, procs, err := sc.probe.Sample(ctx, nil)
	pid := 0
	if err == nil && len(procs) > 0 {
		pid = procs[0].PID
		for _, p := range procs {
			if p.Role == "postmaster" || p.Role == "server" {
				pid = p.PID // the root of the server's processes
			}
		}
	}
	local, why := serverLocal("/proc", sc.probe.Host(), pid)
	sc.local = local
	switch {
	case local:
		role := "server"
		if sc.server != nil {
			role = "check" // the agent measures; this is its cross-check
		}
		l, err := sysprobe.Open(ctx, sysprobe.Target{PID: pid}, sysprobe.Options{Exclude: []int{os.Getpid()},
			AllowStacks: o.Stacks && role == "server", StateHz: stateHzFor(role), StatesPerTick: localStatesPerTick})
		if err != nil {
			if sc.server == nil {
				sc.cpuWhy = "server processes not readable here: " + oneLineErr(err)
			}
			break
		}
		w := &watched{src: l, role: role}
		if role == "check" {
			sc.check = w
		} else {
			sc.server = w
			sc.stacks = o.Stacks
		}
	case sc.server == nil:
		sc.cpuWhy = why
	}
	if sc.server == nil && o.Stacks {
		sc.noStacks(true, "the server is not on this host: --stacks needs --agent there")
	}
	return sc
}

// stateHzFor is the thread-state sampler's rate: the cross-check reads
// CPU and switches only.
func stateHzFor(role string) int {
	if role == "check" {
		return -1
	}
	return localStateHz
}

// openClient watches sledge's own processes (a scale-out's local workers
// are its children) and this host: the client's CPU split and run-queue
// delay, and what other processes took of the machine. Its threads (a
// few hundred with many connections) are read at the edges only: the
// run-queue delay is an interval's figure, and the per-second client_host
// rows show the host's figures, not sledge's threads (issue 26).
func (sc *ServerCost) openClient(ctx context.Context) {
	l, err := sysprobe.Open(ctx, sysprobe.Target{PID: os.Getpid()}, sysprobe.Options{StateHz: -1, ThreadsOnSnapshot: true})
	if err != nil {
		return // no /proc here: no client_host
	}
	sc.client = &watched{src: l, role: "client_host"}
}

// noStacks says once why --stacks gets none.
func (sc *ServerCost) noStacks(asked bool, why string) {
	if !asked || sc.stacksWhy != "" {
		return
	}
	sc.stacksWhy = why
	fmt.Fprintf(sc.stderr, "sledge: --stacks: %s (the run goes on without them)\n", why)
}

// Follow hands every second the watches read during the run to fn: the
// server's and this host's (SystemSecond), in order, one call at a time.
func (sc *ServerCost) Follow(fn func(SystemSecond)) {
	if sc == nil {
		return
	}
	sc.fol.fnMu.Lock()
	sc.fol.fn = fn
	sc.fol.fnMu.Unlock()
}

func (sc *ServerCost) logf(format string, a ...any) {
	fmt.Fprintf(sc.stderr, "sledge: "+format+" (carrying on without it)\n", a...)
}

// Register notes a virtual user's session; called for every session the
// run opens, reconnections included.
func (sc *ServerCost) Register(ctx context.Context, c workload.Conn) {
	if sc.probe == nil {
		return
	}
	s, ok := c.(db.ServerSessioner)
	if !ok {
		return
	}
	id, err := s.ServerSession(ctx)
	if err != nil {
		return // its waits are not sampled; the rest is measured
	}
	sc.mu.Lock()
	sc.sessions[id] = true
	sc.mu.Unlock()
}

// RegisterIDs adds sessions another process opened (a scale-out worker's,
// by their server ids) to those whose waits are sampled.
func (sc *ServerCost) RegisterIDs(ids []int64) {
	if sc == nil || sc.probe == nil {
		return
	}
	sc.mu.Lock()
	for _, id := range ids {
		sc.sessions[id] = true
	}
	sc.mu.Unlock()
}

// Edge is called after each reading of the run's counters: the first
// starts the window, the second ends it. Each watch is read there too,
// within the stop timeout.
func (sc *ServerCost) Edge(ctx context.Context) {
	if sc == nil {
		return
	}
	sc.mu.Lock()
	sc.edges++
	n := sc.edges
	sc.mu.Unlock()
	switch n {
	case 1:
		sc.begin(ctx)
	case 2:
		sc.end(ctx)
	}
}

func (sc *ServerCost) sessionList() []int64 {
	out := make([]int64, 0, len(sc.sessions))
	for s := range sc.sessions {
		out = append(out, s)
	}
	return out
}

func (sc *ServerCost) begin(ctx context.Context) {
	sc.fol.edge(ctx, true, sc.server, sc.check, sc.client)
	if sc.stacks {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sc.fol.timeout)
		if err := sc.server.src.StartStacks(sctx); err != nil {
			sc.stacks = false
			sc.noStacks(true, oneLineErr(err))
		}
		cancel()
	}
	if sc.probe == nil {
		return
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	c, err := sc.probe.Counters(ctx)
	if err != nil {
		sc.logf("server counters: %v", err)
	} else {
		sc.before, sc.countersOK = c, true
	}
	sc.sentB = sc.probe.Sent()
	sc.every = samplePeriod(len(sc.sessions))
	sc.stop, sc.done = make(chan struct{}), make(chan struct{})
	go sc.sample(context.WithoutCancel(ctx))
}

// sample runs during the window: one sample per period, counted while the
// engine is in its measured phase; the processes it lists name the
// server's processes by role for the summary.
func (sc *ServerCost) sample(ctx context.Context) {
	defer close(sc.done)
	sc.mu.Lock()
	every := sc.every
	sc.mu.Unlock()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-sc.stop:
			return
		case <-t.C:
		}
		sc.mu.Lock()
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		w, procs, err := sc.probe.Sample(sctx, sc.sessionList())
		cancel()
		if err != nil {
			if sc.sampleErr == "" {
				sc.sampleErr = err.Error()
				sc.logf("server wait sample: %v", err)
			}
		} else {
			if ph, _ := sc.live.Phase(); ph == engine.PhaseMeasure && w.Sessions() > 0 {
				sc.waits.CPU += w.CPU
				sc.waits.Client += w.Client
				sc.waits.Lock += w.Lock
				sc.waits.IO += w.IO
				sc.waits.Other += w.Other
				sc.samples++
			}
			for _, p := range procs {
				sc.roles[p.PID] = p.Role
			}
		}
		sc.mu.Unlock()
	}
}

func (sc *ServerCost) end(ctx context.Context) {
	if sc.stop != nil {
		close(sc.stop)
		<-sc.done
	}
	var wg sync.WaitGroup
	if sc.stacks {
		// Stopping the recording goes beside the edges' readings. perf
		// folds what it recorded before it answers: up to 30 s (more with
		// a longer stop timeout), after the interval's counters are read.
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(sc.fol.timeout, stacksFoldTimeout))
			defer cancel()
			f, err := sc.server.src.StopStacks(sctx)
			sc.mu.Lock()
			defer sc.mu.Unlock()
			if err != nil {
				sc.stacksWhy = oneLineErr(err)
				return
			}
			sc.folded = &f
		}()
	}
	sc.fol.edge(ctx, false, sc.server, sc.check, sc.client)
	wg.Wait()
	if sc.probe == nil {
		return
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	c, err := sc.probe.Counters(ctx)
	if err != nil {
		sc.logf("server counters: %v", err)
		sc.countersOK = false
	} else {
		sc.after = c
	}
	sc.sentA = sc.probe.Sent()
}

// Close stops the samplers if the window never ended (an interrupted or
// failed run), the watches and the agent's, and the probe's connection.
func (sc *ServerCost) Close() {
	if sc == nil {
		return
	}
	sc.mu.Lock()
	ended := sc.edges >= 2
	sc.mu.Unlock()
	if sc.stop != nil && !ended {
		close(sc.stop)
		<-sc.done
	}
	sc.fol.close()
	for _, w := range []*watched{sc.server, sc.check, sc.client} {
		if w != nil {
			_ = w.src.Close()
		}
	}
	if sc.agent != nil {
		sc.agent.close()
	}
	if sc.probe != nil {
		_ = sc.probe.Close()
	}
}

// Fill adds the server's figures to the summary: per completed
// transaction of the measured interval, as per_txn divides the client's.
func (sc *ServerCost) Fill(sum *RunSummary, completed int64) {
	if sc == nil || completed <= 0 || sum.PerTxn == nil {
		return
	}
	n := float64(completed)
	c := sum.ServerPerTxn
	if c == nil {
		c = &ServerCostJSON{}
		sum.ServerPerTxn = c
	}
	c.Source, c.Missing = map[string]string{}, map[string]string{}
	if c.BytesSent != nil {
		c.Source["bytes"] = sum.Driver + " global status Bytes_sent, Bytes_received: every session"
	} else {
		c.Missing["bytes"] = "not counted by " + sum.Driver
	}
	missing := func(why string, figures ...string) {
		for _, f := range figures {
			c.Missing[f] = why
		}
	}
	sc.mu.Lock()
	ended := sc.edges >= 2
	sc.mu.Unlock()
	if ended {
		sc.fillSystem(sum, c, n)
	}
	if sc.why != "" {
		if sum.Transport == "embedded" {
			c.Missing["bytes"] = sc.why
		}
		missing(sc.why, "statements", "parses", "plans", "waits")
		if c.CPUUserUs == nil && c.Missing["cpu"] == "" {
			missing(sc.why, "cpu", "context_switches")
		}
		return
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if !ended {
		missing("the measured interval did not end normally", "cpu", "context_switches", "statements", "parses", "plans")
		return
	}
	// What the database counts.
	if !sc.countersOK {
		missing("the server's counters could not be read", "statements", "parses", "plans")
	} else {
		for k, why := range sc.after.Missing {
			c.Missing[k] = why
		}
		delta := func(k string) (float64, bool) {
			a, ok1 := sc.after.Values[k]
			b, ok2 := sc.before.Values[k]
			return float64(a - b), ok1 && ok2
		}
		own := float64(sc.sentA - sc.sentB)
		if sc.after.OwnExcluded {
			own = 0
		}
		for _, f := range []struct {
			name string
			dst  **float64
		}{{"statements", &c.Statements}, {"parses", &c.Parses}, {"plans", &c.Plans}} {
			d, ok := delta(f.name)
			if !ok {
				if c.Missing[f.name] == "" {
					c.Missing[f.name] = "not counted by " + sum.Driver
				}
				continue
			}
			if f.name != "plans" {
				d -= own // the probe's own statements, where the text could not leave them out
			}
			v := max(d, 0) / n
			*f.dst = &v
			c.Source[f.name] = sc.after.Sources[f.name]
		}
		for k := range sc.after.Values {
			if k == "statements" || k == "parses" || k == "plans" {
				continue
			}
			if d, ok := delta(k); ok {
				if c.Counters == nil {
					c.Counters = map[string]float64{}
				}
				c.Counters[k] = d / n
				c.Source[k] = sc.after.Sources[k]
			}
		}
	}
	// Where the sessions waited.
	w := &ServerWaitsJSON{Samples: sc.samples, Sessions: sc.waits.Sessions(),
		IntervalMs: float64(cmp.Or(sc.every, serverSampleEvery)) / float64(time.Millisecond), Source: sc.probe.WaitSource()}
	if w.Sessions > 0 {
		tot := float64(w.Sessions)
		w.CPU, w.Client, w.Lock, w.Other = float64(sc.waits.CPU)/tot, float64(sc.waits.Client)/tot,
			float64(sc.waits.Lock)/tot, float64(sc.waits.Other)/tot
		io := float64(sc.waits.IO) / tot
		w.IO = &io
	}
	if strings.Contains(w.Source, "PROCESSLIST") {
		w.IO = nil
		w.Note = "I/O is not told apart from running without performance_schema: it is in cpu"
	}
	if w.Sessions == 0 {
		w.Note = "no sample of the virtual users' sessions in the measured interval"
		if sc.sampleErr != "" {
			w.Note += ": " + sc.sampleErr
		}
	}
	sum.ServerWaits = w
}

// rolesText is "4 backends, 6 background processes and the postmaster".
func rolesText(roles map[string]int) string {
	names := map[string][2]string{"backend": {"virtual user's backend", "virtual users' backends"},
		"background": {"background process", "background processes"},
		"postmaster": {"postmaster", "postmasters"}, "server": {"server process", "server processes"}}
	keys := make([]string, 0, len(roles))
	for k := range roles {
		keys = append(keys, k)
	}
	order := map[string]int{"server": 0, "backend": 1, "background": 2, "postmaster": 3}
	sort.Slice(keys, func(i, j int) bool { return order[keys[i]] < order[keys[j]] })
	var parts []string
	for _, k := range keys {
		name := names[k][0]
		if roles[k] != 1 {
			name = names[k][1]
		}
		if name == "" {
			name = k
		}
		parts = append(parts, fmt.Sprintf("%d %s", roles[k], name))
	}
	return strings.Join(parts, ", ")
}

// serverComms are the names a server process goes by in /proc/<pid>/comm.
var serverComms = []string{"postgres", "postmaster", "mariadbd", "mysqld"}

// serverLocal decides whether the server process pid can be measured from
// this process: the server is reached on this machine (host), pid is in
// this machine's /proc (procRoot, "/proc" outside tests), and its name
// there is a server's. A server in a container reached through a port on
// loopback has pids of another namespace: the name check keeps a
// stranger's process out. why says what failed, for the summary.
func serverLocal(procRoot, host string, pid int) (ok bool, why string) {
	if !db.IsLoopbackHost(host) {
		return false, "server is remote (--agent reads it on its host)"
	}
	if pid <= 0 {
		return false, "server process not known"
	}
	comm, err := sysprobe.ProcComm(procRoot, pid)
	if err != nil {
		return false, fmt.Sprintf("server process %d not visible from this process", pid)
	}
	for _, c := range serverComms {
		if comm == c {
			return true, ""
		}
	}
	return false, fmt.Sprintf("process %d here is %q, not the server (another PID namespace?)", pid, comm)
}
