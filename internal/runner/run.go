package runner

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/txlog"
	"github.com/sledge-bench/sledge/internal/workload"
)

// RunEnv is what a run works with beside its options: where it writes,
// the job that records it, and the command line's hooks that show it.
type RunEnv struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Job            *JobRun // the job being recorded, nil when none
	DryRun         bool    // stop once the options are checked (Exec.DryRun)
	// Build builds w's schema through s: the embedded default database
	// builds what a run needs, with one warehouse.
	Build func(ctx context.Context, s *Session, w workload.Workload) error
	// Header shows what is about to run (not with --json): the workload,
	// the database and how the transactions travel ("mode prepared").
	Header func(w workload.Workload, url string, info db.Info, how string)
	// Display shows the run while it goes on (a progress bar, --progress
	// lines), given the business counter (NOPM) and the type it counts
	// (-1: none); it returns what stops it. Nil: nothing is shown.
	Display func(p *engine.Plan, live *engine.Live, meterName string, meterKind int) (stop func())
	// Result shows the summary as soon as it is complete: before a
	// missed threshold or failed transactions end the run with their
	// status, and before --metrics lingers.
	Result func(*RunSummary) error
	// Live shows an analytic run's status while it goes on (the queries
	// running, in which streams) from render, and returns how to print a
	// line above it and how to stop it. Nil: plain lines only.
	Live func(render func() (float64, string)) (println func(string), stop func())
	// Report shows an analytic workload's result (workload.Analytic:
	// TPC-H's tests), as soon as it is complete.
	Report func(workload.AnalyticResult) error
	// Progress receives an analytic run's step lines, also with --json
	// (which prints none on stderr); nil: none.
	Progress func(line string)
	// Metrics starts serving the run's live metrics at addr (--metrics)
	// once its options are checked, before anything is opened.
	Metrics func(addr string, linger time.Duration, stderr io.Writer, quiet bool) (MetricsServer, error)
	// TryErrors, when set, makes what is said of the errors that end a
	// try of a transaction (Plan.OnError), in place of --verbose-errors'
	// lines: `sledge pgbench` says what pgbench says.
	TryErrors func(p *engine.Plan) func(engine.TryError)
	// Script, when set, sets up a run's scripts further once the
	// protocol is chosen (`sledge pgbench`: \shell's output on stdout,
	// -d's lines).
	Script func(ScriptWorkload)
	// WorkerArgs are the arguments of a local worker of `run --workers N`
	// (docs/workers.md): run's own, without the database URL and the
	// options only the coordinator uses.
	WorkerArgs []string
}

// MetricsServer serves one run's live metrics (run --metrics).
type MetricsServer interface {
	// Follow exports the run's live counters under its job id (0: none).
	Follow(id int64, w workload.Workload, url string, live *engine.Live)
	// Ended marks the run's end; ran: it has a result, worth a last scrape.
	Ended(ran bool)
	// Stop lingers (after a run that ended, until ctx is cancelled) and
	// closes the server: nothing is left listening.
	Stop(ctx context.Context)
}

// Run runs w on the database at url with the options o (the command
// line's `sledge run`), records it in env.Job and returns its summary,
// nil when nothing was measured. The error carries the exit status
// (ExitCode): a missed threshold (99), failed transactions (3), an
// interrupted run (130, Silent) still return the summary.
func Run(ctx context.Context, env RunEnv, o *RunOptions, w workload.Workload, url string) (*RunSummary, error) {
	var sum *RunSummary
	err := run(ctx, env, o, w, url, &sum)
	return sum, err
}

