package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// Issue 25 end to end on a private PostgreSQL server, read in-process by
// sledge's sampler: a compare with --stacks gives each cell the server's
// thread states and cost, the HTML report draws them (and a flame graph
// where perf could take stacks), and jobs export writes a cell's stacks
// as folded text and as a pprof profile with the same samples, or says
// in one line why there are none.
func TestCompareServerSideEndToEnd(t *testing.T) {
	srv := pgLazy.Get(t)
	u := ownDB(t, srv, "serverside")
	home := t.TempDir()
	if _, stderr, code := runCLI(t, home, "build", "--db", u, "--warehouses", "1", "--no-job"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	html := filepath.Join(home, "pg.html")
	stdout, stderr, code := runCLI(t, home, "compare", "--db", u, "--modes", "procedure,client", "--vus", "2",
		"--rampup", "1s", "--duration", "3s", "--stacks", "--html", html, "--json")
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	// The keys compare's cells gained (docs/contracts.md), as a contract.
	pinKeys(t, "compare --json (issue 25)", stdout, map[string]kind{"cells[].server_threads": jObject,
		"cells[].server_threads.network": jNumber, "cells[].server_host": jObject, "cells[].server_stacks": jObject,
		"cells[].server_per_txn.run_queue_delay_us": jNumber})
	var out struct {
		Cells []struct {
			Mode          string          `json:"mode"`
			JobID         *int64          `json:"job_id"`
			ServerThreads map[string]any  `json:"server_threads"`
			ServerPerTxn  map[string]any  `json:"server_per_txn"`
			ServerStacks  *stacksJSONTest `json:"server_stacks"`
		} `json:"cells"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || len(out.Cells) != 2 {
		t.Fatalf("compare --json: %v, %d cells: %.2000s", err, len(out.Cells), stdout)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if d := os.Getenv("SLEDGE_TEST_ARTIFACTS"); d != "" {
		_ = os.WriteFile(filepath.Join(d, "compare-server-side.html"), b, 0o644)
	}
	flames := 0
	for _, c := range out.Cells {
		th := c.ServerThreads
		if th == nil || th["samples"].(float64) < 100 || th["cpu"].(float64)+th["network"].(float64) <= 0 {
			t.Errorf("%s: server_threads %v, want the sampler's states", c.Mode, th)
			continue
		}
		if c.ServerPerTxn["run_queue_delay_us"] == nil || c.ServerPerTxn["cpu_user_us"] == nil {
			t.Errorf("%s: server_per_txn %v, want run_queue_delay_us and cpu_user_us", c.Mode, c.ServerPerTxn)
		}
		// Every state's segment is in the report with the run's share.
		name := c.Mode + " · tcp · 2 VUs, server threads: "
		for _, k := range []string{"cpu", "network", "idle"} {
			if v := th[k].(float64); v > 0 {
				label := k
				if k == "network" {
					label = "network (socket, poll)"
				}
				want := name + label + " " + strconv.FormatFloat(v*100, 'f', 1, 64) + "%"
				if !strings.Contains(page, want) {
					t.Errorf("report lacks the segment %q", want)
				}
			}
		}
		id := strconv.FormatInt(*c.JobID, 10)
		st := c.ServerStacks
		if st == nil {
			t.Errorf("%s: no server_stacks with --stacks (neither stacks nor why)", c.Mode)
			continue
		}
		if st.Folded == "" {
			// perf refused here (no perf, perf_event_paranoid): the run says
			// why, and so does export.
			_, stderr, code := runCLI(t, home, "jobs", "export", id, "--format", "folded")
			if code != ExitFailure || !strings.Contains(stderr, st.Why) {
				t.Errorf("%s: export without stacks: exit %d %q, want 1 and %q", c.Mode, code, stderr, st.Why)
			}
			t.Logf("%s: no stacks: %s", c.Mode, st.Why)
			continue
		}
		flames++
		folded, stderr, code := runCLI(t, home, "jobs", "export", id, "--format", "folded")
		if code != 0 || strings.TrimRight(folded, "\n") != strings.TrimRight(st.Folded, "\n") {
			t.Errorf("%s: export folded: exit %d %s", c.Mode, code, stderr)
		}
		stacks, err := parseFolded(folded)
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		for _, s := range stacks {
			want += s.count
		}
		pb, stderr, code := runCLI(t, home, "jobs", "export", id, "--format", "pprof")
		if code != 0 {
			t.Fatalf("%s: export pprof: exit %d %s", c.Mode, code, stderr)
		}
		p, err := profile.Parse(strings.NewReader(pb))
		if err != nil {
			t.Fatalf("%s: parse pprof: %v", c.Mode, err)
		}
		var got int64
		for _, s := range p.Sample {
			got += s.Value[0]
		}
		if got != want || got == 0 {
			t.Errorf("%s: pprof holds %d samples, the folded text %d", c.Mode, got, want)
		}
		t.Logf("%s: %d stack samples, %d distinct frames", c.Mode, got, len(p.Function))
	}
	if n := strings.Count(page, `<div class="flame"`); n != flames {
		t.Errorf("report has %d flame graphs, want %d (the cells with stacks)", n, flames)
	}
	if strings.Contains(page, srv.Password) {
		t.Error("report shows the password")
	}
}

type stacksJSONTest struct {
	Folded string `json:"folded"`
	Why    string `json:"why"`
}
