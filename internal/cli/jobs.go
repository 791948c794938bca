package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/jobs"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
)

func newJobs(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "List, show, compare, export and delete the recorded builds, runs and checks",
		Long: `Every build, run and check is recorded as a job in the job store, an SQLite
file: --jobs-db, else $SLEDGE_JOBS_DB, else $XDG_DATA_HOME/sledge/jobs.db
(~/.local/share/sledge/jobs.db). --no-job on a command leaves it out.

A job holds the command and every option (passwords redacted), the sledge
version, the database's version and settings, the host, start and end,
status, the summary, per-type latency histograms, the once-a-second
transaction counter and the log (see docs/jobs.md). Each command says its
job: a last line "job N", job_id in its --json. A command refused as bad
input (exit 2) is not a job and uses up no id.

Statuses: running, completed, interrupted (Ctrl-C: what was measured is
kept), failed, and incomplete: the process died (SIGKILL, crash) while it
ran; what it recorded until then is kept. Jobs that "sledge serve" accepts
are also queued until they start, and stopped when stopped from the API.

"sledge jobs rerun ID" runs a recorded job again, exactly as it was asked.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newJobsList(env), newJobsShow(env), newJobsDiff(env), newJobsExport(env), newJobsDelete(env), newJobsRerun(env))
	return cmd
}

// jobsArgs checks a jobs subcommand's argument count: one line of
// sledge's own with the usage (exit 2), not cobra's "accepts 2 arg(s)".
func jobsArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		what := "no arguments"
		switch n {
		case 1:
			what = "one job id"
		case 2:
			what = "two job ids"
		}
		got := "none"
		if len(args) > 0 {
			got = strconv.Itoa(len(args))
		}
		// Main prefixes "sledge: ".
		name := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
		return usageErr("%s takes %s, got %s (usage: %s)", name, what, got, cmd.UseLine())
	}
}

func openJobs(cmd *cobra.Command, env *Env) (*jobs.Store, error) {
	path, err := jobsPath(cmd, env)
	if err != nil {
		return nil, err
	}
	return jobs.Open(cmd.Context(), path)
}

func parseJobID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, usageErr("%q is not a job id: ids are whole numbers, see sledge jobs list", s)
	}
	return id, nil
}

func getJob(ctx context.Context, st *jobs.Store, arg string) (*jobs.Record, error) {
	id, err := parseJobID(arg)
	if err != nil {
		return nil, err
	}
	r, err := st.Get(ctx, id)
	if errors.Is(err, jobs.ErrNotFound) {
		return nil, fmt.Errorf("no job %d in %s", id, st.Path())
	}
	return r, err
}

// runFigures are the headline numbers of a run's summary: NOPM and TPM,
// or an analytic run's headline (tpch: QphH, else Power).
type runFigures struct {
	NOPM      *float64 `json:"nopm"`
	TPM       *float64 `json:"tpm"`
	MeasuredS float64  `json:"measured_s"` // 0: interrupted before the measured interval

	Headline      string   `json:"-"`
	HeadlineValue *float64 `json:"-"`
}

func figures(j *jobs.Job) runFigures {
	var f runFigures
	if res := analyticResultOf(j); res != nil {
		if af, ok := res.(workload.AnalyticFigures); ok {
			f.Headline, f.HeadlineValue = af.Headline()
		}
		return f
	}
	if j.Kind == "run" && len(j.Summary) > 0 {
		_ = json.Unmarshal(j.Summary, &f) // no summary: no figures
		if f.MeasuredS == 0 {
			// Interrupted before the measured interval (a summary stored
			// before tpm was null then): nothing was measured.
			f.NOPM, f.TPM = nil, nil
		}
	}
	return f
}

// jobVUs is what a job's VUS column shows: a run's or build's virtual
// users, an analytic run's (tpch) query streams ("2 streams"), and "-"
// where there is no such figure (a check, a compare, a run that failed
// before it resolved them).
func jobVUs(j *jobs.Job) string {
	switch {
	case j.Kind == "check" || j.Kind == "compare":
		return "-"
	case j.Kind == "run" && isAnalytic(j.Workload):
		n := analyticStreams(j)
		if n <= 0 {
			return "-"
		}
		return fmt.Sprintf("%d stream%s", n, plural(n))
	case j.VUs <= 0:
		return "-"
	}
	return strconv.Itoa(j.VUs)
}

// analyticStreams is an analytic run's query streams: 1 for a power test
// alone, else the throughput test's streams. Jobs recorded before it was
// stored that way held their sessions (streams and the refresh stream):
// their summary says the streams.
func analyticStreams(j *jobs.Job) int {
	var s struct {
		Streams int    `json:"streams"`
		Test    string `json:"test"`
	}
	if len(j.Summary) > 0 && json.Unmarshal(j.Summary, &s) == nil {
		if s.Streams > 0 {
			return s.Streams
		}
		if s.Test == "power" {
			return 1
		}
	}
	return j.VUs
}

// jobMode is what a job's MODE column shows: "-" where a job has none (a
// check: its mode was only how it read the database).
func jobMode(j *jobs.Job) string {
	if j.Kind == "check" {
		return "-"
	}
	return dash(j.Mode)
}

// analyticResultOf decodes the stored summary of an analytic workload's
// run (tpch) into the result its workload registered (workload.Meta's
// NewResult); nil for other jobs.
func analyticResultOf(j *jobs.Job) workload.AnalyticResult {
	if j.Kind != "run" || len(j.Summary) == 0 || !isAnalytic(j.Workload) {
		return nil
	}
	m, _ := workload.Lookup(j.Workload)
	res := m.NewResult()
	if err := json.Unmarshal(j.Summary, res); err != nil {
		return nil
	}
	return res
}

// isAnalytic reports whether the named workload is an analytic one, whose
// results are its own (workload.Meta's NewResult).
func isAnalytic(wl string) bool {
	m, err := workload.Lookup(wl)
	return err == nil && m.NewResult != nil
}

// analyticCompareOf decodes the stored summary of a compare of an
// analytic workload across databases; nil for other jobs.
func analyticCompareOf(j *jobs.Job) *runner.AnalyticCompareJSON {
	if j.Kind != "compare" || len(j.Summary) == 0 || !isAnalytic(j.Workload) {
		return nil
	}
	var c runner.AnalyticCompareJSON
	if err := json.Unmarshal(j.Summary, &c); err != nil {
		return nil
	}
	return &c
}

// listJSON is one line of `jobs list --json`.
type listJSON struct {
	ID        int64    `json:"id"`
	Kind      string   `json:"kind"`
	Workload  string   `json:"workload"`
	Database  string   `json:"database"`
	Mode      string   `json:"mode,omitempty"`
	VUs       int      `json:"vus,omitempty"`
	Streams   int      `json:"streams,omitempty"` // an analytic run's (tpch) query streams, in place of vus
	Status    string   `json:"status"`
	Started   string   `json:"started"`
	Ended     string   `json:"ended,omitempty"`
	DurationS float64  `json:"duration_s"`
	NOPM      *float64 `json:"nopm,omitempty"`
	TPM       *float64 `json:"tpm,omitempty"`
	// An analytic run's headline (tpch: QphH, else Power) and its name.
	Headline      string   `json:"headline,omitempty"`
	HeadlineValue *float64 `json:"headline_value,omitempty"`
	Error         string   `json:"error,omitempty"`
}

func newJobsList(env *Env) *cobra.Command {
	var limit int
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the recorded jobs, newest first",
		Args:  jobsArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openJobs(cmd, env)
			if err != nil {
				return err
			}
			defer st.Close()
			list, err := st.List(cmd.Context(), limit)
			if err != nil {
				return err
			}
			out := make([]listJSON, 0, len(list))
			for _, j := range list {
				f := figures(j)
				l := listJSON{ID: j.ID, Kind: j.Kind, Workload: j.Workload, Database: j.Database, Mode: j.Mode,
					VUs: j.VUs, Status: string(j.Status), Started: j.Started.Format(time.RFC3339),
					DurationS: math.Round(j.Duration().Seconds()*1000) / 1000, NOPM: f.NOPM, TPM: f.TPM, Error: j.Error,
					Headline: f.Headline, HeadlineValue: f.HeadlineValue}
				switch {
				case j.Kind == "check":
					l.Mode, l.VUs = "", 0 // recorded by older versions: how it read the database
				case j.Kind == "run" && isAnalytic(j.Workload):
					l.VUs, l.Streams = 0, analyticStreams(j)
				}
				if !j.Ended.IsZero() {
					l.Ended = j.Ended.Format(time.RFC3339)
				}
				out = append(out, l)
			}
			if jsonOut {
				return writeJSON(env.Stdout, map[string]any{"store": st.Path(), "jobs": out})
			}
			if len(out) == 0 {
				fmt.Fprintf(env.Stdout, "no jobs in %s yet\n", st.Path())
				return nil
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tKIND\tWORKLOAD\tDATABASE\tMODE\tVUS\tSTATUS\tSTARTED\tDURATION\tNOPM\tTPM")
			for k, l := range out {
				head := rate(l.NOPM)
				if l.HeadlineValue != nil {
					// An analytic run's headline, named: its NOPM's place.
					head = rate(l.HeadlineValue) + " " + l.Headline
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.ID, l.Kind, l.Workload,
					l.Database, jobMode(list[k]), jobVUs(list[k]), l.Status, list[k].Started.Local().Format("2006-01-02 15:04:05"), shortDuration(time.Duration(l.DurationS*float64(time.Second))),
					head, rate(l.TPM))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 20, "at most this many jobs (0: all)")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the list as JSON")
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func rate(v *float64) string {
	if v == nil {
		return "-"
	}
	return thousands(int64(*v + 0.5))
}

func shortDuration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

func newJobsShow(env *Env) *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show everything a job recorded",
		Long: `Show a job: the command and its options, the database and its settings, the
host, the summary (as the command printed it: a compare's table of cells;
a run's server threads, hosts and agent below it), the transaction counter,
the server's and sledge's host's seconds, and the log. --json prints the whole record, as "jobs export --format json".`,
		Args: jobsArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := parseJobID(args[0]); err != nil {
				return err // before the store is opened (or created)
			}
			st, err := openJobs(cmd, env)
			if err != nil {
				return err
			}
			defer st.Close()
			r, err := getJob(cmd.Context(), st, args[0])
			if err != nil {
				return err
			}
			if jsonOut {
				return writeJSON(env.Stdout, r)
			}
			printJob(env.Stdout, r)
			return nil
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the whole record as JSON")
	return cmd
}

func printJob(out io.Writer, r *jobs.Record) {
	fmt.Fprintf(out, "job %d · %s %s · %s\n", r.ID, r.Kind, r.Workload, r.Status)
	if r.Error != "" {
		fmt.Fprintf(out, "error     %s\n", r.Error)
	}
	ended := "-"
	if !r.Ended.IsZero() {
		ended = r.Ended.Local().Format("2006-01-02 15:04:05")
	}
	fmt.Fprintf(out, "started   %s · ended %s · %s\n", r.Started.Local().Format("2006-01-02 15:04:05"), ended, shortDuration(r.Duration()))
	fmt.Fprintf(out, "database  %s\n", r.Database)
	if r.DB.Driver != "" {
		fmt.Fprintf(out, "          %s %s (%s)\n", r.DB.Driver, r.DB.Version, r.DB.Transport)
	}
	if len(r.DB.Settings) > 0 {
		fmt.Fprintf(out, "settings  %s\n", joinSettings(r.DB.Settings))
	}
	fmt.Fprintf(out, "command   sledge %s\n", specLine(r.Spec))
	h := r.Host
	mem := ""
	if h.MemoryBytes > 0 {
		mem = fmt.Sprintf(" · %.1f GiB", float64(h.MemoryBytes)/(1<<30))
	}
	fmt.Fprintf(out, "host      %s · %s × %d%s · %s · kernel %s · %s · sledge %s (pid %d)\n",
		dash(h.Hostname), dash(h.CPUModel), h.CPUs, mem, h.OS, dash(h.Kernel), h.GoVersion, r.Version, r.PID)

	if len(r.Summary) > 0 {
		if res := analyticResultOf(&r.Job); res != nil {
			// As the run printed it.
			fmt.Fprintln(out)
			res.WriteText(out)
		} else if c := analyticCompareOf(&r.Job); c != nil {
			printAnalyticCompare(out, c)
		} else if s := runSummaryOf(&r.Job); s != nil {
			printSummary(out, s)
		} else if c := compareSummaryOf(&r.Job); c != nil {
			printCompare(out, c)
		} else {
			var v any
			if json.Unmarshal(r.Summary, &v) == nil {
				fmt.Fprintln(out, "\nresult:")
				b, _ := json.MarshalIndent(v, "  ", "  ")
				fmt.Fprintf(out, "  %s\n", b)
			}
		}
	} else if r.Kind == "run" {
		fmt.Fprintln(out, "\nno summary: the run did not get to its end")
	}
	if len(r.Samples) > 0 {
		fmt.Fprintln(out)
		printSeries(out, r)
	}
	printSystemSeries(out, r) // jobs_system.go
	if len(r.Log) > 0 {
		fmt.Fprintln(out, "\nlog:")
		for _, l := range r.Log {
			fmt.Fprintf(out, "  %7.1fs  %s\n", float64(l.ElapsedMs)/1000, l.Line)
		}
	}
}

// runSummaryOf decodes a run's stored summary; nil for other jobs.
func runSummaryOf(j *jobs.Job) *runSummary {
	if j.Kind != "run" || len(j.Summary) == 0 || isAnalytic(j.Workload) {
		return nil
	}
	var s runSummary
	if err := json.Unmarshal(j.Summary, &s); err != nil {
		return nil
	}
	s.MeterName = meterName(j.Workload)
	s.Processed = s.Total.Count // not a key of its own: the total's count
	// Nor is the wire's note: an embedded database has no wire, and a
	// wired run that measured transactions always made round trips.
	switch {
	case s.PerTxn == nil:
	case s.Transport == "embedded":
		s.WireNote = "embedded"
	case s.PerTxn.RoundTrips == 0 && s.Processed > 0:
		s.WireNote = "not counted"
	}
	return &s
}

// compareSummaryOf decodes a compare's stored summary; nil for other jobs.
func compareSummaryOf(j *jobs.Job) *compareJSON {
	if j.Kind != "compare" || len(j.Summary) == 0 || isAnalytic(j.Workload) {
		return nil
	}
	var c compareJSON
	if err := json.Unmarshal(j.Summary, &c); err != nil {
		return nil
	}
	return &c
}

// meterName is the workload's headline figure's name ("NOPM", "tps"), as
// it registered it.
func meterName(wl string) string {
	if m, err := workload.Lookup(wl); err == nil && m.Throughput != "" {
		return m.Throughput
	}
	return "NOPM"
}

func joinSettings(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, " ")
}

