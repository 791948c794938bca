package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
)

// runOpts are run's flags: the common ones and runner's RunOptions.
type runOpts struct {
	common
	runner.RunOptions
}

func newRun(env *Env) *cobra.Command {
	o := &runOpts{}
	cmd := &cobra.Command{
		Use:   "run [workload] [URL]",
		Short: "Drive a built schema with virtual users and report what was measured",
		Long: `Run virtual users against a built schema (default workload: tpcc).

pgbench: "sledge run tpcb" runs pgbench's builtins (-b tpcb-like,
simple-update, select-only; -b alone implies tpcb), and "sledge run -f
FILE[@W]" runs pgbench script files (-M simple|extended|prepared, -D
name=value). pgbench's -c -T -t -P -R -L -r work as in pgbench
(docs/pgbench.md). After --duration, --stop-timeout bounds the wait for
transactions in flight; a lost connection is reopened (--reconnect).

A timed run warms up for --rampup (not counted), then measures for
--duration; the transactions in flight at its end finish and count, as
pgbench's do. With --iterations N each virtual user runs N transactions
and the whole run is measured (HammerDB's test driver).

TPM is the database's commit and rollback counters over the measured
interval where they agree with sledge's own count within 2%; at both edges
the virtual users pause between two transactions while the counters are
read (PostgreSQL sessions publish theirs first). Otherwise (other sessions
busy, failed transactions) the headline is sledge's count and the summary
says why, with both figures (docs/databases.md).

Modes (--mode), each running the same transaction logic with the same inputs:
  procedure  one call of a server-side routine per transaction (default where supported)
  client     every statement its own round trip, values as literals in the SQL text
  prepared   every statement its own round trip as a prepared statement (SQLite default)
  batched    set-oriented prepared statements over all of an order's lines or a
             Delivery's districts: 10 round trips per New-Order (not tpcb; docs/modes.md)
  block      the routine's code sent as one anonymous block per transaction, parsed
             every time (PostgreSQL DO, MariaDB BEGIN NOT ATOMIC; docs/modes.md)
  pipeline   prepared's statements in groups: those whose inputs are known travel
             together, one round trip per group (PostgreSQL, MariaDB; docs/modes.md)

With no --db and no $SLEDGE_DB, the database is the embedded SQLite file
$XDG_DATA_HOME/sledge/<workload>.db (~/.local/share/sledge/tpcc.db); a
missing schema there is built first with one warehouse.

Ctrl-C or SIGTERM stops the run: no new transactions start, the ones in
flight finish, and the summary of what was measured is printed (exit 130).

--connections N lets N connections serve the --vus virtual users, as a
transaction monitor serves terminals: a virtual user takes a free
connection only for each transaction (after its keying time) and gives it
back before thinking, so thousands of virtual users with --keying-thinking
(TPC-C's terminals, idle most of the time) need only a few hundred
connections. The wait for a free connection is part of the latency and is
reported on its own. Default: each virtual user has its own connection.

The summary includes the cost per transaction (docs/cost.md): round trips
and bytes on the virtual users' connections, client CPU time and context
switches, and the server's side: its processes' CPU and context switches
when it runs on this machine, statements, parses and plans as it counts
them, and where the sessions wait (sampled every 100 ms on a connection of
its own). --no-cost turns the measuring off, to see what it costs;
--per-type-cpu adds CPU and context switches per transaction type.

--metrics HOST:PORT serves the run's live counters at /metrics in
Prometheus' text format while it runs, --no-job included: transactions,
rollbacks, errors and retries per type, and latency histograms over fixed
buckets that add up across load generators (docs/metrics.md). The server
stops with the run; --metrics-linger D serves the final counts D longer.
A malformed address is bad input (exit 2); a port in use, exit 1.`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			w, url, err := o.resolve(cmd, args, env)
			if err != nil {
				return err
			}
			o.Seed, o.SeedSet, o.Explicit, o.JSON = o.seed, o.seedSet, o.explicit, o.jsonOut
			if err := o.flagsSet(cmd, w); err != nil {
				return err
			}
			stopProfile, err := startCPUProfile(o.CPUProfile)
			if err != nil {
				return err
			}
			defer stopProfile()
			job, jenv, err := startJob(cmd, env, "run", w, url)
			if err != nil {
				return err
			}
			o.job = job
			return job.End(cmd.Context(), runRun(cmd.Context(), jenv, o, w, url))
		},
	}
	addCommon(cmd, &o.common, "run", 0)
	fs := cmd.Flags()
	fs.IntVarP(&o.VUs, "vus", "c", 1, "virtual users (terminals), each with its own connection unless --connections (pgbench -c)")
	fs.IntVar(&o.Connections, "connections", 0, "connections shared by the virtual users, at most --vus: each virtual user takes one only for each transaction; 0: one per virtual user")
	o.Rampup = 10 * time.Second
	fs.Var(secondsValue{&o.Rampup}, "rampup", "warm-up before the measured interval, not counted (default 10s for tpcc, 0 for tpcb and scripts)")
	fs.Lookup("rampup").DefValue = "0" // the usage gives the per-workload defaults
	o.Duration = time.Minute
	fs.VarP(secondsValue{&o.Duration}, "duration", "T", "measured interval: 30 (seconds), 90s, 5m (pgbench -T)")
	fs.IntVarP(&o.Iterations, "iterations", "t", 0, "transactions per virtual user instead of a timed run (pgbench -t)")
	fs.BoolVar(&o.KeyingThinking, "keying-thinking", false, "sleep TPC-C keying and think times around each transaction")
	fs.StringVar(&o.Mode, "mode", "", "procedure, client, prepared, batched, pipeline or block (default: procedure where the database has procedures)")
	fs.IntVar(&o.MaxRetries, "max-retries", 10, "retries of a transaction after a deadlock, serialization failure or lock timeout")
	fs.IntVar(&o.MaxTries, "max-tries", 0, "pgbench's form of --max-retries: tries in all, 1 = no retry")
	fs.Float64VarP(&o.Rate, "rate", "R", 0, "throttle to this many transactions per second in all, on a Poisson schedule; latency counts from the schedule (pgbench -R)")
	fs.Float64VarP(&o.LatencyLimit, "latency-limit", "L", 0, "count transactions slower than this many milliseconds as late; with --rate, skip those already that late (pgbench -L)")
	fs.BoolVarP(&o.PerCommand, "report-per-command", "r", false, "report the average latency and failures of every statement or script command (pgbench -r)")
	fs.StringVarP(&o.Protocol, "protocol", "M", "", "how script SQL travels: simple, extended or prepared (pgbench -M); for tpcb and tpcc, simple means --mode client and prepared --mode prepared")
	fs.StringVar(&o.RandomSeed, "random-seed", "", "pgbench's form of --seed: a number, time or rand")
	fs.DurationVar(&o.StopTimeout, "stop-timeout", engine.DefaultStopTimeout, "how long to wait after the end for transactions in flight; then they are cancelled and their virtual users reported stuck")
	fs.DurationVar(&o.TxTimeout, "tx-timeout", 5*time.Minute, "cancel a transaction (retries included) that runs longer than this, so an iterations run cannot wait forever on a server that stopped answering; 0: no limit")
	fs.StringVar(&o.Reconnect, "reconnect", "100ms,5s", "after a lost connection: off, or the first and the longest wait between attempts (doubling), as FIRST,MAX")
	fs.IntVarP(&o.Threads, "jobs", "j", 1, "accepted for pgbench command lines and ignored: virtual users are goroutines")
	fs.BoolVarP(&o.NoVacuum, "no-vacuum", "n", false, "accepted for pgbench command lines and ignored: sledge never vacuums or truncates before a run")
	_ = fs.MarkHidden("jobs")
	_ = fs.MarkHidden("no-vacuum")
	fs.BoolVar(&o.RaiseError, "raise-error", false, "stop a virtual user at its first failed transaction (HammerDB's raise-error)")
	fs.IntVarP(&o.Progress, "progress", "P", 0, "print a progress line to stderr every N seconds instead of the progress bar (pgbench -P); 0: off")
	fs.BoolVar(&o.NoCost, "no-cost", false, "do not measure the cost per transaction (round trips, bytes, CPU, context switches)")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of sledge itself to this file (go tool pprof reads it): where the client spends its time")
	fs.StringArrayVar(&o.Thresholds, "threshold", nil, "a pass/fail criterion on the result, as in k6: 'nopm>=10000', 'p95(new_order)<50ms', 'error_rate<0.01'; repeatable; a missed one exits 99 (docs/thresholds.md)")
	fs.StringVar(&o.Metrics, "metrics", "", "serve live Prometheus metrics at http://HOST:PORT/metrics while the run goes on, such as 127.0.0.1:9464, or :9464 on every interface (docs/metrics.md)")
	fs.DurationVar(&o.MetricsLinger, "metrics-linger", 0, "with --metrics: go on serving this long after the run, so that a last scrape reads its final counts")
	fs.BoolVar(&o.PerTypeCPU, "per-type-cpu", false, "also measure client CPU and context switches per transaction type, by holding each virtual user on its own OS thread (slows the client: see docs/cost.md)")
	return cmd
}

