// Package promexp exports running jobs' live counters in Prometheus' text
// format: throughput, rollbacks, errors, retries and reconnects as
// counters, and latency as histograms over fixed buckets
// (engine.LiveBuckets), so that the series of several load generators add
// up (docs/metrics.md). It reads engine.Live at scrape time: the VUs do no
// work for it beyond the counters they keep anyway.
//
// It uses github.com/prometheus/client_golang, the library Prometheus
// provides for this, with a collector of its own over the jobs.
package promexp

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/runner"
)

// DefaultLinger is how long an ended job's series stay: long enough for a
// scrape or two at Prometheus' usual 15 s to 1 min intervals to read its
// final counts, short enough that ended jobs do not pile up in a service.
const DefaultLinger = time.Minute

// The labels. job_id, not job: Prometheus sets "job" (and "instance") on
// every series it scrapes, and would rename ours to exported_job.
var (
	jobLabels  = []string{"job_id", "workload"}
	typeLabels = []string{"job_id", "workload", "type"}
)

// Metric names are a contract (docs/contracts.md, docs/metrics.md).
var (
	descTx = prometheus.NewDesc("sledge_transactions_total",
		"Transactions completed (commits and the workload's own rollbacks), every phase.", typeLabels, nil)
	descRollbacks = prometheus.NewDesc("sledge_rollbacks_total",
		"Completed transactions that rolled back on purpose (TPC-C's unused item), every phase.", typeLabels, nil)
	descErrors = prometheus.NewDesc("sledge_errors_total",
		"Transactions that failed (after their retries), every phase.", typeLabels, nil)
	descRetries = prometheus.NewDesc("sledge_retries_total",
		"Extra attempts after deadlocks, serialization failures and lock timeouts, every phase.", typeLabels, nil)
	descDuration = prometheus.NewDesc("sledge_transaction_duration_seconds",
		"Latency of completed transactions, from the first statement (or the schedule, or the wait for a connection) to the commit.", typeLabels, nil)
	descReconnects = prometheus.NewDesc("sledge_reconnects_total",
		"Reconnections of virtual users after a lost connection.", jobLabels, nil)
	descMeasured = prometheus.NewDesc("sledge_measured_transactions_total",
		"Transactions completed inside the measured interval: what the run's summary counts.", jobLabels, nil)
	descVUs = prometheus.NewDesc("sledge_vus",
		"Virtual users of the run (--vus).", jobLabels, nil)
	descPhase = prometheus.NewDesc("sledge_phase",
		"1 for the phase the run is in (connect, ramp-up, measure, stop), 0 for the others.", append(jobLabels[:2:2], "phase"), nil)
)

var phases = []engine.Phase{engine.PhaseConnect, engine.PhaseRampup, engine.PhaseMeasure, engine.PhaseStop}

// Exporter is a runner.Output that exports the jobs it follows. Start adds
// a job, End keeps its final counts for Linger, then drops it. Jobs are
// told apart by their id; a job without one (id 0: --no-job) replaces the
// previous job without one.
type Exporter struct {
	// Linger is how long an ended job stays exported; set it before the
	// first Start. Zero drops it at once.
	Linger time.Duration

	now  func() time.Time
	reg  *prometheus.Registry
	mu   sync.Mutex
	jobs map[int64]*job
}

type job struct {
	id       string
	workload string
	types    []string
	live     *engine.Live
	ended    time.Time // zero while it runs
	sys      sysState  // the server's and sledge's host's seconds (system.go); e.mu guards it
}