// run is a run's story: resolve and check every option (opening
// nothing), open the database and the job record, execute the plan,
// summarize the result and judge it.
func run(ctx context.Context, env RunEnv, o *RunOptions, w workload.Workload, url string, out **RunSummary) error {
	if a, ok := w.(workload.Analytic); ok {
		return runAnalytic(ctx, env, o, a, url)
	}
	rs, err := resolveRun(env, o, w)
	if err != nil {
		return err
	}
	if rs.role == roleWorker {
		// A worker shows nothing and records nothing: the coordinator does.
		env.Header, env.Display, env.Result, env.Metrics, env.Job = nil, nil, nil, nil, nil
	}
	if env.DryRun {
		return nil
	}
	if rs.role == roleAlone || rs.role == roleWorker { // a coordinator's workers choose for their own shares
		conns := rs.plan.VUs
		if rs.plan.Connections > 0 {
			conns = rs.plan.Connections
		}
		url, _ = AutoIO(url, conns, rs.plan.Connections > 0)
	}
	op := &opened{}
	defer op.close(ctx)
	if err := op.open(ctx, env, rs, url); err != nil {
		return err
	}
	res, workers, runErr := executeRun(ctx, env, rs, op, url)
	if res == nil {
		return runErr
	}
	sum := summarize(rs, op, res, workers)
	*out = sum
	env.Job.SetSummary(sum)
	if env.Result != nil {
		if err := env.Result(sum); err != nil {
			return err
		}
	}
	return verdict(env.Stderr, rs.o, res, sum, runErr)
}

// resolved is a run whose options are resolved and checked: everything
// the steps after resolveRun need.
type resolved struct {
	o          *RunOptions
	w          workload.Workload
	script     ScriptWorkload // the workload of scripts (-f); nil: named statements
	mode       workload.Mode  // 0: the database's default
	proto      workload.Protocol
	plan       *engine.Plan
	thresholds []Threshold // parsed against the workload
	role       role
	agent      *agentSpec // --agent; nil: none
}

// resolveRun resolves o against w and checks every option (pgbench's
// controls, the mode and protocol, reconnect, thresholds, the log
// options, the scale-out role, the plan): a validated run, or a usage
// error (exit 2). It opens nothing: no database, no job record, no file.
// The shares of a scale-out run need the schema's scale and are checked
// once it is read (checkShares).
func resolveRun(env RunEnv, o *RunOptions, w workload.Workload) (*resolved, error) {
	mode, proto, err := resolveProtocol(env, o, w)
	if err != nil {
		return nil, err
	}
	sw, isScript := w.(ScriptWorkload)
	if err := o.pgbenchOptions(w); err != nil {
		return nil, err
	}
	if !o.SeedSet {
		o.Seed = rand.Uint64() >> 12 // short enough to type back in
	}
	reconnect, err := parseReconnect(o.Reconnect)
	if err != nil {
		return nil, Usagef("%v", err)
	}
	mw, mixed := w.(workload.Mixed)
	plan := &engine.Plan{
		// --vus 0 with analytic streams: the streams alone, on the
		// engine's clock (mixed.go).
		NoTerminals: mixed && mw.AnalyticStreams() > 0,
		VUs:         o.VUs, Connections: o.Connections, Rampup: o.Rampup, Duration: o.Duration, Iterations: o.Iterations,
		KeyingThinking: o.KeyingThinking, MaxRetries: o.MaxRetries, RaiseError: o.RaiseError,
		Seed: o.Seed, Mix: w.Mix(), Cost: !o.NoCost, ThreadCost: o.PerTypeCPU,
		Rate: o.Rate, LatencyLimit: time.Duration(o.LatencyLimit * float64(time.Millisecond)),
		StopTimeout: o.StopTimeout, Reconnect: reconnect, PerStatement: o.PerCommand && !isScript,
		TxTimeout: o.TxTimeout, ConnectPerTx: o.ConnectPerTx,
	}
	switch {
	case env.TryErrors != nil:
		plan.OnError = env.TryErrors(plan)
	case o.VerboseErrors:
		plan.OnError = verboseErrors(env.Stderr, plan.Mix, plan.MaxRetries, plan.LatencyLimit)
	}
	if o.StopTimeout == 0 {
		return nil, Usagef("--stop-timeout must be positive: nothing in sledge waits forever")
	}
	if mode != 0 {
		if err := workload.CheckMode(w, mode); err != nil {
			return nil, Usagef("%v", err)
		}
	}
	var thresholds []Threshold // parsed against the workload
	for _, a := range o.Thresholds {
		t, err := ParseThreshold(a, w)
		if err != nil {
			return nil, Usagef("%v", err)
		}
		thresholds = append(thresholds, t)
	}
	if err := plan.Validate(); err != nil {
		return nil, Usagef("%v", err)
	}
	if o.Progress < 0 {
		return nil, Usagef("--progress must not be negative")
	}
	if o.MetricsLinger != 0 && o.Metrics == "" {
		return nil, Usagef("--metrics-linger applies to --metrics")
	}
	role, err := o.checkCluster(env.Getenv)
	if err != nil {
		return nil, err
	}
	var agent *agentSpec
	if role != roleWorker { // a worker never reaches the agent: the coordinator does
		if agent, err = o.Agent.resolve(env.Getenv, o.NoCost); err != nil {
			return nil, err
		}
	}
	if role == roleWorker {
		// A worker shows nothing and records nothing (run drops env's
		// hooks): the coordinator does.
		o.Metrics, o.JSON, thresholds = "", true, nil
	}
	return &resolved{o: o, w: w, script: sw, mode: mode, proto: proto, plan: plan, thresholds: thresholds, role: role, agent: agent}, nil
}

