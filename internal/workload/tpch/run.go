package tpch

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/tpch/answers"
	"github.com/sledge-bench/sledge/internal/workload/tpch/dbgen"
	"github.com/sledge-bench/sledge/internal/workload/tpch/queries"
	"github.com/sledge-bench/sledge/internal/workload/tpch/rules"
)

// Verifier checks one query's answer row by row against a reference.
type Verifier interface {
	Row(vals [][]byte) error
	Done() error
}

// References gives the verifier of query q's validation answer at scale
// factor sf (package answers: DuckDB's engine on dbgen's data, checked
// against TPC's own at SF 1), ok=false when there is no reference for
// that scale factor.
var References = func(sf float64, q int) (v Verifier, ok bool) {
	c := answers.NewCheck(sf, q)
	if c == nil {
		return nil, false
	}
	return c, true
}

// run is one analytic run's state.
type run struct {
	w     *Workload
	env   workload.AnalyticEnv
	d     queries.Dialect
	res   *Result
	mu    sync.Mutex // res.Queries, res.Refresh from concurrent streams
	start time.Time
	// verify: check every answer (validation values on the build's data).
	verify  bool
	matched int // answers that matched their references, under mu
	// For Status, under mu: the query each stream runs, and how many of
	// the run's queries have ended of how many.
	running     map[int]runningQuery
	ended, todo int
}

type runningQuery struct {
	q     int
	start time.Time
}

