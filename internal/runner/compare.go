package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/jobs"
	"github.com/sledge-bench/sledge/internal/report"
	"github.com/sledge-bench/sledge/internal/workload"
)

// CompareOptions are a compare's options, typed: the command line's flags
// of `sledge compare` (CompareFlags), and what the command resolved
// before the compare (FlagsSet, the common options).
type CompareOptions struct {
	Modes       string // --modes (also --mode): a list, or all
	Transports  string // --transports: a list of tcp, unix
	VUs         string // -c/--vus: a list of counts
	Connections int    // --connections, passed on to every cell; 0: one per VU
	Rampup      time.Duration
	Duration    time.Duration
	Iterations  int
	Progress    int    // -P: seconds between each cell's progress lines; 0: the progress bar
	RandomSeed  string // --random-seed: pgbench's form of --seed, as in run
	Socket      string
	Host        string
	Port        int
	HTML        string       // --html FILE: also write the report there
	Agent       AgentOptions // --agent…, --stacks: every cell's run takes them (its own watch)
	// DBs are the --db URLs in the order given: compare tpch runs one cell
	// on each (compare_analytic.go); the matrix takes one.
	DBs []string

	// Resolved by the command before the compare.
	WorkloadOptions map[string]string // the workloads' run options given, passed on to every cell
	DurationSet     bool              // -T/--duration was given
	MatrixSet       []string          // the matrix's own flags given (--modes, --vus, …): not for an analytic workload
	RandomSeedSet   bool              // --random-seed was given
	Seed            uint64
	SeedSet         bool // --seed was given
	Explicit        bool // the user named the database (flag or SLEDGE_DB)
	// defaultMode: without --modes, the database's default mode alone
	// (a mixed compare's cells are three runs each).
	defaultMode bool
	JSON        bool // --json: print nothing but the result
}

// CompareFlags binds compare's options to fs, with their defaults: the
// command line's flags of `sledge compare`, whose long names are a spec's
// option names. The common ones (--db, --json, --seed, the workloads' run
// options, --jobs-db, --no-job) are bound by CommonFlags and the command
// line. The options a run has too take the same spellings and values as
// in run (docs/compare.md): -c, -T, -t, -P, plain seconds, --mode.
func CompareFlags(fs *pflag.FlagSet, o *CompareOptions) {
	fs.StringVar(&o.Modes, "modes", "", "comma-separated modes, or all: every mode the database and workload support (default: those of procedure, client, prepared); also --mode")
	fs.StringVar(&o.Transports, "transports", "", "comma-separated transports, tcp and unix (default: the --db URL's)")
	fs.StringVarP(&o.VUs, "vus", "c", "1,2,4,8", "comma-separated virtual user counts, each with its own connection unless --connections (pgbench -c)")
	fs.IntVar(&o.Connections, "connections", 0, "connections shared by each cell's virtual users, as in run; at most the smallest --vus; 0: one per virtual user")
	o.Rampup = 10 * time.Second
	fs.Var(SecondsFlag(&o.Rampup), "rampup", "warm-up of every cell before its measured interval, not counted: 10 (seconds), 90s, 5m")
	o.Duration = time.Minute
	fs.VarP(SecondsFlag(&o.Duration), "duration", "T", "measured interval of every cell: 30 (seconds), 90s, 5m (pgbench -T)")
	fs.IntVarP(&o.Iterations, "iterations", "t", 0, "transactions per virtual user in every cell instead of a timed run (pgbench -t)")
	fs.IntVarP(&o.Progress, "progress", "P", 0, "print each cell's progress line to stderr every N seconds instead of the progress bar (pgbench -P); 0: off")
	fs.StringVar(&o.RandomSeed, "random-seed", "", "pgbench's form of --seed: a number, time or rand")
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "mode" { // run's spelling
			name = "modes"
		}
		return pflag.NormalizedName(name)
	})
	fs.StringVar(&o.Socket, "socket", "", "unix socket for --transports unix when --db is a TCP URL (PostgreSQL: its directory; MariaDB: the socket file)")
	fs.StringVar(&o.Host, "host", "127.0.0.1", "host for --transports tcp when --db is a unix socket URL")
	fs.IntVar(&o.Port, "port", 0, "port for --transports tcp when --db is a unix socket URL (default: the URL's, else the database's usual port)")
	fs.StringVar(&o.HTML, "html", "", "also write a self-contained HTML report with charts to this file")
	AgentFlags(fs, &o.Agent)
	// --db (the common flag) repeats for compare tpch: one cell per database.
	if f := fs.Lookup("db"); f != nil {
		f.Value = &dbList{one: f.Value, list: &o.DBs}
		f.Usage += "; compare tpch: repeat it, one database per cell (--db A --db B)"
	}
}

// FlagsSet records which of compare's flags in f the user gave, and the
// workloads' run options given, which every cell takes. The checks are
// Compare's, once the job records it.
func (o *CompareOptions) FlagsSet(f *pflag.FlagSet) {
	o.DurationSet = f.Changed("duration")
	o.MatrixSet = nil
	for _, n := range matrixFlags {
		if f.Changed(n) {
			o.MatrixSet = append(o.MatrixSet, n)
		}
	}
	o.RandomSeedSet = f.Changed("random-seed")
	o.WorkloadOptions = map[string]string{}
	for _, n := range workload.Names() {
		m, _ := workload.Lookup(n)
		wfs := pflag.NewFlagSet(n, pflag.ContinueOnError)
		m.Flags("run", wfs)
		wfs.VisitAll(func(wf *pflag.Flag) {
			if g := f.Lookup(wf.Name); g != nil && g.Changed {
				o.WorkloadOptions[wf.Name] = g.Value.String()
			}
		})
	}
}

