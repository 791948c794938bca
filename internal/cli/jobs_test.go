package cli

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/db/sqlite"
	"github.com/sledge-bench/sledge/internal/jobs"
)

// runCLIEnv is runCLI with a context and extra environment variables.
func runCLIEnv(t *testing.T, ctx context.Context, home string, vars map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "XDG_DATA_HOME" || k == "HOME" {
			return home
		}
		return vars[k]
	}}
	code = Main(ctx, args, env)
	return out.String(), errb.String(), code
}

// listed is `jobs list --json`.
type listed struct {
	Store string     `json:"store"`
	Jobs  []listJSON `json:"jobs"`
}

func listJobs(t *testing.T, home string, extra ...string) listed {
	t.Helper()
	stdout, stderr, code := runCLI(t, home, append([]string{"jobs", "list", "--json"}, extra...)...)
	if code != 0 {
		t.Fatalf("jobs list: exit %d: %s", code, stderr)
	}
	var l listed
	if err := json.Unmarshal([]byte(stdout), &l); err != nil {
		t.Fatalf("jobs list --json: %v: %s", err, stdout)
	}
	return l
}

func showJob(t *testing.T, home string, id string) *jobs.Record {
	t.Helper()
	stdout, stderr, code := runCLI(t, home, "jobs", "show", id, "--json")
	if code != 0 {
		t.Fatalf("jobs show %s: exit %d: %s", id, code, stderr)
	}
	var r jobs.Record
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("jobs show --json: %v: %s", err, stdout)
	}
	return &r
}

