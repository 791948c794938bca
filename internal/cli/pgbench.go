package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/db/postgres"
	"github.com/sledge-bench/sledge/internal/pgbench"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload/tpcb"
)

// pgbench's exit statuses (docs/contracts.md): 0 done; 1 bad options or a
// failed first connection; 2 errors during the run.
const (
	pgbExitOK     = 0
	pgbExitBad    = 1
	pgbExitErrors = 2
)

// pgbReport is what pgbench's report needs from the command line beyond
// the run's summary.
type pgbReport struct {
	threads  int
	maxTries int
	duration int  // -T; 0 for -t
	stddev   bool // pgbench prints the latency stddev with -P, -R or -L
	connect  bool // -C: the average connection time, tps including it
	debug    bool // -d: pgbench's lines of what each client does
	// setup is pgbench's setup connection (pgbSetup), once the run's
	// options are checked: pgbench's status when the run must not go on,
	// else -1.
	setup func() int
	// classified is set by the report: transactions failed, every one a
	// serialization failure or a deadlock, which pgbench 15 counts as
	// failed and still ends with 0 (it ends with 2 when a client aborts
	// on any other error).
	classified bool
	scripts    []pgbScript
}

func newPgbench(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "pgbench [pgbench options] [dbname]",
		Short: "pgbench's command line, report and exit codes, run by sledge",
		Long: `Run pgbench's command line (PostgreSQL 15) with sledge: the same options,
defaults, environment (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE) and
exit codes (0 done, 1 bad options or a failed first connection, 2 errors
during the run). pgbench's report comes first on stdout, line for line;
sledge's own additions follow after a line "--- sledge ---".

--db URL (sledge's) runs on any sledge database instead of the PostgreSQL
the libpq options name. See "sledge pgbench --help" and docs/pgbench.md for
every option and its status.`,
		DisableFlagParsing: true,
		SilenceErrors:      true,
		SilenceUsage:       true,
		RunE: func(cmd *cobra.Command, args []string) error {
			code := runPgbench(cmd, env, args)
			if code == 0 {
				return nil
			}
			return runner.Silent{Code: code}
		},
	}
}