// CompareCell is one cell of a compare's matrix as CompareEnv's hooks see
// it.
type CompareCell struct {
	What      string // "cell 1/4: client · tcp · 2 VUs"
	Mode      workload.Mode
	Transport string
	VUs       int
	// Side is a mixed workload's cell (compare_mixed.go): "oltp" (the
	// terminals alone), "analytic" (the streams alone) or "both".
	Side string
	// Once measured (CompareEnv.CellDone):
	NOPM     *float64
	TPM      float64
	JobID    int64  // the cell's run's job; 0: none
	Warnings string // what the cell's run printed on stderr
	// An analytic workload's cell (tpch): its database and composite
	// figures, nil when not measured.
	Database string
	Power    *float64
	QphH     *float64
}

// CompareEnv is what a compare works with beside its options: where it
// writes, the job that records it, and the command line's hooks that show
// it.
type CompareEnv struct {
	Stderr  io.Writer
	Getenv  func(string) string
	Job     *JobRun  // the compare's job, nil when none (its cells are not recorded either)
	DryRun  bool     // stop once the options and lists are checked, before reaching a database
	Outputs []Output // passed on to every cell's run
	// Header shows the matrix about to run (not with --json): the
	// workload, the database (redacted), the number of cells and the seed.
	Header func(w workload.Workload, url string, info db.Info, cells int, seed uint64)
	// Cell shows a cell starting; it returns what stops showing it (nil:
	// nothing to stop).
	Cell func(c *CompareCell) (stop func())
	// CellDone shows a cell measured.
	CellDone func(c *CompareCell)
	// Result shows the result when any cell was measured or nothing
	// failed, before the HTML report is written.
	Result func(*CompareJSON) error
	// Command is the command line that repeats the compare with seed, for
	// the HTML report.
	Command func(seed uint64) string
	// AnalyticHeader shows a compare of an analytic workload (tpch) about
	// to run (not with --json): the workload, the databases (redacted) and
	// what each is, and the seed.
	AnalyticHeader func(w workload.Workload, dbs []string, infos []db.Info, seed uint64)
	// AnalyticResult shows an analytic compare's result, as Result does
	// the matrix's.
	AnalyticResult func(*AnalyticCompareJSON) error
	// AnalyticStep receives each step of an analytic cell's run as it
	// ends ("stream 0  Q14  0.0120 s  1 row"), from the run's goroutines.
	AnalyticStep func(c *CompareCell, line string)
}

// compareCell is one run of the matrix and what it measured.
type compareCell struct {
	CompareCell
	url string // raw: with the password
	res *cellRun
}

