package metrics

import (
	"fmt"
	"testing"
	"time"
)

func TestSummarizeQuantiles(t *testing.T) {
	var s TxStats
	// 1..1000 ms: the quantiles are known exactly, to HDR's 3 digits.
	for i := 1; i <= 1000; i++ {
		s.Record(time.Duration(i) * time.Millisecond)
		s.Commits++
	}
	sum := s.Summarize("x")
	cases := []struct {
		name string
		got  time.Duration
		want time.Duration
	}{
		{"p50", sum.P50, 500 * time.Millisecond},
		{"p90", sum.P90, 900 * time.Millisecond},
		{"p95", sum.P95, 950 * time.Millisecond},
		{"p99", sum.P99, 990 * time.Millisecond},
		{"max", sum.Max, 1000 * time.Millisecond},
		{"mean", sum.Mean, 500500 * time.Microsecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := c.got - c.want; diff < -c.want/500 || diff > c.want/500 {
				t.Errorf("%s = %s, want %s ±0.2%%", c.name, c.got, c.want)
			}
		})
	}
	if sum.Count != 1000 || sum.Commits != 1000 {
		t.Errorf("count %d commits %d", sum.Count, sum.Commits)
	}
}

func TestRecordClampsOutOfRange(t *testing.T) {
	var s TxStats
	s.Record(0)
	s.Record(2 * time.Hour)
	sum := s.Summarize("x")
	if sum.P50 != time.Microsecond || sum.Max < 59*time.Minute {
		t.Errorf("p50 %s max %s", sum.P50, sum.Max)
	}
}

func TestMergeAddsEverything(t *testing.T) {
	a, b := NewSet(2), NewSet(2)
	a[0].Commits, a[0].Retries = 3, 1
	a[0].Record(time.Millisecond)
	b[0].Rollbacks, b[0].Errors = 2, 5
	b[0].Record(3 * time.Millisecond)
	b[1].Commits = 7
	a.Merge(b)
	if a[0].Commits != 3 || a[0].Rollbacks != 2 || a[0].Errors != 5 || a[0].Retries != 1 || a[1].Commits != 7 {
		t.Errorf("merged %+v", a)
	}
	tot := a.Total()
	// HDR reports the top of the value's bucket: 3 ms to 3 significant digits.
	if m := tot.Summarize("t").Max; tot.Completed() != 12 || m < 3*time.Millisecond || m > 3003*time.Microsecond {
		t.Errorf("total completed %d max %s", tot.Completed(), tot.Summarize("t").Max)
	}
	// A type that never ran has no latencies, not zeros that look measured.
	if s := NewSet(1)[0].Summarize("none"); s.P99 != 0 || s.Count != 0 {
		t.Errorf("empty summary %+v", s)
	}
}

func TestPerMinute(t *testing.T) {
	cases := []struct {
		n    int64
		d    time.Duration
		want float64
	}{
		{600, time.Minute, 600},
		{600, 30 * time.Second, 1200},
		{5, 0, 0},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d/%s", c.n, c.d), func(t *testing.T) {
			if got := PerMinute(c.n, c.d); got != c.want {
				t.Errorf("PerMinute = %v, want %v", got, c.want)
			}
		})
	}
}