// resolveProtocol resolves --mode and --protocol (pgbench's -M) against
// w: the mode of a workload of named statements (0: the database's
// default), the protocol of scripts (-f), which it hands the script.
func resolveProtocol(env RunEnv, o *RunOptions, w workload.Workload) (mode workload.Mode, proto workload.Protocol, err error) {
	if o.Mode != "" {
		m, err := workload.ParseMode(o.Mode)
		if err != nil {
			return 0, 0, Usagef("%v", err)
		}
		mode = m
	}
	sw, isScript := w.(ScriptWorkload)
	if o.Protocol != "" {
		p, ok := workload.ParseProtocol(o.Protocol)
		if !ok {
			return 0, 0, Usagef("--protocol %q: use simple, extended or prepared", o.Protocol)
		}
		proto = p
		if !isScript {
			// pgbench's -M on a workload of named statements: the mode
			// that travels the same way.
			var m workload.Mode
			switch p {
			case workload.ProtoSimple:
				m = workload.ModeClient
			case workload.ProtoPrepared:
				m = workload.ModePrepared
			default:
				return 0, 0, Usagef("--protocol extended applies to scripts (-f); %s takes --mode (%s)", w.Name(), workload.ModeList())
			}
			if mode != 0 && mode != m {
				return 0, 0, Usagef("--protocol %s and --mode %s disagree: give one of them", p, mode)
			}
			mode = m
			o.Protocol = "" // reported as the mode
		}
	}
	if isScript {
		if o.Mode != "" {
			return 0, 0, Usagef("--mode applies to workloads with named statements; scripts (-f) take --protocol simple, extended or prepared")
		}
		if proto == 0 {
			proto = workload.ProtoSimple // pgbench's default
		}
		if err := sw.CheckProtocol(proto); err != nil {
			return 0, 0, Usagef("%v", err)
		}
		sw.SetProtocol(proto)
		o.Protocol = proto.String()
		sw.SetPerCommand(o.PerCommand)
		sw.SetStderr(env.Stderr)
		if env.Script != nil {
			env.Script(sw)
		}
	}
	return mode, proto, nil
}

// opened is what a run opens before it executes: the metrics server, the
// database session, the transaction log and the server's side of the
// cost, closed in the reverse order by close, however the run ends.
type opened struct {
	ms     MetricsServer // --metrics: listening before anything runs
	s      *Session
	info   db.Info
	txl    *txlog.Log  // -l: opened once the database answers, as pgbench
	logErr error       // closing txl
	sc     *ServerCost // the server's side of the cost (servercost.go), set by executeRun
	mx     *mixedRun   // a mixed workload's analytic streams (mixed.go), set by executeRun
	agent  *agentConn  // --agent: reached and watching before anything else is opened
}

