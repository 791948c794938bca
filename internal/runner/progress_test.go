package runner

import (
	"testing"
	"time"
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
