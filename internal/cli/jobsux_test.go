package cli

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/jobs"
)

// Commands refused as bad input (exit 2) are not jobs and use up no ids,
// whether refused before the job is recorded (run's options) or after (a
// build's --build-vus); a command that ran and failed keeps its job.
func TestJobsRefusedCommandsUseNoIDs(t *testing.T) {
	home := t.TempDir()
	url := "sqlite://" + builtDB(t)
	if _, stderr, code := runCLI(t, home, "run", "--db", url, "--iterations", "2", "--vus", "1", "--json"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"run", "--db", url, "--mode", "bogus"},
		{"run", "--db", url, "--threshold", "bogus>3"},
		{"run", "--db", url, "--rampup", "0s", "--stop-timeout", "0s"},
		{"build", "--db", "sqlite://" + t.TempDir() + "/b.db", "--build-vus", "0"},
	} {
		if _, stderr, code := runCLI(t, home, args...); code != ExitUsage {
			t.Fatalf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
	// Fails when it opens the database: a job, kept as failed.
	if _, stderr, code := runCLI(t, home, "check", "--db", "sqlite://"+t.TempDir()+"/none/x.db"); code != ExitFailure {
		t.Fatalf("check of a missing database: exit %d, want 1: %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, home, "run", "--db", url, "--mode", "bogus"); code != ExitUsage {
		t.Fatalf("exit %d, want 2: %s", code, stderr)
	}
	stdout, stderr, code := runCLI(t, home, "run", "--db", url, "--iterations", "2", "--vus", "1", "--json")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	var sum runSummary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatal(err)
	}
	l := listJobs(t, home).Jobs
	if len(l) != 3 || l[0].ID != 3 || l[1].ID != 2 || l[1].Status != "failed" || l[2].ID != 1 {
		t.Fatalf("jobs %+v: want ids 3 (run), 2 (the failed check), 1 (run), none for the refused commands", l)
	}
	if sum.JobID != 3 {
		t.Errorf("the run's job_id is %d, want 3", sum.JobID)
	}
}

// Store.Discard gives a refused job's id back only while it is the last
// one given out; Delete never does.
func TestStoreDiscardGivesBackTheLastID(t *testing.T) {
	ctx := context.Background()
	st, err := jobs.Open(ctx, t.TempDir()+"/jobs.db")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	create := func() int64 {
		j := &jobs.Job{Kind: "run", Workload: "tpcc", Database: "sqlite:///x.db", Version: "test"}
		if err := st.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	steps := []struct {
		name string
		do   func() error
		next int64
	}{
		{"discard the last", func() error { return st.Discard(ctx, create()) }, 1},
		{"delete the last", func() error { return st.Delete(ctx, create()) }, 3}, // 2 is gone for good
		{"discard one before the last", func() error { id := create(); create(); return st.Discard(ctx, id) }, 6},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if id := create(); id != s.next {
			t.Errorf("%s: the next job is %d, want %d", s.name, id, s.next)
		}
	}
}

// Every command that records a job says its id: a last line "job N" in the
// text, job_id in --json; --no-job says none.
func TestJobsCommandsSayTheirJobID(t *testing.T) {
	home := t.TempDir()
	url := "sqlite://" + builtDB(t)
	lastLine := func(s string) string {
		lines := strings.Split(strings.TrimSpace(s), "\n")
		return lines[len(lines)-1]
	}
	cases := []struct {
		args []string
		json bool
	}{
		{[]string{"run", "--db", url, "--iterations", "2", "--vus", "1"}, false},
		{[]string{"run", "--db", url, "--iterations", "2", "--vus", "1", "--json"}, true},
		{[]string{"check", "--db", url}, false},
		{[]string{"check", "--db", url, "--json"}, true},
		{[]string{"build", "--db", "sqlite://" + t.TempDir() + "/b.db", "--json"}, true},
	}
	for i, c := range cases {
		want := int64(i + 1)
		stdout, stderr, code := runCLI(t, home, c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		if c.json {
			var v struct {
				JobID *int64 `json:"job_id"`
			}
			if err := json.Unmarshal([]byte(stdout), &v); err != nil || v.JobID == nil || *v.JobID != want {
				t.Errorf("%v: job_id %v (%v), want %d: %s", c.args, v.JobID, err, want, stdout)
			}
		} else if got := lastLine(stdout); got != "job "+strconv.FormatInt(want, 10) {
			t.Errorf("%v: last line %q, want \"job %d\"", c.args, got, want)
		}
	}
	stdout, _, _ := runCLI(t, home, "run", "--db", url, "--iterations", "2", "--vus", "1", "--json", "--no-job")
	if strings.Contains(stdout, "job_id") {
		t.Errorf("--no-job: a job_id: %s", stdout)
	}
	stdout, _, _ = runCLI(t, home, "check", "--db", url, "--no-job")
	if strings.Contains(stdout, "job ") {
		t.Errorf("--no-job: a job line: %s", stdout)
	}
}

// A run interrupted in its ramp-up measured nothing: NOPM and TPM are null
// in its --json, "-" in jobs list and diff (not 0), and diff says why.
func TestJobsRunInterruptedInRampupHasNoFigures(t *testing.T) {
	home := t.TempDir()
	url := "sqlite://" + builtDB(t)
	if _, stderr, code := runCLI(t, home, "run", "--db", url, "--rampup", "0s", "--duration", "1s", "--vus", "1"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	stdout, stderr, code := runCLIEnv(t, ctx, home, nil, "run", "--db", url, "--rampup", "1m", "--duration", "1m", "--vus", "1", "-R", "50", "--json")
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want 130: %s", code, stderr)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &raw); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	for _, k := range []string{"nopm", "tpm"} {
		if v, ok := raw[k]; !ok || string(v) != "null" {
			t.Errorf("--json %s = %s (present %v), want null", k, v, ok)
		}
	}
	l := listJobs(t, home).Jobs
	if len(l) != 2 || l[0].Status != "interrupted" || l[0].NOPM != nil || l[0].TPM != nil {
		t.Fatalf("listed %+v: want the interrupted run without NOPM and TPM", l)
	}
	text, _, _ := runCLI(t, home, "jobs", "list")
	row := regexp.MustCompile(`(?m)^2 .*interrupted.*$`).FindString(text)
	if f := strings.Fields(row); len(f) < 2 || f[len(f)-1] != "-" || f[len(f)-2] != "-" {
		t.Errorf("jobs list row %q: want NOPM and TPM \"-\"\n%s", row, text)
	}
	stdout, _, code = runCLI(t, home, "jobs", "diff", "1", "2", "--json")
	var d jobDiff
	if err := json.Unmarshal([]byte(stdout), &d); err != nil || code != 0 {
		t.Fatalf("diff: exit %d, %v: %s", code, err, stdout)
	}
	for _, r := range d.Figures {
		if r.B != nil {
			t.Errorf("diff figure %s of job 2: %v, want null", r.Name, r.B)
		}
	}
	if len(d.Figures) != 2 || !strings.Contains(d.NoFigures, "job 2 measured nothing") {
		t.Errorf("diff figures %+v, no_figures %q", d.Figures, d.NoFigures)
	}
}

// jobs list and diff agree: a check has no mode or VUs ("-", also one an
// older sledge recorded with them), an analytic run shows its query
// streams, and diff of jobs that cannot be compared says why in one line.
func TestJobsListAndDiffAgree(t *testing.T) {
	home := t.TempDir()
	url := "sqlite://" + builtDB(t)
	if _, stderr, code := runCLI(t, home, "run", "--db", url, "--iterations", "2", "--vus", "2", "--json"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, home, "check", "--db", url); code != 0 {
		t.Fatalf("check: exit %d: %s", code, stderr)
	}
	// Jobs as an older sledge recorded them: a check with the mode it
	// read with and 1 VU, a tpch run with its sessions (2 streams and the
	// refresh stream) in vus.
	ctx := context.Background()
	st, err := jobs.Open(ctx, home+"/sledge/jobs.db")
	if err != nil {
		t.Fatal(err)
	}
	old := []*jobs.Job{
		{Kind: "check", Workload: "tpcc", Database: url, Mode: "prepared", VUs: 1, Version: "old"},
		{Kind: "run", Workload: "tpch", Database: url, VUs: 3, Version: "old",
			Summary: json.RawMessage(`{"workload":"tpch","test":"both","streams":2,"power":10,"throughput":5,"qphh":7.1}`)},
	}
	for _, j := range old {
		if err := st.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		j.Status = jobs.Completed
		if err := st.Finish(ctx, j, nil); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	l := listJobs(t, home).Jobs // 4 tpch, 3 old check, 2 check, 1 run
	if len(l) != 4 {
		t.Fatalf("%d jobs: %+v", len(l), l)
	}
	for _, j := range l[1:3] {
		if j.Mode != "" || j.VUs != 0 {
			t.Errorf("check %d listed with mode %q and %d VUs: want none", j.ID, j.Mode, j.VUs)
		}
	}
	if l[0].Streams != 2 || l[0].VUs != 0 || l[3].VUs != 2 {
		t.Errorf("tpch listed with %d streams, %d VUs; the run with %d VUs: want 2, 0, 2", l[0].Streams, l[0].VUs, l[3].VUs)
	}
	text, _, _ := runCLI(t, home, "jobs", "list")
	for _, want := range []string{`(?m)^4 +run +tpch .* - +2 streams +completed`, `(?m)^3 +check +tpcc .* - +- +completed`, `(?m)^2 +check +tpcc .* - +- +completed`} {
		if !regexp.MustCompile(want).MatchString(text) {
			t.Errorf("jobs list has no line %s:\n%s", want, text)
		}
	}

	cases := []struct {
		a, b string
		vus  [2]string
		why  string
	}{
		{"1", "4", [2]string{"2", "2 streams"}, "job 1 ran tpcc and job 4 tpch: different workloads have no figures in common"},
		{"1", "2", [2]string{"2", "-"}, "job 1 is a run and job 2 a check: only two runs or two compares have figures to compare"},
		{"2", "3", [2]string{"-", "-"}, "jobs of kind check have no figures: only runs and compares do"},
	}
	for _, c := range cases {
		stdout, stderr, code := runCLI(t, home, "jobs", "diff", c.a, c.b, "--json")
		var d jobDiff
		if err := json.Unmarshal([]byte(stdout), &d); err != nil || code != 0 {
			t.Fatalf("diff %s %s: exit %d, %v: %s%s", c.a, c.b, code, err, stdout, stderr)
		}
		for _, r := range d.Jobs {
			if r.Name == "vus" && (r.A != c.vus[0] || r.B != c.vus[1]) {
				t.Errorf("diff %s %s: vus %v, %v; want %v as jobs list shows them", c.a, c.b, r.A, r.B, c.vus)
			}
		}
		if d.NoFigures != c.why || len(d.Figures) != 0 {
			t.Errorf("diff %s %s: %d figures, no_figures %q; want %q", c.a, c.b, len(d.Figures), d.NoFigures, c.why)
		}
		text, _, _ := runCLI(t, home, "jobs", "diff", c.a, c.b)
		if !strings.Contains(text, "(no figures to compare: "+c.why+")") {
			t.Errorf("diff %s %s text:\n%s", c.a, c.b, text)
		}
	}
}

// jobs rerun of a job whose URL had a password names the variable that
// must supply it, as jobs show does, and says so again when the command
// fails without it.
func TestJobsRerunNamesThePasswordVariable(t *testing.T) {
	home := t.TempDir()
	// Nothing listens on port 1: the run fails (exit 1) and is a job.
	url := "postgres://bench:s3cr3tpw@127.0.0.1:1/x?connect_timeout=5"
	if _, stderr, code := runCLI(t, home, "run", "--db", url, "--iterations", "1"); code != ExitFailure {
		t.Fatalf("run: exit %d, want 1: %s", code, stderr)
	}
	_, stderr, code := runCLI(t, home, "jobs", "rerun", "1")
	if code != ExitFailure {
		t.Fatalf("rerun: exit %d, want 1: %s", code, stderr)
	}
	if strings.Contains(stderr, "s3cr3tpw") {
		t.Errorf("the password in the output:\n%s", stderr)
	}
	for _, want := range []string{
		"rerunning job 1: sledge run tpcc --db postgres://bench@127.0.0.1:1/x?connect_timeout=5",
		"  # password from PGPASSWORD\n",
		"sledge: job 1's URL had a password, which the job store does not keep: set PGPASSWORD, or give the URL with --db\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("rerun's stderr lacks %q:\n%s", want, stderr)
		}
	}
	// With the variable set, no such line.
	_, stderr, _ = runCLIEnv(t, context.Background(), home, map[string]string{"PGPASSWORD": "s3cr3tpw"}, "jobs", "rerun", "1")
	if strings.Contains(stderr, "does not keep") {
		t.Errorf("PGPASSWORD set, still the hint:\n%s", stderr)
	}
}