// open opens what rs needs: the metrics server, the database session
// (building the embedded default's schema when it has none), the
// transaction log; it records the run in the job and gives the plan its
// sessions' factory and the counters' probe.
func (op *opened) open(ctx context.Context, env RunEnv, rs *resolved, url string) error {
	o, w, plan := rs.o, rs.w, rs.plan
	isScript := rs.script != nil
	var err error
	if o.Metrics != "" && env.Metrics != nil {
		if op.ms, err = env.Metrics(o.Metrics, o.MetricsLinger, env.Stderr, o.JSON); err != nil {
			return err
		}
	}
	if isScript {
		op.s, err = OpenScriptSession(ctx, url, rs.proto, rs.script.NeedsPipelines())
	} else {
		op.s, err = OpenSession(ctx, url, workload.SQLName(w), rs.mode, !o.Explicit)
	}
	if err != nil {
		return err
	}
	s := op.s
	rs.mode = s.Mode
	if rs.agent != nil && rs.role != roleWorker {
		// Once the database answers, before anything is built or run:
		// an agent that does not answer or does not find the server
		// stops the run here.
		if op.agent, err = openAgent(ctx, env.Stderr, rs.agent, url, o.Agent.Stacks, o.StopTimeout); err != nil {
			return err
		}
	}
	if err := attachOrBuild(ctx, env, rs, s); err != nil {
		return err
	}
	if err := checkShares(o, rs.role, w); err != nil { // needs the schema's scale
		return err
	}
	if op.info, err = s.DB.Info(ctx); err != nil {
		return fmt.Errorf("database info: %w", err)
	}
	if op.txl, err = openTxLog(o, plan); err != nil {
		return err
	}
	env.Job.SetRun(op.info, rs.mode, o.VUs, o.Seed, w.Mix())
	op.connect(rs)
	return nil
}

// attachOrBuild reads w's schema through s; the embedded default database
// builds what a run needs when it has none.
func attachOrBuild(ctx context.Context, env RunEnv, rs *resolved, s *Session) error {
	o, w := rs.o, rs.w
	noSchema, err := s.Attach(ctx, w)
	if err == nil {
		return nil
	}
	if !noSchema {
		return fmt.Errorf("read schema: %w", err)
	}
	if rs.script != nil {
		how, note := Suggest("sledge build tpcb", s.Raw, o.Explicit)
		return fmt.Errorf("%v: run `%s` first%s", err, how, note)
	}
	if o.Explicit && !db.Ephemeral(s.DB) {
		return s.MissingSchemaErr(ctx, w, true)
	}
	// The embedded default, and an in-memory database (which starts
	// empty in every process), builds what it needs, and says so.
	fmt.Fprintf(env.Stderr, "no %s schema in %s yet: building one first\n", w.Name(), s.URL)
	meta, _ := workload.Lookup(w.Name())
	fresh, err := meta.Flags("build", pflag.NewFlagSet("", pflag.ContinueOnError))(1)
	if err != nil {
		return err
	}
	if err := env.Build(ctx, s, fresh); err != nil {
		return err
	}
	if err := w.Attach(ctx, s.Ctl); err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	return nil
}

// connect gives the plan its sessions' factory, its terminals and its
// probe of the database's counters at the edges of the measured interval.
func (op *opened) connect(rs *resolved) {
	o, w, plan, s := rs.o, rs.w, rs.plan, op.s
	isScript, mode, proto := rs.script != nil, rs.mode, rs.proto
	if fc, ok := s.DB.(db.FailClasser); ok {
		plan.ClassifyFailure = fc.FailClass
	}
	plan.Connect = func(ctx context.Context, vu int) (c workload.Conn, err error) {
		if isScript {
			c, err = s.DB.(db.ScriptDB).ConnectScript(ctx, proto)
		} else {
			c, err = s.DB.Connect(ctx, workload.SQLName(w), mode)
		}
		// -C: a session lives one transaction; asking each new one for
		// its server session would add a round trip to its connection.
		if err == nil && op.sc != nil && !o.ConnectPerTx {
			op.sc.Register(ctx, c)
		}
		return c, err
	}
	plan.Terminal = func(vu int) workload.Terminal { return w.NewTerminal(vu, o.VUs, o.Seed) }
	meter, _ := w.(workload.Meter)
	readCounters := func(ctx context.Context) (map[string]int64, error) {
		m := map[string]int64{}
		// The control session's own statements (schema checks, the last
		// reading) count before this reading, not inside the interval.
		if p, ok := s.Ctl.(workload.Publisher); ok {
			if _, _, err := p.Publish(ctx); err != nil {
				return nil, err
			}
		}
		if meter != nil {
			n, err := meter.Meter(ctx, s.Ctl)
			if err != nil {
				return nil, fmt.Errorf("%s counter: %w", meter.MeterName(), err)
			}
			m["meter"] = n
		}
		c, ok, err := s.DB.Counters(ctx)
		if err != nil {
			return nil, fmt.Errorf("database transaction counters: %w", err)
		}
		if ok {
			m["db_commits"], m["db_rollbacks"] = c.Commits, c.Rollbacks
		}
		if ws, ok := s.DB.(db.ServerWire); ok && plan.Cost {
			b, ok, err := ws.ServerBytes(ctx)
			if err != nil {
				return nil, fmt.Errorf("database byte counters: %w", err)
			}
			if ok {
				m["db_bytes_sent"], m["db_bytes_received"] = b.Sent, b.Received
			}
		}
		return m, nil
	}
	plan.Probe = func(ctx context.Context) (map[string]int64, error) {
		m, err := readCounters(ctx)
		// A server restart during the run took the control session and
		// the database package's pooled ones with it: each failed reading
		// reopens or discards one, so read again a few times.
		for try := 0; err != nil && ctx.Err() == nil && try < 3; try++ {
			if rerr := s.ReopenCtl(ctx, workload.SQLName(w), mode, proto, isScript, err); rerr != nil {
				return nil, err
			}
			m, err = readCounters(ctx)
		}
		if err == nil && op.sc != nil {
			op.sc.Edge(ctx)
		}
		return m, err
	}
}

