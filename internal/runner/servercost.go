package runner

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/workload"
)

// The server's side of the cost per transaction (docs/cost.md, "Server
// side"): the server processes' CPU and context switches from /proc when
// the server is local, the database's own statement counters, and where
// the virtual users' sessions wait, sampled during the measured interval.

// serverSampleEvery is the wait sampler's period: often enough for a few
// hundred samples in a short run, rare enough that its one query costs the
// server well under 1% of a core.
const serverSampleEvery = 100 * time.Millisecond

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

// tracked is one server process read from /proc over the window.
type tracked struct {
	role       string
	threads    bool
	base, last db.ProcUsage
	gone       bool // exited: its last reading stands
	partial    bool // first seen after the start, started before it
}

// ServerCost collects the server's figures of one run.
type ServerCost struct {
	stderr io.Writer
	live   *engine.Live
	probe  db.ServerProbe
	why    string // every server figure is absent, and why
	cpuWhy string // CPU and context switches are absent, and why

	mu         sync.Mutex
	sessions   map[int64]bool
	edges      int
	procs      map[int]*tracked
	startTick  int64
	before     db.ServerCounters
	after      db.ServerCounters
	sentB      int64 // probe's statements after the first reading
	sentA      int64
	countersOK bool
	waits      db.WaitSample
	samples    int
	sampleErr  string
	stop       chan struct{}
	done       chan struct{}
}

// NewServerCost opens the probe of a run. It never fails: a server that
// cannot be read leaves its figures absent, with the reason.
func NewServerCost(ctx context.Context, stderr io.Writer, d db.DB, info db.Info, live *engine.Live) *ServerCost {
	sc := &ServerCost{stderr: stderr, live: live, sessions: map[int64]bool{}, procs: map[int]*tracked{}}
	if info.Transport == "embedded" {
		sc.why = "embedded: no separate server"
		return sc
	}
	coster, ok := d.(db.ServerCoster)
	if !ok {
		sc.why = info.Driver + " does not report its side of the cost"
		return sc
	}
	p, err := coster.OpenServerProbe(ctx)
	if err != nil {
		sc.why = "could not connect to read the server's figures"
		sc.logf("server figures: %v", err)
		return sc
	}
	sc.probe = p
	// Where is the server? The processes a first sample lists say.
	_, procs, err := p.Sample(ctx, nil)
	pid := 0
	if err == nil && len(procs) > 0 {
		pid = procs[0].PID
	}
	if local, why := db.ServerLocal("/proc", p.Host(), pid); !local {
		sc.cpuWhy = why
	}
	return sc
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
// starts the window, the second ends it.
func (sc *ServerCost) Edge(ctx context.Context) {
	if sc.probe == nil {
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
	sc.mu.Lock()
	defer sc.mu.Unlock()
	c, err := sc.probe.Counters(ctx)
	if err != nil {
		sc.logf("server counters: %v", err)
	} else {
		sc.before, sc.countersOK = c, true
	}
	sc.sentB = sc.probe.Sent()
	if sc.cpuWhy == "" {
		if sc.startTick, err = db.Uptime("/proc"); err != nil {
			sc.cpuWhy = "not visible from this process"
		}
	}
	if sc.cpuWhy == "" {
		_, procs, err := sc.probe.Sample(ctx, sc.sessionList())
		if err != nil {
			sc.logf("server processes: %v", err)
			sc.cpuWhy = "server processes not listed"
		}
		for _, p := range procs {
			if u, err := db.ReadProc("/proc", p.PID, p.Threads); err == nil {
				sc.procs[p.PID] = &tracked{role: p.Role, threads: p.Threads, base: u, last: u}
			}
		}
		if len(sc.procs) == 0 && sc.cpuWhy == "" {
			sc.cpuWhy = "no server process visible from this process"
		}
	}
	sc.stop, sc.done = make(chan struct{}), make(chan struct{})
	go sc.sample(context.WithoutCancel(ctx))
}

// sample runs during the window: one sample per period, counted while the
// engine is in its measured phase, and a reading of every server process,
// so that one that exits keeps its last reading.
func (sc *ServerCost) sample(ctx context.Context) {
	defer close(sc.done)
	t := time.NewTicker(serverSampleEvery)
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
			if sc.cpuWhy == "" {
				sc.readProcs(procs)
			}
		}
		sc.mu.Unlock()
	}
}

