package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Scale-out's contract (docs/contracts.md, issue 17): run's flags, and the
// "workers" key of a run --workers result.
func TestContractRunWorkers(t *testing.T) {
	root := newRoot(t.Context(), &Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: func(string) string { return "" }})
	run, _, err := root.Find([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"workers", "listen", "coordinator", "worker-index", "worker-timeout"} {
		if run.Flag(f) == nil {
			t.Errorf("run has no --%s", f)
		}
	}
	home := t.TempDir()
	db := "sqlite://" + filepath.Join(home, "tpcb.db")
	sledgeBuild(t, nil, home, "tpcb", "--db", db)
	r := sledgeProc(t, nil, home, "run", "tpcb", "--db", db, "-c", "2", "-t", "5", "--workers", "2", "--json", "--no-job")
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	ws, ok := out["workers"].([]any)
	if !ok || len(ws) != 2 {
		t.Fatalf("workers: %#v, want an array of 2", out["workers"])
	}
	for _, w := range ws {
		obj, ok := w.(map[string]any)
		if !ok {
			t.Fatalf("worker %#v is not an object", w)
		}
		for key, kind := range map[string]string{"index": "number", "vus": "number", "share": "string",
			"transactions": "number", "state": "string", "missed": "number"} {
			var isKind bool
			switch obj[key].(type) {
			case float64:
				isKind = kind == "number"
			case string:
				isKind = kind == "string"
			}
			if !isKind {
				t.Errorf("workers[].%s: %#v, want a %s", key, obj[key], kind)
			}
		}
	}
}
