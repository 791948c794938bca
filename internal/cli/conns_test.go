package cli

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// Many virtual users over few connections, end to end on SQLite: every VU
// runs its iterations, the JSON says how many connections served them and
// how long the VUs waited, and the job records --connections.
func TestRunManyVUsOverFewConnections(t *testing.T) {
	path := builtDB(t)
	home := t.TempDir()
	stdout, stderr, code := runCLI(t, home, "run", "--db", "sqlite://"+path, "--vus", "40", "--connections", "4",
		"-t", "5", "--seed", "3", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		VUs         int `json:"vus"`
		Connections int `json:"connections"`
		ConnWait    *struct {
			Count  int64   `json:"count"`
			MeanMs float64 `json:"mean_ms"`
			MaxMs  float64 `json:"max_ms"`
		} `json:"connection_wait"`
		Total struct {
			Count  int64 `json:"count"`
			Errors int64 `json:"errors"`
		} `json:"total"`
		MeanMs float64 `json:"latency_avg_ms"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if res.VUs != 40 || res.Connections != 4 {
		t.Errorf("vus %d connections %d, want 40 and 4", res.VUs, res.Connections)
	}
	if res.Total.Count+res.Total.Errors != 200 || res.Total.Errors != 0 {
		t.Errorf("%d transactions and %d errors, want 200 and none", res.Total.Count, res.Total.Errors)
	}
	w := res.ConnWait
	if w == nil || w.Count != 200 || w.MaxMs < w.MeanMs || w.MeanMs > res.MeanMs {
		t.Errorf("connection_wait %+v (latency mean %.3f ms): want 200 waits, each part of its latency", w, res.MeanMs)
	}
	// 40 VUs queue for 4 connections: someone waited.
	if w != nil && w.MaxMs <= 0 {
		t.Errorf("no VU waited for a connection: %+v", w)
	}

	// The job keeps the option; jobs show prints it and the summary's words.
	l := listJobs(t, home)
	if len(l.Jobs) != 1 {
		t.Fatalf("jobs %+v", l.Jobs)
	}
	out, stderr, code := runCLI(t, home, "jobs", "show", strconv.FormatInt(l.Jobs[0].ID, 10))
	if code != ExitOK {
		t.Fatalf("jobs show: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"--connections 4", "40 virtual users over 4 connections", "connection wait: mean",
		"from the moment its virtual user asked for a connection"} {
		if !strings.Contains(out, want) {
			t.Errorf("jobs show has no %q:\n%s", want, out)
		}
	}

	// Without --connections: one per VU, and no wait to report.
	stdout, stderr, code = runCLI(t, home, "run", "--db", "sqlite://"+path, "--vus", "3", "-t", "2", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var plain map[string]any
	if err := json.Unmarshal([]byte(stdout), &plain); err != nil {
		t.Fatal(err)
	}
	if plain["connections"] != 3.0 || plain["connection_wait"] != nil {
		t.Errorf("own connections: connections %v, connection_wait %v; want 3 and none", plain["connections"], plain["connection_wait"])
	}
}

func TestTerminalsNote(t *testing.T) {
	for _, c := range []struct {
		wl              string
		vus, warehouses int
		want            string
	}{
		{"tpcc", 10, 1, ""},
		{"tpcc", 1000, 100, ""},
		{"tpcc", 11, 1, "11 terminals per warehouse: TPC-C has 10 (allowed; more terminals per warehouse than the specification's)"},
		{"tpcc", 10000, 100, "100 terminals per warehouse: TPC-C has 10 (allowed; more terminals per warehouse than the specification's)"},
		{"tpcc", 25, 2, "up to 13 terminals per warehouse: TPC-C has 10 (allowed; more terminals per warehouse than the specification's)"},
		{"tpcb", 100, 1, ""},
	} {
		if got := terminalsNote(c.wl, c.vus, c.warehouses); got != c.want {
			t.Errorf("terminalsNote(%s, %d, %d) = %q, want %q", c.wl, c.vus, c.warehouses, got, c.want)
		}
	}
	for _, c := range []struct {
		vus, conns int
		want       string
	}{
		{1, 0, "1 virtual user"},
		{4, 0, "4 virtual users"},
		{1, 1, "1 virtual user over 1 connection"},
		{10000, 200, "10000 virtual users over 200 connections"},
	} {
		if got := vusText(c.vus, c.conns); got != c.want {
			t.Errorf("vusText(%d, %d) = %q, want %q", c.vus, c.conns, got, c.want)
		}
	}
}

// A TPC-C run with more than ten terminals per warehouse says so.
func TestSummaryNotesTerminalsPerWarehouse(t *testing.T) {
	path := builtDB(t)
	stdout, stderr, code := runCLI(t, t.TempDir(), "run", "--db", "sqlite://"+path, "--vus", "12", "--connections", "2", "-t", "1", "--no-job")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "12 terminals per warehouse: TPC-C has 10 (allowed; more terminals per warehouse than the specification's)"
	if !strings.Contains(stdout, want) || !strings.Contains(stdout, "12 virtual users over 2 connections") {
		t.Errorf("summary:\n%s", stdout)
	}
}

// compare passes --connections on to every cell.
func TestCompareConnections(t *testing.T) {
	path := builtDB(t)
	home := t.TempDir()
	stdout, stderr, code := runCLI(t, home, "compare", "--db", "sqlite://"+path, "--modes", "prepared",
		"--vus", "3,6", "--connections", "2", "-t", "4", "--json")
	if code != ExitOK {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	var out struct {
		Connections int `json:"connections"`
		Cells       []struct {
			VUs          int    `json:"vus"`
			Transactions int64  `json:"transactions"`
			JobID        *int64 `json:"job_id"`
		} `json:"cells"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if out.Connections != 2 || len(out.Cells) != 2 {
		t.Fatalf("connections %d, %d cells: %s", out.Connections, len(out.Cells), stdout)
	}
	for _, c := range out.Cells {
		if c.Transactions != int64(4*c.VUs) || c.JobID == nil {
			t.Errorf("cell of %d VUs: %d transactions, job %v", c.VUs, c.Transactions, c.JobID)
			continue
		}
		rec, stderr, code := runCLI(t, home, "jobs", "export", strconv.FormatInt(*c.JobID, 10), "--format", "json")
		if code != ExitOK {
			t.Fatalf("jobs export: exit %d: %s", code, stderr)
		}
		var j struct {
			Summary struct {
				Connections int             `json:"connections"`
				ConnWait    json.RawMessage `json:"connection_wait"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(rec), &j); err != nil {
			t.Fatal(err)
		}
		if j.Summary.Connections != 2 || len(j.Summary.ConnWait) == 0 {
			t.Errorf("cell of %d VUs ran with connections %d, wait %s", c.VUs, j.Summary.Connections, j.Summary.ConnWait)
		}
	}
}