// jobSpec is the stored spec, as startJob writes it.
type jobSpec struct {
	Command  string         `json:"command"`
	Workload string         `json:"workload"`
	Database string         `json:"database"`
	Options  map[string]any `json:"options"`
	Set      []string       `json:"set"`
}

// decodeSpec reads a stored spec, numbers as they were written (a seed is
// too large for a float64).
func decodeSpec(raw json.RawMessage) (jobSpec, error) {
	var s jobSpec
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	err := dec.Decode(&s)
	return s, err
}

// specLine is the command with the options the user set (and the seed and
// mode the run resolved), to read and to type again.
func specLine(raw json.RawMessage) string {
	s, err := decodeSpec(raw)
	if err != nil {
		return string(raw)
	}
	u, note := pasteDB(s.Database)
	parts := []string{s.Command, s.Workload, "--db", shellQuote(u)}
	if list, ok := s.Options["db"].([]any); ok && len(list) > 1 && s.Command == "compare" {
		// compare tpch: every database, in order.
		for _, x := range list[1:] {
			v, n := pasteDB(fmt.Sprint(x))
			parts = append(parts, "--db", shellQuote(v))
			if note == "" {
				note = n
			}
		}
	}
	set := map[string]bool{"seed": true, "mode": true}
	for _, n := range s.Set {
		set[n] = true
	}
	names := make([]string, 0, len(s.Options))
	for n := range s.Options {
		if set[n] && n != "db" && n != "json" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		vals := []any{s.Options[n]}
		if list, ok := s.Options[n].([]any); ok {
			vals = list // a repeated flag, once per value
		}
		for _, x := range vals {
			v := fmt.Sprint(x)
			if v == "" {
				continue
			}
			if b, ok := x.(bool); ok {
				// "--no-refresh true" would read "true" as an argument.
				if b {
					parts = append(parts, "--"+n)
				} else {
					parts = append(parts, "--"+n+"=false")
				}
				continue
			}
			parts = append(parts, "--"+n, shellQuote(v))
		}
	}
	return strings.Join(parts, " ") + note
}

