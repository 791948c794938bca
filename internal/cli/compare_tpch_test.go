package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sledge-bench/sledge/internal/runner"
)

// tpchBuilt is a TPC-H-derived SQLite database at SF 0.01.
var tpchBuilt = &sharedDB{name: "tpch.db", args: []string{"build", "tpch", "--scale", "0.01"}}

// tpchDB returns a fresh copy of tpchBuilt.
func tpchDB(t *testing.T) string { t.Helper(); return tpchBuilt.copy(t) }

// tpchCompareOut is compare tpch's --json.
type tpchCompareOut struct {
	Workload string `json:"workload"`
	Cells    []struct {
		Database   string            `json:"database"`
		Driver     string            `json:"driver"`
		DBVersion  string            `json:"db_version"`
		JobID      *int64            `json:"job_id"`
		Power      *float64          `json:"power"`
		Throughput *float64          `json:"throughput"`
		QphH       *float64          `json:"qphh"`
		Verified   *bool             `json:"verified"`
		Ratio      *float64          `json:"ratio"`
		Queries    []json.RawMessage `json:"queries"`
	} `json:"cells"`
	Queries []struct {
		Query   int                `json:"query"`
		Seconds map[string]float64 `json:"seconds"`
	} `json:"queries"`
	Seed  uint64 `json:"seed"`
	JobID int64  `json:"job_id"`
}

