package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/spf13/cobra"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/workload"
)

type runOpts struct {
	common
	vus            int
	rampup         time.Duration
	duration       time.Duration
	iterations     int
	keyingThinking bool
	mode           string
	maxRetries     int
	raiseError     bool
	progress       int  // seconds between --progress lines; 0: the progress bar
	noCost         bool // --no-cost: measure no cost per transaction
	perTypeCPU     bool // --per-type-cpu: CPU and context switches per type
}

func newRun(env *Env) *cobra.Command {
	o := &runOpts{}
	cmd := &cobra.Command{
		Use:   "run [workload]",
		Short: "Drive a built schema with virtual users and report what was measured",
		Long: `Run virtual users against a built schema (default workload: tpcc).

A timed run warms up for --rampup (not counted), then measures for
--duration. With --iterations N each virtual user runs N transactions and
the whole run is measured (HammerDB's test driver).

Modes (--mode), each running the same transaction logic with the same inputs:
  procedure  one call of a server-side routine per transaction (default where supported)
  client     every statement its own round trip, values as literals in the SQL text
  prepared   every statement its own round trip as a prepared statement (SQLite default)

With no --db and no $SLEDGE_DB, the database is the embedded SQLite file
$XDG_DATA_HOME/sledge/<workload>.db (~/.local/share/sledge/tpcc.db); a
missing schema there is built first with one warehouse.

Ctrl-C or SIGTERM stops the run: no new transactions start, the ones in
flight finish, and the summary of what was measured is printed (exit 130).

The summary includes the cost per transaction (docs/cost.md): round trips
and bytes on the virtual users' connections, client CPU time and context
switches. --no-cost turns the measuring off, to see what it costs;
--per-type-cpu adds CPU and context switches per transaction type.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			w, url, err := o.resolve(cmd, args, env)
			if err != nil {
				return err
			}
			job, jenv := startJob(cmd, env, "run", w, url)
			o.job = job
			return job.end(cmd.Context(), runRun(cmd.Context(), jenv, o, w, url))
		},
	}
	addCommon(cmd, &o.common, "run", 0)
	fs := cmd.Flags()
	fs.IntVar(&o.vus, "vus", 1, "virtual users, each with its own connection")
	fs.DurationVar(&o.rampup, "rampup", 10*time.Second, "warm-up before the measured interval, not counted")
	fs.DurationVar(&o.duration, "duration", time.Minute, "measured interval")
	fs.IntVar(&o.iterations, "iterations", 0, "transactions per virtual user instead of a timed run")
	fs.BoolVar(&o.keyingThinking, "keying-thinking", false, "sleep TPC-C keying and think times around each transaction")
	fs.StringVar(&o.mode, "mode", "", "procedure, client or prepared (default: procedure where the database has procedures)")
	fs.IntVar(&o.maxRetries, "max-retries", 10, "retries of a transaction after a deadlock, serialization failure or lock timeout")
	fs.BoolVar(&o.raiseError, "raise-error", false, "stop a virtual user at its first failed transaction (HammerDB's raise-error)")
	fs.IntVar(&o.progress, "progress", 0, "print a progress line to stderr every N seconds instead of the progress bar (pgbench -P); 0: off")
	fs.BoolVar(&o.noCost, "no-cost", false, "do not measure the cost per transaction (round trips, bytes, CPU, context switches)")
	fs.BoolVar(&o.perTypeCPU, "per-type-cpu", false, "also measure client CPU and context switches per transaction type, by holding each virtual user on its own OS thread (slows the client: see docs/cost.md)")
	return cmd
}

func runRun(ctx context.Context, env *Env, o *runOpts, w workload.Workload, url string) error {
	var mode workload.Mode
	if o.mode != "" {
		m, err := workload.ParseMode(o.mode)
		if err != nil {
			return usageErr("%v", err)
		}
		mode = m
	}
	if !o.seedSet {
		o.seed = rand.Uint64() >> 12 // short enough to type back in
	}
	plan := &engine.Plan{
		VUs: o.vus, Rampup: o.rampup, Duration: o.duration, Iterations: o.iterations,
		KeyingThinking: o.keyingThinking, MaxRetries: o.maxRetries, RaiseError: o.raiseError,
		Seed: o.seed, Mix: w.Mix(), Cost: !o.noCost, ThreadCost: o.perTypeCPU,
	}
	if err := plan.Validate(); err != nil {
		return usageErr("%v", err)
	}
	if o.progress < 0 {
		return usageErr("--progress must not be negative")
	}
	s, err := openSession(ctx, url, w.Name(), mode, !o.explicit)
	if err != nil {
		return err
	}
	defer s.Close(context.WithoutCancel(ctx))
	mode = s.mode

	if noSchema, err := s.attach(ctx, w); err != nil {
		if !noSchema {
			return fmt.Errorf("read schema: %w", err)
		}
		if o.explicit {
			return noSchemaErr(w.Name(), s.url, true)
		}
		// The embedded default builds what it needs, and says so.
		fmt.Fprintf(env.Stderr, "no %s schema in %s yet: building one first\n", w.Name(), s.url)
		meta, _ := workload.Lookup(w.Name())
		fresh, err := meta.Flags("build", newFlagSet())(1)
		if err != nil {
			return err
		}
		if _, err := build(ctx, env, s, fresh, 1, defaultBuildVUs(), o.jsonOut); err != nil {
			return err
		}
		if err := w.Attach(ctx, s.ctl); err != nil {
			return fmt.Errorf("read schema: %w", err)
		}
	}
	info, err := s.db.Info(ctx)
	if err != nil {
		return fmt.Errorf("database info: %w", err)
	}
	o.job.setRun(info, mode, o.vus, o.seed, w.Mix())

	plan.Connect = func(ctx context.Context, vu int) (workload.Conn, error) {
		return s.db.Connect(ctx, w.Name(), mode)
	}
	plan.Terminal = func(vu int) workload.Terminal { return w.NewTerminal(vu, o.vus, o.seed) }
	meter, _ := w.(workload.Meter)
	plan.Probe = func(ctx context.Context) (map[string]int64, error) {
		m := map[string]int64{}
		if meter != nil {
			n, err := meter.Meter(ctx, s.ctl)
			if err != nil {
				return nil, fmt.Errorf("%s counter: %w", meter.MeterName(), err)
			}
			m["meter"] = n
		}
		c, ok, err := s.db.Counters(ctx)
		if err != nil {
			return nil, fmt.Errorf("database transaction counters: %w", err)
		}
		if ok {
			m["db_commits"], m["db_rollbacks"] = c.Commits, c.Rollbacks
		}
		if ws, ok := s.db.(db.ServerWire); ok && plan.Cost {
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

	if !o.jsonOut {
		fmt.Fprintf(env.Stderr, "running %s on %s (%s %s, %s): mode %s, %d virtual user%s, %s, seed %d\n",
			w.Name(), s.url, info.Driver, info.Version, info.Transport, mode, o.vus, plural(o.vus), scaleText(w), o.seed)
	}
	live := engine.NewLive(plan)
	o.job.sample(live)
	var stopDisplay func()
	switch {
	case o.progress > 0:
		name, kind := "", -1
		if mt, ok := w.(workload.MeterTxn); ok && meter != nil {
			name, kind = meter.MeterName(), mt.MeterKind()
		}
		stopDisplay = startProgressLines(env, time.Duration(o.progress)*time.Second, live, name, kind)
	case !o.jsonOut:
		stopDisplay = startProgress(env, 10*time.Second, runRenderer(plan, live)).Stop
	}
	res, runErr := engine.Run(ctx, plan, live)
	o.job.runDone(res, plan.Mix)
	if stopDisplay != nil {
		stopDisplay()
	}
	if res == nil {
		return runErr
	}
	sum := summarize(w, s, info, mode, o, res)
	o.job.setSummary(sum)
	if o.jsonOut {
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
		if !o.jsonOut {
			fmt.Fprintln(env.Stderr, "sledge: interrupted; the summary covers what was measured until then")
		}
		return errSilent{code: ExitInterrupted}
	}
	return nil
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