// runPgbench runs a pgbench command line and returns pgbench's status.
func runPgbench(cmd *cobra.Command, env *Env, args []string) int {
	bad := func(err error) int {
		var ue *pgbUsageError
		if errors.As(err, &ue) {
			fmt.Fprintf(env.Stderr, "sledge pgbench: error: %s\n", ue.msg)
			if ue.detail != "" {
				fmt.Fprintf(env.Stderr, "sledge pgbench: detail: %s\n", ue.detail)
			}
			for _, l := range ue.errs {
				fmt.Fprintf(env.Stderr, "sledge pgbench: error: %s\n", l)
			}
			for _, l := range ue.raw {
				fmt.Fprintln(env.Stderr, l)
			}
			if ue.hint {
				fmt.Fprintln(env.Stderr, `sledge pgbench: hint: Try "sledge pgbench --help" for more information.`)
			}
			if ue.list {
				listBuiltins(env.Stderr)
			}
			return pgbExitBad
		}
		fmt.Fprintf(env.Stderr, "sledge pgbench: error: %s\n", oneLine(err.Error()))
		return pgbExitBad
	}
	c, err := readPgbench(args)
	if err != nil {
		return bad(err)
	}
	switch {
	case c.help:
		fmt.Fprint(env.Stdout, pgbHelp)
		return pgbExitOK
	case c.version:
		fmt.Fprintf(env.Stdout, "pgbench (sledge) %s\n", Version())
		return pgbExitOK
	case c.list:
		listBuiltins(env.Stderr)
		return pgbExitOK
	case c.showScript != "":
		name, err := findBuiltin(c.showScript)
		if err != nil {
			return bad(err)
		}
		fmt.Fprintf(env.Stderr, "-- %s: %s\n%s\n", name, pgbench.BuiltinDescription(name), pgbench.BuiltinText(name))
		return pgbExitOK
	}
	url, err := c.pgbURL(env.Getenv)
	if err != nil {
		return bad(err)
	}
	if !pgbSeed(env, c) {
		return pgbExitBad
	}
	if c.init {
		return pgbInit(cmd, env, c, url, bad)
	}
	sub := []string{"run", "script", "--db", url,
		"-c", fmt.Sprint(c.clients), "-j", fmt.Sprint(c.threads), "-M", c.protocol,
		"--max-tries", fmt.Sprint(c.maxTries)}
	if c.duration > 0 {
		sub = append(sub, "-T", fmt.Sprint(c.duration))
	} else {
		sub = append(sub, "-t", fmt.Sprint(c.txns))
	}
	// sledge numbers the files first, then the builtins: so does the
	// report.
	c.scripts = pgbFilesFirst(c.scripts)
	for _, s := range c.scripts {
		if s.builtin {
			sub = append(sub, "-b", s.spec)
		} else {
			sub = append(sub, "-f", s.spec)
		}
	}
	for _, d := range c.defines {
		sub = append(sub, "-D", d)
	}
	if c.progress > 0 {
		sub = append(sub, "-P", fmt.Sprint(c.progress))
	}
	if c.rate > 0 {
		sub = append(sub, "-R", fmt.Sprint(c.rate))
	}
	if c.latency > 0 {
		sub = append(sub, "-L", fmt.Sprint(c.latency))
	}
	if c.perCommand {
		sub = append(sub, "-r")
	}
	for _, f := range []struct {
		on   bool
		flag string
	}{{c.connect, "--connect"}, {c.detailed, "--failures-detailed"}, {c.verbose, "--verbose-errors"}, {c.timestamp, "--progress-timestamp"}} {
		if f.on {
			sub = append(sub, f.flag)
		}
	}
	if c.seed != "" {
		sub = append(sub, "--random-seed", c.seed)
	}
	if c.scaleSet {
		builtin := false
		for _, s := range c.scripts {
			builtin = builtin || s.builtin
		}
		switch {
		case builtin && !pgbPostgres(url):
			// pgbench counts pgbench_branches whenever a builtin runs; on
			// PostgreSQL its setup says so with the count (pgbSetup).
			fmt.Fprintln(env.Stderr, "sledge pgbench: warning: scale option ignored, using count from pgbench_branches table, as pgbench does")
		case !builtin:
			sub = append(sub, "--scale", fmt.Sprint(c.scale))
		}
	}
	for _, a := range c.logOpts {
		if a.name == "log" {
			sub = append(sub, "--log")
		} else {
			sub = append(sub, "--"+a.name+"="+a.value)
		}
	}
	if c.noJob {
		sub = append(sub, "--no-job")
	}
	renv := *env
	renv.IsTerminal = false // pgbench draws no progress bar
	// pgbench runs no more threads than clients.
	renv.pgb = &pgbReport{threads: min(c.threads, c.clients), maxTries: c.maxTries, duration: c.duration,
		stddev: c.progress > 0 || c.rate > 0 || c.latency > 0, scripts: c.scripts, connect: c.connect, debug: c.debug,
		setup: func() int { return pgbSetup(cmd, env, c, url, bad) }}
	code := sledgeSub(cmd, &renv, sub, func(err error) int {
		var ee *runner.ExitError
		if errors.As(err, &ee) && ee.Code == ExitFailedTx && renv.pgb.classified {
			return pgbExitOK
		}
		return bad(err)
	})
	if code == ExitFailedTx && renv.pgb.classified {
		return pgbExitOK
	}
	return pgbStatus(code)
}

