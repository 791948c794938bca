package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
)

// compareOpts are compare's flags: the common ones and runner's
// CompareOptions.
type compareOpts struct {
	common
	runner.CompareOptions
}

func newCompare(env *Env) *cobra.Command {
	o := &compareOpts{}
	cmd := &cobra.Command{
		Use:   "compare [workload] [URL]",
		Short: "Run a matrix of modes, transports and virtual users back to back, and compare them",
		Long: `Run every combination of --modes, --transports and --vus back to back on one
database (HammerDB's autopilot), each cell with the same ramp-up and
duration (or iterations) and the same seed, and print one table: NOPM, TPM,
New-Order p90, round trips, bytes and client CPU per transaction, and each
cell's NOPM as a ratio of the first cell's. --html FILE also writes one
self-contained report with charts that works offline (see docs/compare.md).

Each cell is a normal "sledge run", a job of its own in the job store; the
compare is a job too (kind compare) listing the cells' jobs, and recording
the seed every cell ran with (one picked when --seed is not given), so the
command "sledge jobs show ID" prints repeats the compare.

The options run has are spelled and read as in run: -c/--vus (a list
here), -T/--duration and --rampup in plain seconds or with a unit (60, 90s,
5m), -t/--iterations, -P/--progress (each cell's own progress lines), --mode
for --modes, --seed or --random-seed, --connections (the same for every
cell, so at most the smallest --vus), and the workload's run options such
as --all-warehouses, passed on to every cell.

compare ch (docs/ch.md) runs each cell three times: the terminals alone,
the --analytic-streams alone and both at once (default: 4 VUs and the
database's default mode), and sets NOPM, queries per hour and each query's
time with and without the other side side by side.

Transports: --db gives one. For the other:
  PostgreSQL  tcp URL + --socket DIR        unix: the same URL with host=DIR (and its port)
              unix URL (host=/dir) + --host H [--port N]   tcp: H:N (default port: the URL's, else 5432)
  MariaDB     tcp URL + --socket FILE       unix: the same URL with socket=FILE
              unix URL (socket=) + --host H [--port N]     tcp: H:N (default port: 3306)
  SQLite      embedded only
  DuckDB      embedded only
--host defaults to 127.0.0.1. User, password, database and other parameters
stay the same.

The whole matrix is checked before the first cell runs: every URL is
reached and every mode is supported there.

Ctrl-C interrupts the running cell (it keeps what it measured, as "sledge
run" does), starts no other, and prints the table of what was measured
(exit 130).

compare tpch compares databases instead: --db repeated, one cell per
database, each a "sledge run tpch" with the same run options (--test,
--streams, --params, --no-refresh, --queries, --explain) and seed:
  sledge compare tpch --db sqlite:///a.db --db postgres://u@h/tpch --test power
It prints one row per query (the power test's seconds; with --test
throughput, the mean over the streams), one column per database, the
composite figures and each database's ratio to the first; --html FILE
writes a report with a bar chart of every query. The matrix's flags
(--modes, --transports, --vus, --connections, -T, -t, --rampup, -P,
--socket, --host, --port) are not for tpch.`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			w, u, err := o.resolve(cmd, args, env)
			if err != nil {
				return err
			}
			job, jenv, err := startJob(cmd, env, "compare", w, u)
			if err != nil {
				return err
			}
			o.job = job
			o.CompareOptions.FlagsSet(cmd.Flags())
			o.CompareOptions.Seed, o.CompareOptions.SeedSet = o.common.Seed, o.common.SeedSet
			o.CompareOptions.Explicit, o.CompareOptions.JSON = o.common.Explicit, o.common.JSON
			return job.End(cmd.Context(), runCompare(cmd, jenv, o, w, u))
		},
	}
	addCommon(cmd, &o.common, "run", 0)
	// The options a run has too take the same spellings and values as in
	// run (docs/compare.md): -c, -T, -t, -P, plain seconds, --mode.
	runner.CompareFlags(cmd.Flags(), &o.CompareOptions)
	return cmd
}