// Issue 15: the same tpch power test on SQLite and on PostgreSQL, compared
// query by query; each database's run is a job, and so is the compare,
// which jobs show, diff and list read back.
func TestCompareTPCHSQLiteAndPostgres(t *testing.T) {
	srv := pgLazy.Get(t)
	lite := "sqlite://" + tpchDB(t)
	pg := ownDB(t, srv, "tpch_compare")
	home := t.TempDir()
	if _, stderr, code := runCLI(t, home, "build", "tpch", "--db", pg, "--scale", "0.01", "--no-job"); code != 0 {
		t.Fatalf("build tpch on postgres: exit %d: %s", code, stderr)
	}
	html := filepath.Join(home, "tpch.html")
	stdout, stderr, code := runCLI(t, home, "compare", "tpch", "--db", lite, "--db", pg, "--test", "power", "--no-refresh",
		"--seed", "7", "--json", "--html", html)
	if code != 0 {
		t.Fatalf("compare tpch: exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout+stderr, srv.Password) {
		t.Error("the output shows the password")
	}
	var out tpchCompareOut
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("bad JSON %v: %s", err, stdout)
	}
	if out.Workload != "tpch" || out.Seed != 7 || out.JobID == 0 || len(out.Cells) != 2 {
		t.Fatalf("compare tpch: %+v", out)
	}
	for i, want := range []string{"sqlite", "postgres"} {
		c := out.Cells[i]
		if c.Driver != want || c.DBVersion == "" || c.JobID == nil || c.Power == nil || *c.Power <= 0 || c.Throughput != nil ||
			c.QphH != nil || c.Ratio == nil || len(c.Queries) != 22 {
			t.Errorf("cell %d: %+v, want %s with a job, a power figure, a ratio, 22 queries and no throughput test", i, c, want)
		}
	}
	if r := out.Cells[0].Ratio; r == nil || *r != 1 {
		t.Errorf("the first database's ratio is %v, want 1", r)
	}
	if len(out.Queries) != 22 {
		t.Fatalf("%d queries, want 22", len(out.Queries))
	}
	for i, q := range out.Queries {
		a, okA := q.Seconds[out.Cells[0].Database]
		b, okB := q.Seconds[out.Cells[1].Database]
		if q.Query != i+1 || !okA || !okB || a <= 0 || b <= 0 {
			t.Errorf("queries[%d]: %+v, want Q%d's seconds on both databases", i, q, i+1)
		}
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatalf("--html: %v", err)
	}
	if n := strings.Count(string(page), `class="bar"`); n != 44 || strings.Contains(string(page), srv.Password) {
		t.Errorf("the report has %d bars (want 22 × 2) or shows the password", n)
	}

	// jobs show of a database's run: the summary run prints, not JSON.
	a, b := *out.Cells[0].JobID, *out.Cells[1].JobID
	show, stderr, code := runCLI(t, home, "jobs", "show", strconv.FormatInt(b, 10))
	if code != 0 || !strings.Contains(show, "Power@Size") || !strings.Contains(show, "Q22") || strings.Contains(show, `"queries"`) {
		t.Errorf("jobs show %d: exit %d: %s%s", b, code, show, stderr)
	}
	// --json keeps the raw summary.
	raw, _, _ := runCLI(t, home, "jobs", "show", strconv.FormatInt(b, 10), "--json")
	if !strings.Contains(raw, `"qphh"`) {
		t.Errorf("jobs show --json: no summary keys: %s", raw)
	}
	// jobs show of the compare: its table.
	show, _, code = runCLI(t, home, "jobs", "show", strconv.FormatInt(out.JobID, 10))
	if code != 0 || !strings.Contains(show, "B/A") || !strings.Contains(show, "Q22") || !strings.Contains(show, "--db "+lite) {
		t.Errorf("jobs show %d (the compare): exit %d: %s", out.JobID, code, show)
	}
	// jobs diff of the two runs: per-query seconds with B/A.
	diff, stderr, code := runCLI(t, home, "jobs", "diff", strconv.FormatInt(a, 10), strconv.FormatInt(b, 10), "--json")
	if code != 0 {
		t.Fatalf("jobs diff: exit %d: %s", code, stderr)
	}
	var d struct {
		Figures []struct {
			Name  string   `json:"name"`
			Ratio *float64 `json:"ratio"`
		} `json:"figures"`
	}
	if err := json.Unmarshal([]byte(diff), &d); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range d.Figures {
		names[f.Name] = f.Ratio != nil
	}
	for _, want := range []string{"power", "Q1.seconds", "Q22.seconds"} {
		if !names[want] {
			t.Errorf("jobs diff %d %d: no %s with a ratio in %s", a, b, want, diff)
		}
	}
	// jobs list: the headline in NOPM's place.
	list, _, _ := runCLI(t, home, "jobs", "list")
	if !strings.Contains(list, " Power") {
		t.Errorf("jobs list: no Power figure:\n%s", list)
	}
	list, _, _ = runCLI(t, home, "jobs", "list", "--json")
	var l struct {
		Jobs []struct {
			ID            int64    `json:"id"`
			Headline      string   `json:"headline"`
			HeadlineValue *float64 `json:"headline_value"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(list), &l); err != nil {
		t.Fatal(err)
	}
	for _, j := range l.Jobs {
		if (j.ID == a || j.ID == b) && (j.Headline != "Power" || j.HeadlineValue == nil) {
			t.Errorf("jobs list --json: job %d: headline %q %v, want Power and its value", j.ID, j.Headline, j.HeadlineValue)
		}
	}
}

// The terminal's table: a row per query, a column per database, the
// composite figures, and B/A.
func TestCompareTPCHTable(t *testing.T) {
	home := t.TempDir()
	a, b := "sqlite://"+tpchDB(t), "sqlite://"+tpchDB(t)
	stdout, stderr, code := runCLI(t, home, "compare", "tpch", "--db", a, "--db", b, "--test", "power", "--no-refresh", "--queries", "1-4,22")
	if code != 0 {
		t.Fatalf("compare tpch: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"A  " + a, "B  " + b, "A s", "B s", "B/A", "Q1 ", "Q4 ", "Q22 ", "Power ", "Throughput ", "QphH "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in the table:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "Q5 ") {
		t.Errorf("--queries 1-4,22: Q5 in the table:\n%s", stdout)
	}
	for _, want := range []string{"database 1/2: " + a, "database 2/2: " + b, "Power@Size"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("no %q on stderr:\n%s", want, stderr)
		}
	}

	// Two compares are compared database by database (query by query:
	// --queries leaves no composite figures): a database only one of them
	// ran is listed.
	stdout, stderr, code = runCLI(t, home, "compare", "tpch", "--db", a, "--test", "power", "--no-refresh", "--queries", "1-4,22", "--json")
	if code != 0 {
		t.Fatalf("compare tpch (one database): exit %d: %s", code, stderr)
	}
	var second struct {
		JobID int64 `json:"job_id"`
	}
	if err := json.Unmarshal([]byte(stdout), &second); err != nil || second.JobID == 0 {
		t.Fatalf("compare tpch --json: %v %s", err, stdout)
	}
	list, _, _ := runCLI(t, home, "jobs", "list", "--json")
	var jl struct {
		Jobs []struct {
			ID   int64  `json:"id"`
			Kind string `json:"kind"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(list), &jl); err != nil {
		t.Fatal(err)
	}
	var first int64
	for _, j := range jl.Jobs {
		if j.Kind == "compare" && j.ID != second.JobID {
			first = j.ID
		}
	}
	diff, stderr, code := runCLI(t, home, "jobs", "diff", strconv.FormatInt(first, 10), strconv.FormatInt(second.JobID, 10))
	if code != 0 {
		t.Fatalf("jobs diff: exit %d: %s", code, stderr)
	}
	for _, want := range []string{a + ".Q1.seconds", a + ".Q22.seconds", "only in job " + strconv.FormatInt(first, 10) + ": " + b} {
		if !strings.Contains(diff, want) {
			t.Errorf("jobs diff of two compares: no %q in\n%s", want, diff)
		}
	}
}

// The matrix's flags are not for tpch, and several --db not for the
// matrix: one line, exit 2.
func TestCompareTPCHRefuses(t *testing.T) {
	home := t.TempDir()
	u := "sqlite://" + filepath.Join(home, "none.db")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"vus", []string{"compare", "tpch", "--db", u, "--vus", "2"}, "--vus: not for compare tpch"},
		{"modes", []string{"compare", "tpch", "--db", u, "--modes", "client"}, "--modes: not for compare tpch"},
		{"mode", []string{"compare", "tpch", "--db", u, "--mode", "client"}, "--modes: not for compare tpch"},
		{"duration", []string{"compare", "tpch", "--db", u, "-T", "5"}, "--duration: not for compare tpch"},
		{"two", []string{"compare", "tpch", "--db", u, "--transports", "tcp", "--iterations", "3"}, "--transports, --iterations: not for compare tpch"},
		{"tpcc on two databases", []string{"compare", "tpcc", "--db", u, "--db", u}, "compare tpcc takes one --db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, home, append(tc.args, "--no-job")...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want 2 and one line with %q", code, stderr, tc.want)
			}
		})
	}
}

