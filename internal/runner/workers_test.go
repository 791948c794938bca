package runner

import (
	"slices"
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