// runCompare runs the compare through runner.Compare, with the terminal's
// header, cell lines, progress display and table.
func runCompare(cmd *cobra.Command, env *Env, o *compareOpts, w workload.Workload, rawURL string) error {
	var start time.Time
	var step atomic.Pointer[string] // an analytic cell's last step
	_, err := runner.Compare(cmd.Context(), runner.CompareEnv{Stderr: env.Stderr, Getenv: env.Getenv, Job: o.job, Outputs: env.Outputs,
		Header: func(w workload.Workload, url string, info db.Info, cells int, seed uint64) {
			fmt.Fprintf(env.Stderr, "comparing %s on %s (%s %s): %d cells, %s, seed %d\n", w.Name(), url,
				info.Driver, info.Version, cells, cellLength(o), seed)
		},
		AnalyticHeader: func(w workload.Workload, dbs []string, infos []db.Info, seed uint64) {
			fmt.Fprintf(env.Stderr, "comparing %s on %d database%s, seed %d\n", w.Name(), len(dbs), plural(len(dbs)), seed)
		},
		Cell: func(c *runner.CompareCell) func() {
			start = time.Now()
			if c.Database != "" { // an analytic workload's database
				if o.JSON {
					return nil
				}
				fmt.Fprintln(env.Stderr, c.What)
				step.Store(nil)
				return startProgress(env, 10*time.Second, func() (float64, string) {
					last := ""
					if s := step.Load(); s != nil {
						last = " · last: " + *s
					}
					return -1, fmt.Sprintf("%s: %s%s", c.What, seconds(time.Since(start)), last)
				}).Stop
			}
			if o.Progress > 0 {
				fmt.Fprintln(env.Stderr, c.What)
				return nil
			}
			if o.JSON {
				return nil
			}
			fmt.Fprintln(env.Stderr, c.What)
			total := o.Rampup + o.Duration
			return startProgress(env, 10*time.Second, func() (float64, string) {
				el := time.Since(start)
				if o.Iterations > 0 {
					return -1, fmt.Sprintf("%s: %s", c.What, seconds(el))
				}
				return el.Seconds() / total.Seconds(), fmt.Sprintf("%s: %s of %s", c.What, seconds(el), seconds(total))
			}).Stop
		},
		CellDone: func(c *runner.CompareCell) {
			if o.JSON {
				return
			}
			// A run prints warnings on stderr even with --json: pass them on
			// (-P passed them on as they came).
			if s := strings.TrimSpace(c.Warnings); s != "" && o.Progress == 0 {
				fmt.Fprintln(env.Stderr, s)
			}
			if c.Database != "" {
				fmt.Fprintf(env.Stderr, "  Power@Size %s, QphH@Size %s%s\n", figureText(c.Power), figureText(c.QphH), jobText(c.JobID))
				return
			}
			fmt.Fprintf(env.Stderr, "  %s, %s TPM%s\n", throughputText(c.NOPM), thousands(int64(c.TPM+0.5)), jobText(c.JobID))
		},
		AnalyticStep: func(_ *runner.CompareCell, line string) {
			s := strings.Join(strings.Fields(line), " ")
			step.Store(&s)
		},
		AnalyticResult: func(out *runner.AnalyticCompareJSON) error {
			if o.JSON {
				return writeJSON(env.Stdout, out)
			}
			printAnalyticCompare(env.Stdout, out)
			return nil
		},
		Result: func(out *compareJSON) error {
			if o.JSON {
				return writeJSON(env.Stdout, out)
			}
			printCompare(env.Stdout, out)
			return nil
		},
		Command: func(seed uint64) string { return runner.CompareCommand(cmd.Flags(), seed, nil) },
	}, &o.CompareOptions, w, rawURL)
	return err
}

// compare's result, its cells and mode pairs (runner's).
type (
	compareJSON  = runner.CompareJSON
	cellJSON     = runner.CellJSON
	modePairJSON = runner.ModePairJSON
)

func cellLength(o *compareOpts) string {
	if o.Iterations > 0 {
		return fmt.Sprintf("%d transactions per virtual user each", o.Iterations)
	}
	return fmt.Sprintf("%s ramp-up + %s each", seconds(o.Rampup), seconds(o.Duration))
}

func throughputText(nopm *float64) string {
	if nopm != nil {
		return thousands(int64(*nopm+0.5)) + " NOPM"
	}
	return "no NOPM"
}

func jobText(id int64) string {
	if id == 0 {
		return ""
	}
	return fmt.Sprintf(" (job %d)", id)
}