// Status is the run's progress for a live display: the fraction of its
// queries that ended, and the ones running with their streams and how
// long they have run. Safe to call from another goroutine.
func (w *Workload) Status() (float64, string) {
	r := w.cur.Load()
	if r == nil {
		return -1, "starting"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	streams := make([]int, 0, len(r.running))
	for s := range r.running {
		streams = append(streams, s)
	}
	sort.Ints(streams)
	var b strings.Builder
	for i, s := range streams {
		if i > 0 {
			b.WriteString(", ")
		}
		q := r.running[s]
		name := fmt.Sprintf("Q%d", q.q)
		if q.q < 0 {
			name = fmt.Sprintf("RF%d", -q.q)
		}
		fmt.Fprintf(&b, "stream %d %s %.1f s", s, name, time.Since(q.start).Seconds())
	}
	if b.Len() == 0 {
		b.WriteString("between tests")
	}
	fmt.Fprintf(&b, " — %d of %d queries done", r.ended, r.todo)
	return float64(r.ended) / float64(max(r.todo, 1)), b.String()
}

// begin and end mark stream s's query q (RF1, RF2: -1, -2) running and ended.
func (r *run) begin(s, q int) {
	r.mu.Lock()
	r.running[s] = runningQuery{q, time.Now()}
	r.mu.Unlock()
}

func (r *run) end(s, q int) {
	r.mu.Lock()
	delete(r.running, s)
	if q > 0 {
		r.ended++
	}
	r.mu.Unlock()
}

// RunAnalytic runs the tests the options ask for (workload.Analytic).
func (w *Workload) RunAnalytic(ctx context.Context, env workload.AnalyticEnv) (workload.AnalyticResult, error) {
	r := &run{w: w, env: env, d: queries.Dialect(env.Dialect), start: time.Now(), running: map[int]runningQuery{}}
	w.cur.Store(r)
	r.res = &Result{
		Workload: Name, Label: Label, Scale: w.sc.SF, Streams: 0, Queries: []QueryTime{}, Refresh: []RefreshTime{},
		Test: w.cfg.Test, Params: w.cfg.Params, Seed: env.Seed, Database: env.Database, DatabaseInfo: env.Driver,
		NoRefresh: w.cfg.NoRefresh,
	}
	if w.cfg.Test != "power" {
		r.res.Streams = w.Streams()
		if min := rules.MinStreams(w.sc.SF); r.res.Streams < min {
			r.res.Notes = append(r.res.Notes, fmt.Sprintf("%d query streams is below the specification's minimum of %d at SF %g: the throughput figure is not comparable", r.res.Streams, min, w.sc.SF))
		}
	}
	if len(w.cfg.Queries) > 0 {
		r.res.Subset = w.cfg.Queries
		r.res.Notes = append(r.res.Notes, "only some queries ran (--queries): no Power, Throughput or QphH")
	}
	n := len(r.order(0))
	r.res.VerifyNote = r.unverifiable()
	if r.res.VerifyNote == "" && !r.verifyAsRun() {
		r.todo += n // the validation pass
	}
	if w.cfg.Test != "throughput" {
		r.todo += n
	}
	if w.cfg.Test != "power" {
		r.todo += n * r.res.Streams
	}
	err := r.all(ctx)
	r.res.TotalSeconds = time.Since(r.start).Seconds()
	if err != nil {
		r.res.Error = err.Error()
		r.res.Power, r.res.Throughput, r.res.QphH = nil, nil, nil
		if ctx.Err() != nil {
			r.res.Interrupted = true
		}
	}
	return r.res, err
}

func (r *run) all(ctx context.Context) error {
	w := r.w
	// Answers are checked whenever every query sees the build's data
	// (tpch.md part 10): the validation values, no refresh set applied
	// since the build (tpch_meta.next_set is 1), and references for the
	// scale factor. Random parameters and a run that refreshes get a
	// validation pass first, before RF1 changes the data.
	if r.res.VerifyNote == "" {
		if r.verifyAsRun() {
			r.verify = true // every stream's answers, as they run
		} else if err := r.validate(ctx); err != nil {
			return err
		}
	}
	if w.cfg.Explain {
		if err := r.explain(ctx); err != nil {
			return err
		}
	}
	var powerQ, powerR []float64
	if w.cfg.Test != "throughput" {
		var err error
		if powerQ, powerR, err = r.power(ctx); err != nil {
			return err
		}
	}
	var ts float64
	if w.cfg.Test != "power" {
		var err error
		if ts, err = r.throughput(ctx); err != nil {
			return err
		}
		r.res.ThroughputSeconds = &ts
	}
	if r.verify {
		ok := true
		r.res.Verified = &ok
		r.res.VerifyNote = fmt.Sprintf("%d of %d in every stream, against the references for SF %g", r.matched, r.todo, w.sc.SF)
	}
	if len(w.cfg.Queries) > 0 {
		return nil
	}
	if powerQ != nil {
		p, err := rules.Power(w.sc.SF, powerQ, powerR)
		if err != nil {
			return err
		}
		r.res.Power = &p
	}
	if ts > 0 {
		t, err := rules.Throughput(w.sc.SF, r.res.Streams, ts)
		if err != nil {
			return err
		}
		r.res.Throughput = &t
	}
	if r.res.Power != nil && r.res.Throughput != nil {
		q := rules.QphH(*r.res.Power, *r.res.Throughput)
		r.res.QphH = &q
	}
	return nil
}

// verifyAsRun: every query of every stream has the validation values
// and sees the build's data, so each answer is checked as it runs, with
// no validation pass before.
func (r *run) verifyAsRun() bool {
	return r.w.cfg.Params == "validation" && r.w.cfg.NoRefresh
}

// unverifiable says why this run's answers cannot be checked, with the
// one command that gets a verified run; "" when they can.
func (r *run) unverifiable() string {
	w := r.w
	if References == nil {
		return "not verified (this sledge has no reference answers)"
	}
	sf := w.sc.SF
	var why string
	switch _, ok := References(sf, 1); {
	case !ok:
		why = fmt.Sprintf("no reference answers for SF %g; there are for 0.01, 0.1 and 1", sf)
		sf = 0.01
		if w.sc.SF > 1 {
			sf = 1
		} else if w.sc.SF > 0.1 {
			sf = 0.1
		}
	case w.nextSet > 1:
		sets := fmt.Sprintf("refresh sets 1..%d have", w.nextSet-1)
		if w.nextSet == 2 {
			sets = "refresh set 1 has"
		}
		why = fmt.Sprintf("%s changed the data since the build", sets)
	default:
		return ""
	}
	suggest := r.env.Suggest
	if suggest == nil {
		suggest = func(cmd string) (string, string) { return cmd, "" }
	}
	drop, _ := suggest("sledge drop tpch")
	build, _ := suggest("sledge build tpch")
	run, note := suggest("sledge run tpch")
	return fmt.Sprintf("not verified (%s); a verified run: %s && %s --scale %g && %s%s", why, drop, build, sf, run, note)
}

// order is stream s's queries: Appendix A's row, kept to --queries.
func (r *run) order(s int) []int {
	all := rules.Order(s)
	if len(r.w.cfg.Queries) == 0 {
		return all[:]
	}
	want := map[int]bool{}
	for _, q := range r.w.cfg.Queries {
		want[q] = true
	}
	var out []int
	for _, q := range all {
		if want[q] {
			out = append(out, q)
		}
	}
	return out
}

// params are query q's parameters in stream s: the validation values, or
// qgen's draws from the run's seed (tpch.md part 7.1).
func (r *run) params(q, s int, seeds *[queries.Queries + 1]*dbgen.Stream) queries.Params {
	if r.w.cfg.Params == "validation" {
		return queries.Validation(q, r.w.sc.SF)
	}
	return queries.Random(q, r.w.sc.SF, seeds[q])
}

// session opens a stream's session with the dialect's settings.
func (r *run) session(ctx context.Context) (workload.SQLConn, error) {
	c, err := r.env.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	for _, st := range queries.Session(r.d) {
		if err := c.ExecSQL(ctx, st); err != nil {
			_ = c.Close(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("session setting %q: %w", st, err)
		}
	}
	return c, nil
}

// query runs query q of stream s on c and times it from the first
// statement's submission to the answer's last row (Q15's view included).
func (r *run) query(ctx context.Context, c workload.SQLConn, q, s int, p queries.Params, v Verifier) (QueryTime, error) {
	stmts, err := queries.Render(r.d, q, s, p)
	if err != nil {
		return QueryTime{}, err
	}
	qt := QueryTime{Stream: s, Query: q}
	ans := queries.Answer(q)
	r.begin(s, q)
	defer r.end(s, q)
	start := time.Now()
	for i, st := range stmts {
		if i != ans {
			err = c.ExecSQL(ctx, st)
		} else if v != nil {
			qt.Rows, err = c.QuerySQL(ctx, st, func(vals [][]byte) error {
				if err := v.Row(vals); err != nil {
					r.differs()
					return err
				}
				return nil
			})
		} else {
			qt.Rows, err = c.QuerySQL(ctx, st, func([][]byte) error { return nil })
		}
		if err != nil {
			if q == 15 && i < len(stmts)-1 {
				// Drop the view a failed Q15 left, so the stream's name
				// is free again (best effort).
				_ = c.ExecSQL(context.WithoutCancel(ctx), stmts[len(stmts)-1])
			}
			return qt, fmt.Errorf("stream %d Q%d: %w", s, q, err)
		}
	}
	qt.Seconds = time.Since(start).Seconds()
	qt.At = time.Since(r.start).Seconds()
	if v != nil {
		if err := v.Done(); err != nil {
			r.differs()
			return qt, fmt.Errorf("stream %d: answer differs from the reference: %w", s, err)
		}
		r.mu.Lock()
		r.matched++
		r.mu.Unlock()
	}
	return qt, nil
}

// differs records that an answer did not match its reference.
func (r *run) differs() {
	r.mu.Lock()
	f := false
	r.res.Verified = &f
	r.mu.Unlock()
}

func (r *run) verifier(q int) Verifier {
	if !r.verify || References == nil {
		return nil
	}
	v, _ := References(r.w.sc.SF, q)
	return v
}

func (r *run) progress(format string, a ...any) {
	if r.env.Progress != nil {
		r.env.Progress(fmt.Sprintf(format, a...))
	}
}

func rowsText(n int64) string {
	if n == 1 {
		return "1 row"
	}
	return strconv.FormatInt(n, 10) + " rows"
}

// validate runs the 22 queries once with the validation values on the
// build's data and checks every answer (the qualification of §2.3),
// before any refresh function changes the data. Its timings are kept
// apart: they are no part of the power test.
func (r *run) validate(ctx context.Context) error {
	c, err := r.session(ctx)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	r.verify = true
	defer func() { r.verify = false }()
	qs := r.w.cfg.Queries
	if len(qs) == 0 {
		for q := 1; q <= queries.Queries; q++ {
			qs = append(qs, q)
		}
	}
	for _, q := range qs {
		qt, err := r.query(ctx, c, q, 0, queries.Validation(q, r.w.sc.SF), r.verifier(q))
		if err != nil {
			return fmt.Errorf("validation: %w", err)
		}
		r.res.Validation = append(r.res.Validation, qt)
		r.progress("validation  Q%-2d %8.4f s  %s, as the reference", q, qt.Seconds, rowsText(qt.Rows))
	}
	ok := true
	r.res.Verified = &ok
	r.res.VerifyNote = fmt.Sprintf("%d of %d validation queries, against the references for SF %g", r.matched, len(qs), r.w.sc.SF)
	return nil
}

// power is the power test (§5.3.3): RF1, the queries in stream 0's order,
// RF2, on one session. It returns the timings the metric uses.
func (r *run) power(ctx context.Context) (qsecs, rsecs []float64, err error) {
	c, err := r.session(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	r.progress("power test: stream 0")
	seeds := queries.Seeds(int64(r.env.Seed), 0)
	if !r.w.cfg.NoRefresh {
		rt, err := r.rf1(ctx, c, 0)
		if err != nil {
			return nil, nil, err
		}
		rsecs = append(rsecs, rt.Seconds)
	}
	for _, q := range r.order(0) {
		qt, err := r.query(ctx, c, q, 0, r.params(q, 0, &seeds), r.verifier(q))
		if err != nil {
			r.addQuery(qt)
			return nil, nil, err
		}
		r.addQuery(qt)
		qsecs = append(qsecs, qt.Seconds)
		r.progress("stream 0  Q%-2d %8.4f s  %s", q, qt.Seconds, rowsText(qt.Rows))
	}
	if !r.w.cfg.NoRefresh {
		rt, err := r.rf2(ctx, c, 0)
		if err != nil {
			return nil, nil, err
		}
		rsecs = append(rsecs, rt.Seconds)
	}
	return qsecs, rsecs, nil
}

func (r *run) addQuery(qt QueryTime) {
	r.mu.Lock()
	r.res.Queries = append(r.res.Queries, qt)
	r.mu.Unlock()
}

// throughput is the throughput test (§5.3.4): S query streams at once,
// each on its own session in its own order with its own parameters, and
// the refresh stream's S pairs beside them. It returns Ts.
func (r *run) throughput(ctx context.Context) (float64, error) {
	n := r.res.Streams
	r.progress("throughput test: %d query streams%s", n, map[bool]string{true: "", false: " and the refresh stream"}[r.w.cfg.NoRefresh])
	// Sessions first: connecting is no part of Ts.
	conns := make([]workload.SQLConn, n+1)
	defer func() {
		for _, c := range conns {
			if c != nil {
				_ = c.Close(context.WithoutCancel(ctx))
			}
		}
	}()
	for i := range conns {
		if i == n && r.w.cfg.NoRefresh {
			break
		}
		c, err := r.session(ctx)
		if err != nil {
			return 0, err
		}
		conns[i] = c
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	start := time.Now()
	for s := 1; s <= n; s++ {
		wg.Add(1)
		go func(s int, c workload.SQLConn) {
			defer wg.Done()
			seeds := queries.Seeds(int64(r.env.Seed), s)
			for _, q := range r.order(s) {
				qt, err := r.query(ctx, c, q, s, r.params(q, s, &seeds), r.verifier(q))
				r.addQuery(qt)
				if err != nil {
					cancel(err) // a failed query fails the run
					return
				}
				r.progress("stream %d  Q%-2d %8.4f s  %s", s, q, qt.Seconds, rowsText(qt.Rows))
			}
		}(s, conns[s-1])
	}
	if !r.w.cfg.NoRefresh {
		wg.Add(1)
		go func(c workload.SQLConn) {
			defer wg.Done()
			for k := 1; k <= n; k++ {
				if _, err := r.rf1(ctx, c, k); err != nil {
					cancel(err)
					return
				}
				if _, err := r.rf2(ctx, c, k); err != nil {
					cancel(err)
					return
				}
			}
		}(conns[n])
	}
	wg.Wait()
	ts := time.Since(start).Seconds()
	if err := context.Cause(ctx); err != nil {
		return 0, err
	}
	return ts, nil
}

// explain stores each query's plan as the database shows it, with stream
// 0's parameters (tpch.md: a slow query's plan can be read afterwards).
func (r *run) explain(ctx context.Context) error {
	c, err := r.session(ctx)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	seeds := queries.Seeds(int64(r.env.Seed), 0)
	prefix := map[queries.Dialect]string{queries.Postgres: "EXPLAIN ", queries.MySQL: "EXPLAIN ", queries.SQLite: "EXPLAIN QUERY PLAN ", queries.DuckDB: "EXPLAIN "}[r.d]
	for _, q := range r.order(0) {
		stmts, err := queries.Render(r.d, q, 0, r.params(q, 0, &seeds))
		if err != nil {
			return err
		}
		ans := queries.Answer(q)
		var plan strings.Builder
		for i, st := range stmts {
			if i < ans {
				err = c.ExecSQL(ctx, st) // Q15's view
			} else if i == ans {
				_, err = c.QuerySQL(ctx, prefix+st, func(vals [][]byte) error {
					var cells []string
					for j, v := range vals {
						if r.d == queries.SQLite && j < 3 {
							continue // id, parent, notused: the detail is the plan
						}
						if v == nil {
							v = []byte("NULL")
						}
						cells = append(cells, string(v))
					}
					plan.WriteString(strings.Join(cells, "\t"))
					plan.WriteByte('\n')
					return nil
				})
			} else {
				err = c.ExecSQL(ctx, st)
			}
			if err != nil {
				if q == 15 && i < len(stmts)-1 {
					_ = c.ExecSQL(context.WithoutCancel(ctx), stmts[len(stmts)-1])
				}
				return fmt.Errorf("explain Q%d: %w", q, err)
			}
		}
		r.res.Plans = append(r.res.Plans, Plan{Query: q, Plan: plan.String()})
	}
	r.progress("explain: %d plans stored with the run", len(r.res.Plans))
	return nil
}