// Compare runs the matrix of o's modes, transports and virtual users of w
// on the database at url, each cell a run through Execute in this
// process, records it in env.Job and returns its result. Everything is
// checked before the first cell. The error carries the exit status
// (ExitCode): a bad matrix (2) before any cell, failed transactions in a
// cell (3) and an interrupted compare (130, Silent) with the result of
// what was measured.
func Compare(ctx context.Context, env CompareEnv, o *CompareOptions, w workload.Workload, rawURL string) (*CompareJSON, error) {
	if a, ok := w.(workload.Analytic); ok {
		if o.Agent != (AgentOptions{}) {
			return nil, Usagef("--agent and --stacks: not for %s, which runs its own tests", w.Name())
		}
		return nil, compareAnalytic(ctx, env, o, a, rawURL)
	}
	if len(o.DBs) > 1 {
		return nil, Usagef("compare %s takes one --db (its matrix is modes × transports × virtual users on one database); several --db are for compare tpch", w.Name())
	}
	mw, mixed := w.(workload.Mixed)
	if mixed {
		if err := mixedDefaults(o, mw); err != nil {
			return nil, err
		}
	}
	vus, err := parseVUList(o.VUs)
	if err != nil {
		return nil, err
	}
	// Every cell runs with the same --connections: checked against the
	// smallest count of virtual users.
	plan := &engine.Plan{VUs: slices.Min(vus), Connections: o.Connections, Rampup: o.Rampup, Duration: o.Duration,
		Iterations: o.Iterations, Mix: w.Mix()}
	if err := plan.Validate(); err != nil {
		return nil, Usagef("%v", err)
	}
	if o.HTML != "" {
		if st, err := os.Stat(filepath.Dir(o.HTML)); err != nil || !st.IsDir() {
			return nil, Usagef("--html %s: no directory %s to write it in", o.HTML, filepath.Dir(o.HTML))
		}
	}
	if o.Progress < 0 {
		return nil, Usagef("--progress must not be negative")
	}
	if o.DurationSet && o.Iterations > 0 {
		return nil, Usagef("give either -T/--duration or -t/--iterations, not both (pgbench: specify either a number of transactions or a duration)")
	}
	if o.RandomSeedSet {
		if o.SeedSet {
			return nil, Usagef("give either --seed or --random-seed, not both")
		}
		n, err := ParseRandomSeed(o.RandomSeed)
		if err != nil {
			return nil, Usagef("%v", err)
		}
		o.Seed, o.SeedSet = n, true
	}
	if !o.SeedSet {
		o.Seed = rand.Uint64() >> 12 // one seed for every cell: the same inputs
	}
	urls, err := TransportURLs(rawURL, o)
	if err != nil {
		return nil, err
	}
	agentSpec, err := o.Agent.resolve(env.Getenv, false)
	if err != nil {
		return nil, err
	}
	if env.DryRun {
		return nil, nil
	}
	// The job records the seed the cells run with, so that its command
	// line repeats the compare.
	env.Job.SetSeed(o.Seed)
	modes, info, err := validateMatrix(ctx, w, urls, o)
	if err != nil {
		return nil, err
	}
	if agentSpec != nil {
		// The agent must answer and find the server before the first
		// cell; each cell then opens a watch of its own.
		ac, err := openAgent(ctx, io.Discard, agentSpec, urls[0].URL, false, DefaultAgentTimeout)
		if err != nil {
			return nil, err
		}
		_ = ac.watch.Close()
		ac.close()
	}
	env.Job.SetMatrix(info, joinModes(modes))

	var cells []*compareCell
	for _, m := range modes {
		for _, t := range urls {
			for _, n := range vus {
				if mixed {
					// OLTP alone, the analytic streams alone, both
					// (compare_mixed.go).
					for _, side := range mixedSides {
						cells = append(cells, &compareCell{CompareCell: CompareCell{Mode: m, Transport: t.Transport, VUs: n, Side: side}, url: t.URL})
					}
					continue
				}
				cells = append(cells, &compareCell{CompareCell: CompareCell{Mode: m, Transport: t.Transport, VUs: n}, url: t.URL})
			}
		}
	}
	for i, c := range cells {
		c.What = fmt.Sprintf("cell %d/%d: %s · %s · %d VU%s", i+1, len(cells), c.Mode, c.Transport, c.VUs, plural(c.VUs))
		if c.Side != "" {
			c.What = fmt.Sprintf("cell %d/%d: %s · %s · %s", i+1, len(cells), c.Mode, c.Transport, sideText(c.Side, c.VUs, mixedStreams(mw)))
		}
	}
	if !o.JSON && env.Header != nil {
		env.Header(w, db.Redact(rawURL), info, len(cells), o.Seed)
	}
	done, interrupted, runErr := runCells(ctx, cells,
		func(c *compareCell) error { return runCell(ctx, env, o, w, c) },
		func(c *compareCell) (bool, bool) { return c.res != nil, c.res != nil && c.res.Interrupted })
	out := compareResult(w, rawURL, o, info, done, interrupted, env.Job)
	env.Job.SetSummary(out)
	if len(done) > 0 || runErr == nil {
		if env.Result != nil {
			if err := env.Result(out); err != nil {
				return out, err
			}
		}
		if o.HTML != "" && len(done) > 0 {
			command := ""
			if env.Command != nil {
				command = env.Command(o.Seed)
			}
			if err := writeReport(o.HTML, out, command); err != nil {
				return out, err
			}
			if !o.JSON {
				fmt.Fprintf(env.Stderr, "report written to %s\n", o.HTML)
			}
		}
	}
	if runErr != nil {
		return out, runErr
	}
	if interrupted {
		if !o.JSON {
			fmt.Fprintln(env.Stderr, "sledge: interrupted; the table covers the cells measured until then")
		}
		return out, Silent{Code: ExitInterrupted}
	}
	var failed, processed int64
	for _, c := range done {
		failed += c.res.Total.Errors
		processed += c.res.Total.Count
	}
	return out, FailedTxErr(failed, processed)
}

func joinModes(ms []workload.Mode) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = m.String()
	}
	return strings.Join(s, ",")
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func parseVUList(s string) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for _, p := range splitList(s) {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return nil, Usagef("--vus %s: %q is not a whole number of at least 1; use e.g. --vus 1,2,4,8", s, p)
		}
		if seen[n] {
			return nil, Usagef("--vus %s: %d is given twice", s, n)
		}
		seen[n] = true
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, Usagef("--vus is empty; use e.g. --vus 1,2,4,8")
	}
	return out, nil
}

// TransportURL is the database URL of one transport.
type TransportURL struct {
	Transport string
	URL       string
}

// TransportURLs returns the URL of every transport asked for, the --db
// URL's own first when it is asked for. See the command's help for what
// can be derived.
func TransportURLs(raw string, o *CompareOptions) ([]TransportURL, error) {
	u, err := db.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	scheme := strings.ToLower(u.Scheme)
	tr, _ := db.TransporterOf(scheme) // nil: a driver with no other transport
	own := ""
	if tr != nil {
		own = tr.Transport(u)
	}
	names := splitList(o.Transports)
	if len(names) == 0 {
		names = []string{own}
	}
	var out []TransportURL
	seen := map[string]bool{}
	for _, t := range names {
		t = strings.ToLower(t)
		if seen[t] {
			return nil, Usagef("--transports %s: %s is given twice", o.Transports, t)
		}
		seen[t] = true
		switch {
		case t == own:
			out = append(out, TransportURL{t, raw})
		case t != "tcp" && t != "unix" && t != "embedded":
			return nil, Usagef("--transports: unknown transport %q: use tcp or unix", t)
		case own == "embedded" || t == "embedded" || own == "":
			return nil, Usagef("--transports %s: %s URLs have only the %s transport", t, scheme, dash(own))
		case t == "unix":
			if o.Socket == "" {
				return nil, Usagef("--transports unix needs --socket PATH with a TCP --db URL (PostgreSQL: the socket directory; MariaDB/MySQL: the socket file)")
			}
			out = append(out, TransportURL{t, tr.UnixURL(u, o.Socket).String()})
		default:
			out = append(out, TransportURL{t, tr.TCPURL(u, o.Host, o.Port).String()})
		}
	}
	return out, nil
}

