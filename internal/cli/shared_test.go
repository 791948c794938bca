package cli

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// Two runs in one process (as sledge serve runs jobs side by side) cannot
// tell their CPU time apart: each gives its client CPU as null with the
// reason, never the process's total as its own; a run alone gives it.
func TestSharedProcessClientCPUIsNotShown(t *testing.T) {
	home := t.TempDir()
	dbs := []string{"sqlite://" + builtDB(t), "sqlite://" + builtDB(t)}
	type out struct {
		PerTxn *costJSON `json:"per_txn"`
	}
	results := make([]out, 2)
	var wg sync.WaitGroup
	for i := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stdout, stderr, code := runCLI(t, home, "run", "--db", dbs[i], "--rampup", "0", "--duration", "2s", "--json", "--no-job")
			if code != ExitOK {
				t.Errorf("run %d: exit %d: %s", i, code, stderr)
				return
			}
			if err := json.Unmarshal([]byte(stdout), &results[i]); err != nil {
				t.Errorf("run %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.PerTxn == nil {
			t.Fatalf("run %d: no per_txn", i)
		}
		if r.PerTxn.ClientCPUUs != nil || !strings.Contains(r.PerTxn.ClientCPUNote, "another run") {
			t.Errorf("run %d shared the process: client_cpu_us %v, note %q", i, r.PerTxn.ClientCPUUs, r.PerTxn.ClientCPUNote)
		}
	}
	stdout, stderr, code := runCLI(t, home, "run", "--db", dbs[0], "--rampup", "0", "--duration", "1s", "--json", "--no-job")
	if code != ExitOK {
		t.Fatalf("run alone: exit %d: %s", code, stderr)
	}
	var alone out
	if err := json.Unmarshal([]byte(stdout), &alone); err != nil {
		t.Fatal(err)
	}
	if alone.PerTxn == nil || alone.PerTxn.ClientCPUUs == nil || alone.PerTxn.ClientCPUNote != "" {
		t.Errorf("a run alone: per_txn %+v", alone.PerTxn)
	}
}