func runRun(ctx context.Context, env *Env, o *runOpts, w workload.Workload, url string) error {
	var mode workload.Mode
	if o.Mode != "" {
		m, err := workload.ParseMode(o.Mode)
		if err != nil {
			return usageErr("%v", err)
		}
		mode = m
	}
	sw, isScript := w.(scriptWorkload)
	var proto workload.Protocol
	if o.Protocol != "" {
		p, ok := workload.ParseProtocol(o.Protocol)
		if !ok {
			return usageErr("--protocol %q: use simple, extended or prepared", o.Protocol)
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
				return usageErr("--protocol extended applies to scripts (-f); %s takes --mode (%s)", w.Name(), workload.ModeList())
			}
			if mode != 0 && mode != m {
				return usageErr("--protocol %s and --mode %s disagree: give one of them", p, mode)
			}
			mode = m
			o.Protocol = "" // reported as the mode
		}
	}
	if isScript {
		if o.Mode != "" {
			return usageErr("--mode applies to workloads with named statements; scripts (-f) take --protocol simple, extended or prepared")
		}
		if proto == 0 {
			proto = workload.ProtoSimple // pgbench's default
		}
		if err := sw.CheckProtocol(proto); err != nil {
			return usageErr("%v", err)
		}
		sw.SetProtocol(proto)
		o.Protocol = proto.String()
		sw.SetPerCommand(o.PerCommand)
		sw.SetStderr(env.Stderr)
	}
	if err := o.pgbenchOptions(w); err != nil {
		return err
	}
	if !o.SeedSet {
		o.Seed = rand.Uint64() >> 12 // short enough to type back in
	}
	reconnect, err := parseReconnect(o.Reconnect)
	if err != nil {
		return usageErr("%v", err)
	}
	plan := &engine.Plan{
		VUs: o.VUs, Connections: o.Connections, Rampup: o.Rampup, Duration: o.Duration, Iterations: o.Iterations,
		KeyingThinking: o.KeyingThinking, MaxRetries: o.MaxRetries, RaiseError: o.RaiseError,
		Seed: o.Seed, Mix: w.Mix(), Cost: !o.NoCost, ThreadCost: o.PerTypeCPU,
		Rate: o.Rate, LatencyLimit: time.Duration(o.LatencyLimit * float64(time.Millisecond)),
		StopTimeout: o.StopTimeout, Reconnect: reconnect, PerStatement: o.PerCommand && !isScript,
		TxTimeout: o.TxTimeout,
	}
	if o.StopTimeout == 0 {
		return usageErr("--stop-timeout must be positive: nothing in sledge waits forever")
	}
	if mode != 0 {
		if err := workload.CheckMode(w, mode); err != nil {
			return usageErr("%v", err)
		}
	}
	var thresholds []runner.Threshold // parsed against the workload
	for _, a := range o.Thresholds {
		t, err := runner.ParseThreshold(a, w)
		if err != nil {
			return usageErr("%v", err)
		}
		thresholds = append(thresholds, t)
	}
	if err := plan.Validate(); err != nil {
		return usageErr("%v", err)
	}
	if o.Progress < 0 {
		return usageErr("--progress must not be negative")
	}
	var ms *metricsServer // --metrics: listening before anything runs
	switch {
	case o.Metrics != "":
		if ms, err = startMetrics(o.Metrics, o.MetricsLinger, env.Stderr, o.JSON); err != nil {
			return err
		}
		defer ms.stop(ctx) // last: after the summary is out
	case o.MetricsLinger != 0:
		return usageErr("--metrics-linger applies to --metrics")
	}
	var s *runner.Session
	if isScript {
		s, err = runner.OpenScriptSession(ctx, url, proto, sw.NeedsPipelines())
	} else {
		s, err = runner.OpenSession(ctx, url, w.Name(), mode, !o.Explicit)
	}
	if err != nil {
		return err
	}
	defer s.Close(context.WithoutCancel(ctx))
	mode = s.Mode

	if noSchema, err := s.Attach(ctx, w); err != nil {
		if !noSchema {
			return fmt.Errorf("read schema: %w", err)
		}
		if isScript {
			how, note := runner.Suggest("sledge build tpcb", s.Raw, o.Explicit)
			return fmt.Errorf("%v: run `%s` first%s", err, how, note)
		}
		if o.Explicit {
			return s.MissingSchemaErr(ctx, w, true)
		}
		// The embedded default builds what it needs, and says so.
		fmt.Fprintf(env.Stderr, "no %s schema in %s yet: building one first\n", w.Name(), s.URL)
		meta, _ := workload.Lookup(w.Name())
		fresh, err := meta.Flags("build", newFlagSet())(1)
		if err != nil {
			return err
		}
		if _, err := build(ctx, env, s, fresh, 1, defaultBuildVUs(), o.JSON); err != nil {
			return err
		}
		if err := w.Attach(ctx, s.Ctl); err != nil {
			return fmt.Errorf("read schema: %w", err)
		}
	}
	info, err := s.DB.Info(ctx)
	if err != nil {
		return fmt.Errorf("database info: %w", err)
	}
	o.job.SetRun(info, mode, o.VUs, o.Seed, w.Mix())

	var sc *runner.ServerCost // the server's side of the cost (servercost.go)
	plan.Connect = func(ctx context.Context, vu int) (c workload.Conn, err error) {
		if isScript {
			c, err = s.DB.(db.ScriptDB).ConnectScript(ctx, proto)
		} else {
			c, err = s.DB.Connect(ctx, w.Name(), mode)
		}
		if err == nil && sc != nil {
			sc.Register(ctx, c)
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
			if rerr := s.ReopenCtl(ctx, w.Name(), mode, proto, isScript, err); rerr != nil {
				return nil, err
			}
			m, err = readCounters(ctx)
		}
		if err == nil && sc != nil {
			sc.Edge(ctx)
		}
		return m, err
	}

	if !o.JSON {
		how := "mode " + mode.String()
		if isScript {
			how = "protocol " + proto.String()
		}
		fmt.Fprintf(env.Stderr, "running %s on %s (%s %s, %s): %s, %s, %s, seed %d\n",
			w.Name(), s.URL, info.Driver, info.Version, info.Transport, how, vusText(o.VUs, o.Connections), runner.ScaleText(w), o.Seed)
		hw, ok1 := w.(runner.HomeWarehouser)
		sc, ok2 := w.(workload.Scaler)
		if ok1 && ok2 {
			homes, _ := hw.HomeWarehouses(o.VUs)
			_, n := sc.Scale()
			if t := warehousesText(o.VUs, homes, n); t != "" {
				fmt.Fprintln(env.Stderr, t)
			}
			if t := terminalsNote(w.Name(), o.VUs, n); t != "" {
				fmt.Fprintln(env.Stderr, t)
			}
		}
	}
	live := engine.NewLive(plan)
	ms.follow(o.job.ID(), w, s.URL, live)
	if plan.Cost {
		sc = runner.NewServerCost(ctx, env.Stderr, s.DB, info, live)
		defer sc.Close()
	}
	if mt, ok := w.(workload.MeterTxn); ok && meter != nil {
		o.job.SetMeter(meter.MeterName(), mt.MeterKind())
	}
	o.job.Sample(live)
	var stopDisplay func()
	switch {
	case o.Progress > 0:
		name, kind := "", -1
		if mt, ok := w.(workload.MeterTxn); ok && meter != nil {
			name, kind = meter.MeterName(), mt.MeterKind()
		}
		stopDisplay = startProgressLines(env, time.Duration(o.Progress)*time.Second, live, name, kind)
	case !o.JSON:
		stopDisplay = startProgress(env, 10*time.Second, runRenderer(plan, live)).Stop
	}
	conns := plan.VUs
	if plan.Connections > 0 {
		conns = plan.Connections
	}
	undoThreads, raw := runner.ClientThreads(conns, url, env.Getenv)
	// Pinned only when each VU has its connection: thousands of mostly
	// idle terminals over shared connections must not hold a thread each.
	plan.PinThreads = raw && plan.Connections == 0
	res, runErr := engine.Run(ctx, plan, live)
	undoThreads()
	ms.ended(res != nil)
	o.job.RunDone(res, plan.Mix)
	if stopDisplay != nil {
		stopDisplay()
	}
	if res == nil {
		return runErr
	}
	sum := runner.Summarize(w, s, info, mode, &o.RunOptions, res)
	sc.Fill(sum, sum.Processed)
	sum.Thresholds = runner.EvalThresholds(thresholds, w, sum)
	o.job.SetSummary(sum)
	if o.JSON {
		if err := writeJSON(env.Stdout, sum); err != nil {
			return err
		}
	} else {
		printSummary(env.Stdout, sum)
	}
	if runErr != nil {
		return runErr
	}
	if res.Interrupted {
		if !o.JSON {
			fmt.Fprintln(env.Stderr, "sledge: interrupted; the summary covers what was measured until then")
		}
		return runner.Silent{Code: ExitInterrupted}
	}
	// A missed threshold is the verdict the user asked for: it wins
	// over failed transactions (which a threshold can name: failed==0).
	if err := runner.ThresholdErr(sum.Thresholds); err != nil {
		return err
	}
	return failedTxErr(sum.Failed, sum.Processed)
}