// pgbInit is pgbench -i. On PostgreSQL it runs pgbench's steps as pgbench
// does (pgbInitPostgres); on sledge's other databases (--db) it is sledge
// drop tpcb, then sledge build tpcb, with pgbench's initialization options,
// which sledge build tpcb takes.
func pgbInit(cmd *cobra.Command, env *Env, c *pgbConfig, url string, bad func(error) int) int {
	steps, given, foreign := "dtgvp", false, false
	for _, a := range c.initOpts {
		switch a.name {
		case "init-steps":
			steps, given = a.value, true
		case "foreign-keys":
			foreign = true
		}
	}
	// A build loads the data once: -I with more loads (pgbench runs
	// -I dtgvpdtgvp) is one build for each, in order.
	segs := []string{steps}
	if given {
		if foreign && !strings.Contains(steps, "f") {
			steps += "f" // pgbench adds f at the end
		}
		segs = pgbLoadSegments(strings.ReplaceAll(steps, " ", ""))
	}
	if code, done := pgbInitPostgres(cmd, env, c, url, steps, foreign, bad); done {
		return code
	}
	build := []string{"build", "tpcb", "--db", url, "--scale", fmt.Sprint(max(c.scale, 1))}
	flags := newBuild(env).Flags()
	for _, a := range c.initOpts {
		if given && (a.name == "init-steps" || a.name == "foreign-keys") {
			continue // per build, below
		}
		name := a.name // the build flag of the same name
		f := flags.Lookup(name)
		if !pgbInitOnly[name] || f == nil {
			return bad(pgbErrf("option %s is not supported yet", pgbSpell(a.name)))
		}
		if f.Value.Type() == "bool" {
			build = append(build, "--"+name)
		} else {
			build = append(build, "--"+name, a.value)
		}
	}
	if c.noJob {
		build = append(build, "--no-job")
	}
	// pgbench prints its initialization's messages on stderr.
	ienv := *env
	ienv.Stdout, ienv.IsTerminal = env.Stderr, false
	// pgbench -i's step d (in its default steps) drops the old tables
	// first; sledge build refuses to load over a complete schema, so
	// sledge drop does it. Steps without d keep what is there, and the
	// build says so if it is complete.
	for _, seg := range segs {
		if strings.Contains(seg, "d") {
			if code := sledgeSub(cmd, &ienv, []string{"drop", "tpcb", "--db", url}, bad); code != 0 {
				return pgbStatus(code)
			}
		}
		args := build
		if given {
			args = append(slices.Clip(build), "--init-steps", seg)
		}
		if code := sledgeSub(cmd, &ienv, args, bad); code != 0 {
			return pgbStatus(code)
		}
	}
	return pgbExitOK
}

// pgbLoadSegments cuts -I's steps into runs with one load (g or G) each,
// one build each: a later load's run starts at the last d before it (its
// tables dropped and made again), else at the load itself.
func pgbLoadSegments(steps string) []string {
	var segs []string
	start, loaded := 0, -1 // loaded: where the current run's load is
	for i := 0; i < len(steps); i++ {
		if steps[i] != 'g' && steps[i] != 'G' {
			continue
		}
		if loaded < 0 {
			loaded = i
			continue
		}
		cut := i
		if k := strings.LastIndexByte(steps[loaded+1:i], 'd'); k >= 0 {
			cut = loaded + 1 + k
		}
		segs = append(segs, steps[start:cut])
		start, loaded = cut, i
	}
	return append(segs, steps[start:])
}

// sledgeSub runs a sledge command line with env and returns sledge's
// status; an error is printed as sledge pgbench's.
func sledgeSub(cmd *cobra.Command, env *Env, args []string, bad func(error) int) int {
	root := newRoot(cmd.Context(), env)
	root.SetArgs(args)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(cmd.Context())
	if err == nil {
		return ExitOK
	}
	var silent runner.Silent
	if !errors.As(err, &silent) {
		bad(err)
	}
	return exitCode(cmd.Context(), err)
}

// pgbStatus is pgbench's exit status for sledge's: bad input and failures
// to start are 1, failed transactions 2.
func pgbStatus(code int) int {
	switch code {
	case ExitOK:
		return pgbExitOK
	case ExitUsage, ExitFailure:
		return pgbExitBad
	case ExitFailedTx:
		return pgbExitErrors
	}
	return code
}

// findBuiltin is the builtin script's full name for a name or an
// unambiguous prefix, with pgbench's messages.
func findBuiltin(name string) (string, error) {
	var found []string
	for _, n := range pgbench.BuiltinNames() {
		if n == name {
			return n, nil
		}
		if strings.HasPrefix(n, name) {
			found = append(found, n)
		}
	}
	// pgbench lists its builtin scripts after either error.
	switch len(found) {
	case 0:
		return "", &pgbUsageError{msg: fmt.Sprintf("no builtin script found for name \"%s\"", name), list: true}
	case 1:
		return found[0], nil
	}
	return "", &pgbUsageError{msg: fmt.Sprintf("ambiguous builtin name: %d builtin scripts found for prefix \"%s\"", len(found), name), list: true}
}

