package promexp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
)

// nopConn is a connection the test's transactions never use.
type nopConn struct{ workload.Conn }

func (nopConn) Close(context.Context) error { return nil }

// script is a transaction of kind k that fails with errs, one per attempt,
// then succeeds after sleeping d.
type script struct {
	k    int
	d    time.Duration
	errs []error
}

func (s *script) Kind() int { return s.k }
func (s *script) Run(context.Context, workload.Conn) error {
	if len(s.errs) > 0 {
		err := s.errs[0]
		s.errs = s.errs[1:]
		return err
	}
	time.Sleep(s.d)
	return nil
}

// cycle deals, in turn: a fast commit, a commit after one retry, a
// rollback, and a failure; 4 transactions of 3 types.
type cycle struct{ n int }

func (c *cycle) Next() workload.Txn {
	c.n++
	retry := fmt.Errorf("deadlock: %w", workload.ErrRetry)
	switch c.n % 4 {
	case 1:
		return &script{k: 0}
	case 2:
		return &script{k: 1, d: 3 * time.Millisecond, errs: []error{retry}}
	case 3:
		return &script{k: 1, errs: []error{fmt.Errorf("unused item: %w", workload.ErrUserAbort)}}
	}
	return &script{k: 2, errs: []error{errors.New("boom")}}
}

// run runs a real engine run of vus × 4·rounds transactions and returns
// its live counters.
func run(t *testing.T, vus, rounds int) *engine.Live {
	t.Helper()
	p := &engine.Plan{
		VUs: vus, Iterations: 4 * rounds, Seed: 1, MaxRetries: 3,
		Mix:      []workload.TxType{{Name: "fast", Weight: 1}, {Name: "slow", Weight: 1}, {Name: "bad", Weight: 1}},
		Connect:  func(context.Context, int) (workload.Conn, error) { return nopConn{}, nil },
		Terminal: func(int) workload.Terminal { return &cycle{} },
		Probe:    func(context.Context) (map[string]int64, error) { return map[string]int64{}, nil },
	}
	live := engine.NewLive(p)
	if _, err := engine.Run(t.Context(), p, live); err != nil {
		t.Fatal(err)
	}
	return live
}