// closeLog closes the transaction log once: the file is complete when the
// run returns, however it ends (Ctrl-C included).
func (op *opened) closeLog() {
	if op.txl != nil {
		op.logErr = op.txl.Close()
		op.txl = nil
	}
}

// close closes what open and executeRun opened, the last opened first; the
// metrics server stops after the summary is out.
func (op *opened) close(ctx context.Context) {
	if op.sc != nil {
		op.sc.Close()
	} else if op.agent != nil {
		_ = op.agent.watch.Close()
		op.agent.close()
	}
	if op.s != nil {
		op.s.Close(context.WithoutCancel(ctx))
	}
	if op.ms != nil {
		op.ms.Stop(ctx)
	}
	op.closeLog()
}

// executeRun shows what is about to run, runs the plan as the process's role
// says while it is shown and sampled, and records its end in the job. The
// result is nil when nothing was measured.
func executeRun(ctx context.Context, env RunEnv, rs *resolved, op *opened, url string) (*engine.Result, []WorkerJSON, error) {
	o, w, plan, s, info := rs.o, rs.w, rs.plan, op.s, op.info
	if !o.JSON {
		how := "mode " + rs.mode.String()
		if rs.script != nil {
			how = "protocol " + rs.proto.String()
		}
		if env.Header != nil {
			env.Header(w, s.URL, info, how)
		}
	}
	// A mixed workload's prelude (ch --validate) comes before anything
	// is shown or measured; a worker's coordinator has run it.
	if mw, ok := w.(workload.Mixed); ok && rs.role != roleWorker {
		if err := prelude(ctx, env, o, mw, s); err != nil {
			return nil, nil, err
		}
	}
	live := engine.NewLive(plan)
	if op.ms != nil {
		op.ms.Follow(env.Job.ID(), w, s.URL, live)
	}
	if plan.Cost && rs.role != roleWorker { // a worker's would be nobody's: the coordinator samples the server
		op.sc = NewServerCost(ctx, env.Stderr, s.DB, info, live, ServerCostOptions{Agent: op.agent,
			Stacks: o.Agent.Stacks, StopTimeout: o.StopTimeout, Workers: o.Cluster.Workers > 0})
		followSystem(op.sc, env.Job, op.ms) // system_follow.go
	}
	meter, _ := w.(workload.Meter)
	if mt, ok := w.(workload.MeterTxn); ok && meter != nil {
		env.Job.SetMeter(meter.MeterName(), mt.MeterKind())
	}
	env.Job.Sample(live)
	var stopDisplay func()
	if env.Display != nil {
		name, kind := "", -1
		if mt, ok := w.(workload.MeterTxn); ok && meter != nil {
			name, kind = meter.MeterName(), mt.MeterKind()
		}
		stopDisplay = env.Display(plan, live, name, kind)
	}
	conns := plan.VUs
	if plan.Connections > 0 {
		conns = plan.Connections
	}
	jobs := 0 // not given: LoopThreads picks
	if o.ThreadsSet {
		jobs = o.Threads
	}
	undoThreads, loops, raw := LoopThreads(conns, jobs, url, env.Getenv)
	if conns == 0 { // no terminal (a mixed workload's streams alone): no loop, no pinning
		loops, raw = 0, false
	}
	if loops > 0 {
		plan.Loops, plan.PinThreads, plan.LoopWait = loops, raw, LoopWait(url)
	} else {
		undoThreads, raw = ClientThreads(conns, url, env.Getenv)
		// Pinned only when each VU has its connection: thousands of mostly
		// idle terminals over shared connections must not hold a thread each.
		plan.PinThreads = raw && plan.Connections == 0
	}
	// A mixed workload's analytic streams (CH-benCHmark) run beside the
	// terminals: alone all of them, a worker its share, a coordinator
	// none (it merges its workers').
	k, n := 0, 1
	switch rs.role {
	case roleWorker:
		k, n = o.Cluster.WorkerIndex, o.Cluster.Workers
	case roleLocal, roleCoordinator:
		n = 0
	}
	op.mx = newMixed(w, k, n)
	if err := op.mx.open(ctx, s.DB); err != nil {
		undoThreads()
		if stopDisplay != nil {
			stopDisplay()
		}
		return nil, nil, err
	}
	res, workers, runErr := runPlan(ctx, env, o, rs.role, w, url, plan, live, op.sc, op.mx)
	undoThreads()
	if res != nil && res.LoopFallback != "" {
		fmt.Fprintf(env.Stderr, "sledge: loopwait=io_uring refused (%s): the event loops waited on epoll\n", res.LoopFallback)
	}
	op.closeLog()
	if op.logErr != nil && runErr == nil {
		runErr = op.logErr
	}
	if op.ms != nil {
		op.ms.Ended(res != nil)
	}
	env.Job.RunDone(res, plan.Mix)
	if stopDisplay != nil {
		stopDisplay()
	}
	return res, workers, runErr
}