// listBuiltins prints pgbench's list of builtin scripts (-b list).
func listBuiltins(out io.Writer) {
	width := 0
	for _, n := range pgbench.BuiltinNames() {
		width = max(width, len(n))
	}
	fmt.Fprintln(out, "Available builtin scripts:")
	for _, n := range pgbench.BuiltinNames() {
		fmt.Fprintf(out, "%*s: %s\n", width+2, n, pgbench.BuiltinDescription(n))
	}
	fmt.Fprintln(out)
}

// printPgbenchRun prints pgbench 15's report, line for line where sledge
// measures the figure, then sledge's additions after "--- sledge ---".
func printPgbenchRun(out io.Writer, s *runSummary, p *pgbReport, jobID int64) {
	fmt.Fprintf(out, "pgbench (sledge %s, server %s)\n", Version(), s.DBVersion)
	if s.MeasuredS == 0 {
		fmt.Fprintln(out, "nothing was measured: the run stopped before the measured interval began")
		return
	}
	fmt.Fprintf(out, "transaction type: %s\n", s.Script)
	if s.ScaleN != nil {
		fmt.Fprintf(out, "scaling factor: %d\n", *s.ScaleN)
	}
	fmt.Fprintf(out, "query mode: %s\n", s.Protocol)
	fmt.Fprintf(out, "number of clients: %d\n", s.VUs)
	fmt.Fprintf(out, "number of threads: %d\n", p.threads)
	if p.maxTries > 0 {
		fmt.Fprintf(out, "maximum number of tries: %d\n", p.maxTries)
	}
	if s.Iterations > 0 {
		fmt.Fprintf(out, "number of transactions per client: %d\n", s.Iterations)
		fmt.Fprintf(out, "number of transactions actually processed: %d/%d\n", s.Processed, s.Iterations*s.VUs)
	} else {
		fmt.Fprintf(out, "duration: %d s\n", p.duration)
		fmt.Fprintf(out, "number of transactions actually processed: %d\n", s.Processed)
	}
	pct := func(n int64) string { return pgbPercent(n, s) }
	p.classified = s.Failed > 0 && s.Failed == s.SerializationFailures+s.DeadlockFailures
	printPgbFailed(out, s)
	if p.maxTries != 1 {
		fmt.Fprintf(out, "number of transactions retried: %d (%s)\n", s.Retried, pct(s.Retried))
		fmt.Fprintf(out, "total number of retries: %d\n", s.Retries)
	}
	// pgbench stops here when no transaction succeeded or was skipped:
	// the rest would be meaningless.
	if s.Processed+s.Skipped > 0 {
		printPgbenchLatency(out, s, p)
	}

	fmt.Fprintln(out)
	fmt.Fprintln(out, "--- sledge ---")
	if jobID > 0 {
		fmt.Fprintf(out, "job %d\n", jobID)
	}
	if !printHead(out, s) {
		return
	}
	if !p.stddev {
		fmt.Fprintf(out, "latency stddev = %.3f ms\n", s.LatencyStddevMs)
	}
	fmt.Fprintf(out, "latency percentiles: p50 = %.3f ms, p90 = %.3f ms, p99 = %.3f ms, max = %.3f ms\n",
		s.P50Ms, s.P90Ms, s.P99Ms, s.MaxMs)
	fmt.Fprintln(out, "tps counted by sledge over the measured interval; the latency average is the mean of measured latencies; the initial connection time is the wall time until every client's connection was open (opened in parallel)")
	printBody(out, s)
	printTail(out, s)
}