// readProcs reads the listed processes and the tracked ones. A process
// first seen now counts from zero when it started inside the window (a
// reconnected backend, an autovacuum worker), else from this reading.
func (sc *ServerCost) readProcs(procs []db.ServerProcess) {
	seen := map[int]bool{}
	for _, p := range procs {
		seen[p.PID] = true
		u, err := db.ReadProc("/proc", p.PID, p.Threads)
		if err != nil {
			continue
		}
		t, ok := sc.procs[p.PID]
		if !ok || t.gone || u.Start != t.base.Start {
			if ok && !t.gone {
				// The pid was reused: keep the old one's figures under
				// a key of its own.
				sc.procs[-len(sc.procs)-1] = t
				t.gone = true
			}
			t = &tracked{role: p.Role, threads: p.Threads, base: u}
			if u.Start >= sc.startTick {
				t.base = db.ProcUsage{Start: u.Start}
			} else {
				t.partial = true
			}
			sc.procs[p.PID] = t
		}
		t.last = u
	}
	for pid, t := range sc.procs {
		if seen[pid] || t.gone || pid < 0 {
			continue
		}
		if u, err := db.ReadProc("/proc", pid, t.threads); err == nil && u.Start == t.base.Start {
			t.last = u
		} else {
			t.gone = true
		}
	}
}

func (sc *ServerCost) end(ctx context.Context) {
	if sc.stop != nil {
		close(sc.stop)
		<-sc.done
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.cpuWhy == "" {
		_, procs, err := sc.probe.Sample(ctx, sc.sessionList())
		if err != nil {
			sc.logf("server processes: %v", err)
		}
		sc.readProcs(procs)
	}
	c, err := sc.probe.Counters(ctx)
	if err != nil {
		sc.logf("server counters: %v", err)
		sc.countersOK = false
	} else {
		sc.after = c
	}
	sc.sentA = sc.probe.Sent()
}

// Close stops the sampler if the window never ended (an interrupted or
// failed run) and closes the probe's connection.
func (sc *ServerCost) Close() {
	if sc.probe == nil {
		return
	}
	sc.mu.Lock()
	ended := sc.edges >= 2
	sc.mu.Unlock()
	if sc.stop != nil && !ended {
		close(sc.stop)
		<-sc.done
	}
	_ = sc.probe.Close()
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
	if sc.why != "" {
		if sum.Transport == "embedded" {
			c.Missing["bytes"] = sc.why
		}
		missing(sc.why, "cpu", "context_switches", "statements", "parses", "plans", "waits")
		return
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.edges < 2 {
		missing("the measured interval did not end normally", "cpu", "context_switches", "statements", "parses", "plans")
		return
	}
	// CPU and context switches of the server's processes.
	if sc.cpuWhy != "" {
		missing(sc.cpuWhy, "cpu", "context_switches")
	} else {
		var user, sys, sw int64
		roles := map[string]int{}
		partial, gone := 0, 0
		for _, t := range sc.procs {
			user += t.last.UserTicks - t.base.UserTicks
			sys += t.last.SysTicks - t.base.SysTicks
			sw += t.last.Voluntary + t.last.Involun - t.base.Voluntary - t.base.Involun
			roles[t.role]++
			if t.partial {
				partial++
			}
			if t.gone {
				gone++
			}
		}
		us := func(ticks int64) *float64 { v := float64(ticks) * 1e6 / db.ClockTicks / n; return &v }
		c.CPUUserUs, c.CPUSysUs = us(user), us(sys)
		s := float64(sw) / n
		c.ContextSwitches = &s
		src := "/proc of " + rolesText(roles) + " (utime, stime in 10 ms ticks; voluntary and involuntary context switches)"
		if gone > 0 {
			src += fmt.Sprintf("; %d exited during the window, counted to their last reading (≤ %s before)", gone, serverSampleEvery)
		}
		if partial > 0 {
			src += fmt.Sprintf("; %d first seen during the window, counted from then", partial)
		}
		c.Source["cpu"], c.Source["context_switches"] = src, src
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
		IntervalMs: float64(serverSampleEvery) / float64(time.Millisecond), Source: sc.probe.WaitSource()}
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