// summarize is the run's summary: its figures, the workers of a
// scale-out run, the server's side of the cost and the thresholds judged.
func summarize(rs *resolved, op *opened, res *engine.Result, workers []WorkerJSON) *RunSummary {
	sum := Summarize(rs.w, op.s, op.info, rs.mode, rs.o, res)
	sum.Workers = workers
	sum.Analytic = op.mx.summary(res.MeasureStart, res.MeasureEnd)
	if sum.Analytic != nil && sum.PerTxn != nil && sum.PerTxn.ClientCPUUs != nil {
		// The process's CPU holds the streams' too: a figure that would
		// be wrong is not shown.
		p := sum.PerTxn
		p.ClientCPUUs, p.ContextSwitches, p.ClientCPUUserUs, p.ClientCPUSysUs, p.ClientRunQueueDelayUs = nil, nil, nil, nil, nil
		p.ClientCPUNote = mixedCPUNote
	}
	op.sc.Fill(sum, sum.Processed)
	sum.Thresholds = EvalThresholds(rs.thresholds, rs.w, sum)
	return sum
}

// verdict is the run's exit status once its summary is out: the run's
// own error, an interrupt (130), a missed threshold (99), failed
// transactions (3), or nil.
func verdict(stderr io.Writer, o *RunOptions, res *engine.Result, sum *RunSummary, runErr error) error {
	if runErr != nil {
		return runErr
	}
	if res.Interrupted {
		if !o.JSON {
			fmt.Fprintln(stderr, "sledge: interrupted; the summary covers what was measured until then")
		}
		return Silent{Code: ExitInterrupted}
	}
	// A missed threshold is the verdict the user asked for: it wins
	// over failed transactions (which a threshold can name: failed==0).
	if err := ThresholdErr(sum.Thresholds); err != nil {
		return err
	}
	return FailedTxErr(sum.Failed, sum.Processed)
}

// FailedTxErr is exit 3 when transactions failed with errors that were not
// retried (pgbench: "some clients failed"): the result is out already.
func FailedTxErr(failed, processed int64) error {
	if failed == 0 {
		return nil
	}
	return &ExitError{Code: ExitFailedTx, Err: fmt.Errorf("%s of %s transactions failed with errors that were not retried (listed in the result)",
		Thousands(failed), Thousands(failed+processed))}
}