// printPgbenchLatency prints the rest of pgbench's report: skipped and
// late transactions, latency, lag, connection time, tps and the scripts.
func printPgbenchLatency(out io.Writer, s *runSummary, p *pgbReport) {
	printSkippedLate(out, s)
	fmt.Fprintf(out, "latency average = %.3f ms\n", s.LatencyAvgMs)
	if p.stddev {
		fmt.Fprintf(out, "latency stddev = %.3f ms\n", s.LatencyStddevMs)
	}
	if s.LagAvgMs != nil {
		fmt.Fprintf(out, "rate limit schedule lag: avg %.3f (max %.3f) ms\n", *s.LagAvgMs, *s.LagMaxMs)
	}
	if p.connect {
		avg := 0.0
		if s.ConnectionAvgMs != nil {
			avg = *s.ConnectionAvgMs
		}
		fmt.Fprintf(out, "average connection time = %.3f ms\n", avg)
		fmt.Fprintf(out, "tps = %f (including reconnection times)\n", s.TPS)
	} else {
		fmt.Fprintf(out, "initial connection time = %.3f ms\n", s.InitialConnectionMs)
		fmt.Fprintf(out, "tps = %f (without initial connection time)\n", s.TPS)
	}
	printPgbenchScripts(out, s, p)
}

// printPgbenchScripts prints pgbench's per-script report (more than one
// script) and its statement latencies (-r), as pgbench 15 does.
func printPgbenchScripts(out io.Writer, s *runSummary, p *pgbReport) {
	// pgbench adds a column of retries when --max-tries is not 1; sledge
	// counts no retries per command, so its header stays the one without.
	header := "statement latencies in milliseconds and failures:"
	stmts := func(script string) {
		for _, st := range s.Statements {
			if st.Script != script {
				continue
			}
			fmt.Fprintf(out, "   %11.3f  %10d  %s\n", st.AvgMs, st.Failures, st.Name)
		}
	}
	if len(s.Types) <= 1 {
		if len(s.Statements) > 0 {
			fmt.Fprintln(out, header)
			stmts(s.Statements[0].Script)
		}
		return
	}
	weights := pgbWeights(p.scripts)
	total := 0
	for _, w := range weights {
		total += w
	}
	for i, t := range s.Types {
		fmt.Fprintf(out, "SQL script %d: %s\n", i+1, t.Name)
		if i < len(weights) && total > 0 {
			fmt.Fprintf(out, " - weight: %d (targets %.1f%% of total)\n", weights[i], 100*float64(weights[i])/float64(total))
		}
		share := 0.0
		if s.Processed > 0 {
			share = 100 * float64(t.Count) / float64(s.Processed)
		}
		tps := 0.0
		if s.MeasuredS > 0 {
			tps = float64(t.Count) / s.MeasuredS
		}
		fmt.Fprintf(out, " - %d transactions (%.1f%% of total, tps = %f)\n", t.Count, share, tps)
		pct := func(n int64) string { return pgbShare(n, t.Count+t.Errors) }
		fmt.Fprintf(out, " - number of failed transactions: %d (%s)\n", t.Errors, pct(t.Errors))
		if s.FailuresDetailed {
			fmt.Fprintf(out, " - number of serialization failures: %d (%s)\n", t.SerializationFailures, pct(t.SerializationFailures))
			fmt.Fprintf(out, " - number of deadlock failures: %d (%s)\n", t.DeadlockFailures, pct(t.DeadlockFailures))
		}
		if p.maxTries != 1 {
			fmt.Fprintf(out, " - number of transactions retried: %d (%s)\n", t.Retried, pct(t.Retried))
			fmt.Fprintf(out, " - total number of retries: %d\n", t.Retries)
		}
		if t.Count > 0 { // pgbench prints no latency for a script that never ran
			fmt.Fprintf(out, " - latency average = %.3f ms\n", t.MeanMs)
			fmt.Fprintf(out, " - latency stddev = %.3f ms\n", t.StddevMs)
		}
		if len(s.Statements) > 0 {
			fmt.Fprintln(out, " - "+header)
			stmts(t.Name)
		}
	}
}