// scrape serves one request of h and parses the text format.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", "text/plain")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// series finds the metric of family name whose labels include want.
func series(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

func TestExporterOnARealRun(t *testing.T) {
	const vus, rounds = 2, 5
	live := run(t, vus, rounds)
	e := New()
	e.Start(runner.Job{ID: 7, Kind: "run", Workload: "w", TxTypes: []string{"fast", "slow", "bad"}, Live: live})
	fams := scrape(t, e.Handler())
	n := float64(vus * rounds)
	for _, c := range []struct {
		name, ty string
		want     float64
	}{
		{"sledge_transactions_total", "fast", n},
		{"sledge_transactions_total", "slow", 2 * n}, // a commit after a retry, a rollback
		{"sledge_transactions_total", "bad", 0},
		{"sledge_rollbacks_total", "slow", n},
		{"sledge_rollbacks_total", "fast", 0},
		{"sledge_errors_total", "bad", n},
		{"sledge_errors_total", "slow", 0},
		{"sledge_retries_total", "slow", n},
	} {
		m := series(fams, c.name, map[string]string{"job_id": "7", "workload": "w", "type": c.ty})
		if m == nil {
			t.Errorf("no %s{type=%q}", c.name, c.ty)
			continue
		}
		if got := m.GetCounter().GetValue(); got != c.want {
			t.Errorf("%s{type=%q} = %v, want %v", c.name, c.ty, got, c.want)
		}
	}
	for _, c := range []struct {
		name string
		want float64
	}{
		{"sledge_vus", vus},
		{"sledge_reconnects_total", 0},
		{"sledge_measured_transactions_total", 3 * n}, // an iterations run is all measured
	} {
		m := series(fams, c.name, map[string]string{"job_id": "7"})
		if m == nil {
			t.Errorf("no %s", c.name)
			continue
		}
		got := m.GetCounter().GetValue() + m.GetGauge().GetValue()
		if got != c.want {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
	if m := series(fams, "sledge_phase", map[string]string{"phase": "stop"}); m == nil || m.GetGauge().GetValue() != 1 {
		t.Errorf("sledge_phase{phase=stop} is %v, want 1 after the run", m)
	}
	if m := series(fams, "sledge_phase", map[string]string{"phase": "measure"}); m == nil || m.GetGauge().GetValue() != 0 {
		t.Errorf("sledge_phase{phase=measure} is %v, want 0 after the run", m)
	}

	// The histogram: the fixed buckets, cumulative, its count the
	// transactions' at the same scrape; the slow commits (≥ 3 ms) are
	// above 2 ms. The rollbacks are quick, but a busy machine may make one
	// slower than 2 ms, so they bound the count from above only.
	for ty, tx := range map[string]float64{"fast": n, "slow": 2 * n} {
		h := series(fams, "sledge_transaction_duration_seconds", map[string]string{"job_id": "7", "type": ty}).GetHistogram()
		if h == nil {
			t.Fatalf("no histogram for %s", ty)
		}
		if float64(h.GetSampleCount()) != tx {
			t.Errorf("%s: histogram count %d, transactions %v", ty, h.GetSampleCount(), tx)
		}
		bs := h.GetBucket()
		if len(bs) != len(engine.LiveBuckets)+1 {
			t.Fatalf("%s: %d buckets, want %d and +Inf", ty, len(bs), len(engine.LiveBuckets))
		}
		var prev uint64
		for i, b := range bs {
			want := math.Inf(1)
			if i < len(engine.LiveBuckets) {
				want = engine.LiveBuckets[i].Seconds()
			}
			if b.GetUpperBound() != want {
				t.Errorf("%s: bucket %d le %v, want %v", ty, i, b.GetUpperBound(), want)
			}
			if b.GetCumulativeCount() < prev || b.GetCumulativeCount() > h.GetSampleCount() {
				t.Errorf("%s: bucket le %v = %d after %d: not cumulative", ty, b.GetUpperBound(), b.GetCumulativeCount(), prev)
			}
			prev = b.GetCumulativeCount()
		}
		if prev != h.GetSampleCount() {
			t.Errorf("%s: +Inf bucket %d, count %d", ty, prev, h.GetSampleCount())
		}
		le2ms := bs[2].GetCumulativeCount()
		if ty == "slow" && (float64(le2ms) > n || h.GetSampleSum() < 3e-3*n) {
			t.Errorf("slow: %d at or under 2 ms and a sum of %vs, want at most %v (the rollbacks) and at least %vs", le2ms, h.GetSampleSum(), n, 3e-3*n)
		}
	}
	if fams["go_goroutines"] == nil || fams["process_cpu_seconds_total"] == nil {
		t.Error("no Go runtime or process metrics")
	}
}

// An ended job stays for Linger, then goes; jobs are told apart by id,
// and a job without one replaces the previous one without one.
func TestExporterJobs(t *testing.T) {
	live := run(t, 1, 1)
	now := time.Unix(1000, 0)
	e := New()
	e.now = func() time.Time { return now }
	jobIDs := func() map[string]bool {
		ids := map[string]bool{}
		for _, m := range scrape(t, e.Handler())["sledge_vus"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "job_id" {
					ids[l.GetValue()] = true
				}
			}
		}
		return ids
	}
	e.Start(runner.Job{ID: 1, Workload: "w", TxTypes: []string{"fast", "slow", "bad"}, Live: live})
	e.Start(runner.Job{ID: 2, Workload: "w", TxTypes: []string{"fast", "slow", "bad"}, Live: live})
	e.Start(runner.Job{ID: 0, Workload: "w", Live: live})
	e.Start(runner.Job{ID: 0, Workload: "w", Live: live})
	e.Start(runner.Job{ID: 3, Kind: "build"}) // no live counters: not exported
	steps := []struct {
		do   func()
		want string
	}{
		{func() {}, "0 1 2"},
		{func() { e.End(1, runner.Result{}) }, "0 1 2"},
		{func() { now = now.Add(DefaultLinger - time.Second) }, "0 1 2"},
		{func() { now = now.Add(time.Second) }, "0 2"},
		{func() { e.End(2, runner.Result{}); e.End(0, runner.Result{}); now = now.Add(time.Hour) }, ""},
	}
	for i, s := range steps {
		s.do()
		got := jobIDs()
		want := map[string]bool{}
		for _, id := range strings.Fields(s.want) {
			if id == "0" {
				id = "" // no id: an empty label, which Prometheus treats as none
			}
			want[id] = true
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("step %d: jobs %v, want %v", i, got, want)
		}
	}
}