// parseReconnect reads --reconnect: "off", or "FIRST,MAX" waits.
func parseReconnect(s string) (engine.Reconnect, error) {
	if s == "off" || s == "false" || s == "no" {
		return engine.Reconnect{Off: true}, nil
	}
	first, last, _ := strings.Cut(s, ",")
	var r engine.Reconnect
	var err error
	if r.Backoff, err = time.ParseDuration(strings.TrimSpace(first)); err != nil || r.Backoff <= 0 {
		return r, fmt.Errorf("--reconnect %q: want off, or FIRST,MAX waits such as 100ms,5s", s)
	}
	r.MaxBackoff = r.Backoff
	if last != "" {
		if r.MaxBackoff, err = time.ParseDuration(strings.TrimSpace(last)); err != nil || r.MaxBackoff < r.Backoff {
			return r, fmt.Errorf("--reconnect %q: want off, or FIRST,MAX waits with MAX at least FIRST, such as 100ms,5s", s)
		}
	}
	return r, nil
}

// ScriptWorkload is the workload of users' pgbench scripts (-f), with the
// options the CLI hands it before it attaches.
type ScriptWorkload interface {
	workload.Workload
	SetProtocol(workload.Protocol)
	CheckProtocol(workload.Protocol) error
	NeedsPipelines() bool
	SetPerCommand(bool)
	AddBuiltins(specs []string) error
	SetStderr(w io.Writer)
}

// pgbenchOptions checks pgbench's controls and sets the defaults that
// depend on the workload.
func (o *RunOptions) pgbenchOptions(w workload.Workload) error {
	if !o.RampupSet {
		// The workload's own: pgbench has no warm-up, HammerDB ramps up.
		meta, _ := workload.Lookup(w.Name())
		o.Rampup = meta.Rampup
	}
	switch {
	case o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0):
		return Usagef("--rate must be a positive number of transactions per second")
	case o.LatencyLimit < 0 || math.IsNaN(o.LatencyLimit) || math.IsInf(o.LatencyLimit, 0):
		return Usagef("--latency-limit must be a positive number of milliseconds")
	case o.Threads < 1:
		return Usagef("-j/--jobs must be at least 1")
	}
	return o.logOptions()
}

// logOptions checks pgbench's log options, as pgbench does.
func (o *RunOptions) logOptions() error {
	switch {
	case o.AggregateInterval < 0:
		return Usagef("--aggregate-interval must be a whole number of seconds, at least 1")
	case o.SamplingRate < 0 || o.SamplingRate > 1 || math.IsNaN(o.SamplingRate):
		return Usagef("invalid --sampling-rate %v: want a fraction above 0, at most 1", o.SamplingRate)
	case o.SamplingRate > 0 && !o.Log:
		return Usagef("log sampling (--sampling-rate) is allowed only when logging transactions (-l)")
	case o.AggregateInterval > 0 && !o.Log:
		return Usagef("log aggregation (--aggregate-interval) is allowed only when logging transactions (-l)")
	case o.SamplingRate > 0 && o.AggregateInterval > 0:
		return Usagef("log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot be used at the same time")
	case o.Log && o.LogPrefix == "":
		return Usagef("--log-prefix must not be empty")
	}
	if o.AggregateInterval > 0 && o.Iterations == 0 {
		agg := time.Duration(o.AggregateInterval) * time.Second
		if o.Duration < agg {
			return Usagef("number of seconds for aggregation (%d) must not be higher than test duration (%s)", o.AggregateInterval, o.Duration)
		}
		if o.Duration%agg != 0 {
			return Usagef("duration (%s) must be a multiple of aggregation interval (%d s)", o.Duration, o.AggregateInterval)
		}
	}
	return nil
}

// openTxLog opens the transaction log of -l, nil without.
func openTxLog(o *RunOptions, plan *engine.Plan) (*txlog.Log, error) {
	if !o.Log {
		return nil, nil
	}
	l, err := txlog.Open(txlog.Options{
		Prefix: o.LogPrefix, PID: os.Getpid(), VUs: plan.VUs, Aggregate: o.AggregateInterval,
		SampleRate: o.SamplingRate, Seed: o.Seed,
		Columns: txlog.Columns{Lag: plan.Rate > 0, Skipped: plan.LatencyLimit > 0, Retries: plan.MaxRetries != 0,
			FailuresDetailed: o.FailuresDetailed},
	})
	if err != nil {
		return nil, err
	}
	plan.TxLog = l
	return l, nil
}

// Thousands formats n with commas: 1234567 → 1,234,567.
func Thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