// shellQuote quotes v for a POSIX shell when it holds anything a shell
// would read otherwise ('nopm>=1' would redirect).
func shellQuote(v string) string {
	if v != "" && strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+,=", r))
	}) < 0 {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// pasteDB is a recorded (redacted) or given URL as a command can carry it:
// without its password, and a shell comment naming the variable to put it
// in, so that the command can be pasted (a REDACTED placeholder cannot).
func pasteDB(u string) (url, note string) {
	url, env := db.Pasteable(u)
	if env != "" {
		note = "  # password from " + env
	}
	return url, note
}

// printSeries prints the transaction counter in at most about 40 rows:
// longer runs are averaged over groups of seconds.
func printSeries(out io.Writer, r *jobs.Record) {
	n := len(r.Samples)
	group := (n + 39) / 40
	fmt.Fprintf(out, "transactions per second (%d samples", n)
	if group > 1 {
		fmt.Fprintf(out, ", averaged over %d at a time", group)
	}
	fmt.Fprintln(out, "; completed = commits and rollbacks):")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "s\tphase\tcompleted\t")
	for _, t := range r.TxTypes {
		fmt.Fprintf(tw, "%s\t", t)
	}
	fmt.Fprintln(tw, "errors\t")
	for i := 0; i < n; i += group {
		g := r.Samples[i:min(i+group, n)]
		last := g[len(g)-1]
		var span, done, errs int64
		by := make([]int64, len(r.TxTypes))
		for _, s := range g {
			span += s.SpanMs
			done += s.Completed
			errs += s.Errors
			for k := range by {
				if k < len(s.ByType) {
					by[k] += s.ByType[k]
				}
			}
		}
		per := func(v int64) string {
			if span <= 0 {
				return "-"
			}
			return thousands(int64(float64(v)*1000/float64(span) + 0.5))
		}
		fmt.Fprintf(tw, "%.0f\t%s\t%s\t", float64(last.ElapsedMs)/1000, last.Phase, per(done))
		for _, v := range by {
			fmt.Fprintf(tw, "%s\t", per(v))
		}
		fmt.Fprintf(tw, "%s\t\n", per(errs))
	}
	tw.Flush()
}