// A short run is a job with its summary, histograms, log and a time series
// whose measured samples add up to the summary; every jobs command reads it.
func TestJobsRecordRunAndCommands(t *testing.T) {
	home := t.TempDir()
	url := "sqlite://" + builtDB(t)
	stdout, stderr, code := runCLI(t, home, "run", "--db", url, "--rampup", "0s", "--duration", "3s", "--vus", "2", "-R", "100", "--json")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	var sum runSummary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCLI(t, home, "check", "--db", url); code != 0 {
		t.Fatalf("check: exit %d: %s", code, stderr)
	}

	l := listJobs(t, home)
	if want := filepath.Join(home, "sledge", "jobs.db"); l.Store != want {
		t.Errorf("store %s, want %s", l.Store, want)
	}
	if len(l.Jobs) != 2 || l.Jobs[0].Kind != "check" || l.Jobs[1].Kind != "run" {
		t.Fatalf("jobs %+v, want a check then a run, newest first", l.Jobs)
	}
	run := l.Jobs[1]
	if run.Status != "completed" || run.Mode != "prepared" || run.VUs != 2 || run.Database != url ||
		run.NOPM == nil || *run.NOPM != *sum.NOPM || run.TPM == nil || *run.TPM != sum.TPM {
		t.Errorf("listed run %+v, summary NOPM %v TPM %v", run, *sum.NOPM, sum.TPM)
	}

	r := showJob(t, home, "1")
	if r.DB.Driver != "sqlite" || r.DB.Settings["journal_mode"] == "" || r.Host.CPUs == 0 || r.Version == "" ||
		len(r.TxTypes) != 5 || r.Ended.IsZero() {
		t.Errorf("record %+v", r.Job)
	}
	var spec jobSpec
	if err := json.Unmarshal(r.Spec, &spec); err != nil || spec.Command != "run" || spec.Options["duration"] != "3s" ||
		spec.Options["vus"] != float64(2) || spec.Options["seed"] != float64(sum.Seed) {
		t.Errorf("spec %s (%v), seed %d", r.Spec, err, sum.Seed)
	}
	if len(r.Histograms) != 5 || r.Histograms[0].TxType != "neword" || !strings.HasPrefix(r.Histograms[0].HDR, "HIST") {
		t.Errorf("histograms %+v", r.Histograms)
	}
	if len(r.Log) == 0 || !strings.HasPrefix(r.Log[0].Line, "running tpcc on") {
		// --json prints no "running" line; the log is what stderr had.
		if len(r.Log) != 0 {
			t.Errorf("log %+v", r.Log)
		}
	}

	// The time series: about one sample a second; the measured counts add
	// up to the summary exactly, and the samples of the measure phase
	// within the sampling boundary (the transactions in flight at the end).
	var measured, inMeasure int64
	byType := make([]int64, 5)
	for _, s := range r.Samples {
		measured += s.Measured
		if s.Phase == "measure" {
			inMeasure += s.Completed
			for i, n := range s.ByType {
				byType[i] += n
			}
		}
	}
	if measured != sum.Total.Count {
		t.Errorf("measured samples add up to %d, the summary counts %d", measured, sum.Total.Count)
	}
	if n := len(r.Samples); n < 3 || n > 6 {
		t.Errorf("%d samples for a 3s run: %+v", n, r.Samples)
	}
	slack := int64(float64(sum.Total.Count)/sum.MeasuredS*0.05) + 2*int64(sum.VUs) + 2
	if d := inMeasure - sum.Total.Count; d < -slack || d > slack {
		t.Errorf("measure samples add up to %d, the summary counts %d (slack %d)", inMeasure, sum.Total.Count, slack)
	}
	if d := byType[0] - sum.Types[0].Count; d < -slack || d > slack {
		t.Errorf("New-Orders in the samples %d, in the summary %d", byType[0], sum.Types[0].Count)
	}

	t.Run("show", func(t *testing.T) {
		stdout, _, code := runCLI(t, home, "jobs", "show", "1")
		for _, want := range []string{"job 1 · run tpcc · completed", "NOPM", "neword", "latencies measured by sledge",
			"transactions per second", "command   sledge run tpcc --db " + url, "--duration 3s", "host "} {
			if !strings.Contains(stdout, want) {
				t.Errorf("jobs show lacks %q:\n%s", want, stdout)
			}
		}
		if code != 0 {
			t.Errorf("exit %d", code)
		}
	})
	t.Run("export csv series", func(t *testing.T) {
		stdout, stderr, code := runCLI(t, home, "jobs", "export", "1", "--format", "csv")
		rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
		if code != 0 || err != nil {
			t.Fatalf("exit %d %v %s", code, err, stderr)
		}
		head := strings.Join(rows[0], ",")
		if head != "seq,elapsed_s,span_s,phase,completed,measured,errors,per_s,neword,payment,delivery,slev,ostat" || len(rows) != len(r.Samples)+1 {
			t.Errorf("csv:\n%s", stdout)
		}
	})
	t.Run("export csv types", func(t *testing.T) {
		stdout, _, _ := runCLI(t, home, "jobs", "export", "1", "--format", "csv", "--table", "types")
		rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
		if err != nil || len(rows) != 7 || rows[1][0] != "neword" || rows[6][0] != "total" {
			t.Errorf("csv %v:\n%s", err, stdout)
		}
	})
	t.Run("export json", func(t *testing.T) {
		stdout, _, _ := runCLI(t, home, "jobs", "export", "1")
		var rec jobs.Record
		if err := json.Unmarshal([]byte(stdout), &rec); err != nil || rec.ID != 1 || len(rec.Samples) != len(r.Samples) {
			t.Errorf("export json %v: %.300s", err, stdout)
		}
	})
	t.Run("diff", func(t *testing.T) {
		if _, stderr, code := runCLI(t, home, "run", "--db", url, "--iterations", "100", "--mode", "client", "--json"); code != 0 {
			t.Fatal(stderr)
		}
		stdout, _, code := runCLI(t, home, "jobs", "diff", "1", "3", "--json")
		var d jobDiff
		if err := json.Unmarshal([]byte(stdout), &d); err != nil || code != 0 {
			t.Fatalf("diff: exit %d %v %s", code, err, stdout)
		}
		fig := map[string]diffRow{}
		for _, f := range d.Figures {
			fig[f.Name] = f
		}
		if f := fig["total.count"]; f.B != float64(100) || f.Ratio == nil || *f.Ratio != 100/f.A.(float64) {
			t.Errorf("total.count %+v", f)
		}
		if _, ok := fig["nopm"]; !ok {
			t.Errorf("no nopm in %+v", d.Figures)
		}
		opts := map[string]bool{}
		for _, o := range d.Options {
			opts[o.Name] = true
		}
		if !opts["mode"] || !opts["iterations"] || opts["db"] {
			t.Errorf("options that differ: %+v", d.Options)
		}
		text, _, _ := runCLI(t, home, "jobs", "diff", "1", "3")
		for _, want := range []string{"job 1", "job 3", "B/A", "nopm", "neword.p90_ms", "options that differ:"} {
			if !strings.Contains(text, want) {
				t.Errorf("diff lacks %q:\n%s", want, text)
			}
		}
	})
	t.Run("delete", func(t *testing.T) {
		stdout, _, code := runCLI(t, home, "jobs", "delete", "2")
		if code != 0 || stdout != "deleted job 2\n" {
			t.Errorf("delete: exit %d %q", code, stdout)
		}
		if l := listJobs(t, home); len(l.Jobs) != 2 || l.Jobs[0].ID != 3 || l.Jobs[1].ID != 1 {
			t.Errorf("after delete: %+v", l.Jobs)
		}
	})
	t.Run("errors", func(t *testing.T) {
		path := filepath.Join(home, "sledge", "jobs.db")
		cases := []struct {
			args []string
			code int
			want string
		}{
			{[]string{"jobs", "show", "42"}, ExitFailure, "sledge: no job 42 in " + path + "\n"},
			{[]string{"jobs", "delete", "2"}, ExitFailure, "sledge: no job 2 in " + path + "\n"},
			{[]string{"jobs", "diff", "1", "42"}, ExitFailure, "sledge: no job 42 in " + path + "\n"},
			{[]string{"jobs", "export", "42", "--format", "csv"}, ExitFailure, "sledge: no job 42 in " + path + "\n"},
			{[]string{"jobs", "show", "one"}, ExitUsage, `sledge: "one" is not a job id: ids are whole numbers, see sledge jobs list` + "\n"},
			{[]string{"jobs", "export", "1", "--format", "xml"}, ExitUsage, `sledge: --format "xml": use json, csv, folded or pprof` + "\n"},
		}
		for _, c := range cases {
			_, stderr, code := runCLI(t, home, c.args...)
			if code != c.code || stderr != c.want {
				t.Errorf("%v: exit %d %q, want %d %q", c.args, code, stderr, c.code, c.want)
			}
		}
	})
}

