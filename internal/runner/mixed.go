package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/sledge-bench/sledge/internal/cluster"
	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// mixedRun is the analytic side of a mixed workload's run (workload.Mixed,
// CH-benCHmark): the query streams this process runs beside its terminals,
// and every query that ended, from its own streams and, in a coordinator,
// from its workers'. A query counts toward the result when it ended inside
// the measured interval: the client's clock, as the terminals' are.
type mixedRun struct {
	w       workload.Mixed
	streams int // in all, over every process of the run
	mine    []int

	mu   sync.Mutex
	runs []workload.QueryRun
	// errs are the streams that ended on an error of their own (a lost
	// session, a dropped schema), one line each.
	errs []string

	ctx    context.Context
	conns  []workload.SQLConn // opened by open, one per stream of mine
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// newMixed is w's analytic side when it is a Mixed workload with streams,
// nil otherwise. k of n is this process's share in a scale-out run (0 of
// 1 alone); a coordinator (n = 0) runs no stream of its own.
func newMixed(w workload.Workload, k, n int) *mixedRun {
	mw, ok := w.(workload.Mixed)
	if !ok || mw.AnalyticStreams() < 1 {
		return nil
	}
	m := &mixedRun{w: mw, streams: mw.AnalyticStreams()}
	if n > 0 {
		for s := k * m.streams / n; s < (k+1)*m.streams/n; s++ {
			m.mine = append(m.mine, s)
		}
	}
	return m
}

// open opens one SQL session per stream of this process's share: one
// that cannot be opened fails the run before anything is measured.
func (m *mixedRun) open(ctx context.Context, d db.DB) error {
	if m == nil || len(m.mine) == 0 {
		return nil
	}
	sd, ok := d.(db.SQLDB)
	if !ok {
		return Usagef("%s's analytic streams need a database that runs SQL text", m.w.Name())
	}
	conns := make([]workload.SQLConn, 0, len(m.mine))
	for range m.mine {
		c, err := sd.ConnectSQL(ctx)
		if err != nil {
			for _, c := range conns {
				_ = c.Close(context.WithoutCancel(ctx))
			}
			return fmt.Errorf("analytic stream session: %w", err)
		}
		conns = append(conns, c)
	}
	m.ctx, m.conns = ctx, conns
	return nil
}

// begin starts the streams opened, their orders drawn from the run's
// seed: alone as the engine starts, a worker at the coordinator's start
// (whose seed it then has). Once only.
func (m *mixedRun) begin(seed uint64) {
	if m == nil || len(m.conns) == 0 || m.cancel != nil {
		return
	}
	sctx, cancel := context.WithCancel(m.ctx)
	m.cancel = cancel
	for i, s := range m.mine {
		c := m.conns[i]
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			defer c.Close(context.WithoutCancel(sctx))
			err := m.w.Stream(sctx, c, s, seed, m.add)
			if err != nil && sctx.Err() == nil {
				m.mu.Lock()
				m.errs = append(m.errs, fmt.Sprintf("stream %d: %v", s, err))
				m.mu.Unlock()
			}
		}()
	}
}

func (m *mixedRun) add(q workload.QueryRun) {
	m.mu.Lock()
	m.runs = append(m.runs, q)
	m.mu.Unlock()
}

// stop ends this process's streams: the queries in flight are cancelled
// (and not counted), waiting at most within for them to let go.
func (m *mixedRun) stop(within time.Duration) {
	if m == nil {
		return
	}
	if m.cancel == nil { // never begun (the run ended before its start)
		for _, c := range m.conns {
			_ = c.Close(context.WithoutCancel(m.ctx))
		}
		m.conns = nil
		return
	}
	m.cancel()
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(within):
		m.mu.Lock()
		m.errs = append(m.errs, fmt.Sprintf("a stream's query did not stop within %s of the end: its session was left to close", within))
		m.mu.Unlock()
	}
}

// wire is this process's ended queries for the coordinator.
func (m *mixedRun) wire() []cluster.QueryWire {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]cluster.QueryWire, 0, len(m.runs))
	for _, q := range m.runs {
		qw := cluster.QueryWire{Stream: q.Stream, Query: q.Query, Start: q.Start.UnixNano(), End: q.End.UnixNano(), Rows: q.Rows}
		if q.Err != nil {
			qw.Err = q.Err.Error()
		}
		out = append(out, qw)
	}
	return out
}

// merge takes a worker's ended queries.
func (m *mixedRun) merge(qs []cluster.QueryWire) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, q := range qs {
		r := workload.QueryRun{Stream: q.Stream, Query: q.Query, Start: time.Unix(0, q.Start), End: time.Unix(0, q.End), Rows: q.Rows}
		if q.Err != "" {
			r.Err = errors.New(q.Err)
		}
		m.runs = append(m.runs, r)
	}
}