// diffRow is one compared figure.
type diffRow struct {
	Name  string   `json:"name"`
	A     any      `json:"a"`
	B     any      `json:"b"`
	Ratio *float64 `json:"ratio,omitempty"` // B/A, for numbers
}

func newJobsDiff(env *Env) *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two jobs side by side, with ratios B/A",
		Long: `Compare two jobs: how they ran (database, mode, virtual users, host), NOPM
and TPM, each transaction type's count and p50/p90/p99 latency, the cost per
transaction (round trips, bytes sent and received, client CPU µs, context
switches) and the server's side where both runs measured it (server CPU µs,
context switches, statements, parses, plans; the shares of wait samples; the
server's run-queue delay, switches split, syscall and port bytes, the shares
of its thread states, the CPU other processes took on sledge's host),
with the ratio B/A, then the database settings and options that differ.

Two compares are compared cell by cell, cells matched by mode, transport and
virtual users ("client/tcp/4"): NOPM, TPM, p90, round trips, bytes, client
and server CPU µs per transaction, with the ratio B/A; the cells only one of them has
are listed.

Jobs with nothing to compare (different workloads or kinds, a run that measured
nothing) get one line saying why. VUS is as jobs list shows it: "-" for a check
or a compare, a tpch run's query streams ("2 streams").`,
		Args: jobsArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openJobs(cmd, env)
			if err != nil {
				return err
			}
			defer st.Close()
			a, err := getJob(cmd.Context(), st, args[0])
			if err != nil {
				return err
			}
			b, err := getJob(cmd.Context(), st, args[1])
			if err != nil {
				return err
			}
			d := diffJobs(a, b)
			if jsonOut {
				return writeJSON(env.Stdout, d)
			}
			printDiff(env.Stdout, d)
			return nil
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the comparison as JSON")
	return cmd
}

type jobDiff struct {
	A        int64     `json:"a"`
	B        int64     `json:"b"`
	Jobs     []diffRow `json:"jobs"`     // how each ran
	Figures  []diffRow `json:"figures"`  // results, with ratios
	Settings []diffRow `json:"settings"` // database settings that differ
	Options  []diffRow `json:"options"`  // command options that differ
	// Compares: the cells of one job that the other has not (by mode,
	// transport and virtual users), as "mode/transport/vus".
	OnlyA []string `json:"only_in_a,omitempty"`
	OnlyB []string `json:"only_in_b,omitempty"`
	// NoFigures says why figures has nothing to compare (or only "-"):
	// different workloads or kinds, a job without a summary.
	NoFigures string `json:"no_figures,omitempty"`
}

// whyNoFigures says in one line why two jobs have no figures to compare,
// the first reason that holds.
func whyNoFigures(a, b *jobs.Record) string {
	switch {
	case a.Workload != b.Workload:
		return fmt.Sprintf("job %d ran %s and job %d %s: different workloads have no figures in common", a.ID, a.Workload, b.ID, b.Workload)
	case a.Kind != b.Kind:
		return fmt.Sprintf("job %d is a %s and job %d a %s: only two runs or two compares have figures to compare", a.ID, a.Kind, b.ID, b.Kind)
	case a.Kind != "run" && a.Kind != "compare":
		return fmt.Sprintf("jobs of kind %s have no figures: only runs and compares do", a.Kind)
	}
	for _, r := range []*jobs.Record{a, b} {
		if len(r.Summary) == 0 {
			return fmt.Sprintf("job %d has no summary (%s): it did not get to its end", r.ID, r.Status)
		}
	}
	return "their summaries have no figures in common"
}