// Where the store is, and when nothing is recorded.
func TestJobsStoreLocationAndNoJob(t *testing.T) {
	home := t.TempDir()
	url := "sqlite://" + builtDB(t)
	other := filepath.Join(t.TempDir(), "elsewhere.db")
	viaEnv := filepath.Join(t.TempDir(), "env.db")
	steps := []struct {
		args []string
		vars map[string]string
	}{
		{[]string{"run", "--db", url, "--iterations", "5", "--json", "--no-job"}, nil},
		{[]string{"run", "--mode", "bogus", "--db", url}, nil}, // usage error: not a job
		{[]string{"run", "--db", url, "--iterations", "5", "--json", "--jobs-db", other}, nil},
		{[]string{"check", "--db", url, "--json"}, map[string]string{"SLEDGE_JOBS_DB": viaEnv}},
	}
	for _, s := range steps {
		runCLIEnv(t, context.Background(), home, s.vars, s.args...)
	}
	if l := listJobs(t, home); len(l.Jobs) != 0 {
		t.Errorf("default store: %+v, want none", l.Jobs)
	}
	if l := listJobs(t, home, "--jobs-db", other); len(l.Jobs) != 1 || l.Jobs[0].Kind != "run" || l.Store != other {
		t.Errorf("--jobs-db store: %+v", l)
	}
	stdout, _, _ := runCLIEnv(t, context.Background(), home, map[string]string{"SLEDGE_JOBS_DB": viaEnv}, "jobs", "list")
	if !strings.Contains(stdout, "check") || !strings.Contains(stdout, "completed") {
		t.Errorf("$SLEDGE_JOBS_DB store:\n%s", stdout)
	}
	if stdout, _, _ := runCLI(t, t.TempDir(), "jobs", "list"); !strings.HasPrefix(stdout, "no jobs in ") {
		t.Errorf("empty store: %q", stdout)
	}
}

// Ctrl-C: the job is interrupted, with the summary of what was measured.
func TestJobsInterruptedRunKeepsSummary(t *testing.T) {
	home := t.TempDir()
	url := "sqlite://" + builtDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	_, stderr, code := runCLIEnv(t, ctx, home, nil, "run", "--db", url, "--rampup", "0s", "--duration", "1m", "-R", "100")
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want 130: %s", code, stderr)
	}
	r := showJob(t, home, "1")
	var sum runSummary
	if err := json.Unmarshal(r.Summary, &sum); err != nil || !sum.Interrupted || sum.Total.Count == 0 {
		t.Errorf("summary %v: %s", err, r.Summary)
	}
	if r.Status != jobs.Interrupted || len(r.Samples) < 2 || len(r.Histograms) == 0 {
		t.Errorf("status %s, %d samples, %d histograms", r.Status, len(r.Samples), len(r.Histograms))
	}
	var lines []string
	for _, l := range r.Log {
		lines = append(lines, l.Line)
	}
	if log := strings.Join(lines, "\n"); !strings.Contains(log, "running tpcc") || !strings.Contains(log, "interrupted") {
		t.Errorf("log:\n%s", log)
	}
}