// validateMatrix reaches every URL and checks every mode there before the
// first cell runs, and returns the modes and the first URL's database.
func validateMatrix(ctx context.Context, w workload.Workload, urls []TransportURL, o *CompareOptions) ([]workload.Mode, db.Info, error) {
	var modes []workload.Mode
	seen := map[workload.Mode]bool{}
	all := strings.EqualFold(strings.TrimSpace(o.Modes), "all")
	for _, s := range splitList(o.Modes) {
		if all {
			break
		}
		m, err := workload.ParseMode(s)
		if err != nil {
			return nil, db.Info{}, Usagef("--modes: %v", err)
		}
		if seen[m] {
			return nil, db.Info{}, Usagef("--modes %s: %s is given twice", o.Modes, m)
		}
		seen[m] = true
		modes = append(modes, m)
	}
	var first db.Info
	for i, t := range urls {
		d, err := OpenDB(ctx, t.URL)
		if err != nil {
			return nil, db.Info{}, err
		}
		if len(modes) == 0 && o.defaultMode {
			modes = []workload.Mode{d.DefaultMode()}
		}
		if len(modes) == 0 {
			// The default: every mode this database supports of the three
			// of old; with --modes all, of every mode.
			candidates := []workload.Mode{workload.ModeProcedure, workload.ModeClient, workload.ModePrepared}
			if all {
				candidates = workload.Modes()
			}
			for _, m := range candidates {
				if d.Supports(workload.SQLName(w), m) == nil && workload.CheckMode(w, m) == nil {
					modes = append(modes, m)
				}
			}
		}
		for _, m := range modes {
			if err := workload.CheckMode(w, m); err != nil {
				_ = d.Close()
				return nil, db.Info{}, Usagef("--modes %s: %v", m, err)
			}
			if err := d.Supports(workload.SQLName(w), m); err != nil {
				_ = d.Close()
				return nil, db.Info{}, Usagef("--modes %s: %v", m, err)
			}
		}
		_ = d.Close()
		info, err := probeURL(ctx, w, t.URL, modes[0], o.Explicit)
		if err != nil {
			return nil, db.Info{}, fmt.Errorf("--transports %s: %w", t.Transport, err)
		}
		if info.Transport != t.Transport {
			return nil, db.Info{}, Usagef("--transports %s: %s connects over %s", t.Transport, db.Redact(t.URL), info.Transport)
		}
		if i == 0 {
			first = info
		}
	}
	return modes, first, nil
}

