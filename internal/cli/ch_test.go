package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/workload/ch"
)

// chBuilt is a one-warehouse CH-benCHmark SQLite database (TPC-C's nine
// tables and supplier, nation, region).
var chBuilt = &sharedDB{name: "ch.db", args: []string{"build", "ch"}}

// chDB returns a fresh copy of chBuilt.
func chDB(t *testing.T) string { t.Helper(); return chBuilt.copy(t) }

// quickSeed's streams begin with quick queries (stream 0 with Q22, stream
// 1 with Q4: a tenth of a second each on SQLite at 1 warehouse), so that
// a short interval ends some queries however busy the machine is; a
// stream that began with Q5 or Q7 (8 s there) could end none.
const quickSeed = "19"

func TestQuickSeedBeginsQuickly(t *testing.T) {
	seed, _ := strconv.ParseUint(quickSeed, 10, 64)
	if a, b := ch.Order(seed, 0)[0], ch.Order(seed, 1)[0]; a != 22 || b != 4 {
		t.Fatalf("seed %s's streams now begin with Q%d and Q%d: pick a seed whose streams begin with quick queries", quickSeed, a, b)
	}
}

// chRun is the part of run ch's --json these tests read.
type chRun struct {
	Workload string   `json:"workload"`
	VUs      int      `json:"vus"`
	NOPM     *float64 `json:"nopm"`
	TPM      float64  `json:"tpm"`
	JobID    int64    `json:"job_id"`
	Analytic *struct {
		Streams        int      `json:"streams"`
		Queries        int64    `json:"queries"`
		Failed         int64    `json:"failed"`
		QueriesPerHour float64  `json:"queries_per_hour"`
		Source         string   `json:"source"`
		Errors         []string `json:"errors"`
		PerQuery       []struct {
			Query string  `json:"query"`
			Count int64   `json:"count"`
			AvgS  float64 `json:"avg_s"`
		} `json:"per_query"`
	} `json:"analytic"`
}

