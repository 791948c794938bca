package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

type compareOut struct {
	Cells []struct {
		Mode         string          `json:"mode"`
		Transport    string          `json:"transport"`
		VUs          int             `json:"vus"`
		NOPM         *float64        `json:"nopm"`
		TPM          float64         `json:"tpm"`
		PerTxn       json.RawMessage `json:"per_txn"`
		JobID        *int64          `json:"job_id"`
		Ratio        *float64        `json:"ratio"`
		Transactions int64           `json:"transactions"`
		Errors       int64           `json:"errors"`
		Interrupted  bool            `json:"interrupted"`
	} `json:"cells"`
	Workload    string            `json:"workload"`
	DBVersion   string            `json:"db_version"`
	Seed        uint64            `json:"seed"`
	JobID       int64             `json:"job_id"`
	Interrupted bool              `json:"interrupted"`
	Settings    map[string]string `json:"db_settings"`
}

// compare on SQLite end to end: every cell a recorded run, ratios against
// the first, the compare itself a job, and an HTML report with charts.
func TestCompareSQLite(t *testing.T) {
	path := builtDB(t)
	home := t.TempDir()
	html := filepath.Join(home, "f.html")
	stdout, stderr, code := runCLI(t, home, "compare", "--db", "sqlite://"+path, "--modes", "client,prepared",
		"--vus", "1,2", "--iterations", "50", "--seed", "5", "--json", "--html", html)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	var out compareOut
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("bad JSON %v: %s", err, stdout)
	}
	want := []struct {
		mode string
		vus  int
	}{{"client", 1}, {"client", 2}, {"prepared", 1}, {"prepared", 2}}
	if len(out.Cells) != len(want) {
		t.Fatalf("%d cells, want %d: %s", len(out.Cells), len(want), stdout)
	}
	first := *out.Cells[0].NOPM
	ids := map[int64]bool{}
	for i, w := range want {
		c := out.Cells[i]
		if c.Mode != w.mode || c.VUs != w.vus || c.Transport != "embedded" {
			t.Errorf("cell %d is %s/%s/%d, want %s/embedded/%d", i, c.Mode, c.Transport, c.VUs, w.mode, w.vus)
		}
		if c.NOPM == nil || *c.NOPM <= 0 || c.TPM <= 0 || c.Transactions != int64(50*w.vus) || c.Errors != 0 {
			t.Errorf("cell %d: nopm %v tpm %v transactions %d errors %d", i, c.NOPM, c.TPM, c.Transactions, c.Errors)
		}
		if c.Ratio == nil || c.NOPM == nil || abs(*c.Ratio-*c.NOPM/first) > 1e-9 {
			t.Errorf("cell %d: ratio %v, want %v", i, c.Ratio, *c.NOPM/first)
		}
		if c.JobID == nil {
			t.Errorf("cell %d has no job", i)
		} else {
			ids[*c.JobID] = true
		}
	}
	if *out.Cells[0].Ratio != 1 || out.Seed != 5 || out.JobID == 0 || out.Workload != "tpcc" || out.DBVersion == "" {
		t.Errorf("header: %+v", out)
	}

	// Every cell is a run job of the store, and the compare a job of its
	// own whose summary lists them.
	list, _, code := runCLI(t, home, "jobs", "list", "--json")
	if code != 0 {
		t.Fatalf("jobs list: exit %d", code)
	}
	var jl struct {
		Jobs []struct {
			ID     int64  `json:"id"`
			Kind   string `json:"kind"`
			Status string `json:"status"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(list), &jl); err != nil {
		t.Fatal(err)
	}
	for _, j := range jl.Jobs {
		switch {
		case ids[j.ID] && j.Kind == "run" && j.Status == "completed":
			delete(ids, j.ID)
		case j.ID == out.JobID && (j.Kind != "compare" || j.Status != "completed"):
			t.Errorf("compare job %d: %s %s", j.ID, j.Kind, j.Status)
		}
	}
	if len(ids) != 0 {
		t.Errorf("cells' jobs missing from jobs list: %v\n%s", ids, list)
	}
	shown, _, _ := runCLI(t, home, "jobs", "show", "--json", strconv.FormatInt(out.JobID, 10))
	if !strings.Contains(shown, `"kind": "compare"`) || !strings.Contains(shown, `"job_id":`) {
		t.Errorf("compare job record lacks its cells:\n%.2000s", shown)
	}

	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"NOPM against virtual users", "<polyline", "client", "prepared", "round trips per transaction", "CPUs"} {
		if !strings.Contains(string(b), s) {
			t.Errorf("report lacks %q", s)
		}
	}
	if n := strings.Count(string(b), "<polyline"); n != 2 {
		t.Errorf("report has %d NOPM lines, want 2 (client, prepared)", n)
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// The text table: one row per cell, and "-" for costs a run did not report.
func TestCompareTable(t *testing.T) {
	path := builtDB(t)
	stdout, stderr, code := runCLI(t, t.TempDir(), "compare", "--db", "sqlite://"+path, "--modes", "client",
		"--vus", "1", "--iterations", "20", "--no-job")
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	for _, s := range []string{"mode", "NOPM", "rt/txn", "bytes/txn", "cpu µs/txn", "ratio", "client", "embedded", "1.00"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("table lacks %q:\n%s", s, stdout)
		}
	}
	if !strings.Contains(stderr, "cell 1/1: client · embedded · 1 VU") {
		t.Errorf("stderr: %s", stderr)
	}
}

// Bad matrices: one line before anything runs.
func TestCompareBadInput(t *testing.T) {
	path := builtDB(t)
	lite := "sqlite://" + path
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"procedure on sqlite", []string{"--db", lite, "--modes", "procedure,client"}, ExitUsage, "--modes procedure: sqlite has no stored procedures"},
		{"unknown mode", []string{"--db", lite, "--modes", "client,fast"}, ExitUsage, `unknown mode "fast"`},
		{"mode twice", []string{"--db", lite, "--modes", "client,client"}, ExitUsage, "client is given twice"},
		{"bad vus", []string{"--db", lite, "--vus", "1,x"}, ExitUsage, `--vus 1,x: "x" is not a whole number`},
		{"zero vus", []string{"--db", lite, "--vus", "0"}, ExitUsage, "at least 1"},
		{"tcp on sqlite", []string{"--db", lite, "--transports", "tcp"}, ExitUsage, "sqlite URLs have only the embedded transport"},
		{"unix without socket", []string{"--db", "postgres://u:secret@127.0.0.1:1/x", "--transports", "tcp,unix"}, ExitUsage, "--transports unix needs --socket PATH"},
		{"unknown transport", []string{"--db", lite, "--transports", "carrier-pigeon"}, ExitUsage, `unknown transport "carrier-pigeon"`},
		{"negative duration", []string{"--db", lite, "--iterations", "0", "--duration", "-1s"}, ExitUsage, "--duration must be positive"},
		{"html dir missing", []string{"--db", lite, "--html", "/nonexistent-dir/r.html"}, ExitUsage, "no directory /nonexistent-dir"},
		{"unreachable", []string{"--db", "postgres://u:secret@127.0.0.1:1/x", "--modes", "client"}, ExitFailure, "cannot reach PostgreSQL at 127.0.0.1:1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, t.TempDir(), append([]string{"compare", "--iterations", "1"}, c.args...)...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, stderr)
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.Contains(stderr, c.want) {
				t.Errorf("stderr is not one line saying %q: %q", c.want, stderr)
			}
			if strings.Contains(stdout+stderr, "secret") || strings.Contains(stderr, "cell 1/") {
				t.Errorf("password shown or a cell ran: %s%s", stdout, stderr)
			}
		})
	}
}

// Ctrl-C during a cell: that cell keeps what it measured, no other starts,
// the table is printed and the compare job is interrupted.
func TestCompareInterrupt(t *testing.T) {
	path := builtDB(t)
	home := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(1500 * time.Millisecond)
		cancel()
	}()
	stdout, stderr, code := runCLIEnv(t, ctx, home, nil, "compare", "--db", "sqlite://"+path, "--modes", "client",
		"--vus", "1,2", "--rampup", "0s", "--duration", "1m", "--json")
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d: %s", code, ExitInterrupted, stderr)
	}
	var out compareOut
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("bad JSON %v: %q", err, stdout)
	}
	if !out.Interrupted || len(out.Cells) != 1 || !out.Cells[0].Interrupted || out.Cells[0].Transactions == 0 {
		t.Errorf("interrupted compare: %s", stdout)
	}
}

// --modes all runs every mode the database and the workload support, in
// documentation order, and sets each two side by side (issue 13).
func TestCompareAllModes(t *testing.T) {
	path := builtDB(t)
	home := t.TempDir()
	stdout, stderr, code := runCLI(t, home, "compare", "--db", "sqlite://"+path, "--modes", "all", "--vus", "1", "-t", "20", "--json", "--no-job")
	if code != ExitOK {
		t.Fatalf("compare --modes all: exit %d: %s", code, stderr)
	}
	var c compareJSON
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatal(err)
	}
	var modes []string
	for _, cell := range c.Cells {
		modes = append(modes, cell.Mode)
	}
	// SQLite: no procedures, no pipeline, no blocks.
	if want := []string{"client", "prepared", "batched"}; !slices.Equal(modes, want) {
		t.Fatalf("cells in modes %v, want %v", modes, want)
	}
	var pairs []string
	for _, p := range c.Pairs {
		pairs = append(pairs, p.From+">"+p.To)
		if p.Ratio == nil || *p.Ratio <= 0 || p.ClientCPUUsDelta == nil || p.RoundTripsDelta == nil || *p.RoundTripsDelta != 0 {
			t.Errorf("pair %s: ratio %v, Δ client CPU %v, Δ round trips %v: want a ratio, a CPU change and no round trips (embedded)",
				pairs[len(pairs)-1], p.Ratio, p.ClientCPUUsDelta, p.RoundTripsDelta)
		}
	}
	if want := []string{"client>prepared", "client>batched", "prepared>batched"}; !slices.Equal(pairs, want) {
		t.Errorf("pairs %v, want %v", pairs, want)
	}
	_, stderr, code = runCLI(t, home, "compare", "tpcb", "--db", "sqlite://"+filepath.Join(t.TempDir(), "x.db"), "--modes", "batched", "--vus", "1", "-t", "1", "--no-job")
	if code != ExitUsage || !strings.Contains(stderr, "tpcb: --mode batched has no set-oriented form") {
		t.Errorf("compare tpcb --modes batched: exit %d, %q; want the workload's one-line refusal", code, stderr)
	}
}