// probeURL connects, reads the database's description and, for a database
// the user named, checks that the schema is there.
func probeURL(ctx context.Context, w workload.Workload, raw string, m workload.Mode, explicit bool) (db.Info, error) {
	s, err := OpenSession(ctx, raw, workload.SQLName(w), m, false)
	if err != nil {
		return db.Info{}, err
	}
	defer s.Close(context.WithoutCancel(ctx))
	if explicit {
		// The embedded default builds its schema in the first cell.
		if noSchema, err := s.Attach(ctx, w); err != nil {
			if noSchema {
				return db.Info{}, NoSchemaErr(w.Name(), s.Raw, true)
			}
			return db.Info{}, fmt.Errorf("read schema: %w", err)
		}
	}
	info, err := s.DB.Info(ctx)
	if err != nil {
		return db.Info{}, fmt.Errorf("database info: %w", err)
	}
	return info, nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// runCells runs the cells in order until one fails or the compare is
// interrupted (Ctrl-C, or a cell that was), and returns those that
// measured something. state reports whether a cell has a result and
// whether it was interrupted.
func runCells[C any](ctx context.Context, cells []C, run func(C) error, state func(C) (measured, interrupted bool)) (done []C, interrupted bool, runErr error) {
	for _, c := range cells {
		if ctx.Err() != nil {
			interrupted = true
			break
		}
		if err := run(c); err != nil {
			runErr = err
			break
		}
		if _, in := state(c); in || ctx.Err() != nil {
			interrupted = true
			break
		}
	}
	for _, c := range cells {
		if m, _ := state(c); m {
			done = append(done, c)
		}
	}
	return done, interrupted, runErr
}

// execCell runs one cell's spec through Execute, in this process, as its
// own job (recorded in the compare's store, or not at all with it), after
// a garbage collection (the previous cell's garbage is not this one's to
// collect), between env.Cell's start and stop. A run that failed is an
// error with its last line; one that printed its --json result is read
// into res (measured). failedTxOK: exit 3 (failed transactions) still
// measured. interrupted: the cell was stopped (exit 130).
func execCell(ctx context.Context, env CompareEnv, cc *CompareCell, spec Spec, x Exec, stderr *bytes.Buffer, failedTxOK bool, res any) (jobID int64, measured, interrupted bool, err error) {
	x.Getenv, x.NoJob = env.Getenv, env.Job == nil
	if env.Job != nil {
		x.JobsDB = env.Job.StorePath()
	}
	var rec jobIDOutput
	x.Outputs = append([]Output{&rec}, env.Outputs...)
	var stop func()
	if env.Cell != nil {
		stop = env.Cell(cc)
	}
	runtime.GC()
	cellRes := Execute(ctx, spec, x)
	code := cellRes.Code
	if stop != nil {
		stop()
	}
	interrupted = code == ExitInterrupted
	if code != ExitOK && !interrupted && !(failedTxOK && code == ExitFailedTx) {
		why := lastLine(stderr.String())
		if why == "" {
			why = fmt.Sprintf("exit %d", code)
		}
		return 0, false, false, fmt.Errorf("%s failed: %s", cc.What, strings.TrimPrefix(why, "sledge: "))
	}
	if err := json.Unmarshal(cellRes.JSON, res); err != nil {
		if interrupted {
			return 0, false, true, nil // stopped before it printed anything: nothing measured
		}
		return 0, false, false, fmt.Errorf("%s: read its --json result: %w", cc.What, err)
	}
	return rec.id.Load(), true, interrupted, nil
}

// runCell runs one cell as `sledge run … --json` would, in this process,
// through Execute: a normal run with its own job, whose JSON carries
// whatever a run reports. This process does nothing else while a cell
// runs, so the run's client CPU (the process's) is the cell's.
func runCell(ctx context.Context, env CompareEnv, o *CompareOptions, w workload.Workload, c *compareCell) error {
	spec := Spec{Version: SpecVersion, Kind: "run", Workload: w.Name(), Options: map[string]any{
		"mode": c.Mode.String(), "vus": c.VUs, "seed": strconv.FormatUint(o.Seed, 10)}}
	if o.Explicit {
		spec.DB = c.url
	}
	if o.Iterations > 0 {
		spec.Options["iterations"] = o.Iterations
	} else {
		spec.Options["rampup"], spec.Options["duration"] = o.Rampup.String(), o.Duration.String()
	}
	if o.Progress > 0 {
		spec.Options["progress"] = o.Progress
	}
	if o.Connections > 0 {
		spec.Options["connections"] = o.Connections
	}
	for k, v := range o.WorkloadOptions {
		spec.Options[k] = v
	}
	// Each cell is a run with its own watch of the server (the token
	// comes from the file or $SLEDGE_AGENT_TOKEN, never into the spec).
	for k, v := range map[string]string{"agent": o.Agent.Addr, "agent-token-file": o.Agent.TokenFile,
		"agent-target": o.Agent.Target, "agent-ca": o.Agent.CAFile} {
		if v != "" {
			spec.Options[k] = v
		}
	}
	if o.Agent.Stacks {
		spec.Options["stacks"] = true
	}
	sideOptions(spec.Options, c.Side) // over the workload's options given
	var stderr bytes.Buffer
	x := Exec{Stderr: &stderr}
	if o.Progress > 0 {
		// -P: the cell's own progress lines, as they come.
		x.Stderr = io.MultiWriter(&stderr, env.Stderr)
	}
	// Exit 3 is a cell measured to its end with failed transactions: its
	// result counts, and compare exits 3 after the table.
	var res cellRun
	jobID, measured, interrupted, err := execCell(ctx, env, &c.CompareCell, spec, x, &stderr, true, &res)
	if err != nil || !measured {
		return err
	}
	res.Interrupted = interrupted
	c.res = &res
	c.JobID = jobID
	c.NOPM, c.TPM, c.Warnings = res.NOPM, res.TPM, stderr.String()
	if env.CellDone != nil {
		env.CellDone(&c.CompareCell)
	}
	return nil
}

// jobIDOutput learns the job id a cell's run was recorded as.
type jobIDOutput struct{ id atomic.Int64 }

func (o *jobIDOutput) Start(j Job)            { o.id.Store(j.ID) }
func (o *jobIDOutput) Tick(int64, Tick)       {}
func (o *jobIDOutput) End(id int64, _ Result) { o.id.Store(id) }

// cellRun is the part of a run's --json summary compare reads.
type cellRun struct {
	Database    string          `json:"database_url"`
	Driver      string          `json:"driver"`
	DBVersion   string          `json:"db_version"`
	Transport   string          `json:"transport"`
	Scale       string          `json:"scale_text"`
	MeasuredS   float64         `json:"measured_s"`
	Interrupted bool            `json:"interrupted"`
	NOPM        *float64        `json:"nopm"`
	TPM         float64         `json:"tpm"`
	TPMSource   string          `json:"tpm_source"`
	Total       TxJSON          `json:"total"`
	PerTxn      json.RawMessage `json:"per_txn"`
	LatencyAvg  float64         `json:"latency_avg_ms"`
	Server      json.RawMessage `json:"server_per_txn"`
	Waits       json.RawMessage `json:"server_waits"`
	// Issue 25: the sampler's figures, passed to the cell as they are.
	Threads    json.RawMessage   `json:"server_threads"`
	ServerHost json.RawMessage   `json:"server_host"`
	ClientHost json.RawMessage   `json:"client_host"`
	Agent      json.RawMessage   `json:"agent"`
	Stacks     json.RawMessage   `json:"server_stacks"`
	Types      []TxJSON          `json:"types"`
	Settings   map[string]string `json:"db_settings"`
	Analytic   *MixedJSON        `json:"analytic"` // a mixed workload's streams (mixed.go)
}

// p90 is the p90 of type head (the one the workload's headline counts:
// TPC-C's New-Order), else of its first type, and that type's name.
func (r *cellRun) p90(head string) (float64, string) {
	for _, t := range r.Types {
		if t.Name == head {
			return t.P90Ms, t.Name
		}
	}
	if len(r.Types) > 0 {
		return r.Types[0].P90Ms, r.Types[0].Name
	}
	return 0, ""
}

// throughput is what the ratio compares: NOPM, else TPM.
func (r *cellRun) throughput() float64 {
	if r.NOPM != nil {
		return *r.NOPM
	}
	return r.TPM
}

// CompareJSON is compare's result: --json, the job's summary, the report.
type CompareJSON struct {
	Cells []CellJSON `json:"cells"`
	// Interference is a mixed workload's compare (compare_mixed.go): what
	// the terminals and the analytic streams cost each other.
	Interference []InterferenceJSON `json:"interference,omitempty"`
	// Pairs sets every two cells that differ only in mode side by side.
	Pairs       []ModePairJSON    `json:"mode_pairs"`
	Workload    string            `json:"workload"`
	Database    string            `json:"database"`
	Driver      string            `json:"driver,omitempty"`
	DBVersion   string            `json:"db_version,omitempty"`
	Scale       string            `json:"scale,omitempty"`
	Seed        uint64            `json:"seed"`
	RampupS     float64           `json:"rampup_s"`
	DurationS   float64           `json:"duration_s"`
	Iterations  int               `json:"iterations,omitempty"`
	Connections int               `json:"connections,omitempty"` // --connections of every cell; absent: one per VU
	P90Type     string            `json:"p90_type,omitempty"`
	Interrupted bool              `json:"interrupted"`
	JobID       int64             `json:"job_id,omitempty"`
	Settings    map[string]string `json:"db_settings,omitempty"`
	Host        jobs.Host         `json:"host"`
}

// CellJSON is one cell of a compare's result.
type CellJSON struct {
	// Side and Analytic: a mixed workload's cell (compare_mixed.go).
	Side         string          `json:"side,omitempty"`
	Analytic     *MixedJSON      `json:"analytic,omitempty"`
	Mode         string          `json:"mode"`
	Transport    string          `json:"transport"`
	VUs          int             `json:"vus"`
	NOPM         *float64        `json:"nopm"`
	TPM          float64         `json:"tpm"`
	PerTxn       json.RawMessage `json:"per_txn"` // as the run reported it; null when it did not
	JobID        *int64          `json:"job_id"`  // null with --no-job
	TPMSource    string          `json:"tpm_source"`
	P90Ms        float64         `json:"p90_ms"`
	Ratio        *float64        `json:"ratio"` // throughput / the first cell's; null when that is 0
	Database     string          `json:"database"`
	MeasuredS    float64         `json:"measured_s"`
	Transactions int64           `json:"transactions"`
	Errors       int64           `json:"errors"`
	Interrupted  bool            `json:"interrupted"`
	// The server's side as the run reported it (servercost.go), and the
	// mean latency the report's split of a transaction's time needs.
	LatencyAvgMs float64         `json:"latency_avg_ms"`
	ServerPerTxn json.RawMessage `json:"server_per_txn,omitempty"`
	ServerWaits  json.RawMessage `json:"server_waits,omitempty"`
	// Issue 25: the run's server_threads, server_host, client_host, agent
	// and server_stacks (system.go), absent where the run had none.
	ServerThreads json.RawMessage `json:"server_threads,omitempty"`
	ServerHost    json.RawMessage `json:"server_host,omitempty"`
	ClientHost    json.RawMessage `json:"client_host,omitempty"`
	Agent         json.RawMessage `json:"agent,omitempty"`
	ServerStacks  json.RawMessage `json:"server_stacks,omitempty"`
}

// Cost reads per_txn by its keys; nil when the run reported none.
func (r *CellJSON) Cost() *report.Cost {
	return costOf(r.PerTxn)
}

func costOf(perTxn json.RawMessage) *report.Cost {
	var m map[string]float64
	if len(perTxn) == 0 || json.Unmarshal(perTxn, &m) != nil || m == nil {
		return nil
	}
	c := &report.Cost{RoundTrips: m["round_trips"], BytesSent: m["bytes_sent"], BytesReceived: m["bytes_received"],
		ClientCPUUs: m["client_cpu_us"], ContextSwitches: m["context_switches"]}
	if v, ok := m["client_run_queue_delay_us"]; ok {
		c.ClientRunQueueDelayUs = &v
	}
	return c
}

// nullToNil keeps an absent key absent in a cell: a run's null is none.
func nullToNil(r json.RawMessage) json.RawMessage {
	if len(r) == 0 || string(r) == "null" {
		return nil
	}
	return r
}

// ServerSide is a cell's server side for the report (issue 25): where its
// threads were (or why that is not known), its cost per transaction and
// its stacks.
func (r *CellJSON) ServerSide() (threads *report.Threads, why string, cost *report.ServerCost, stacks *report.Stacks) {
	var sc ServerCostJSON
	haveCost := len(r.ServerPerTxn) > 0 && json.Unmarshal(r.ServerPerTxn, &sc) == nil
	var agent *AgentJSON
	if len(r.Agent) > 0 {
		agent = &AgentJSON{}
		if json.Unmarshal(r.Agent, agent) != nil {
			agent = nil
		}
	}
	var t ThreadStatesJSON
	if len(r.ServerThreads) > 0 && json.Unmarshal(r.ServerThreads, &t) == nil && t.Samples > 0 {
		src := t.Source
		if agent != nil && agent.Partial {
			src += fmt.Sprintf(" (partial: %d s missed)", agent.SecondsMissed)
		}
		threads = &report.Threads{CPU: t.CPU, Runnable: t.Runnable, Network: t.Network, Lock: t.Lock, IO: t.IO, Idle: t.Idle,
			Samples: t.Samples, Source: src}
	} else {
		switch {
		case t.Note != "":
			why = t.Note
		case haveCost && sc.Missing["server_threads"] != "":
			why = sc.Missing["server_threads"]
		case haveCost && sc.Missing["cpu"] != "":
			why = sc.Missing["cpu"]
		default:
			why = "no agent"
		}
	}
	if haveCost && (sc.CPUUserUs != nil || sc.RunQueueDelayUs != nil || sc.PortBytesIn != nil) {
		cost = &report.ServerCost{VoluntarySwitches: sc.VoluntarySwitches, InvoluntarySwitches: sc.InvoluntarySwitches,
			RunQueueDelayUs: sc.RunQueueDelayUs, PortBytesIn: sc.PortBytesIn, PortBytesOut: sc.PortBytesOut, CPUUs: r.ServerCPU()}
		cost.Source = sc.Source["cpu"]
		if threads != nil {
			cost.Source = threads.Source
		}
	}
	var st StacksJSON
	if len(r.ServerStacks) > 0 && json.Unmarshal(r.ServerStacks, &st) == nil && st.Folded != "" {
		stacks = &report.Stacks{Folded: st.Folded, Hz: st.Hz, Samples: st.Samples, Source: st.Source}
	}
	return threads, why, cost, stacks
}

// ServerCPU is a cell's server CPU per transaction (user + system); nil
// when its run did not measure it.
func (r *CellJSON) ServerCPU() *float64 {
	var c ServerCostJSON
	if len(r.ServerPerTxn) == 0 || json.Unmarshal(r.ServerPerTxn, &c) != nil || c.CPUUserUs == nil || c.CPUSysUs == nil {
		return nil
	}
	v := *c.CPUUserUs + *c.CPUSysUs
	return &v
}

// Split is where a cell's transaction time went, for the report; nil
// without the client's CPU or a latency.
func (r *CellJSON) Split() *report.Split {
	cost := r.Cost()
	if cost == nil || r.LatencyAvgMs <= 0 {
		return nil
	}
	return report.NewSplit(r.LatencyAvgMs, cost.ClientCPUUs, r.ServerCPU())
}

// Throughput is what the ratios compare: NOPM, else TPM.
func (r *CellJSON) Throughput() float64 {
	if r.NOPM != nil {
		return *r.NOPM
	}
	return r.TPM
}

// headType names the transaction type the workload's headline counts
// (TPC-C: neword), "" when it has none.
func headType(w workload.Workload) string {
	if mt, ok := w.(workload.MeterTxn); ok {
		if k := mt.MeterKind(); k >= 0 && k < len(w.Mix()) {
			return w.Mix()[k].Name
		}
	}
	return ""
}

func compareResult(w workload.Workload, rawURL string, o *CompareOptions, info db.Info, cells []*compareCell, interrupted bool, job *JobRun) *CompareJSON {
	out := &CompareJSON{Cells: []CellJSON{}, Workload: w.Name(), Database: db.Redact(rawURL), Driver: info.Driver,
		DBVersion: info.Version, Seed: o.Seed, RampupS: o.Rampup.Seconds(), DurationS: o.Duration.Seconds(),
		Iterations: o.Iterations, Connections: o.Connections, Interrupted: interrupted, Settings: info.Settings, Host: jobs.ThisHost()}
	if o.Iterations > 0 {
		out.RampupS, out.DurationS = 0, 0
	}
	if job != nil {
		out.JobID = job.ID()
	}
	var base float64
	var matrixVUs []int
	for i, c := range cells {
		r := c.res
		if i == 0 {
			base = r.throughput()
			out.Scale, out.DBVersion, out.Driver = r.Scale, r.DBVersion, r.Driver
			if r.Settings != nil {
				out.Settings = r.Settings
			}
		}
		p90, typ := r.p90(headType(w))
		out.P90Type = typ
		cj := CellJSON{Mode: c.Mode.String(), Transport: c.Transport, VUs: c.VUs, NOPM: r.NOPM, TPM: r.TPM,
			PerTxn: r.PerTxn, TPMSource: r.TPMSource, P90Ms: p90, Database: r.Database, MeasuredS: r.MeasuredS,
			Transactions: r.Total.Count, Errors: r.Total.Errors, Interrupted: r.Interrupted,
			LatencyAvgMs: r.LatencyAvg, ServerPerTxn: r.Server, ServerWaits: r.Waits,
			ServerThreads: nullToNil(r.Threads), ServerHost: nullToNil(r.ServerHost), ClientHost: nullToNil(r.ClientHost),
			Agent: nullToNil(r.Agent), ServerStacks: nullToNil(r.Stacks)}
		if string(cj.PerTxn) == "null" {
			cj.PerTxn = nil
		}
		if c.JobID > 0 {
			id := c.JobID
			cj.JobID = &id
		}
		if base > 0 && c.Side != sideAnalytic { // the streams alone run no transaction
			ratio := r.throughput() / base
			cj.Ratio = &ratio
		}
		cj.Side, cj.Analytic = c.Side, r.Analytic
		if c.Side == sideAnalytic {
			cj.VUs = 0 // the streams alone: no virtual user ran
		}
		matrixVUs = append(matrixVUs, c.VUs)
		out.Cells = append(out.Cells, cj)
	}
	out.Pairs = ModePairs(out.Cells)
	out.Interference = interference(out.Cells, matrixVUs)
	return out
}

// writeReport writes the HTML report next to its final name, then renames
// it: never a half-written file.
func writeReport(path string, c *CompareJSON, command string) error {
	if len(c.Interference) > 0 {
		return writeMixedReport(path, c, command)
	}
	r := &report.Report{Title: fmt.Sprintf("sledge compare: %s on %s %s", c.Workload, c.Driver, c.DBVersion),
		Command: command, Generated: time.Now(), Database: c.Database, DBVersion: c.DBVersion,
		P90Type: c.P90Type, Settings: c.Settings, JobID: c.JobID, Interrupted: c.Interrupted}
	h := c.Host
	for _, f := range []report.Fact{{Name: "hostname", Value: h.Hostname}, {Name: "CPU", Value: h.CPUModel},
		{Name: "CPUs", Value: strconv.Itoa(h.CPUs)}, {Name: "memory", Value: gib(h.MemoryBytes)}, {Name: "OS", Value: h.OS},
		{Name: "kernel", Value: h.Kernel}, {Name: "arch", Value: h.Arch}, {Name: "Go", Value: h.GoVersion}} {
		if f.Value != "" {
			r.Host = append(r.Host, f)
		}
	}
	r.Run = append(r.Run, report.Fact{Name: "workload", Value: c.Workload})
	if c.Scale != "" {
		r.Run = append(r.Run, report.Fact{Name: "scale", Value: c.Scale})
	}
	if c.Iterations > 0 {
		r.Run = append(r.Run, report.Fact{Name: "each cell", Value: fmt.Sprintf("%d transactions per virtual user", c.Iterations)})
	} else {
		r.Run = append(r.Run, report.Fact{Name: "each cell", Value: fmt.Sprintf("%gs ramp-up, %gs measured", c.RampupS, c.DurationS)})
	}
	r.Run = append(r.Run, report.Fact{Name: "seed", Value: strconv.FormatUint(c.Seed, 10)}, report.Fact{Name: "sledge", Value: Version()})
	for _, x := range c.Cells {
		rc := report.Cell{Mode: x.Mode, Transport: x.Transport, VUs: x.VUs, NOPM: x.NOPM, TPM: x.TPM, TPMSource: x.TPMSource,
			P90Ms: x.P90Ms, Cost: x.Cost(), Ratio: x.Ratio, Interrupted: x.Interrupted, Split: x.Split()}
		rc.Threads, rc.ThreadsWhy, rc.Server, rc.Stacks = x.ServerSide()
		if x.JobID != nil {
			rc.JobID = *x.JobID
		}
		r.Cells = append(r.Cells, rc)
	}
	for _, p := range c.Pairs {
		r.Pairs = append(r.Pairs, report.Pair{From: p.From, To: p.To, Transport: p.Transport, VUs: p.VUs, Ratio: p.Ratio,
			RoundTripsDelta: p.RoundTripsDelta, ClientCPUUsDelta: p.ClientCPUUsDelta, ServerCPUUsDelta: p.ServerCPUUsDelta})
	}
	return writeReportFile(path, func(w io.Writer) error { return report.Write(w, r) })
}

// writeReportFile writes a report to path whole or not at all: into a
// temporary file beside it, renamed over it once complete.
func writeReportFile(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write report %s: %v", path, UnwrapPath(err))
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write report %s: %v", path, UnwrapPath(err))
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write report %s: %v", path, UnwrapPath(err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write report %s: %v", path, UnwrapPath(err))
	}
	return nil
}

