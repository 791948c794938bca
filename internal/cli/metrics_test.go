package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sledge-bench/sledge/internal/testdb"
)

// scraped is what one scrape of a TPC-C run said.
type scraped struct {
	phase    string
	total    float64 // sledge_transactions_total over the types
	measured float64
}

// scrapeRun reads /metrics at url and checks what must hold at every
// scrape: the contract's names and types, the labels, and each type's
// histogram cumulative with its count equal to its transactions counter.
func scrapeRun(t *testing.T, url, jobID string, vus int) (scraped, bool) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return scraped{}, false // not up yet, or gone
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Errorf("parse /metrics: %v", err)
		return scraped{}, false
	}
	var s scraped
	// Before the run is followed (the server listens first) and after it
	// ends without --metrics-linger, no job's families are exported: not
	// up yet, or gone, as a loaded machine makes likely.
	started := false
	if f := fams["sledge_transactions_total"]; f != nil {
		for _, m := range f.GetMetric() {
			started = started || m.GetCounter().GetValue() > 0
		}
	}
	for name, typ := range metricNames {
		f := fams[name]
		if f == nil && !started {
			return s, false
		}
		if f == nil || f.GetType() != typ || len(f.GetMetric()) == 0 {
			t.Errorf("/metrics: %s is %v, want a %s", name, f, typ)
			return s, false
		}
		for _, m := range f.GetMetric() {
			if l := label(m, "job_id"); l != jobID || label(m, "workload") != "tpcc" {
				t.Errorf("%s: job_id %q workload %q, want %q tpcc", name, l, label(m, "workload"), jobID)
			}
		}
	}
	counts := map[string]float64{}
	for _, m := range fams["sledge_transactions_total"].GetMetric() {
		counts[label(m, "type")] = m.GetCounter().GetValue()
		s.total += m.GetCounter().GetValue()
	}
	var types []string
	for ty := range counts {
		types = append(types, ty)
	}
	slices.Sort(types)
	if want := []string{"delivery", "neword", "ostat", "payment", "slev"}; !slices.Equal(types, want) {
		t.Errorf("types %v, want TPC-C's %v", types, want)
	}
	for _, m := range fams["sledge_transaction_duration_seconds"].GetMetric() {
		ty, h := label(m, "type"), m.GetHistogram()
		if float64(h.GetSampleCount()) != counts[ty] {
			t.Errorf("%s: histogram count %d, sledge_transactions_total %v at the same scrape", ty, h.GetSampleCount(), counts[ty])
		}
		var prev uint64
		for _, b := range h.GetBucket() {
			if b.GetCumulativeCount() < prev {
				t.Errorf("%s: bucket le=%v %d after %d: not cumulative", ty, b.GetUpperBound(), b.GetCumulativeCount(), prev)
			}
			prev = b.GetCumulativeCount()
		}
		if prev != h.GetSampleCount() {
			t.Errorf("%s: +Inf bucket %d, count %d", ty, prev, h.GetSampleCount())
		}
	}
	if v := fams["sledge_vus"].GetMetric()[0].GetGauge().GetValue(); v != float64(vus) {
		t.Errorf("sledge_vus %v, want %d", v, vus)
	}
	for _, m := range fams["sledge_phase"].GetMetric() {
		if m.GetGauge().GetValue() == 1 {
			s.phase = label(m, "phase")
		}
	}
	s.measured = fams["sledge_measured_transactions_total"].GetMetric()[0].GetCounter().GetValue()
	return s, true
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// A real TPC-C run on the embedded SQLite with --metrics, with and without
// the job store, scraped while it runs: the counters grow, each scrape
// agrees with itself, and with --metrics-linger the last scrape's measured
// count is the summary's. Nothing is left listening afterwards.
func TestRunMetrics(t *testing.T) {
	for _, c := range []struct {
		name   string
		extra  []string
		json   bool
		linger bool
	}{
		{"no-job, json, linger", []string{"--no-job", "--json", "--metrics-linger", "3s"}, true, true},
		{"recorded", []string{"--jobs-db", "JOBS"}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			port, err := testdb.FreePort()
			if err != nil {
				t.Fatal(err)
			}
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			args := []string{"run", "--db", "sqlite://" + builtDB(t), "-c", "2", "--rampup", "0", "-T", "3s", "-R", "200", "--metrics", addr}
			for _, a := range c.extra {
				args = append(args, strings.ReplaceAll(a, "JOBS", filepath.Join(home, "jobs.db")))
			}
			type out struct {
				stdout, stderr string
				code           int
			}
			done := make(chan out)
			go func() {
				o, e, code := runCLI(t, home, args...)
				done <- out{o, e, code}
			}()
			jobID := ""
			if !c.json {
				jobID = "1" // the first job of a fresh store
			}
			var scrapes []scraped
			var res out
		poll:
			for {
				select {
				case res = <-done:
					break poll
				case <-time.After(150 * time.Millisecond):
					if s, ok := scrapeRun(t, "http://"+addr+"/metrics", jobID, 2); ok {
						scrapes = append(scrapes, s)
					}
				}
			}
			if res.code != ExitOK {
				t.Fatalf("exit %d: %s", res.code, res.stderr)
			}
			var grew bool
			var last scraped
			for i, s := range scrapes {
				if i > 0 && s.total < scrapes[i-1].total {
					t.Errorf("sledge_transactions_total went down: %v then %v", scrapes[i-1].total, s.total)
				}
				if i > 0 && s.phase == "measure" && scrapes[i-1].phase == "measure" && s.total > scrapes[i-1].total {
					grew = true
				}
				last = s
			}
			if !grew {
				t.Errorf("sledge_transactions_total did not grow between two scrapes while measuring: %+v", scrapes)
			}
			if want := fmt.Sprintf("metrics at http://%s/metrics", addr); strings.Contains(res.stderr, want) == c.json {
				t.Errorf("stderr with --json=%v: %q printed %v:\n%s", c.json, want, !c.json, res.stderr)
			}
			if c.linger {
				// The lingering server's last word is the summary's count.
				var sum struct {
					Transactions map[string]struct {
						Count float64 `json:"count"`
					} `json:"transactions"`
				}
				if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
					t.Fatalf("summary: %v", err)
				}
				var n float64
				for _, ty := range sum.Transactions {
					n += ty.Count
				}
				if last.phase != "stop" || last.measured != n || n == 0 {
					t.Errorf("last scrape %+v, want phase stop and the summary's %v measured transactions", last, n)
				}
			}
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				t.Errorf("%s still listening after the run", addr)
			}
		})
	}
}