// nothingMeasured says which of two runs were interrupted before their
// measured interval.
func nothingMeasured(a, b *jobs.Record, na, nb bool) string {
	if na && nb {
		return fmt.Sprintf("jobs %d and %d measured nothing: both were interrupted before the measured interval began", a.ID, b.ID)
	}
	id := b.ID
	if na {
		id = a.ID
	}
	return fmt.Sprintf("job %d measured nothing: it was interrupted before the measured interval began", id)
}

func diffJobs(a, b *jobs.Record) *jobDiff {
	d := &jobDiff{A: a.ID, B: b.ID, Figures: []diffRow{}, Settings: []diffRow{}, Options: []diffRow{}}
	str := func(name, x, y string) { d.Jobs = append(d.Jobs, diffRow{Name: name, A: x, B: y}) }
	str("kind", a.Kind, b.Kind)
	str("workload", a.Workload, b.Workload)
	str("status", string(a.Status), string(b.Status))
	str("database", a.Database, b.Database)
	str("driver", strings.TrimSpace(a.DB.Driver+" "+a.DB.Version), strings.TrimSpace(b.DB.Driver+" "+b.DB.Version))
	str("transport", a.DB.Transport, b.DB.Transport)
	str("mode", jobMode(&a.Job), jobMode(&b.Job))
	// As jobs list shows them: "-" for a compare (its cells have theirs)
	// or a check, an analytic run's query streams.
	str("vus", jobVUs(&a.Job), jobVUs(&b.Job))
	str("started", a.Started.Local().Format("2006-01-02 15:04:05"), b.Started.Local().Format("2006-01-02 15:04:05"))
	str("host", fmt.Sprintf("%s (%s × %d)", a.Host.Hostname, a.Host.CPUModel, a.Host.CPUs),
		fmt.Sprintf("%s (%s × %d)", b.Host.Hostname, b.Host.CPUModel, b.Host.CPUs))
	str("sledge", a.Version, b.Version)

	num := func(name string, x, y float64) {
		row := diffRow{Name: name, A: x, B: y}
		if x != 0 {
			r := y / x
			row.Ratio = &r
		}
		d.Figures = append(d.Figures, row)
	}
	sa, sb := runSummaryOf(&a.Job), runSummaryOf(&b.Job)
	if sa != nil && sb != nil && (sa.MeasuredS == 0 || sb.MeasuredS == 0) {
		// A run interrupted before its measured interval has no figures:
		// its headline is "-" (null), never 0.
		fa, fb := figures(&a.Job), figures(&b.Job)
		if fa.NOPM != nil || fb.NOPM != nil || sa.MeterName == "NOPM" {
			d.Figures = append(d.Figures, diffRow{Name: strings.ToLower(sa.MeterName), A: fa.NOPM, B: fb.NOPM})
		}
		d.Figures = append(d.Figures, diffRow{Name: "tpm", A: fa.TPM, B: fb.TPM})
		d.NoFigures = nothingMeasured(a, b, sa.MeasuredS == 0, sb.MeasuredS == 0)
		sa, sb = nil, nil
	}
	if sa != nil && sb != nil {
		if sa.NOPM != nil && sb.NOPM != nil {
			num(strings.ToLower(sa.MeterName), *sa.NOPM, *sb.NOPM)
		}
		num("tpm", sa.TPM, sb.TPM)
		num("tpm_client", sa.TPMClient, sb.TPMClient)
		if sa.TPMDatabase != nil && sb.TPMDatabase != nil {
			num("tpm_database", *sa.TPMDatabase, *sb.TPMDatabase)
		}
		bt := map[string]txJSON{}
		for _, t := range sb.Types {
			bt[t.Name] = t
		}
		types := append(append([]txJSON{}, sa.Types...), sa.Total)
		bt["total"] = sb.Total
		for _, ta := range types {
			tb, ok := bt[ta.Name]
			if !ok {
				continue
			}
			num(ta.Name+".count", float64(ta.Count), float64(tb.Count))
			num(ta.Name+".p50_ms", ta.P50Ms, tb.P50Ms)
			num(ta.Name+".p90_ms", ta.P90Ms, tb.P90Ms)
			num(ta.Name+".p99_ms", ta.P99Ms, tb.P99Ms)
		}
		if ca, cb := sa.PerTxn, sb.PerTxn; ca != nil && cb != nil {
			// The cost per transaction, overall (docs/cost.md).
			num("per_txn.round_trips", ca.RoundTrips, cb.RoundTrips)
			num("per_txn.bytes_sent", ca.BytesSent, cb.BytesSent)
			num("per_txn.bytes_received", ca.BytesReceived, cb.BytesReceived)
			if ca.ClientCPUUs != nil && cb.ClientCPUUs != nil {
				num("per_txn.client_cpu_us", *ca.ClientCPUUs, *cb.ClientCPUUs)
			}
			if ca.ContextSwitches != nil && cb.ContextSwitches != nil {
				num("per_txn.context_switches", *ca.ContextSwitches, *cb.ContextSwitches)
			}
		}
		if aa, ab := sa.Analytic, sb.Analytic; aa != nil && ab != nil {
			// A mixed run's streams (ch): their throughput and each
			// query's mean seconds where both ran it.
			num("analytic.queries_per_hour", aa.QueriesPerHour, ab.QueriesPerHour)
			for i, qa := range aa.PerQuery {
				if i < len(ab.PerQuery) && qa.Count > 0 && ab.PerQuery[i].Count > 0 {
					num("analytic."+qa.Query+".avg_s", qa.AvgS, ab.PerQuery[i].AvgS)
				}
			}
		}
		diffServer(sa, sb, num) // servercost.go
		diffSystem(sa, sb, num) // jobs_system.go
	}
	if ra, rb := analyticResultOf(&a.Job), analyticResultOf(&b.Job); ra != nil && rb != nil {
		diffAnalytic(ra, rb, num)
	}
	if ca, cb := analyticCompareOf(&a.Job), analyticCompareOf(&b.Job); ca != nil && cb != nil {
		str("seed", strconv.FormatUint(ca.Seed, 10), strconv.FormatUint(cb.Seed, 10))
		str("databases", strconv.Itoa(len(ca.Cells)), strconv.Itoa(len(cb.Cells)))
		d.OnlyA, d.OnlyB = diffAnalyticCompares(ca, cb, num)
	}
	if ca, cb := compareSummaryOf(&a.Job), compareSummaryOf(&b.Job); ca != nil && cb != nil {
		str("seed", strconv.FormatUint(ca.Seed, 10), strconv.FormatUint(cb.Seed, 10))
		str("cells", strconv.Itoa(len(ca.Cells)), strconv.Itoa(len(cb.Cells)))
		d.OnlyA, d.OnlyB = diffCells(ca, cb, num)
	}
	if len(d.Figures) == 0 && d.NoFigures == "" {
		d.NoFigures = whyNoFigures(a, b)
	}
	d.Settings = differing(a.DB.Settings, b.DB.Settings)
	oa, _ := decodeSpec(a.Spec) // an unreadable spec has no options to compare
	ob, _ := decodeSpec(b.Spec)
	d.Options = differing(stringMap(oa.Options), stringMap(ob.Options))
	return d
}