// Issue 28: terminals and analytic streams over one measured interval.
// NOPM comes from the database as in tpcc, the streams' queries from
// sledge's clock; both in the result, the job and the text summary.
func TestRunCHTerminalsAndStreams(t *testing.T) {
	u := "sqlite://" + chDB(t)
	home := t.TempDir()
	stdout, stderr, code := runCLI(t, home, "run", "ch", "--db", u, "--vus", "2", "--analytic-streams", "2",
		"--rampup", "0", "-T", "3s", "--seed", quickSeed, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r chRun
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if r.Workload != "ch" || r.NOPM == nil || *r.NOPM <= 0 || r.TPM <= 0 {
		t.Errorf("terminals: workload %q, NOPM %v, TPM %v", r.Workload, r.NOPM, r.TPM)
	}
	a := r.Analytic
	if a == nil {
		t.Fatalf("no analytic in %s", stdout)
	}
	if a.Streams != 2 || a.Source != "client" || len(a.PerQuery) != 22 {
		t.Fatalf("analytic: %d streams, source %q, %d queries named", a.Streams, a.Source, len(a.PerQuery))
	}
	var counted int64
	for i, q := range a.PerQuery {
		if q.Query != "Q"+strconv.Itoa(i+1) {
			t.Errorf("per_query[%d] is %q", i, q.Query)
		}
		counted += q.Count
		if q.Count > 0 && q.AvgS <= 0 {
			t.Errorf("%s: %d runs of mean %v s", q.Query, q.Count, q.AvgS)
		}
	}
	if a.Queries < 1 || counted != a.Queries || a.Failed != 0 || len(a.Errors) > 0 {
		t.Errorf("analytic: %d queries (%d by query), %d failed, errors %v", a.Queries, counted, a.Failed, a.Errors)
	}
	if want := float64(a.Queries) * 3600 / 3; a.QueriesPerHour < want*0.9 || a.QueriesPerHour > want*1.1 {
		t.Errorf("queries per hour %v for %d queries in about 3 s (want about %v)", a.QueriesPerHour, a.Queries, want)
	}
	// The job keeps it, and shows it as the run did.
	out, stderr, code := runCLI(t, home, "jobs", "show", strconv.FormatInt(r.JobID, 10))
	if code != ExitOK {
		t.Fatalf("jobs show: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"analytic: 2 streams beside the terminals", "queries per hour, counted by sledge", "NOPM"} {
		if !strings.Contains(out, want) {
			t.Errorf("jobs show lacks %q:\n%s", want, out)
		}
	}
	// jobs diff sets two runs' streams side by side.
	stdout, stderr, code = runCLI(t, home, "run", "ch", "--db", u, "--vus", "1", "--analytic-streams", "1",
		"--rampup", "0", "-T", "2s", "--seed", quickSeed, "--json")
	if code != ExitOK {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	var r2 chRun
	if err := json.Unmarshal([]byte(stdout), &r2); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = runCLI(t, home, "jobs", "diff", strconv.FormatInt(r.JobID, 10), strconv.FormatInt(r2.JobID, 10))
	if code != ExitOK || !strings.Contains(out, "analytic.queries_per_hour") {
		t.Errorf("jobs diff: exit %d: %s%s", code, out, stderr)
	}
}

// --vus 0: the streams alone, on the engine's clock; no transaction.
func TestRunCHStreamsAlone(t *testing.T) {
	u := "sqlite://" + chDB(t)
	stdout, stderr, code := runCLI(t, t.TempDir(), "run", "ch", "--db", u, "--vus", "0", "--analytic-streams", "1",
		"--rampup", "0", "-T", "2s", "--seed", quickSeed, "--json", "--no-job")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r chRun
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if r.VUs != 0 || r.TPM != 0 || r.Analytic == nil || r.Analytic.Queries < 1 {
		t.Fatalf("vus %d, TPM %v, analytic %+v", r.VUs, r.TPM, r.Analytic)
	}
	// Without streams --vus 0 is what it always was: bad input.
	_, stderr, code = runCLI(t, t.TempDir(), "run", "ch", "--db", u, "--vus", "0", "--analytic-streams", "0", "--no-job")
	if code != ExitUsage || !strings.Contains(stderr, "--vus must be at least 1") {
		t.Errorf("--vus 0 without streams: exit %d: %s", code, stderr)
	}
}

// compare ch: the terminals alone, the streams alone and both, set side
// by side in --json, the table, the HTML report and the job store.
func TestCompareCH(t *testing.T) {
	u := "sqlite://" + chDB(t)
	home := t.TempDir()
	html := filepath.Join(home, "ch.html")
	// Without --mode: the database's default mode alone (three cells, not
	// three per mode).
	stdout, stderr, code := runCLI(t, home, "compare", "ch", "--db", u, "-c", "2",
		"--analytic-streams", "1", "--rampup", "0", "-T", "3", "--seed", quickSeed, "--json", "--html", html)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var c struct {
		Cells []struct {
			Side     string   `json:"side"`
			VUs      int      `json:"vus"`
			NOPM     *float64 `json:"nopm"`
			JobID    *int64   `json:"job_id"`
			Analytic *struct {
				Queries int64 `json:"queries"`
			} `json:"analytic"`
		} `json:"cells"`
		Interference []struct {
			VUs              int      `json:"vus"`
			Streams          int      `json:"streams"`
			NOPMAlone        *float64 `json:"nopm_alone"`
			NOPMWithAnalytic *float64 `json:"nopm_with_analytic"`
			NOPMRatio        *float64 `json:"nopm_ratio"`
			QphAlone         *float64 `json:"qph_alone"`
			QphWithTerminals *float64 `json:"qph_with_terminals"`
			Queries          []struct {
				Query string `json:"query"`
			} `json:"queries"`
		} `json:"interference"`
		JobID int64 `json:"job_id"`
	}
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	pinKeys(t, "compare ch", stdout, map[string]kind{
		"cells[].side": jString, "interference[].mode": jString, "interference[].transport": jString,
		"interference[].vus": jNumber, "interference[].streams": jNumber,
		"interference[].nopm_alone": jNumNil, "interference[].nopm_with_analytic": jNumNil, "interference[].nopm_ratio": jNumNil,
		"interference[].qph_alone": jNumNil, "interference[].qph_with_terminals": jNumNil, "interference[].qph_ratio": jNumNil,
		"interference[].queries[].query": jString, "interference[].queries[].alone_s": jNumNil,
		"interference[].queries[].with_terminals_s": jNumNil, "interference[].queries[].slowdown": jNumNil,
	})
	if len(c.Cells) != 3 {
		t.Fatalf("%d cells, want 3", len(c.Cells))
	}
	for i, want := range []struct {
		side      string
		vus       int
		streaming bool
	}{{"oltp", 2, false}, {"analytic", 0, true}, {"both", 2, true}} {
		cell := c.Cells[i]
		if cell.Side != want.side || cell.VUs != want.vus || (cell.Analytic != nil) != want.streaming || cell.JobID == nil {
			t.Errorf("cell %d: side %q, %d VUs, analytic %v, job %v; want %+v", i, cell.Side, cell.VUs, cell.Analytic != nil, cell.JobID, want)
		}
	}
	if len(c.Interference) != 1 {
		t.Fatalf("%d interference groups, want 1", len(c.Interference))
	}
	g := c.Interference[0]
	if g.VUs != 2 || g.Streams != 1 || g.NOPMAlone == nil || g.NOPMWithAnalytic == nil || g.NOPMRatio == nil ||
		g.QphAlone == nil || g.QphWithTerminals == nil || len(g.Queries) != 22 {
		t.Fatalf("interference: %+v", g)
	}
	if *g.NOPMRatio != *g.NOPMWithAnalytic / *g.NOPMAlone {
		t.Errorf("nopm_ratio %v is not %v / %v", *g.NOPMRatio, *g.NOPMWithAnalytic, *g.NOPMAlone)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "2 terminals alone", "1 stream alone", "2 terminals with 1 stream", "NOPM both / alone", "Q22"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
	out, stderr, code := runCLI(t, home, "jobs", "show", strconv.FormatInt(c.JobID, 10))
	if code != ExitOK {
		t.Fatalf("jobs show: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "what each side costs the other: prepared") || !strings.Contains(out, "queries per hour (streams)") {
		t.Errorf("jobs show of the compare lacks the sides:\n%s", out)
	}
	// What compare ch refuses, each in one line with exit 2.
	for _, bad := range [][]string{
		{"--analytic-streams", "0"},
		{"-t", "10"},
	} {
		args := append([]string{"compare", "ch", "--db", u, "--no-job"}, bad...)
		_, stderr, code := runCLI(t, home, args...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d: %s", bad, code, stderr)
		}
	}
}

// The run's --json keys of issue 28, pinned (docs/contracts.md).
func TestContractRunCH(t *testing.T) {
	u := "sqlite://" + chDB(t)
	stdout, stderr, code := runCLI(t, t.TempDir(), "run", "ch", "--db", u, "--vus", "1", "--analytic-streams", "1",
		"--rampup", "0", "-T", "2s", "--seed", quickSeed, "--json", "--no-job")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	pinKeys(t, "run ch", stdout, map[string]kind{
		"nopm": jNumNil, "tpm": jNumber, "transactions.new_order.count": jNumber,
		"analytic.streams": jNumber, "analytic.queries": jNumber, "analytic.failed": jNumber,
		"analytic.queries_per_hour": jNumber, "analytic.source": jString,
		"analytic.per_query[].query": jString, "analytic.per_query[].count": jNumber,
		"analytic.per_query[].failed": jNumber, "analytic.per_query[].avg_s": jNumber,
		"analytic.per_query[].min_s": jNumber, "analytic.per_query[].max_s": jNumber,
		"analytic.per_query[].rows": jNumber,
	})
	// Without streams there is no analytic object: a tpcc run's keys.
	stdout, stderr, code = runCLI(t, t.TempDir(), "run", "ch", "--db", u, "--vus", "1", "--analytic-streams", "0",
		"--rampup", "0", "-T", "1s", "--json", "--no-job")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, `"analytic"`) {
		t.Error("analytic in a run without streams")
	}
}