// --metrics is checked before anything runs: a malformed address or one
// that is not this machine's is bad input (2), a port in use means the run
// could not start (1); one line either way.
func TestRunMetricsBadAddress(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	u := "sqlite://" + builtDB(t)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--metrics", "9464"}, ExitUsage, "want HOST:PORT"},
		{[]string{"--metrics", "127.0.0.1:70000"}, ExitUsage, "want HOST:PORT"},
		{[]string{"--metrics", "127.0.0.1:x"}, ExitUsage, "want HOST:PORT"},
		{[]string{"--metrics", "192.0.2.1:9464"}, ExitUsage, "--metrics 192.0.2.1:9464"}, // TEST-NET-1: no address of this machine
		{[]string{"--metrics-linger", "5s"}, ExitUsage, "--metrics-linger applies to --metrics"},
		{[]string{"--metrics", ":0", "--metrics-linger", "-1s"}, ExitUsage, "must not be negative"},
		{[]string{"--metrics", busy.Addr().String()}, ExitFailure, "address already in use"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			args := append([]string{"run", "--db", u, "--no-job", "-t", "10"}, c.args...)
			_, stderr, code := runCLI(t, t.TempDir(), args...)
			if code != c.code || !strings.Contains(stderr, c.msg) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, c.code, c.msg, stderr)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 || strings.Contains(stderr, "running") {
				t.Errorf("want one line and no run:\n%s", stderr)
			}
		})
	}
}