// cellName names a compare's cell: "mode/transport/vus".
func cellName(c *cellJSON) string {
	if c.Side != "" { // a mixed compare's side (compare ch)
		return fmt.Sprintf("%s/%s/%d/%s", c.Mode, c.Transport, c.VUs, c.Side)
	}
	return fmt.Sprintf("%s/%s/%d", c.Mode, c.Transport, c.VUs)
}

// diffCells compares two compares cell by cell, matching cells by mode,
// transport and virtual users, in A's order; it returns the cells only
// one of them has.
func diffCells(a, b *compareJSON, num func(name string, x, y float64)) (onlyA, onlyB []string) {
	bc := map[string]*cellJSON{}
	for i := range b.Cells {
		bc[cellName(&b.Cells[i])] = &b.Cells[i]
	}
	seen := map[string]bool{}
	for i := range a.Cells {
		ca := &a.Cells[i]
		name := cellName(ca)
		cb, ok := bc[name]
		if !ok {
			onlyA = append(onlyA, name)
			continue
		}
		seen[name] = true
		if ca.NOPM != nil && cb.NOPM != nil {
			num(name+".nopm", *ca.NOPM, *cb.NOPM)
		}
		num(name+".tpm", ca.TPM, cb.TPM)
		num(name+".p90_ms", ca.P90Ms, cb.P90Ms)
		if xa, xb := ca.Cost(), cb.Cost(); xa != nil && xb != nil {
			num(name+".round_trips", xa.RoundTrips, xb.RoundTrips)
			num(name+".bytes", xa.BytesSent+xa.BytesReceived, xb.BytesSent+xb.BytesReceived)
			num(name+".client_cpu_us", xa.ClientCPUUs, xb.ClientCPUUs)
		}
		if sa, sb := ca.ServerCPU(), cb.ServerCPU(); sa != nil && sb != nil {
			num(name+".server_cpu_us", *sa, *sb)
		}
	}
	for i := range b.Cells {
		if name := cellName(&b.Cells[i]); !seen[name] {
			onlyB = append(onlyB, name)
		}
	}
	return onlyA, onlyB
}

func stringMap(m map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = fmt.Sprint(v)
	}
	return out
}

// differing lists the keys whose values differ ("" when one side lacks it).
func differing(a, b map[string]string) []diffRow {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	out := []diffRow{}
	for _, k := range names {
		if a[k] != b[k] {
			out = append(out, diffRow{Name: k, A: a[k], B: b[k]})
		}
	}
	return out
}

func printDiff(out io.Writer, d *jobDiff) {
	// One table for every part, so that job A's and job B's columns are
	// the same on every line.
	var t textTable
	t.row("", fmt.Sprintf("job %d", d.A), fmt.Sprintf("job %d", d.B), "B/A")
	for _, r := range d.Jobs {
		t.row(r.Name, dash(fmt.Sprint(r.A)), dash(fmt.Sprint(r.B)))
	}
	t.line("")
	for _, r := range d.Figures {
		ratio := "-"
		if r.Ratio != nil {
			ratio = fmt.Sprintf("%.2f", *r.Ratio)
		}
		t.row(r.Name, figure(r.Name, r.A), figure(r.Name, r.B), ratio)
	}
	if d.NoFigures != "" {
		t.line("(no figures to compare: " + d.NoFigures + ")")
	}
	for _, sec := range []struct {
		title string
		cells []string
	}{{fmt.Sprintf("cells only in job %d:", d.A), d.OnlyA}, {fmt.Sprintf("cells only in job %d:", d.B), d.OnlyB}} {
		if len(sec.cells) > 0 {
			t.line("")
			t.line(sec.title + " " + strings.Join(sec.cells, ", "))
		}
	}
	for _, sec := range []struct {
		title string
		rows  []diffRow
	}{{"settings that differ:", d.Settings}, {"options that differ:", d.Options}} {
		if len(sec.rows) == 0 {
			continue
		}
		t.line("")
		t.line(sec.title)
		for _, r := range sec.rows {
			t.row("  "+r.Name, dash(fmt.Sprint(r.A)), dash(fmt.Sprint(r.B)))
		}
	}
	t.write(out)
}

