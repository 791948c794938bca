// Package metrics records what a run measured: per transaction type latency
// in HDR histograms (one set per session, written by the one virtual user
// using it at a time and merged at the end, so that recording takes no lock
// and memory grows with the connections, not the virtual users), outcome
// counts, and per-minute rates.
package metrics

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds from 1 µs to 1 hour with three
// significant digits; slower transactions are clamped to the maximum.
const (
	minMicros = 1
	maxMicros = int64(time.Hour / time.Microsecond)
	sigFigs   = 3
)

// TxStats is the record of one transaction type for one session (or, after
// Merge, for all of them). Not safe for concurrent use.
type TxStats struct {
	hist      *hdrhistogram.Histogram // completed transactions: commits and user aborts
	Commits   int64                   // committed
	Rollbacks int64                   // rolled back on purpose (TPC-C's 1% New-Order)
	Errors    int64                   // failed: any other error, or retries exhausted
	Retries   int64                   // extra attempts after a retryable conflict
	Retried   int64                   // transactions that needed at least one retry
	// The cost of the transactions counted above, every attempt included
	// (docs/cost.md). Zero when the run did not measure cost.
	Wire   Wire  // on the virtual user's connection
	Thread Usage // on the virtual user's own OS thread
}

// Record adds one completed transaction's latency.
func (s *TxStats) Record(d time.Duration) {
	if s.hist == nil {
		// Allocated lazily: a histogram is ~190 KB and many sessions never
		// run some transaction types.
		s.hist = hdrhistogram.New(minMicros, maxMicros, sigFigs)
	}
	us := d.Microseconds()
	if us < minMicros {
		us = minMicros
	}
	if us > maxMicros {
		us = maxMicros
	}
	_ = s.hist.RecordValue(us) // in range by construction
}

// Merge adds o into s.
func (s *TxStats) Merge(o *TxStats) {
	s.Commits += o.Commits
	s.Rollbacks += o.Rollbacks
	s.Errors += o.Errors
	s.Retries += o.Retries
	s.Retried += o.Retried
	s.Wire = s.Wire.Add(o.Wire)
	s.Thread = s.Thread.Add(o.Thread)
	if o.hist != nil {
		if s.hist == nil {
			s.hist = hdrhistogram.New(minMicros, maxMicros, sigFigs)
		}
		s.hist.Merge(o.hist)
	}
}

// Completed is commits plus rollbacks: what TPM counts.
func (s *TxStats) Completed() int64 { return s.Commits + s.Rollbacks }

// Summary is one transaction type's result, as printed and exported.
type Summary struct {
	Name      string        `json:"name"`
	Count     int64         `json:"count"` // commits + rollbacks
	Commits   int64         `json:"commits"`
	Rollbacks int64         `json:"rollbacks"`
	Errors    int64         `json:"errors"`
	Retries   int64         `json:"retries"`
	Retried   int64         `json:"retried"`
	Mean      time.Duration `json:"-"`
	P50       time.Duration `json:"-"`
	P90       time.Duration `json:"-"`
	P95       time.Duration `json:"-"`
	P99       time.Duration `json:"-"`
	Max       time.Duration `json:"-"`
	Stddev    time.Duration `json:"-"`
}

// Summarize computes s's summary under the given name.
func (s *TxStats) Summarize(name string) Summary {
	out := Summary{Name: name, Count: s.Completed(), Commits: s.Commits,
		Rollbacks: s.Rollbacks, Errors: s.Errors, Retries: s.Retries, Retried: s.Retried}
	if s.hist == nil || s.hist.TotalCount() == 0 {
		return out
	}
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	out.Mean = time.Duration(s.hist.Mean() * float64(time.Microsecond))
	out.P50 = us(s.hist.ValueAtQuantile(50))
	out.P90 = us(s.hist.ValueAtQuantile(90))
	out.P95 = us(s.hist.ValueAtQuantile(95))
	out.P99 = us(s.hist.ValueAtQuantile(99))
	out.Max = us(s.hist.Max())
	out.Stddev = time.Duration(s.hist.StdDev() * float64(time.Microsecond))
	return out
}

// Set is one record per transaction type, indexed like the workload's mix.
type Set []TxStats

// NewSet makes a set for n transaction types.
func NewSet(n int) Set { return make(Set, n) }

// Merge adds o into s, type by type.
func (s Set) Merge(o Set) {
	for i := range o {
		s[i].Merge(&o[i])
	}
}

// Total merges every type into one record.
func (s Set) Total() *TxStats {
	var t TxStats
	for i := range s {
		t.Merge(&s[i])
	}
	return &t
}

// PerMinute turns a count over an interval into a rate per minute; zero for
// an empty interval.
func PerMinute(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Minutes()
}