// failedTxErr is exit 3 when transactions failed with errors that were not
// retried (pgbench: "some clients failed"): the result is out already.
func failedTxErr(failed, processed int64) error {
	if failed == 0 {
		return nil
	}
	return &runner.ExitError{Code: ExitFailedTx, Err: fmt.Errorf("%s of %s transactions failed with errors that were not retried (listed in the result)",
		thousands(failed), thousands(failed+processed))}
}

func runRenderer(p *engine.Plan, live *engine.Live) func() (float64, string) {
	// The rate is over the last few seconds, so it follows the run live.
	var lastN int64
	lastT := time.Now()
	return func() (float64, string) {
		now := time.Now()
		phase, since := live.Phase()
		n := live.Completed()
		rate := 0.0
		if d := now.Sub(lastT); d > 0 {
			rate = float64(n-lastN) / d.Minutes()
		}
		if now.Sub(lastT) >= 2*time.Second {
			lastN, lastT = n, now
		}
		errs := ""
		if e := live.Errors(); e > 0 {
			errs = fmt.Sprintf(", %s errors", thousands(e))
		}
		if p.Iterations > 0 {
			total := int64(p.Iterations * p.VUs)
			return float64(n) / float64(total), fmt.Sprintf("%s: %s of %s transactions, %s TPM (client)%s",
				phase, thousands(n), thousands(total), thousands(int64(rate)), errs)
		}
		el := now.Sub(since)
		var frac float64
		var span time.Duration
		switch phase {
		case engine.PhaseRampup:
			span = p.Rampup
			frac = el.Seconds() / (p.Rampup + p.Duration).Seconds()
		case engine.PhaseMeasure:
			span = p.Duration
			frac = (p.Rampup + el).Seconds() / (p.Rampup + p.Duration).Seconds()
		default:
			return -1, fmt.Sprintf("%s: %s transactions", phase, thousands(n))
		}
		return frac, fmt.Sprintf("%s %.0fs/%.0fs: %s transactions, %s TPM (client)%s",
			phase, el.Seconds(), span.Seconds(), thousands(n), thousands(int64(rate)), errs)
	}
}