func printCompare(w io.Writer, c *compareJSON) {
	scale := ""
	if c.Scale != "" {
		scale = " · " + c.Scale
	}
	conns := ""
	if c.Connections > 0 {
		conns = fmt.Sprintf(" · virtual users over %d connection%s", c.Connections, plural(c.Connections))
	}
	fmt.Fprintf(w, "\n%s on %s %s%s%s · seed %d\n", c.Workload, c.Driver, c.DBVersion, scale, conns, c.Seed)
	if len(c.Cells) == 0 {
		fmt.Fprintln(w, "no cell was measured")
		return
	}
	p90 := "p90 ms"
	if c.P90Type != "" {
		p90 = c.P90Type + " p90 ms"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "mode\ttransport\tvus\tNOPM\tTPM\tsource\t%s\trt/txn\tbytes/txn\tcpu µs/txn\tserver cpu µs/txn\tratio\tjob\t\n", p90)
	for _, r := range c.Cells {
		cost := r.Cost()
		rt, bytes, cpu := "-", "-", "-"
		if cost != nil {
			rt = fmt.Sprintf("%.1f", cost.RoundTrips)
			bytes = thousands(int64(cost.BytesSent + cost.BytesReceived + 0.5))
			cpu = fmt.Sprintf("%.0f", cost.ClientCPUUs)
		}
		src := "db"
		if r.TPMSource != "database" {
			src = "client"
		}
		ratio, job := "-", "-"
		if r.Ratio != nil {
			ratio = fmt.Sprintf("%.2f", *r.Ratio)
		}
		if r.JobID != nil {
			job = strconv.FormatInt(*r.JobID, 10)
		}
		mark := ""
		if r.Interrupted {
			mark = " (interrupted)"
		}
		srv := "-"
		if v := r.ServerCPU(); v != nil {
			srv = fmt.Sprintf("%.0f", *v)
		}
		mode := r.Mode
		if r.Side != "" { // a mixed compare's side: oltp, analytic, both
			mode += " · " + r.Side
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s\t\n", mode, r.Transport, r.VUs, rate(r.NOPM),
			thousands(int64(r.TPM+0.5)), src, ms(r.P90Ms), rt, bytes, cpu, srv, ratio, job, mark)
	}
	tw.Flush()
	fmt.Fprintln(w, "NOPM from the database; TPM from the database's counters (db) or sledge's (client); rt, bytes and cpu")
	fmt.Fprintln(w, "per transaction, measured by the client (- when the run did not report them); server cpu: the server's")
	fmt.Fprintln(w, "processes on this machine, from /proc (- when remote or embedded); ratio: NOPM / the first cell's")
	printPairs(w, c.Pairs)
	printInterference(w, c.Interference)
	printJobLine(w, c.JobID)
}

// printInterference prints a mixed compare's sides (compare ch): NOPM
// with and without the analytic streams, queries per hour and each
// query's mean seconds with and without the terminals.
func printInterference(w io.Writer, groups []runner.InterferenceJSON) {
	num := func(p *float64, format string) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf(format, *p)
	}
	for _, g := range groups {
		fmt.Fprintf(w, "\nwhat each side costs the other: %s · %s · %d VU%s · %d stream%s\n", g.Mode, g.Transport, g.VUs, plural(g.VUs), g.Streams, plural(g.Streams))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "\talone\tboth\tboth / alone\t")
		fmt.Fprintf(tw, "NOPM (terminals)\t%s\t%s\t%s\t\n", rate(g.NOPMAlone), rate(g.NOPMWithAnalytic), num(g.NOPMRatio, "%.2f"))
		fmt.Fprintf(tw, "queries per hour (streams)\t%s\t%s\t%s\t\n", num(g.QphAlone, "%.1f"), num(g.QphWithTerminals, "%.1f"), num(g.QphRatio, "%.2f"))
		for _, q := range g.Queries {
			fmt.Fprintf(tw, "%s mean s\t%s\t%s\t%s\t\n", q.Query, num(q.AloneS, "%.3f"), num(q.WithTerminalsS, "%.3f"), num(q.SlowdownRatio, "%.2f"))
		}
		tw.Flush()
	}
	if len(groups) > 0 {
		fmt.Fprintln(w, "alone: the terminals without the streams, or the streams without the terminals; both: at once, on the same data")
		fmt.Fprintln(w, "(- where a query did not end inside a measured interval); NOPM from the database, query times measured by sledge")
	}
}

// printJobLine ends a command's text result with the job that keeps it,
// as run tpch's does ("job 12"); nothing with --no-job.
func printJobLine(w io.Writer, id int64) {
	if id > 0 {
		fmt.Fprintf(w, "job %d\n", id)
	}
}