// pgbHelp is `sledge pgbench --help`: pgbench 15's options, each with
// what sledge does with it.
const pgbHelp = `sledge pgbench runs pgbench's command line (PostgreSQL 15) with sledge.
(pgbench is the benchmarking tool for PostgreSQL that ships with PostgreSQL.)

Usage:
  sledge pgbench [OPTION]... [DBNAME]

Initialization options:
  (on PostgreSQL -i runs pgbench's steps and prints its lines; on other
  --db databases it runs "sledge build tpcb"; docs/pgbench.md)
  -i, --initialize         invokes initialization mode
  -I, --init-steps=[dtgGvpf]+  run selected initialization steps, in the order given
  -F, --fillfactor=NUM     set fill factor (PostgreSQL)
  -n, --no-vacuum          do not run vacuum after initialization
  -q, --quiet              quiet logging (one message each 5 seconds)
  -s, --scale=NUM          scaling factor
  --foreign-keys           create foreign key constraints between tables (PostgreSQL)
  --index-tablespace=TABLESPACE  create indexes in the specified tablespace (PostgreSQL)
  --partition-method=(range|hash)  partition pgbench_accounts with this method (PostgreSQL)
  --partitions=NUM         partition pgbench_accounts into NUM parts (PostgreSQL)
  --tablespace=TABLESPACE  create tables in the specified tablespace (PostgreSQL)
  --unlogged-tables        create tables as unlogged tables (PostgreSQL)

Options to select what to run:
  -b, --builtin=NAME[@W]   add builtin script NAME weighted at W (default: 1)
                           (use "-b list" to list available scripts)
  -f, --file=FILENAME[@W]  add script FILENAME weighted at W (default: 1)
  -N, --skip-some-updates  same as "-b simple-update"
  -S, --select-only        same as "-b select-only"

Benchmarking options:
  -c, --client=NUM         number of concurrent database clients (default: 1)
  -C, --connect            a new connection for every transaction
  -D, --define=VARNAME=VALUE
                           define variable for use by custom script
  -j, --jobs=NUM           on event loops (io=loop in --db's URL, or no io= and
                           at least 16 clients per core): threads, each driving
                           its share of the clients (&loopwait=epoll|io_uring:
                           how they wait); else accepted and reported
  -l, --log                write transaction times to log file
  -L, --latency-limit=NUM  count transactions lasting more than NUM ms as late
  -M, --protocol=simple|extended|prepared
                           protocol for submitting queries (default: simple)
  -n, --no-vacuum          do not run vacuum before tests (PostgreSQL)
  -P, --progress=NUM       show progress report every NUM seconds
  -r, --report-per-command report latencies and failures per command
  -R, --rate=NUM           target rate in transactions per second
  -s, --scale=NUM          report this scale factor in output
  -t, --transactions=NUM   number of transactions each client runs (default: 10)
  -T, --time=NUM           duration of benchmark test in seconds
  -v, --vacuum-all         vacuum all four standard tables before tests (PostgreSQL)
  --aggregate-interval=NUM aggregate data over NUM seconds
  --failures-detailed      count failures by class: serialization, deadlock
  --log-prefix=PREFIX      prefix for transaction time log file
                           (default: "pgbench_log")
  --max-tries=NUM          max number of tries to run transaction (default: 1)
  --progress-timestamp     progress lines start with the Unix time
  --random-seed=SEED       set random seed ("time", "rand", integer)
  --sampling-rate=NUM      fraction of transactions to log (e.g., 0.01 for 1%)
  --show-script=NAME       show builtin script code, then exit
  --verbose-errors         print the error of every failed or retried try

Common options:
  -d, --debug              print debugging output (each client's scripts,
                           meta-commands and SQL sent, on stderr)
  -h, --host=HOSTNAME      database server host or socket directory
  -p, --port=PORT          database server port number
  -U, --username=USERNAME  connect as specified database user
  -V, --version            output version information, then exit
  -?, --help               show this help, then exit

sledge's own:
  --db URL                 run on this sledge database (postgres://, mysql://, sqlite://)
                           instead of the PostgreSQL the options above name
  --no-job                 do not record the run in sledge's job store

pgbench's report comes first on stdout; sledge's additions follow after a
line "--- sledge ---" (docs/pgbench.md).

Report bugs to sledge's maintainers, with the command line and what it printed
(pgbench's own go to <pgsql-bugs@lists.postgresql.org>).
` + pgbExitHelp