// secondsValue is a duration flag that also takes a plain number of
// seconds, as pgbench's -T does.
type secondsValue struct{ d *time.Duration }

func (v secondsValue) String() string {
	if v.d == nil {
		return ""
	}
	return v.d.String()
}

func (v secondsValue) Type() string { return "duration" }

func (v secondsValue) Set(s string) error {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		if n < 0 || n > 1e9 || math.IsNaN(n) {
			return errors.New("want a duration such as 30 (seconds), 90s or 5m")
		}
		*v.d = time.Duration(n * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration such as 30 (seconds), 90s or 5m")
	}
	*v.d = d
	return nil
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

// parseRandomSeed reads pgbench's --random-seed: a number, "time" or "rand".
func parseRandomSeed(s string) (uint64, error) {
	switch s {
	case "time":
		return uint64(time.Now().UnixNano()) >> 12, nil
	case "rand":
		return rand.Uint64() >> 12, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("--random-seed %q: want a whole number, time or rand", s)
	}
	return n, nil
}

// scriptWorkload is the workload of users' pgbench scripts (-f), with the
// options the CLI hands it before it attaches.
type scriptWorkload interface {
	workload.Workload
	SetProtocol(workload.Protocol)
	CheckProtocol(workload.Protocol) error
	NeedsPipelines() bool
	SetPerCommand(bool)
	AddBuiltins(specs []string) error
	SetStderr(w io.Writer)
}

// flagsSet applies what depends on which flags the user gave.
func (o *runOpts) flagsSet(cmd *cobra.Command, w workload.Workload) error {
	f := cmd.Flags()
	o.RampupSet = f.Changed("rampup")
	if f.Changed("duration") && f.Changed("iterations") {
		return usageErr("give either -T/--duration or -t/--iterations, not both (pgbench: specify either a number of transactions or a duration)")
	}
	if f.Changed("max-tries") && f.Changed("max-retries") {
		return usageErr("give either --max-tries or --max-retries, not both")
	}
	if f.Changed("max-tries") {
		switch {
		case o.MaxTries < 0:
			return usageErr("--max-tries must not be negative")
		case o.MaxTries == 0 && !f.Changed("duration") && o.LatencyLimit <= 0:
			return usageErr("--max-tries 0 (unlimited) needs -T/--duration or -L/--latency-limit, as in pgbench")
		case o.MaxTries == 0:
			o.MaxRetries = 1 << 30
		default:
			o.MaxRetries = o.MaxTries - 1
		}
	}
	if f.Changed("random-seed") {
		if f.Changed("seed") {
			return usageErr("give either --seed or --random-seed, not both")
		}
		n, err := parseRandomSeed(o.RandomSeed)
		if err != nil {
			return usageErr("%v", err)
		}
		o.Seed, o.SeedSet = n, true
	}
	if sw, ok := w.(scriptWorkload); ok {
		if f.Changed("builtin") {
			specs, _ := f.GetStringArray("builtin")
			if err := sw.AddBuiltins(specs); err != nil {
				return usageErr("%v", err)
			}
		}
		if err := sw.Validate(); err != nil { // weights, before anything is opened
			return usageErr("%v", err)
		}
	}
	return nil
}

// pgbenchOptions checks pgbench's controls and sets the defaults that
// depend on the workload.
func (o *runOpts) pgbenchOptions(w workload.Workload) error {
	if !o.RampupSet {
		// The workload's own: pgbench has no warm-up, HammerDB ramps up.
		meta, _ := workload.Lookup(w.Name())
		o.Rampup = meta.Rampup
	}
	switch {
	case o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0):
		return usageErr("--rate must be a positive number of transactions per second")
	case o.LatencyLimit < 0 || math.IsNaN(o.LatencyLimit) || math.IsInf(o.LatencyLimit, 0):
		return usageErr("--latency-limit must be a positive number of milliseconds")
	case o.Threads < 1:
		return usageErr("-j/--jobs must be at least 1")
	}
	return nil
}
