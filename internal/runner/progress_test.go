package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/workload"
)

// --progress-timestamp: the Unix time with milliseconds in place of the
// time since the start, the rest of the line as it was.
func TestEpochLine(t *testing.T) {
	now := time.UnixMilli(1795660743837)
	for _, c := range []struct{ in, want string }{
		{"progress: 5.0 s, 1234.5 tps, lat 3.210 ms stddev 1.234, 0 failed",
			"progress: 1795660743.837 s, 1234.5 tps, lat 3.210 ms stddev 1.234, 0 failed"},
		{"progress: 120.0 s, 0.0 tps, lat - ms stddev -, 2 failed, 1 reconnects (ramp-up)",
			"progress: 1795660743.837 s, 0.0 tps, lat - ms stddev -, 2 failed, 1 reconnects (ramp-up)"},
	} {
		if got := epochLine(c.in, now); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// --verbose-errors: pgbench's two lines per failed try, the tries
// allowed after a slash unless unlimited.
func TestVerboseErrors(t *testing.T) {
	mix := []workload.TxType{{Name: "new_order"}, {Name: "/tmp/s.sql"}}
	var b strings.Builder
	f := verboseErrors(&b, mix, 1, 0) // --max-tries 2
	f(engine.TryError{VU: 3, Kind: 0, Try: 1, Retry: true, Err: errors.New("deadlock detected")})
	f(engine.TryError{VU: 0, Kind: 1, Try: 2, Err: errors.New("script /tmp/s.sql command 1: could not serialize")})
	// --max-tries 0, -L 200
	verboseErrors(&b, mix, 1<<30, 200*time.Millisecond)(engine.TryError{VU: 1, Kind: 0, Try: 7, Retry: true, Elapsed: 50 * time.Millisecond, Err: errors.New("x\ny")})
	want := "sledge: client 3 got an error in script 0 (new_order); deadlock detected\n" +
		"sledge: client 3 repeats the transaction after the error (try 1/2)\n" +
		"sledge: client 0 got an error in script 1; script /tmp/s.sql command 1: could not serialize\n" +
		"sledge: client 0 ends the failed transaction (try 2/2)\n" +
		"sledge: client 1 got an error in script 0 (new_order); x y\n" +
		"sledge: client 1 repeats the transaction after the error (try 7, 25.000% of the maximum time of tries was used)\n"
	if b.String() != want {
		t.Errorf("got\n%swant\n%s", b.String(), want)
	}
}