// A tpch run through runner.Execute (as compare's cells, the service and
// jobs rerun run it) prints its result as JSON and hands its step lines
// to Exec.Progress, though --json prints none on stderr.
func TestExecuteTPCHProgress(t *testing.T) {
	u := "sqlite://" + tpchDB(t)
	var mu sync.Mutex
	var lines []string
	var stderr strings.Builder
	res := runner.Execute(t.Context(), runner.Spec{Version: runner.SpecVersion, Kind: "run", Workload: "tpch", DB: u,
		Options: map[string]any{"test": "power", "no-refresh": true, "queries": "1,2"}},
		runner.Exec{NoJob: true, Stderr: &stderr, Progress: func(l string) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, l)
		}})
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Err)
	}
	var r struct {
		Power   *float64 `json:"power"`
		Queries []any    `json:"queries"`
	}
	if err := json.Unmarshal(res.JSON, &r); err != nil || len(r.Queries) != 2 {
		t.Fatalf("result %v: %s", err, res.JSON)
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(lines, "\n")
	for _, want := range []string{"stream 0  Q1 ", "stream 0  Q2 "} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in the progress lines:\n%s", want, all)
		}
	}
	if strings.Contains(stderr.String(), "stream 0") {
		t.Errorf("--json printed the steps on stderr: %s", stderr.String())
	}
}
