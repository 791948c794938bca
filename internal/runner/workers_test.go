package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/cluster"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/workload"
)

func TestWithPort(t *testing.T) {
	cases := []struct{ in, want string }{
		{":7077", ":7077"},
		{"sledge-coordinator:9000", "sledge-coordinator:9000"},
		{"sledge-coordinator", "sledge-coordinator:7077"},
		{"10.0.0.1", "10.0.0.1:7077"},
		{"[::1]", "[::1]:7077"},
		{"[::1]:8000", "[::1]:8000"},
		{"", ":7077"},
		{"::1", ""}, // ambiguous: brackets needed
		{"a:b:c", ""},
	}
	for _, tc := range cases {
		got, err := withPort(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%q: got %q, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// The coordinator's merge carries every worker's -C connection times and
// failures by pgbench's class into the one result.
func TestMergeCarriesConnectsAndFailures(t *testing.T) {
	mix := []workload.TxType{{Name: "a"}, {Name: "b"}}
	final := func(conn time.Duration, ser, dl int64) *member {
		return &member{peer: &cluster.Peer{}, stats: metrics.NewSet(len(mix)), final: &cluster.Final{
			Connects: engine.Lag{Count: 1, Sum: conn, Max: conn},
			Failures: []engine.FailCounts{{Serialization: ser}, {Deadlock: dl}},
		}}
	}
	var res engine.Result
	merge(&res, []*member{final(2*time.Millisecond, 1, 2), final(4*time.Millisecond, 3, 0)}, mix, time.Time{}, time.Time{})
	if res.Connects.Count != 2 || res.Connects.Sum != 6*time.Millisecond || res.Connects.Max != 4*time.Millisecond {
		t.Errorf("connects %+v, want 2 of 6 ms in all, 4 ms at most", res.Connects)
	}
	if want := []engine.FailCounts{{Serialization: 4}, {Deadlock: 2}}; !slices.Equal(res.Failures, want) {
		t.Errorf("failures %+v, want %+v", res.Failures, want)
	}
}

// Every worker that failed is shown once, in one form: its own last line
// after "sledge: worker k:", what it printed before prefixed "worker k:";
// the first failure, which the caller reports, is not shown again, and a
// worker that ran (exit 0 or 3) is not shown at all.
func TestChildrenShowFailures(t *testing.T) {
	// The others wait for go, which comes once the first failure is in.
	goFile := filepath.Join(t.TempDir(), "go")
	wait := "while [ ! -e " + goFile + " ]; do sleep 0.01; done; "
	k := newChildren()
	for _, script := range []string{
		`echo "sledge: connect virtual user 4: too many connections"; exit 1`,
		wait + `echo "a warning"; echo "sledge: connect virtual user 9: too many connections"; exit 1`,
		wait + `exit 3`,
		wait + `exit 2`,
	} {
		if err := k.start(exec.Command("sh", "-c", script)); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { // none left waiting if the test ends early
		for _, c := range k.cmds {
			_ = c.Process.Kill()
		}
	})
	<-k.failed
	if err := k.firstErr(); err == nil || err.Error() != "worker 0: connect virtual user 4: too many connections" {
		t.Fatalf("first: %v", err)
	}
	if err := os.WriteFile(goFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	k.stop(&b)
	want := "sledge: worker 1: connect virtual user 9: too many connections\nworker 1: a warning\n" +
		"sledge: worker 3: exit status 2\n"
	if b.String() != want {
		t.Errorf("shown:\n%s\nwant:\n%s", b.String(), want)
	}
}