// figure formats a figure of jobs diff by its name's unit.
func figure(name string, v any) string {
	if p, ok := v.(*float64); ok {
		if p == nil {
			return "-" // not measured
		}
		v = *p
	}
	f, _ := v.(float64)
	switch {
	case strings.HasSuffix(name, "_ms"):
		return ms(f)
	case strings.HasSuffix(name, "seconds"): // an analytic run's (tpch): Q1.seconds, throughput_seconds
		return fmt.Sprintf("%.4f", f)
	case strings.HasSuffix(name, "power"), strings.HasSuffix(name, "throughput"), strings.HasSuffix(name, "qphh"):
		return fmt.Sprintf("%.1f", f)
	case strings.HasSuffix(name, "round_trips"), strings.HasSuffix(name, "_switches"), strings.HasSuffix(name, "_cores"):
		return fmt.Sprintf("%.2f", f)
	case strings.HasSuffix(name, "client_cpu_us"), strings.HasSuffix(name, "_us"):
		return fmt.Sprintf("%.1f", f)
	case strings.HasPrefix(name, "server_waits."), strings.HasPrefix(name, "server_threads."):
		return fmt.Sprintf("%.0f%%", 100*f)
	case strings.HasSuffix(name, ".statements"), strings.HasSuffix(name, ".parses"), strings.HasSuffix(name, ".plans"):
		return fmt.Sprintf("%.2f", f)
	}
	return thousands(int64(f + 0.5))
}

// textTable lays out rows of cells in columns as wide as their widest
// cell (in characters, not bytes), two spaces apart; a line of its own
// (a title) takes no part in the columns.
type textTable struct {
	rows [][]string // a line of its own is one cell with lone set
	lone []bool
}

func (t *textTable) row(cells ...string) {
	t.rows = append(t.rows, cells)
	t.lone = append(t.lone, false)
}
func (t *textTable) line(s string) {
	t.rows = append(t.rows, []string{s})
	t.lone = append(t.lone, true)
}

func (t *textTable) write(out io.Writer) {
	var widths []int
	for i, r := range t.rows {
		if t.lone[i] {
			continue
		}
		for k, c := range r {
			if k == len(widths) {
				widths = append(widths, 0)
			}
			widths[k] = max(widths[k], utf8.RuneCountInString(c))
		}
	}
	for i, r := range t.rows {
		var b strings.Builder
		if t.lone[i] {
			b.WriteString(r[0])
		}
		for k, c := range r {
			if t.lone[i] {
				break
			}
			if k > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c)
			if k < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[k]-utf8.RuneCountInString(c)))
			}
		}
		fmt.Fprintln(out, strings.TrimRight(b.String(), " "))
	}
}

func newJobsExport(env *Env) *cobra.Command {
	var format, table string
	cmd := &cobra.Command{
		Use:   "export ID",
		Short: "Write a job as JSON (the whole record), CSV (its time series or per-type summary) or its server's stacks",
		Long: `Write a job on stdout.

--format json (default) writes the whole record: the job, its spec,
database, host, summary, time series ("samples"), the server's and sledge's
host's seconds ("system_samples"), histograms (HdrHistogram
V2 compressed, base64, in microseconds) and log.

--format csv writes one table, chosen with --table:
  series (default)  the transaction counter, one row per sample:
                    seq,elapsed_s,span_s,phase,completed,measured,errors,per_s,<one column per transaction type>
                    (counts are per sample interval; measured: of completed, those the summary
                    counts; per_s: completed per second)
  types             the per-type summary of a run, one row per type and a "total" row:
                    type,count,commits,rollbacks,errors,retries,mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,max_ms
  system            the server's and sledge's own host's seconds, one row per sample:
                    seq,elapsed_s,source,phase,seconds,host_usr,host_sys,host_iowait,host_idle,
                    other_cpu_s,server_cpu_user_s,server_cpu_sys_s,voluntary_switches,
                    involuntary_switches,run_delay_s,state_cpu,state_runnable,state_network,
                    state_lock,state_io,state_idle,port_bytes_in,port_bytes_out
                    (source: server or client_host; host_* shares of all CPUs' time and
                    state_* shares of thread samples, 0-1; other_cpu_s: CPU seconds of
                    processes other than sledge and a local server; the server's columns are
                    empty on client_host rows and where not measured)

--format folded writes the server's on-CPU stacks of a run made with
--stacks as recorded, one "process;frame;…;leaf COUNT" a line (flamegraph.pl,
inferno and speedscope read it). --format pprof writes them as a gzipped
pprof profile (go tool pprof reads it): sample types samples/count and
cpu/nanoseconds (a sample is 1/rate s of CPU), the process name as the root.
A job without stacks (no --stacks, the agent could not take them, a compare:
export one of its cells' jobs) is one line saying why, and exit status 1.`,
		Args: jobsArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "json", "csv", "folded", "pprof":
			default:
				return usageErr("--format %q: use json, csv, folded or pprof", format)
			}
			if table != "series" && table != "types" && table != "system" {
				return usageErr("--table %q: use series, types or system", table)
			}
			st, err := openJobs(cmd, env)
			if err != nil {
				return err
			}
			defer st.Close()
			r, err := getJob(cmd.Context(), st, args[0])
			if err != nil {
				return err
			}
			switch format {
			case "json":
				return writeJSON(env.Stdout, r)
			case "folded", "pprof":
				return writeStacks(env.Stdout, r, format)
			}
			w := csv.NewWriter(env.Stdout)
			switch table {
			case "series":
				writeSeriesCSV(w, r)
			case "system":
				writeSystemCSV(w, r) // jobs_system.go
			default:
				writeTypesCSV(w, r)
			}
			w.Flush()
			return w.Error()
		},
	}
	cmd.Flags().StringVar(&format, "format", "json", "json, csv, folded or pprof (the server's stacks)")
	cmd.Flags().StringVar(&table, "table", "series", "with --format csv: series (time series), types (per-type summary) or system (the server's and sledge's host's seconds)")
	return cmd
}

