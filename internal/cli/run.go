package cli

import (
	"context"
	"fmt"
	"io"
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
	workerArgs []string // a local worker's arguments (--workers)
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
flight finish, and the summary of what was measured is printed and saved
(exit 130). A second one changes nothing; a third, or a second once
--stop-timeout has run out, stops without waiting for the transactions in
flight, and still prints and saves (docs/reliability.md).

--connections N lets N connections serve the --vus virtual users, as a
transaction monitor serves terminals: a virtual user takes a free
connection only for each transaction (after its keying time) and gives it
back before thinking, so thousands of virtual users with --keying-thinking
(TPC-C's terminals, idle most of the time) need only a few hundred
connections. The wait for a free connection is part of the latency and is
reported on its own. Default: each virtual user has its own connection.

The summary includes the cost per transaction (docs/cost.md): round trips
and bytes on the virtual users' connections, client CPU time and context
switches, and the server's side: its processes' CPU, context switches,
run-queue delay, bytes on its port and where its threads wait, read on
this machine when the server is local or through sledge agent on its host
(--agent HOST:PORT, checked before the run: exit 1 if it does not answer
or find the server), statements, parses and plans as it counts them, and
where the sessions wait (sampled every 100 ms, less often above 16
sessions, on a connection of its own);
sledge's own host too, with a warning when other processes kept it busy.
--no-cost turns the measuring off, to see what it costs; --per-type-cpu
adds CPU and context switches per transaction type.

--metrics HOST:PORT serves the run's live counters at /metrics in
Prometheus' text format while it runs, --no-job included: transactions,
rollbacks, errors and retries per type, and latency histograms over fixed
buckets that add up across load generators (docs/metrics.md). The server
stops with the run; --metrics-linger D serves the final counts D longer.
A malformed address is bad input (exit 2); a port in use, exit 1.

--workers N splits the run among N worker processes that run exactly the
virtual users one sledge would (TPC-C: contiguous warehouse ranges; tpcb
and scripts: contiguous client ranges), start together at the
coordinator's signal and send it their histograms every second; the result
is merged, with a line per worker (docs/workers.md). Alone, sledge starts
the N workers itself on this machine; --listen HOST:PORT waits for N
external ones (Kubernetes: :7077); --coordinator HOST:PORT makes this
process a worker (index: --worker-index, else $JOB_COMPLETION_INDEX). A
worker that vanishes is reported with the share of the run it missed
(exit 1); what it had sent is kept.

tpch (TPC-H-derived, docs/tpch.md) runs tests, not virtual users: --test
power|throughput|both (default both), --streams S (default the
specification's minimum), --params random|validation (either way, on a
database as built, with no refresh set applied since, the 22 validation
answers are checked against the references first), --no-refresh,
--queries 1,3,5-7, --explain. It prints Power@Size, Throughput@Size and
QphH@Size, each query's seconds per stream, and the refresh functions';
all are TPC-H-derived, never TPC-H results.

ch (CH-benCHmark, docs/ch.md) runs TPC-C's terminals (every option above)
and --analytic-streams S query streams (default 1), each running the 22
queries in its own order over and over, over the same measured interval:
NOPM and TPM as tpcc, and queries per hour with each query's times
(QphH-like, never TPC-H's QphH@Size). --vus 0 runs the streams alone;
--validate first checks the 22 answers of a fresh 1-warehouse build.`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			w, url, err := o.resolve(cmd, args, env)
			if err != nil {
				return err
			}
			o.Seed, o.SeedSet, o.Explicit, o.JSON = o.common.Seed, o.common.SeedSet, o.common.Explicit, o.common.JSON
			if err := o.FlagsSet(cmd.Flags(), w); err != nil {
				return err
			}
			stopProfile, err := startCPUProfile(o.CPUProfile)
			if err != nil {
				return err
			}
			defer stopProfile()
			if o.Cluster.Coordinator != "" {
				// A worker of a scale-out run: the coordinator records the job.
				return runRun(cmd.Context(), env, o, w, url)
			}
			o.workerArgs = runner.WorkerArgs(cmd.Flags(), args)
			// Bad input is refused before the job is recorded: a refused
			// command is not a job. On a copy: the check resolves options.
			dry := o.RunOptions
			if _, err := runner.Run(cmd.Context(), runner.RunEnv{Stderr: io.Discard, Getenv: env.Getenv, DryRun: true}, &dry, w, url); err != nil {
				return err
			}
			if env.pgb != nil && env.pgb.setup != nil {
				// sledge pgbench: pgbench's setup connection, after the
				// options are checked, as pgbench checks them first.
				if code := env.pgb.setup(); code >= 0 {
					return runner.Silent{Code: code}
				}
			}
			job, jenv, err := startJob(cmd, env, "run", w, url)
			if err != nil {
				return err
			}
			o.job = job
			return job.End(cmd.Context(), runRun(cmd.Context(), jenv, o, w, url))
		},
	}
	addCommon(cmd, &o.common, "run", 0)
	runner.RunFlags(cmd.Flags(), &o.RunOptions)
	return cmd
}

// runRun runs the run through runner.Run, with the terminal's header,
// progress display and summary.
func runRun(ctx context.Context, env *Env, o *runOpts, w workload.Workload, url string) error {
	_, err := runner.Run(ctx, runner.RunEnv{
		Stdout: env.Stdout, Stderr: env.Stderr, Getenv: env.Getenv, Job: o.job, WorkerArgs: o.workerArgs,
		TryErrors: pgbTryErrorsFor(env, o), Script: pgbScriptsFor(env),
		Build: func(ctx context.Context, s *runner.Session, w workload.Workload) error {
			_, err := runner.BuildSchema(ctx, buildEnv(env, nil), s, w, 1, defaultBuildVUs(), o.JSON)
			return err
		},
		Header: func(w workload.Workload, url string, info db.Info, how string) {
			if env.pgb != nil {
				return // sledge pgbench: pgbench says nothing before its report
			}
			if d, ok := w.(interface{ Describe(io.Writer) }); ok {
				fmt.Fprintf(env.Stderr, "running %s on %s (%s %s, %s): %s, seed %d: ",
					w.Name(), url, info.Driver, info.Version, info.Transport, runner.ScaleText(w), o.Seed)
				d.Describe(env.Stderr)
				fmt.Fprintln(env.Stderr)
				return
			}
			fmt.Fprintf(env.Stderr, "running %s on %s (%s %s, %s): %s, %s, %s, seed %d\n",
				w.Name(), url, info.Driver, info.Version, info.Transport, how, vusText(o.VUs, o.Connections), runner.ScaleText(w), o.Seed)
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
		},
		Display: func(plan *engine.Plan, live *engine.Live, name string, kind int) func() {
			switch {
			case o.Progress > 0 && env.pgb != nil:
				// sledge pgbench: pgbench's own lines.
				return runner.ProgressLines(env.Stderr, time.Duration(o.Progress)*time.Second, live, name, kind, o.ProgressTimestamp)
			case o.Progress > 0:
				return runner.RunProgressLines(env.Stderr, time.Duration(o.Progress)*time.Second, live, name, kind, o.ProgressTimestamp)
			case env.pgb != nil:
				return nil // sledge pgbench: no progress without -P, as pgbench
			case !o.JSON:
				// The last line covers the measured interval's end, which
				// the lines every 10 s would miss.
				return startProgress(env, 10*time.Second, runRenderer(plan, live)).StopWithLast
			}
			return nil
		},
		Result: func(sum *runner.RunSummary) error {
			if o.JSON {
				return writeJSON(env.Stdout, sum)
			}
			if env.pgb != nil {
				printPgbenchRun(env.Stdout, sum, env.pgb, o.job.ID())
				return nil
			}
			printSummary(env.Stdout, sum)
			printJobLine(env.Stdout, sum.JobID)
			return nil
		},
		Live: func(render func() (float64, string)) (func(string), func()) {
			p := startProgress(env, 10*time.Second, render)
			return p.Println, p.Stop
		},
		Report: func(res workload.AnalyticResult) error {
			if o.JSON {
				return writeJSON(env.Stdout, res)
			}
			res.WriteText(env.Stdout)
			return nil
		},
		Metrics: func(addr string, linger time.Duration, stderr io.Writer, quiet bool) (runner.MetricsServer, error) {
			m, err := startMetrics(addr, linger, stderr, quiet)
			if err != nil {
				return nil, err
			}
			return m, nil
		},
	}, &o.RunOptions, w, url)
	return err
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
		// The measured interval's lines count its transactions only, as
		// the summary does; ramp-up's say theirs are not counted.
		el := now.Sub(since)
		switch {
		case phase == engine.PhaseRampup:
			return el.Seconds() / (p.Rampup + p.Duration).Seconds(), fmt.Sprintf("ramp-up %.0fs/%.0fs: %s transactions, not measured, %s TPM (client)%s",
				el.Seconds(), p.Rampup.Seconds(), thousands(n), thousands(int64(rate)), errs)
		case phase == engine.PhaseMeasure:
			return (p.Rampup + el).Seconds() / (p.Rampup + p.Duration).Seconds(), fmt.Sprintf("measure %.0fs/%.0fs: %s transactions measured, %s TPM (client)%s",
				el.Seconds(), p.Duration.Seconds(), thousands(live.Measured()), thousands(int64(rate)), errs)
		case phase == engine.PhaseStop && live.Measured() > 0:
			// The end, the measured interval's last seconds included;
			// its length is the real one (shorter when interrupted).
			el = p.Duration
			if start, ok := live.MeasureStart(); ok {
				el = since.Sub(start)
			}
			m := live.Measured()
			return 1, fmt.Sprintf("measured %.0fs/%.0fs: %s transactions measured, %s TPM (client)%s",
				el.Seconds(), p.Duration.Seconds(), thousands(m), thousands(int64(float64(m)/max(el.Minutes(), 1e-9))), errs)
		}
		return -1, fmt.Sprintf("%s: %s transactions, none measured", phase, thousands(n))
	}
}

// pgbTryErrorsFor is sledge pgbench's words for the errors of tries
// (pgbTryErrors); nil for the other commands.
func pgbTryErrorsFor(env *Env, o *runOpts) func(*engine.Plan) func(engine.TryError) {
	if env.pgb == nil {
		return nil
	}
	return func(p *engine.Plan) func(engine.TryError) {
		return pgbTryErrors(env.Stderr, o.VerboseErrors, env.pgb.maxTries, p.LatencyLimit)
	}
}

// pgbScriptsFor is sledge pgbench's set-up of the scripts: \shell's
// output on stdout and -d's lines on stderr, as pgbench's; nil for the
// other commands.
func pgbScriptsFor(env *Env) func(runner.ScriptWorkload) {
	if env.pgb == nil {
		return nil
	}
	return func(sw runner.ScriptWorkload) {
		s, ok := sw.(interface {
			SetShellStdout(io.Writer)
			SetDebug(io.Writer, string)
		})
		if !ok {
			return
		}
		s.SetShellStdout(env.Stdout)
		if env.pgb.debug {
			s.SetDebug(env.Stderr, pgbPrefix+"debug: ")
		}
	}
}