// New returns an exporter with its own registry, which also holds the Go
// runtime's and the process's collectors (sledge's own CPU and memory).
func New() *Exporter {
	e := &Exporter{Linger: DefaultLinger, now: time.Now, jobs: map[int64]*job{}}
	e.reg = prometheus.NewRegistry()
	e.reg.MustRegister(collector{e},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return e
}

// Handler serves the exporter's registry in Prometheus' formats (text, or
// what the scraper asks for).
func (e *Exporter) Handler() http.Handler {
	return promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Start follows a job; one without live counters (a build, a check) is
// not exported.
func (e *Exporter) Start(j runner.Job) {
	if j.Live == nil {
		return
	}
	id := ""
	if j.ID != 0 {
		id = strconv.FormatInt(j.ID, 10)
	}
	types := make([]string, j.Live.Types())
	for i := range types {
		types[i] = strconv.Itoa(i) // a caller that named none
		if i < len(j.TxTypes) {
			types[i] = j.TxTypes[i]
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.jobs[j.ID] = &job{id: id, workload: j.Workload, types: types, live: j.Live}
}

// Tick does nothing: the exporter reads the live counters when scraped.
func (e *Exporter) Tick(int64, runner.Tick) {}

// End keeps the job's final counts for Linger.
func (e *Exporter) End(id int64, _ runner.Result) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if j, ok := e.jobs[id]; ok && j.ended.IsZero() {
		j.ended = e.now()
	}
	e.prune()
}

// prune drops the jobs that ended more than Linger ago; e.mu is held.
func (e *Exporter) prune() {
	now := e.now()
	for id, j := range e.jobs {
		if !j.ended.IsZero() && now.Sub(j.ended) >= e.Linger {
			delete(e.jobs, id)
		}
	}
}

// current is the jobs to export now: copies, so that a scrape reads
// their system series while seconds keep arriving.
func (e *Exporter) current() []*job {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.prune()
	out := make([]*job, 0, len(e.jobs))
	for _, j := range e.jobs {
		c := *j
		out = append(out, &c)
	}
	return out
}

// collector reads the jobs' live counters at each scrape: an unchecked
// collector (Describe sends nothing), since the set of jobs and types
// changes while the exporter lives.
type collector struct{ e *Exporter }

func (collector) Describe(chan<- *prometheus.Desc) {}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	bounds := make([]float64, len(engine.LiveBuckets))
	for i, b := range engine.LiveBuckets {
		bounds[i] = b.Seconds()
	}
	var cum []uint64
	for _, j := range c.e.current() {
		l := j.live
		for i, ty := range j.types {
			var n uint64
			var sum time.Duration
			cum, n, sum = l.Buckets(i, cum)
			buckets := make(map[float64]uint64, len(bounds))
			for b, ub := range bounds {
				buckets[ub] = cum[b]
			}
			// The count comes from the same reading as the histogram, so
			// a scrape's transactions and histogram agree exactly.
			ch <- prometheus.MustNewConstMetric(descTx, prometheus.CounterValue, float64(n), j.id, j.workload, ty)
			ch <- prometheus.MustNewConstHistogram(descDuration, n, sum.Seconds(), buckets, j.id, j.workload, ty)
			ch <- prometheus.MustNewConstMetric(descRollbacks, prometheus.CounterValue, float64(l.Rollbacks(i)), j.id, j.workload, ty)
			ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(l.KindErrors(i)), j.id, j.workload, ty)
			ch <- prometheus.MustNewConstMetric(descRetries, prometheus.CounterValue, float64(l.Retries(i)), j.id, j.workload, ty)
		}
		ch <- prometheus.MustNewConstMetric(descReconnects, prometheus.CounterValue, float64(l.Reconnects()), j.id, j.workload)
		ch <- prometheus.MustNewConstMetric(descMeasured, prometheus.CounterValue, float64(l.Measured()), j.id, j.workload)
		ch <- prometheus.MustNewConstMetric(descVUs, prometheus.GaugeValue, float64(l.VUs()), j.id, j.workload)
		now, _ := l.Phase()
		for _, p := range phases {
			v := 0.0
			if p == now {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descPhase, prometheus.GaugeValue, v, j.id, j.workload, p.String())
		}
		collectSystem(ch, j)
	}
}
