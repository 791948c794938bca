package cli

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
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/jobs"
	"github.com/sledge-bench/sledge/internal/report"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
)

type compareOpts struct {
	common
	modes       string
	transports  string
	vus         string
	connections int // --connections, passed on to every cell; 0: one per VU
	rampup      time.Duration
	duration    time.Duration
	iterations  int
	progress    int    // -P: seconds between each cell's progress lines; 0: the progress bar
	randomSeed  string // --random-seed: pgbench's form of --seed, as in run
	socket      string
	host        string
	port        int
	html        string
	wlFlags     map[string]bool // the workloads' run options, passed on to every cell
}

func newCompare(env *Env) *cobra.Command {
	o := &compareOpts{wlFlags: map[string]bool{}}
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

Transports: --db gives one. For the other:
  PostgreSQL  tcp URL + --socket DIR        unix: the same URL with host=DIR (and its port)
              unix URL (host=/dir) + --host H [--port N]   tcp: H:N (default port: the URL's, else 5432)
  MariaDB     tcp URL + --socket FILE       unix: the same URL with socket=FILE
              unix URL (socket=) + --host H [--port N]     tcp: H:N (default port: 3306)
  SQLite      embedded only
--host defaults to 127.0.0.1. User, password, database and other parameters
stay the same.

The whole matrix is checked before the first cell runs: every URL is
reached and every mode is supported there.

Ctrl-C interrupts the running cell (it keeps what it measured, as "sledge
run" does), starts no other, and prints the table of what was measured
(exit 130).`,
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
			return job.End(cmd.Context(), runCompare(cmd, jenv, o, w, u))
		},
	}
	addCommon(cmd, &o.common, "run", 0)
	for _, n := range workload.Names() {
		m, _ := workload.Lookup(n)
		fs := pflag.NewFlagSet(n, pflag.ContinueOnError)
		m.Flags("run", fs)
		fs.VisitAll(func(f *pflag.Flag) { o.wlFlags[f.Name] = true })
	}
	fs := cmd.Flags()
	// The options a run has too take the same spellings and values as in
	// run (docs/compare.md): -c, -T, -t, -P, plain seconds, --mode.
	fs.StringVar(&o.modes, "modes", "", "comma-separated modes, or all: every mode the database and workload support (default: those of procedure, client, prepared); also --mode")
	fs.StringVar(&o.transports, "transports", "", "comma-separated transports, tcp and unix (default: the --db URL's)")
	fs.StringVarP(&o.vus, "vus", "c", "1,2,4,8", "comma-separated virtual user counts, each with its own connection unless --connections (pgbench -c)")
	fs.IntVar(&o.connections, "connections", 0, "connections shared by each cell's virtual users, as in run; at most the smallest --vus; 0: one per virtual user")
	o.rampup = 10 * time.Second
	fs.Var(runner.SecondsFlag(&o.rampup), "rampup", "warm-up of every cell before its measured interval, not counted: 10 (seconds), 90s, 5m")
	o.duration = time.Minute
	fs.VarP(runner.SecondsFlag(&o.duration), "duration", "T", "measured interval of every cell: 30 (seconds), 90s, 5m (pgbench -T)")
	fs.IntVarP(&o.iterations, "iterations", "t", 0, "transactions per virtual user in every cell instead of a timed run (pgbench -t)")
	fs.IntVarP(&o.progress, "progress", "P", 0, "print each cell's progress line to stderr every N seconds instead of the progress bar (pgbench -P); 0: off")
	fs.StringVar(&o.randomSeed, "random-seed", "", "pgbench's form of --seed: a number, time or rand")
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "mode" { // run's spelling
			name = "modes"
		}
		return pflag.NormalizedName(name)
	})
	fs.StringVar(&o.socket, "socket", "", "unix socket for --transports unix when --db is a TCP URL (PostgreSQL: its directory; MariaDB: the socket file)")
	fs.StringVar(&o.host, "host", "127.0.0.1", "host for --transports tcp when --db is a unix socket URL")
	fs.IntVar(&o.port, "port", 0, "port for --transports tcp when --db is a unix socket URL (default: the URL's, else the database's usual port)")
	fs.StringVar(&o.html, "html", "", "also write a self-contained HTML report with charts to this file")
	return cmd
}

// cell is one run of the matrix and what it measured.
type cell struct {
	mode      workload.Mode
	transport string
	vus       int
	url       string // raw: with the password, only for the child's argument
	res       *cellRun
	jobID     int64
}

// cellRun is the part of a run's --json summary compare reads.
type cellRun struct {
	Database    string            `json:"database_url"`
	Driver      string            `json:"driver"`
	DBVersion   string            `json:"db_version"`
	Transport   string            `json:"transport"`
	Scale       string            `json:"scale_text"`
	MeasuredS   float64           `json:"measured_s"`
	Interrupted bool              `json:"interrupted"`
	NOPM        *float64          `json:"nopm"`
	TPM         float64           `json:"tpm"`
	TPMSource   string            `json:"tpm_source"`
	Total       txJSON            `json:"total"`
	PerTxn      json.RawMessage   `json:"per_txn"`
	LatencyAvg  float64           `json:"latency_avg_ms"`
	Server      json.RawMessage   `json:"server_per_txn"`
	Waits       json.RawMessage   `json:"server_waits"`
	Types       []txJSON          `json:"types"`
	Settings    map[string]string `json:"db_settings"`
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

// cost reads per_txn by its keys; nil when the run reported none.
func (r *cellRun) cost() *report.Cost {
	var m map[string]float64
	if len(r.PerTxn) == 0 || json.Unmarshal(r.PerTxn, &m) != nil || m == nil {
		return nil
	}
	return &report.Cost{RoundTrips: m["round_trips"], BytesSent: m["bytes_sent"], BytesReceived: m["bytes_received"],
		ClientCPUUs: m["client_cpu_us"], ContextSwitches: m["context_switches"]}
}

// throughput is what the ratio compares: NOPM, else TPM.
func (r *cellRun) throughput() float64 {
	if r.NOPM != nil {
		return *r.NOPM
	}
	return r.TPM
}

// compareJSON is compare's result: --json, the job's summary, the report.
type compareJSON struct {
	Cells []cellJSON `json:"cells"`
	// Pairs sets every two cells that differ only in mode side by side.
	Pairs       []modePairJSON    `json:"mode_pairs"`
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

type cellJSON struct {
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
}

func runCompare(cmd *cobra.Command, env *Env, o *compareOpts, w workload.Workload, rawURL string) error {
	ctx := cmd.Context()
	vus, err := parseVUList(o.vus)
	if err != nil {
		return err
	}
	// Every cell runs with the same --connections: checked against the
	// smallest count of virtual users.
	plan := &engine.Plan{VUs: slices.Min(vus), Connections: o.connections, Rampup: o.rampup, Duration: o.duration,
		Iterations: o.iterations, Mix: w.Mix()}
	if err := plan.Validate(); err != nil {
		return usageErr("%v", err)
	}
	if o.html != "" {
		if st, err := os.Stat(filepath.Dir(o.html)); err != nil || !st.IsDir() {
			return usageErr("--html %s: no directory %s to write it in", o.html, filepath.Dir(o.html))
		}
	}
	if o.progress < 0 {
		return usageErr("--progress must not be negative")
	}
	f := cmd.Flags()
	if f.Changed("duration") && o.iterations > 0 {
		return usageErr("give either -T/--duration or -t/--iterations, not both (pgbench: specify either a number of transactions or a duration)")
	}
	if f.Changed("random-seed") {
		if f.Changed("seed") {
			return usageErr("give either --seed or --random-seed, not both")
		}
		n, err := runner.ParseRandomSeed(o.randomSeed)
		if err != nil {
			return usageErr("%v", err)
		}
		o.Seed, o.SeedSet = n, true
	}
	if !o.SeedSet {
		o.Seed = rand.Uint64() >> 12 // one seed for every cell: the same inputs
	}
	// The job records the seed the cells run with, so that its command
	// line repeats the compare.
	o.job.SetSeed(o.Seed)
	urls, err := transportURLs(rawURL, o)
	if err != nil {
		return err
	}
	modes, info, err := validateMatrix(ctx, w, urls, o)
	if err != nil {
		return err
	}
	o.job.SetMatrix(info, joinModes(modes))

	var cells []*cell
	for _, m := range modes {
		for _, t := range urls {
			for _, n := range vus {
				cells = append(cells, &cell{mode: m, transport: t.transport, vus: n, url: t.url})
			}
		}
	}
	if !o.JSON {
		fmt.Fprintf(env.Stderr, "comparing %s on %s (%s %s): %d cells, %s, seed %d\n", w.Name(), db.Redact(rawURL),
			info.Driver, info.Version, len(cells), cellLength(o), o.Seed)
	}
	var runErr error
	interrupted := false
	for i, c := range cells {
		if ctx.Err() != nil {
			interrupted = true
			break
		}
		if err := runCell(ctx, cmd, env, o, w, c, i, len(cells)); err != nil {
			runErr = err
			break
		}
		if c.res.Interrupted || ctx.Err() != nil {
			interrupted = true
			break
		}
	}
	var done []*cell
	for _, c := range cells {
		if c.res != nil {
			done = append(done, c)
		}
	}
	out := compareResult(w, rawURL, o, info, done, interrupted)
	o.job.SetSummary(out)
	if len(done) > 0 || runErr == nil {
		if o.JSON {
			if err := writeJSON(env.Stdout, out); err != nil {
				return err
			}
		} else {
			printCompare(env.Stdout, out)
		}
		if o.html != "" && len(done) > 0 {
			if err := writeReport(o.html, out, cmd); err != nil {
				return err
			}
			if !o.JSON {
				fmt.Fprintf(env.Stderr, "report written to %s\n", o.html)
			}
		}
	}
	if runErr != nil {
		return runErr
	}
	if interrupted {
		if !o.JSON {
			fmt.Fprintln(env.Stderr, "sledge: interrupted; the table covers the cells measured until then")
		}
		return runner.Silent{Code: ExitInterrupted}
	}
	var failed, processed int64
	for _, c := range done {
		failed += c.res.Total.Errors
		processed += c.res.Total.Count
	}
	return runner.FailedTxErr(failed, processed)
}

func cellLength(o *compareOpts) string {
	if o.iterations > 0 {
		return fmt.Sprintf("%d transactions per virtual user each", o.iterations)
	}
	return fmt.Sprintf("%s ramp-up + %s each", seconds(o.rampup), seconds(o.duration))
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
			return nil, usageErr("--vus %s: %q is not a whole number of at least 1; use e.g. --vus 1,2,4,8", s, p)
		}
		if seen[n] {
			return nil, usageErr("--vus %s: %d is given twice", s, n)
		}
		seen[n] = true
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, usageErr("--vus is empty; use e.g. --vus 1,2,4,8")
	}
	return out, nil
}

// transportURL is the database URL of one transport.
type transportURL struct {
	transport string
	url       string
}

// transportURLs returns the URL of every transport asked for, the --db
// URL's own first when it is asked for. See the command's help for what
// can be derived.
func transportURLs(raw string, o *compareOpts) ([]transportURL, error) {
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
	names := splitList(o.transports)
	if len(names) == 0 {
		names = []string{own}
	}
	var out []transportURL
	seen := map[string]bool{}
	for _, t := range names {
		t = strings.ToLower(t)
		if seen[t] {
			return nil, usageErr("--transports %s: %s is given twice", o.transports, t)
		}
		seen[t] = true
		switch {
		case t == own:
			out = append(out, transportURL{t, raw})
		case t != "tcp" && t != "unix" && t != "embedded":
			return nil, usageErr("--transports: unknown transport %q: use tcp or unix", t)
		case own == "embedded" || t == "embedded" || own == "":
			return nil, usageErr("--transports %s: %s URLs have only the %s transport", t, scheme, dash(own))
		case t == "unix":
			if o.socket == "" {
				return nil, usageErr("--transports unix needs --socket PATH with a TCP --db URL (PostgreSQL: the socket directory; MariaDB/MySQL: the socket file)")
			}
			out = append(out, transportURL{t, tr.UnixURL(u, o.socket).String()})
		default:
			out = append(out, transportURL{t, tr.TCPURL(u, o.host, o.port).String()})
		}
	}
	return out, nil
}

// validateMatrix reaches every URL and checks every mode there before the
// first cell runs, and returns the modes and the first URL's database.
func validateMatrix(ctx context.Context, w workload.Workload, urls []transportURL, o *compareOpts) ([]workload.Mode, db.Info, error) {
	var modes []workload.Mode
	seen := map[workload.Mode]bool{}
	all := strings.EqualFold(strings.TrimSpace(o.modes), "all")
	for _, s := range splitList(o.modes) {
		if all {
			break
		}
		m, err := workload.ParseMode(s)
		if err != nil {
			return nil, db.Info{}, usageErr("--modes: %v", err)
		}
		if seen[m] {
			return nil, db.Info{}, usageErr("--modes %s: %s is given twice", o.modes, m)
		}
		seen[m] = true
		modes = append(modes, m)
	}
	var first db.Info
	for i, t := range urls {
		d, err := runner.OpenDB(ctx, t.url)
		if err != nil {
			return nil, db.Info{}, err
		}
		if len(modes) == 0 {
			// The default: every mode this database supports of the three
			// of old; with --modes all, of every mode.
			candidates := []workload.Mode{workload.ModeProcedure, workload.ModeClient, workload.ModePrepared}
			if all {
				candidates = workload.Modes()
			}
			for _, m := range candidates {
				if d.Supports(w.Name(), m) == nil && workload.CheckMode(w, m) == nil {
					modes = append(modes, m)
				}
			}
		}
		for _, m := range modes {
			if err := workload.CheckMode(w, m); err != nil {
				_ = d.Close()
				return nil, db.Info{}, usageErr("--modes %s: %v", m, err)
			}
			if err := d.Supports(w.Name(), m); err != nil {
				_ = d.Close()
				return nil, db.Info{}, usageErr("--modes %s: %v", m, err)
			}
		}
		_ = d.Close()
		info, err := probeURL(ctx, w, t.url, modes[0], o.Explicit)
		if err != nil {
			return nil, db.Info{}, fmt.Errorf("--transports %s: %w", t.transport, err)
		}
		if info.Transport != t.transport {
			return nil, db.Info{}, usageErr("--transports %s: %s connects over %s", t.transport, db.Redact(t.url), info.Transport)
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
	s, err := runner.OpenSession(ctx, raw, w.Name(), m, false)
	if err != nil {
		return db.Info{}, err
	}
	defer s.Close(context.WithoutCancel(ctx))
	if explicit {
		// The embedded default builds its schema in the first cell.
		if noSchema, err := s.Attach(ctx, w); err != nil {
			if noSchema {
				return db.Info{}, runner.NoSchemaErr(w.Name(), s.Raw, true)
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

// runCell runs one cell as `sledge run … --json` would, in this process,
// through runner.Execute: a normal run with its own job, whose JSON
// carries whatever a run reports. This process does nothing else while a
// cell runs, so the run's client CPU (the process's) is the cell's.
func runCell(ctx context.Context, cmd *cobra.Command, env *Env, o *compareOpts, w workload.Workload, c *cell, i, n int) error {
	spec := runner.Spec{Version: runner.SpecVersion, Kind: "run", Workload: w.Name(), Options: map[string]any{
		"mode": c.mode.String(), "vus": c.vus, "seed": strconv.FormatUint(o.Seed, 10)}}
	if o.Explicit {
		spec.DB = c.url
	}
	if o.iterations > 0 {
		spec.Options["iterations"] = o.iterations
	} else {
		spec.Options["rampup"], spec.Options["duration"] = o.rampup.String(), o.duration.String()
	}
	if o.progress > 0 {
		spec.Options["progress"] = o.progress
	}
	if o.connections > 0 {
		spec.Options["connections"] = o.connections
	}
	x := runner.Exec{Getenv: env.Getenv, NoJob: o.job == nil}
	if o.job != nil {
		x.JobsDB = o.job.StorePath()
	}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if o.wlFlags[f.Name] {
			spec.Options[f.Name] = f.Value.String()
		}
	})
	var stderr bytes.Buffer
	x.Stderr = &stderr
	if o.progress > 0 {
		// -P: the cell's own progress lines, as they come.
		x.Stderr = io.MultiWriter(&stderr, env.Stderr)
	}
	var rec jobIDOutput
	x.Outputs = append([]runner.Output{&rec}, env.Outputs...)

	what := fmt.Sprintf("cell %d/%d: %s · %s · %d VU%s", i+1, n, c.mode, c.transport, c.vus, plural(c.vus))
	var disp *progress
	start := time.Now()
	if o.progress > 0 {
		fmt.Fprintln(env.Stderr, what)
	} else if !o.JSON {
		fmt.Fprintln(env.Stderr, what)
		total := o.rampup + o.duration
		disp = startProgress(env, 10*time.Second, func() (float64, string) {
			el := time.Since(start)
			if o.iterations > 0 {
				return -1, fmt.Sprintf("%s: %s", what, seconds(el))
			}
			return el.Seconds() / total.Seconds(), fmt.Sprintf("%s: %s of %s", what, seconds(el), seconds(total))
		})
	}
	// The previous cell's garbage is not this one's to collect.
	runtime.GC()
	cellRes := runner.Execute(ctx, spec, x, nil)
	code := cellRes.Code
	if disp != nil {
		disp.Stop()
	}
	// Exit 3 is a cell measured to its end with failed transactions: its
	// result counts, and compare exits 3 after the table.
	if code != ExitOK && code != ExitInterrupted && code != ExitFailedTx {
		why := lastLine(stderr.String())
		if why == "" {
			why = fmt.Sprintf("exit %d", code)
		}
		return fmt.Errorf("%s failed: %s", what, strings.TrimPrefix(why, "sledge: "))
	}
	var res cellRun
	if err := json.Unmarshal(cellRes.JSON, &res); err != nil {
		if code == ExitInterrupted {
			return nil // stopped before it printed anything: nothing measured
		}
		return fmt.Errorf("%s: read its --json result: %w", what, err)
	}
	if code == ExitInterrupted {
		res.Interrupted = true
	}
	c.res = &res
	c.jobID = rec.id.Load()
	if !o.JSON {
		// A run prints warnings on stderr even with --json: pass them on
		// (-P passed them on as they came).
		if s := strings.TrimSpace(stderr.String()); s != "" && o.progress == 0 {
			fmt.Fprintln(env.Stderr, s)
		}
		fmt.Fprintf(env.Stderr, "  %s, %s TPM%s\n", throughputText(&res), thousands(int64(res.TPM+0.5)), jobText(c.jobID))
	}
	return nil
}

func throughputText(r *cellRun) string {
	if r.NOPM != nil {
		return thousands(int64(*r.NOPM+0.5)) + " NOPM"
	}
	return "no NOPM"
}

func jobText(id int64) string {
	if id == 0 {
		return ""
	}
	return fmt.Sprintf(" (job %d)", id)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
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

// jobIDOutput learns the job id a cell's run was recorded as.
type jobIDOutput struct{ id atomic.Int64 }

func (o *jobIDOutput) Start(j runner.Job)            { o.id.Store(j.ID) }
func (o *jobIDOutput) Tick(int64, runner.Tick)       {}
func (o *jobIDOutput) End(id int64, _ runner.Result) { o.id.Store(id) }

func compareResult(w workload.Workload, rawURL string, o *compareOpts, info db.Info, cells []*cell, interrupted bool) *compareJSON {
	out := &compareJSON{Cells: []cellJSON{}, Workload: w.Name(), Database: db.Redact(rawURL), Driver: info.Driver,
		DBVersion: info.Version, Seed: o.Seed, RampupS: o.rampup.Seconds(), DurationS: o.duration.Seconds(),
		Iterations: o.iterations, Connections: o.connections, Interrupted: interrupted, Settings: info.Settings, Host: jobs.ThisHost()}
	if o.iterations > 0 {
		out.RampupS, out.DurationS = 0, 0
	}
	if o.job != nil {
		out.JobID = o.job.ID()
	}
	var base float64
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
		cj := cellJSON{Mode: c.mode.String(), Transport: c.transport, VUs: c.vus, NOPM: r.NOPM, TPM: r.TPM,
			PerTxn: r.PerTxn, TPMSource: r.TPMSource, P90Ms: p90, Database: r.Database, MeasuredS: r.MeasuredS,
			Transactions: r.Total.Count, Errors: r.Total.Errors, Interrupted: r.Interrupted,
			LatencyAvgMs: r.LatencyAvg, ServerPerTxn: r.Server, ServerWaits: r.Waits}
		if string(cj.PerTxn) == "null" {
			cj.PerTxn = nil
		}
		if c.jobID > 0 {
			id := c.jobID
			cj.JobID = &id
		}
		if base > 0 {
			ratio := r.throughput() / base
			cj.Ratio = &ratio
		}
		out.Cells = append(out.Cells, cj)
	}
	out.Pairs = modePairs(out.Cells)
	return out
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
		cost := r.cost()
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
		if v := r.serverCPU(); v != nil {
			srv = fmt.Sprintf("%.0f", *v)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s\t\n", r.Mode, r.Transport, r.VUs, rate(r.NOPM),
			thousands(int64(r.TPM+0.5)), src, ms(r.P90Ms), rt, bytes, cpu, srv, ratio, job, mark)
	}
	tw.Flush()
	fmt.Fprintln(w, "NOPM from the database; TPM from the database's counters (db) or sledge's (client); rt, bytes and cpu")
	fmt.Fprintln(w, "per transaction, measured by the client (- when the run did not report them); server cpu: the server's")
	fmt.Fprintln(w, "processes on this machine, from /proc (- when remote or embedded); ratio: NOPM / the first cell's")
	printPairs(w, c.Pairs)
}

func (r *cellJSON) cost() *report.Cost {
	return (&cellRun{PerTxn: r.PerTxn}).cost()
}

// writeReport writes the HTML report next to its final name, then renames
// it: never a half-written file.
func writeReport(path string, c *compareJSON, cmd *cobra.Command) error {
	r := &report.Report{Title: fmt.Sprintf("sledge compare: %s on %s %s", c.Workload, c.Driver, c.DBVersion),
		Command: commandLine(cmd, c.Seed), Generated: time.Now(), Database: c.Database, DBVersion: c.DBVersion,
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
			P90Ms: x.P90Ms, Cost: x.cost(), Ratio: x.Ratio, Interrupted: x.Interrupted, Split: x.split()}
		if x.JobID != nil {
			rc.JobID = *x.JobID
		}
		r.Cells = append(r.Cells, rc)
	}
	for _, p := range c.Pairs {
		r.Pairs = append(r.Pairs, report.Pair{From: p.From, To: p.To, Transport: p.Transport, VUs: p.VUs, Ratio: p.Ratio,
			RoundTripsDelta: p.RoundTripsDelta, ClientCPUUsDelta: p.ClientCPUUsDelta, ServerCPUUsDelta: p.ServerCPUUsDelta})
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write report %s: %v", path, runner.UnwrapPath(err))
	}
	defer os.Remove(tmp.Name())
	if err := report.Write(tmp, r); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write report %s: %v", path, runner.UnwrapPath(err))
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write report %s: %v", path, runner.UnwrapPath(err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write report %s: %v", path, runner.UnwrapPath(err))
	}
	return nil
}

func gib(b int64) string {
	if b <= 0 {
		return ""
	}
	return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
}

// commandLine is the compare command as given, without the password (a
// comment names the variable for it), with the seed it ran with (in place of --random-seed): it repeats the
// compare.
func commandLine(cmd *cobra.Command, seed uint64) string {
	parts := append([]string{"sledge compare"}, cmd.Flags().Args()...)
	note := ""
	cmd.Flags().Visit(func(f *pflag.Flag) {
		v := f.Value.String()
		switch f.Name {
		case "db":
			v, note = pasteDB(v)
		case "seed", "random-seed":
			return
		}
		parts = append(parts, "--"+f.Name+" "+v)
	})
	return strings.Join(append(parts, "--seed "+strconv.FormatUint(seed, 10)), " ") + note
}
