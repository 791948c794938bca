package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

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
	f := verboseErrors(&b, mix, 1) // --max-tries 2
	f(3, 0, 1, true, errors.New("deadlock detected"))
	f(0, 1, 2, false, errors.New("script /tmp/s.sql command 1: could not serialize"))
	verboseErrors(&b, mix, 1<<30)(1, 0, 7, true, errors.New("x\ny")) // --max-tries 0
	want := "sledge: client 3 got an error in script 0 (new_order); deadlock detected\n" +
		"sledge: client 3 repeats the transaction after the error (try 1/2)\n" +
		"sledge: client 0 got an error in script 1; script /tmp/s.sql command 1: could not serialize\n" +
		"sledge: client 0 ends the failed transaction (try 2/2)\n" +
		"sledge: client 1 got an error in script 0 (new_order); x y\n" +
		"sledge: client 1 repeats the transaction after the error (try 7)\n"
	if b.String() != want {
		t.Errorf("got\n%swant\n%s", b.String(), want)
	}
}