// pgbExitHelp ends `sledge pgbench --help`: pgbench's exit statuses, not
// the other commands' table.
const pgbExitHelp = `
Exit status (pgbench's):
  0    done
  1    bad options or a failed first connection
  2    transactions failed during the run (the report is printed all the same)
  70   internal error in sledge (please report it)
  130  interrupted (Ctrl-C, SIGTERM, however many): what was measured until then is printed
       and saved; a third Ctrl-C stops without waiting for transactions in flight, and saves too
`

// pgbFilesFirst orders the scripts as sledge's script workload runs
// them: the files in their order, then the builtins in theirs.
func pgbFilesFirst(in []pgbScript) []pgbScript {
	var files, builtins []pgbScript
	for _, s := range in {
		if s.builtin {
			builtins = append(builtins, s)
		} else {
			files = append(files, s)
		}
	}
	return append(files, builtins...)
}

// pgbWeights are the scripts' weights, NAME@W (default 1).
func pgbWeights(scripts []pgbScript) []int {
	ws := make([]int, len(scripts))
	for i, s := range scripts {
		ws[i] = 1
		if k := strings.LastIndexByte(s.spec, '@'); k >= 0 {
			if n, err := strconv.Atoi(s.spec[k+1:]); err == nil {
				ws[i] = n
			}
		}
	}
	return ws
}

// pgbInitPostgres runs pgbench -i's steps on PostgreSQL in pgbench's order
// and words, on stderr as pgbench: done is false when url is not
// PostgreSQL's (the caller builds with sledge build then).
func pgbInitPostgres(cmd *cobra.Command, env *Env, c *pgbConfig, url, steps string, foreign bool, bad func(error) int) (code int, done bool) {
	if !pgbPostgres(url) {
		return 0, false
	}
	ctx := cmd.Context()
	d, err := runner.OpenDB(ctx, url)
	if err != nil {
		return bad(err), true
	}
	defer d.Close()
	pd, ok := d.(*postgres.DB)
	if !ok {
		return 0, false
	}
	o := tpcb.InitOptions{ForeignKeys: foreign}
	for _, a := range c.initOpts {
		n, _ := strconv.Atoi(a.value) // readPgbench checked the numbers
		switch a.name {
		case "fillfactor":
			o.Fillfactor = n
		case "quiet":
			o.Quiet = true
		case "unlogged-tables":
			o.Unlogged = true
		case "partitions":
			o.Partitions = n
		case "partition-method":
			o.PartitionMethod = a.value
		case "tablespace":
			o.Tablespace = a.value
		case "index-tablespace":
			o.IndexTablespace = a.value
		}
	}
	steps = strings.ReplaceAll(steps, " ", "")
	if c.noVacuum {
		steps = strings.ReplaceAll(steps, "v", "") // pgbench -i -n skips every v
	}
	if foreign && !strings.Contains(steps, "f") {
		steps += "f" // pgbench adds f at the end
	}
	scale := max(c.scale, 1)
	err = pd.RunPgbenchInit(ctx, postgres.PgbenchInit{Steps: steps, Scale: scale, Quiet: o.Quiet,
		Freeze: o.Partitions == 0, Partitions: o.Partitions, SQL: tpcb.PgbenchStepSQL(o, scale)}, env.Stderr)
	if err != nil && ctx.Err() != nil {
		// Ctrl-C or SIGTERM: sledge's 130, as for a run (docs/contracts.md).
		fmt.Fprintln(env.Stderr, "sledge pgbench: initialization interrupted")
		return ExitInterrupted, true
	}
	var se *postgres.PgbenchStepError
	if errors.As(err, &se) {
		fmt.Fprintf(env.Stderr, "sledge pgbench: error: %s\nsledge pgbench: detail: Query was: %s\n", oneLine(se.Error()), se.Query)
		return pgbExitBad, true
	}
	if err != nil {
		return bad(err), true
	}
	return pgbExitOK, true
}

// pgbPostgres tells whether url names a PostgreSQL database, without
// opening anything (opening another database may create it).
func pgbPostgres(url string) bool {
	u, err := db.ParseURL(url)
	return err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql")
}