func gib(b int64) string {
	if b <= 0 {
		return ""
	}
	return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
}

// CompareCommand is the compare command as given in fs (its arguments and
// the flags given, with extra: flags given beside fs's, such as the
// command line's --jobs-db), without the password (a comment names the
// variable for it), with the seed it ran with (in place of --random-seed):
// it repeats the compare.
func CompareCommand(fs *pflag.FlagSet, seed uint64, extra map[string]string) string {
	type flag struct{ name, value string }
	var flags []flag
	fs.Visit(func(f *pflag.Flag) {
		if l, ok := f.Value.(*dbList); ok {
			for _, u := range l.URLs() { // compare tpch: every --db
				flags = append(flags, flag{f.Name, u})
			}
			return
		}
		flags = append(flags, flag{f.Name, f.Value.String()})
	})
	for k, v := range extra {
		flags = append(flags, flag{k, v})
	}
	slices.SortStableFunc(flags, func(a, b flag) int { return strings.Compare(a.name, b.name) })
	parts := append([]string{"sledge compare"}, fs.Args()...)
	note := ""
	for _, f := range flags {
		v := f.value
		switch f.name {
		case "db":
			var env string
			if v, env = db.Pasteable(v); env != "" && note == "" {
				note = "  # password from " + env
			}
		case "seed", "random-seed":
			continue
		}
		if b := fs.Lookup(f.name); b != nil && b.Value.Type() == "bool" {
			// A boolean's value follows an "=": "--no-refresh true" would
			// read "true" as an argument.
			if v == "true" {
				parts = append(parts, "--"+f.name)
			} else {
				parts = append(parts, "--"+f.name+"="+v)
			}
			continue
		}
		parts = append(parts, "--"+f.name+" "+v)
	}
	return strings.Join(append(parts, "--seed "+strconv.FormatUint(seed, 10)), " ") + note
}

// compareCommandExtra is what the command line's Main would have been
// given beside a spec's options for x: --jobs-db, --no-job.
func compareCommandExtra(x Exec) map[string]string {
	m := map[string]string{}
	if x.JobsDB != "" {
		m["jobs-db"] = x.JobsDB
	}
	if x.NoJob {
		m["no-job"] = "true"
	}
	return m
}