func writeSeriesCSV(w *csv.Writer, r *jobs.Record) {
	head := []string{"seq", "elapsed_s", "span_s", "phase", "completed", "measured", "errors", "per_s"}
	_ = w.Write(append(head, r.TxTypes...))
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, s := range r.Samples {
		per := 0.0
		if s.SpanMs > 0 {
			per = math.Round(float64(s.Completed)*1e6/float64(s.SpanMs)) / 1000
		}
		row := []string{strconv.Itoa(s.Seq), f(float64(s.ElapsedMs) / 1000), f(float64(s.SpanMs) / 1000), s.Phase,
			strconv.FormatInt(s.Completed, 10), strconv.FormatInt(s.Measured, 10), strconv.FormatInt(s.Errors, 10), f(per)}
		for i := range r.TxTypes {
			v := int64(0)
			if i < len(s.ByType) {
				v = s.ByType[i]
			}
			row = append(row, strconv.FormatInt(v, 10))
		}
		_ = w.Write(row)
	}
}

func writeTypesCSV(w *csv.Writer, r *jobs.Record) {
	_ = w.Write([]string{"type", "count", "commits", "rollbacks", "errors", "retries",
		"mean_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms"})
	s := runSummaryOf(&r.Job)
	if s == nil {
		return
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, t := range append(append([]txJSON{}, s.Types...), s.Total) {
		_ = w.Write([]string{t.Name, i(t.Count), i(t.Commits), i(t.Rollbacks), i(t.Errors), i(t.Retries),
			f(t.MeanMs), f(t.P50Ms), f(t.P90Ms), f(t.P95Ms), f(t.P99Ms), f(t.MaxMs)})
	}
}

func newJobsDelete(env *Env) *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a job and everything recorded with it",
		Args:  jobsArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseJobID(args[0])
			if err != nil {
				return err
			}
			st, err := openJobs(cmd, env)
			if err != nil {
				return err
			}
			defer st.Close()
			if err := st.Delete(cmd.Context(), id); err != nil {
				if errors.Is(err, jobs.ErrNotFound) {
					return fmt.Errorf("no job %d in %s", id, st.Path())
				}
				return err
			}
			if jsonOut {
				return writeJSON(env.Stdout, map[string]any{"deleted": id})
			}
			fmt.Fprintf(env.Stdout, "deleted job %d\n", id)
			return nil
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the result as JSON")
	return cmd
}

func newJobsRerun(env *Env) *cobra.Command {
	var dbURL string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "rerun ID",
		Short: "Run a recorded job again exactly as it was asked, as a new job",
		Long: `Run the job ID again from its stored spec: the same command, workload and
database, the options that were given (not the defaults of the sledge that
recorded it), and the seed and mode the first run resolved, so that a run
draws the same inputs. The new job is recorded like any other.

The stored database URL has no password: it comes from the variable the
driver reads (PGPASSWORD, MYSQL_PWD; the command line shown names it), or
give the URL again with --db.
--json prints the new job's result as the command's --json does.`,
		Args: jobsArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openJobs(cmd, env)
			if err != nil {
				return err
			}
			r, err := getJob(cmd.Context(), st, args[0])
			path := st.Path()
			_ = st.Close()
			if err != nil {
				return err
			}
			spec, err := runner.ParseSpec(r.Spec)
			if err != nil {
				return fmt.Errorf("job %d: %w", r.ID, err)
			}
			pwEnv := "" // the variable the recorded URL's password must come from
			if dbURL != "" {
				spec.DB = dbURL
			} else {
				spec.DB, pwEnv = db.Pasteable(spec.DB)
				spec.DB = strings.ReplaceAll(spec.DB, ":REDACTED@", "@")
			}
			argv, err := spec.Args(true)
			if err != nil {
				return fmt.Errorf("job %d: %w", r.ID, err)
			}
			argv = append(argv, "--jobs-db", path)
			if jsonOut {
				argv = append(argv, "--json")
			}
			shown := make([]string, len(argv))
			for i, a := range argv {
				shown[i] = db.Redact(a)
			}
			note := ""
			if pwEnv != "" {
				// As jobs show names it: the URL shown has no password.
				note = "  # password from " + pwEnv
			}
			fmt.Fprintf(env.Stderr, "rerunning job %d: sledge %s%s\n", r.ID, strings.Join(shown, " "), note)
			if code := Main(cmd.Context(), argv, *env); code != ExitOK {
				if pwEnv != "" && env.Getenv(pwEnv) == "" && code != ExitInterrupted {
					// The driver's "check the password in the URL" would
					// point at a URL that shows none.
					fmt.Fprintf(env.Stderr, "sledge: job %d's URL had a password, which the job store does not keep: set %s, or give the URL with --db\n", r.ID, pwEnv)
				}
				return runner.Silent{Code: code} // the command printed its error
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dbURL, "db", "", "the database URL, to give its password or point the job at another database")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the new job's result as JSON, as the command's --json does")
	return cmd
}
