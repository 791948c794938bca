// Package txlog writes pgbench's transaction logs (pgbench -l): one line
// per transaction, or with --aggregate-interval one line per interval, in
// PostgreSQL 15's pgbench's columns (docs/pgbench.md, "Logs"). The engine
// feeds it through engine.TxLog from each virtual user's hot path: lines
// are formatted into a buffer per virtual user and written to the file in
// large writes, without allocating per transaction.
package txlog

import (
	"strconv"

	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/workload"
)

// Columns are the optional columns of the logs, as pgbench decides them.
type Columns struct {
	Lag     bool // -R: schedule_lag, and the lag sums of aggregated lines
	Skipped bool // -L: the skipped count of aggregated lines
	Retries bool // --max-tries ≠ 1: retries, and retried/retries of aggregated lines
	// FailuresDetailed (--failures-detailed): a failed transaction's time
	// is its class, "serialization" or "deadlock" ("failed" for any other
	// error), and aggregated lines count both classes.
	FailuresDetailed bool
}

// AppendTx appends one transaction's line of a per-transaction log:
//
//	client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]
//
// time is the latency in microseconds, or "failed" / "skipped" (with
// FailuresDetailed, "serialization" / "deadlock" for those); time_epoch
// and time_us are when the transaction ended. n counts the VU's
// transactions from 1, skipped and failed ones included.
func AppendTx(b []byte, c Columns, vu int, n int64, e engine.TxEnd) []byte {
	b = strconv.AppendInt(b, int64(vu), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, n, 10)
	b = append(b, ' ')
	switch e.Status {
	case engine.TxOK:
		b = strconv.AppendInt(b, e.Latency.Microseconds(), 10)
	case engine.TxSkipped:
		b = append(b, "skipped"...)
	default:
		switch {
		case c.FailuresDetailed && e.Class == workload.FailSerialization:
			b = append(b, "serialization"...)
		case c.FailuresDetailed && e.Class == workload.FailDeadlock:
			b = append(b, "deadlock"...)
		default:
			b = append(b, "failed"...)
		}
	}
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(e.Kind), 10)
	us := e.End.UnixMicro()
	b = append(b, ' ')
	b = strconv.AppendInt(b, us/1_000_000, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, us%1_000_000, 10)
	if c.Lag {
		lag := int64(0) // pgbench: 0 for failed and skipped transactions
		if e.Status == engine.TxOK {
			lag = e.Lag.Microseconds()
		}
		b = append(b, ' ')
		b = strconv.AppendInt(b, lag, 10)
	}
	if c.Retries {
		b = append(b, ' ')
		b = strconv.AppendInt(b, e.Retries, 10)
	}
	return append(b, '\n')
}

// Bucket is what an aggregated line sums over one interval, as pgbench's
// StatsData: latencies and lags in microseconds, of successful
// transactions only.
type Bucket struct {
	Count                           int64
	LatSum, LatSum2, LatMin, LatMax float64
	LagCount                        int64
	LagSum, LagSum2, LagMin, LagMax float64
	Skipped, Retried, Retries       int64
	engine.FailCounts               // failed transactions by class
}

// Add counts one transaction, as pgbench's accumStats.
func (a *Bucket) Add(e engine.TxEnd) {
	if e.Status == engine.TxSkipped {
		a.Skipped++
		return
	}
	if e.Retries > 0 {
		a.Retried++
		a.Retries += e.Retries
	}
	if e.Status != engine.TxOK {
		a.FailCounts.Count(e.Class)
		return
	}
	lat := float64(e.Latency.Microseconds())
	widen(a.Count, &a.LatMin, &a.LatMax, lat, lat)
	a.Count++
	a.LatSum += lat
	a.LatSum2 += lat * lat
	lag := float64(e.Lag.Microseconds())
	widen(a.LagCount, &a.LagMin, &a.LagMax, lag, lag)
	a.LagCount++
	a.LagSum += lag
	a.LagSum2 += lag * lag
}

// Merge adds o's counts to a.
func (a *Bucket) Merge(o *Bucket) {
	if o.Count > 0 {
		widen(a.Count, &a.LatMin, &a.LatMax, o.LatMin, o.LatMax)
	}
	if o.LagCount > 0 {
		widen(a.LagCount, &a.LagMin, &a.LagMax, o.LagMin, o.LagMax)
	}
	a.Count += o.Count
	a.LatSum += o.LatSum
	a.LatSum2 += o.LatSum2
	a.LagCount += o.LagCount
	a.LagSum += o.LagSum
	a.LagSum2 += o.LagSum2
	a.Skipped += o.Skipped
	a.Retried += o.Retried
	a.Retries += o.Retries
	a.FailCounts = a.FailCounts.Add(o.FailCounts)
}

// widen makes [*lo, *hi], the range of n values (none: unset), take in
// [xlo, xhi].
func widen(n int64, lo, hi *float64, xlo, xhi float64) {
	if n == 0 || xlo < *lo {
		*lo = xlo
	}
	if n == 0 || xhi > *hi {
		*hi = xhi
	}
}

// AppendAgg appends one interval's line of an aggregated log, in the 15
// columns pgbench 15 always writes:
//
//	interval_start num_transactions sum_latency sum_latency_2 min_latency max_latency
//	sum_lag sum_lag_2 min_lag max_lag skipped retried retries serialization_failures deadlock_failures
//
// The lag columns are 0 without -R, skipped without -L, retried and
// retries with --max-tries 1; the failure columns are 0 without
// --failures-detailed, as pgbench writes them. start is the interval's start in Unix
// seconds.
func AppendAgg(b []byte, c Columns, start int64, a *Bucket) []byte {
	b = strconv.AppendInt(b, start, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, a.Count, 10)
	for _, x := range [...]float64{a.LatSum, a.LatSum2, a.LatMin, a.LatMax} {
		b = append(b, ' ')
		b = strconv.AppendFloat(b, x, 'f', 0, 64)
	}
	lag := [4]float64{}
	if c.Lag {
		lag = [...]float64{a.LagSum, a.LagSum2, a.LagMin, a.LagMax}
	}
	for _, x := range lag {
		b = append(b, ' ')
		b = strconv.AppendFloat(b, x, 'f', 0, 64)
	}
	var skipped, retried, retries, ser, dead int64
	if c.Skipped {
		skipped = a.Skipped
	}
	if c.Retries {
		retried, retries = a.Retried, a.Retries
	}
	if c.FailuresDetailed {
		ser, dead = a.Serialization, a.Deadlock
	}
	for _, n := range [...]int64{skipped, retried, retries, ser, dead} {
		b = append(b, ' ')
		b = strconv.AppendInt(b, n, 10)
	}
	return append(b, '\n')
}