// mixedCPUNote is why a mixed run's client CPU per transaction is not
// given.
const mixedCPUNote = "not measured per transaction: the analytic streams ran in this sledge process during the measured interval (with an embedded database, their queries too), so its CPU time is not the terminals' alone"

// MixedJSON is the analytic side of a mixed run (--json "analytic"):
// the queries that ended inside the measured interval, measured by the
// client as the terminals' transactions are.
type MixedJSON struct {
	Streams int `json:"streams"`
	// Queries ended without an error inside the measured interval;
	// Failed with one. QueriesPerHour is Queries over the interval, an
	// hour's worth: CH-benCHmark's analytic throughput (QphH-like, not
	// TPC-H's QphH@Size, which is a geometric composite of its tests).
	Queries        int64   `json:"queries"`
	Failed         int64   `json:"failed"`
	QueriesPerHour float64 `json:"queries_per_hour"`
	// Source says who measured: "client" (sledge's clock around each
	// query, its every row read).
	Source   string           `json:"source"`
	PerQuery []MixedQueryJSON `json:"per_query"`
	// Errors are the streams' own errors and the first error of each
	// query that failed, one line each.
	Errors []string `json:"errors,omitempty"`
}

// MixedQueryJSON is one query's times over the measured interval.
type MixedQueryJSON struct {
	Query  string  `json:"query"` // "Q1"
	Count  int64   `json:"count"`
	Failed int64   `json:"failed"`
	AvgS   float64 `json:"avg_s"`
	MinS   float64 `json:"min_s"`
	MaxS   float64 `json:"max_s"`
	Rows   int64   `json:"rows"` // of its last run
}

// summary is the analytic side's result over [from, to].
func (m *mixedRun) summary(from, to time.Time) *MixedJSON {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	names := m.w.Queries()
	out := &MixedJSON{Streams: m.streams, Source: "client", PerQuery: make([]MixedQueryJSON, len(names))}
	sums := make([]float64, len(names))
	firstErr := map[int]string{}
	runs := append([]workload.QueryRun(nil), m.runs...)
	sort.Slice(runs, func(i, j int) bool { return runs[i].End.Before(runs[j].End) })
	for i, n := range names {
		out.PerQuery[i] = MixedQueryJSON{Query: n, MinS: math.Inf(1)}
	}
	for _, q := range runs {
		if q.Query < 0 || q.Query >= len(names) || q.End.Before(from) || q.End.After(to) {
			continue
		}
		pq := &out.PerQuery[q.Query]
		if q.Err != nil {
			pq.Failed++
			out.Failed++
			if _, ok := firstErr[q.Query]; !ok {
				firstErr[q.Query] = fmt.Sprintf("%s: %v", names[q.Query], q.Err)
			}
			continue
		}
		s := q.End.Sub(q.Start).Seconds()
		pq.Count++
		out.Queries++
		sums[q.Query] += s
		pq.MinS = min(pq.MinS, s)
		pq.MaxS = max(pq.MaxS, s)
		pq.Rows = q.Rows
	}
	for i := range out.PerQuery {
		pq := &out.PerQuery[i]
		if pq.Count > 0 {
			pq.AvgS = sums[i] / float64(pq.Count)
		} else {
			pq.MinS = 0
		}
		if e, ok := firstErr[i]; ok {
			out.Errors = append(out.Errors, e)
		}
	}
	out.Errors = append(out.Errors, m.errs...)
	if secs := to.Sub(from).Seconds(); secs > 0 {
		out.QueriesPerHour = float64(out.Queries) * 3600 / secs
	}
	return out
}

// prelude runs w's step before anything is measured (the --validate
// pass) on a SQL session of its own, its lines on stderr unless quiet.
func prelude(ctx context.Context, env RunEnv, o *RunOptions, w workload.Mixed, s *Session) error {
	sd, ok := s.DB.(db.SQLDB)
	if !ok {
		return Usagef("%s needs a database that runs SQL text", w.Name())
	}
	c, err := sd.ConnectSQL(ctx)
	if err != nil {
		return fmt.Errorf("connect for %s's prelude: %w", w.Name(), err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	var progress func(string)
	if !o.JSON && env.Stderr != nil {
		progress = func(line string) { fmt.Fprintln(env.Stderr, line) }
	}
	if env.Progress != nil {
		progress = env.Progress
	}
	if err := w.Prelude(ctx, c, progress); err != nil {
		if errors.Is(err, workload.ErrCannotPrelude) {
			return &ExitError{Code: ExitUsage, Err: err}
		}
		return err
	}
	return nil
}
