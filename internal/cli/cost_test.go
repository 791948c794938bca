package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// SQLite is embedded: no round trips and no bytes, but CPU and context
// switches are measured, and the text summary says why the wire is empty.
func TestCostOnSQLiteIsEmbedded(t *testing.T) {
	path := builtDB(t)
	home := t.TempDir()
	out, stderr, code := runCLI(t, home, "run", "--db", "sqlite://"+path, "--iterations", "30", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s runSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if s.Transport != "embedded" || s.PerTxn == nil {
		t.Fatalf("transport %q per_txn %v", s.Transport, s.PerTxn)
	}
	if s.PerTxn.RoundTrips != 0 || s.PerTxn.BytesSent != 0 || s.PerTxn.BytesReceived != 0 || s.PerTxn.ClientCPUUs == nil || *s.PerTxn.ClientCPUUs <= 0 {
		t.Errorf("per_txn %+v: want no wire and some CPU", *s.PerTxn)
	}
	for _, ty := range s.Types {
		// Per-type CPU is measured only with --per-type-cpu: null here.
		if ty.Count > 0 && (ty.PerTxn == nil || ty.PerTxn.RoundTrips != 0 || ty.PerTxn.ClientCPUUs != nil) {
			t.Errorf("%s: per_txn %v", ty.Name, ty.PerTxn)
		}
	}
	out, stderr, code = runCLI(t, home, "run", "--db", "sqlite://"+path, "--iterations", "30", "--per-type-cpu")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"cost per transaction (client)", "round trips and bytes: none: sqlite is embedded", "per type on each virtual user's own thread"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	// jobs show prints the stored run as the run printed it: the wire's
	// note too, though it is no key of the JSON.
	id := regexp.MustCompile(`(?m)^job (\d+)$`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("no job line:\n%s", out)
	}
	shown, stderr, code := runCLI(t, home, "jobs", "show", id[1])
	if code != 0 || !strings.Contains(shown, "round trips and bytes: none: sqlite is embedded") {
		t.Errorf("jobs show %s: exit %d %s\n%s", id[1], code, stderr, shown)
	}
}

// --progress prints a pgbench -P style line every N seconds, on stderr,
// instead of the progress bar; --no-cost drops the cost block.
func TestProgressLines(t *testing.T) {
	path := builtDB(t)
	out, stderr, code := runCLI(t, t.TempDir(), "run", "--db", "sqlite://"+path, "--rampup", "0s", "--duration", "2500ms",
		"--progress", "1", "--no-cost")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	line := regexp.MustCompile(`(?m)^progress: \d+\.\d s, \d+\.\d tps, lat (\d+\.\d{3} ms stddev \d+\.\d{3}|- ms stddev -), \d+ failed, [\d,]+ NOPM`)
	if n := len(line.FindAllString(stderr, -1)); n < 2 || n > 3 {
		t.Errorf("%d progress lines, want 2:\n%s", n, stderr)
	}
	if strings.Contains(out, "cost per transaction") {
		t.Errorf("--no-cost still prints the cost:\n%s", out)
	}
	if _, stderr, code := runCLI(t, t.TempDir(), "run", "--db", "sqlite://"+path, "--progress", "-1"); code == 0 || !strings.Contains(stderr, "--progress") {
		t.Errorf("--progress -1: exit %d: %s", code, stderr)
	}
}