// Passwords never reach the store, its output or the log.
func TestJobsNeverKeepPasswords(t *testing.T) {
	const canary = "CANARY-PW-123"
	home := t.TempDir()
	sqlitePath := filepath.Join(t.TempDir(), "x.db")
	runs := []struct {
		args []string
		vars map[string]string
	}{
		{[]string{"run", "--db", "postgres://u:" + canary + "@127.0.0.1:1/x", "--iterations", "1"}, nil},
		{[]string{"build", "--db", "mysql://root:" + canary + "@127.0.0.1:1/x"}, nil},
		{[]string{"check"}, map[string]string{"SLEDGE_DB": "postgres://u:" + canary + "@127.0.0.1:1/x"}},
		{[]string{"run", "--db", "sqlite://" + sqlitePath + "?password=" + canary, "--iterations", "1"}, nil},
		{[]string{"run", "--db", "oracle://u:" + canary + "@h/x"}, nil},
	}
	var outputs []string
	jobbed := 0 // refused input (exit 2: a bad URL) is not a job
	for _, r := range runs {
		stdout, stderr, code := runCLIEnv(t, context.Background(), home, r.vars, r.args...)
		outputs = append(outputs, stdout, stderr)
		if code != ExitUsage {
			jobbed++
		}
	}
	l := listJobs(t, home)
	if len(l.Jobs) != jobbed || jobbed < 3 {
		t.Errorf("%d jobs recorded, want %d failed ones (of %d commands): %+v", len(l.Jobs), jobbed, len(runs), l.Jobs)
	}
	for _, j := range l.Jobs {
		if j.Status != "failed" {
			t.Errorf("job %+v", j)
		}
		id := strconv.FormatInt(j.ID, 10)
		for _, args := range [][]string{{"jobs", "show", id}, {"jobs", "show", id, "--json"},
			{"jobs", "export", id}, {"jobs", "export", id, "--format", "csv"}} {
			stdout, stderr, _ := runCLI(t, home, args...)
			outputs = append(outputs, stdout, stderr)
		}
	}
	stdout, _, _ := runCLI(t, home, "jobs", "list")
	outputs = append(outputs, stdout, l.Store)
	for i, o := range outputs {
		if strings.Contains(o, canary) {
			t.Errorf("output %d holds the password:\n%s", i, o)
		}
	}
	files, _ := filepath.Glob(filepath.Join(home, "sledge", "jobs.db*"))
	if len(files) == 0 {
		t.Fatal("no store files")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(canary)) {
			t.Errorf("%s holds the password", f)
		}
	}
}

// A run killed with SIGKILL leaves its job running with a dead process:
// readers report it incomplete, with the time series written until then,
// and the store is intact.
func TestJobsSurviveSIGKILL(t *testing.T) {
	bin := sledgeBinary(t)
	home := t.TempDir()
	path := builtDB(t)
	cmd := exec.Command(bin, "run", "--db", "sqlite://"+path, "--vus", "2", "--rampup", "0s", "--duration", "1m", "-R", "100")
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+home, "SLEDGE_JOBS_DB=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "running tpcc") {
	}
	go func() {
		for sc.Scan() { // keep the pipe drained
		}
	}()
	// Wait for three samples in the store (flushed every second), then kill.
	store := filepath.Join(home, "sledge", "jobs.db")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if n := countRows(t, store, "samples"); n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no samples in the store after 20s")
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	l := listJobs(t, home)
	if len(l.Jobs) != 1 || l.Jobs[0].Status != "incomplete" || l.Jobs[0].DurationS < 2 || l.Jobs[0].DurationS > 30 {
		t.Fatalf("after SIGKILL: %+v", l.Jobs)
	}
	r := showJob(t, home, "1")
	if len(r.Samples) < 3 || r.Samples[len(r.Samples)-1].Phase != "measure" || len(r.Summary) != 0 {
		t.Errorf("%d samples, summary %s", len(r.Samples), r.Summary)
	}
	text, _, _ := runCLI(t, home, "jobs", "show", "1")
	if !strings.Contains(text, "incomplete") || !strings.Contains(text, "transactions per second") {
		t.Errorf("jobs show:\n%s", text)
	}
	d, err := sql.Open(sqlite.SQLDriverName, store)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var ok string
	if err := d.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check: %q %v", ok, err)
	}
}

// countRows reads a table of a store another process is writing; a store
// not created yet has no rows.
func countRows(t *testing.T, path, table string) int {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return 0
	}
	d, err := sql.Open(sqlite.SQLDriverName, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var n int
	if err := d.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		return 0 // schema not created yet, or busy: try again
	}
	return n
}
