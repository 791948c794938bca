// Package tpch is sledge's TPC-H-derived analytic workload (docs/tpch.md):
// the eight tables as TPC's dbgen 2.14 generates them (package dbgen),
// the 22 queries and their substitution parameters (package queries), the
// two refresh functions, and the power and throughput tests with their
// composite figures (package rules). Its results are TPC-H-derived, never
// TPC-H results: no audit, no pricing, no full disclosure.
//
// Unlike TPC-C's, its SQL is text the workload renders for each dialect
// (workload.SQLScripter, workload.SQLConn): the queries carry their
// parameters as literals, as qgen writes them.
package tpch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/tpch/dbgen"
	"github.com/sledge-bench/sledge/internal/workload/tpch/queries"
	"github.com/sledge-bench/sledge/internal/workload/tpch/rules"
)

// Name is the workload's name: `sledge build tpch`.
const Name = "tpch"

// metaTable holds the build's scale factor and the next unused refresh
// set (tpch.md part 2, part 6). It is loaded last, so it marks a complete
// build.
const metaTable = "tpch_meta"

func init() {
	workload.Register(workload.Meta{
		Name:        Name,
		Description: "TPC-H-derived analytic workload: dbgen's eight tables, 22 queries, refresh functions, power and throughput tests; not a TPC-H result",
		Flags:       flags,
		Throughput:  "QphH",
		SQL:         true,
		NewResult:   func() workload.AnalyticResult { return &Result{} },
	})
}

// Config is what a command asks of the workload.
type Config struct {
	SF        float64
	Seed      uint64
	Test      string // power, throughput, both
	Streams   int    // throughput test's query streams; 0: the minimum for the scale factor
	Params    string // random, validation
	NoRefresh bool
	Queries   []int // the queries to run (1..22), in each stream's order; nil: all
	Explain   bool
}

func flags(cmd string, fs *pflag.FlagSet) func(seed uint64) (workload.Workload, error) {
	cfg := Config{SF: 1, Test: "both", Params: "random"}
	var qlist string
	switch cmd {
	case "build":
		fs.Float64VarP(&cfg.SF, "scale", "s", 1, "tpch: scale factor SF (0.01, 0.1, 1, 10, …: SF 1 is 8.66 million rows, about 1 GB)")
	case "run":
		fs.StringVar(&cfg.Test, "test", "both", "tpch: power, throughput or both (the power test, then the throughput test)")
		fs.IntVar(&cfg.Streams, "streams", 0, "tpch: query streams of the throughput test (default: the specification's minimum for the scale factor, 2 below SF 10)")
		fs.StringVar(&cfg.Params, "params", "random", "tpch: substitution parameters: random (qgen's, from --seed) or validation (the specification's in every stream); the validation answers are checked either way while the data is as built")
		fs.BoolVar(&cfg.NoRefresh, "no-refresh", false, "tpch: skip the refresh functions RF1 and RF2 (HammerDB's default)")
		fs.StringVar(&qlist, "queries", "", "tpch: run only these queries, such as 1,3,5-7 (no composite figures then)")
		fs.BoolVar(&cfg.Explain, "explain", false, "tpch: store each query's plan with the run (EXPLAIN before the tests)")
	}
	return func(seed uint64) (workload.Workload, error) {
		c := cfg
		c.Seed = seed
		if qlist != "" {
			qs, err := ParseQueries(qlist)
			if err != nil {
				return nil, err
			}
			c.Queries = qs
		}
		w := &Workload{cfg: c}
		if err := w.Validate(); err != nil {
			return nil, err
		}
		return w, nil
	}
}

// ParseQueries reads --queries: numbers and ranges of 1..22, such as
// "1,3,5-7".
func ParseQueries(s string) ([]int, error) {
	seen := map[int]bool{}
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(part), "Q"))
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(strings.TrimSpace(hi))
		}
		if err1 != nil || err2 != nil || a < 1 || b > queries.Queries || a > b {
			return nil, fmt.Errorf("--queries %q: want query numbers 1..22 and ranges such as 1,3,5-7", s)
		}
		for q := a; q <= b; q++ {
			if !seen[q] {
				seen[q] = true
				out = append(out, q)
			}
		}
	}
	return out, nil
}

// Workload is the TPC-H-derived workload.
type Workload struct {
	cfg Config
	sc  dbgen.Scale
	// From the built schema (Attach).
	attached bool
	nextSet  int64
	cur      atomic.Pointer[run] // the run going on, for Status
}

// New is the workload with cfg (tests; the command line uses the registry).
func New(cfg Config) (*Workload, error) {
	if cfg.Test == "" {
		cfg.Test = "both"
	}
	if cfg.Params == "" {
		cfg.Params = "random"
	}
	w := &Workload{cfg: cfg}
	return w, w.Validate()
}

func (w *Workload) Name() string { return Name }

// Validate checks the options before anything is opened.
func (w *Workload) Validate() error {
	sc, err := dbgen.NewScale(w.cfg.SF)
	if err != nil {
		return fmt.Errorf("--scale: %s", strings.TrimPrefix(err.Error(), "dbgen: "))
	}
	w.sc = sc
	switch w.cfg.Test {
	case "power", "throughput", "both":
	default:
		return fmt.Errorf("--test %q: use power, throughput or both", w.cfg.Test)
	}
	switch w.cfg.Params {
	case "random", "validation":
	default:
		return fmt.Errorf("--params %q: use random or validation", w.cfg.Params)
	}
	if w.cfg.Streams < 0 {
		return fmt.Errorf("--streams must be at least 1")
	}
	return nil
}

// Scale is the scale factor: the one built (after Attach) or to build.
func (w *Workload) Scale() float64 { return w.sc.SF }

// Tables are dbgen's eight tables, then the metadata table that marks a
// complete build.
func (w *Workload) Tables() []workload.Table {
	ts := dbgen.Tables(w.sc)
	sf := strconv.FormatFloat(w.sc.SF, 'f', -1, 64)
	meta := [][]any{{"scale", sf}, {"next_set", "1"}, {"generator", "dbgen 2.14"}}
	ts = append(ts, workload.Table{Name: metaTable, Columns: []string{"name", "value"}, Batches: 1, Rows: int64(len(meta)),
		Fill: func(_ int, buf [][]any) [][]any {
			buf = buf[:0]
			for _, r := range meta {
				buf = append(buf, []any{r[0], r[1]})
			}
			return buf
		}})
	return ts
}

// Mix is empty: a TPC-H run is a sequence of tests, not a mix of
// transactions (RunAnalytic).
func (w *Workload) Mix() []workload.TxType { return nil }

// Statements: none are named; the SQL is rendered text.
func (w *Workload) Statements(workload.Mode) []string { return nil }

// NewTerminal is never called: RunAnalytic drives the streams.
func (w *Workload) NewTerminal(int, int, uint64) workload.Terminal { return nil }

// tableNames are the eight tables in the order they are dropped (children
// first) and the metadata table.
var tableNames = []string{"lineitem", "orders", "partsupp", "part", "customer", "supplier", "nation", "region", metaTable}

// Script is the SQL of a build step in dialect d (workload.SQLScripter).
// AfterLoad names what the build creates after the load (runner's
// messages): the keys and indexes, then the statistics (Script).
func (w *Workload) AfterLoad() string { return "indexes and statistics" }

func (w *Workload) Script(d, step string) []string {
	dl := queries.Dialect(d)
	switch step {
	case "drop":
		var out []string
		for _, t := range tableNames {
			out = append(out, "DROP TABLE IF EXISTS "+t)
		}
		return out
	case "tables":
		text := "varchar(64)"
		if dl == queries.SQLite {
			text = "TEXT"
		}
		return append(queries.Schema(dl),
			fmt.Sprintf("CREATE TABLE %s (name %s NOT NULL PRIMARY KEY, value %s NOT NULL)", metaTable, text, text))
	case "indexes":
		// Keys and indexes after the load, then the statistics the
		// analytic plans depend on (tpch.md part 5).
		out := queries.Indexes()
		switch dl {
		case queries.MySQL:
			out = append(out, "ANALYZE TABLE lineitem, orders, partsupp, part, customer, supplier, nation, region")
		default:
			out = append(out, "ANALYZE")
		}
		return out
	}
	return nil
}

// Guard refuses to build or drop where TPC-C's tables are: both have
// customer and orders (tpch.md part 2), and TPC-H's would replace them.
func (w *Workload) Guard(ctx context.Context, c workload.Conn) error {
	sc, ok := c.(workload.SQLConn)
	if !ok {
		return nil
	}
	_, err := sc.QuerySQL(ctx, "SELECT count(*) FROM warehouse WHERE 1 = 0", func([][]byte) error { return nil })
	switch {
	case err == nil:
		return errors.New("this database holds TPC-C's tables (warehouse, customer, orders, …): TPC-H's customer and orders have the same names, so tpch needs a database of its own (the default SQLite file is tpch.db; on a server, another database name in --db)")
	case errors.Is(err, workload.ErrNoSchema):
		return nil
	}
	return fmt.Errorf("look for TPC-C's tables: %w", err)
}

// Attach reads the built schema's scale factor and next refresh set from
// the metadata table.
func (w *Workload) Attach(ctx context.Context, c workload.Conn) error {
	sc, ok := c.(workload.SQLConn)
	if !ok {
		return errors.New("tpch: the session does not run SQL text")
	}
	meta := map[string]string{}
	_, err := sc.QuerySQL(ctx, "SELECT name, value FROM "+metaTable, func(v [][]byte) error {
		meta[string(v[0])] = string(v[1])
		return nil
	})
	if err != nil {
		return fmt.Errorf("read %s: %w", metaTable, err)
	}
	sf, err1 := strconv.ParseFloat(meta["scale"], 64)
	next, err2 := strconv.ParseInt(meta["next_set"], 10, 64)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("%s: scale %q, next_set %q: %w", metaTable, meta["scale"], meta["next_set"], workload.ErrNoSchema)
	}
	if w.sc, err = dbgen.NewScale(sf); err != nil {
		return fmt.Errorf("%s: %w", metaTable, err)
	}
	w.cfg.SF, w.nextSet, w.attached = sf, next, true
	return nil
}

// ScaleText is the scale as the header and the summary name it.
func (w *Workload) ScaleText() string {
	return "SF " + strconv.FormatFloat(w.sc.SF, 'f', -1, 64)
}

// Checks are the consistency conditions of tpch.md part 9.1, each one
// statement returning the number of violations.
func (w *Workload) Checks() []workload.Check {
	sc := w.sc
	count := func(t string, n int64) string {
		return fmt.Sprintf("(CASE WHEN (SELECT count(*) FROM %s) = %d THEN 0 ELSE 1 END)", t, n)
	}
	dup := func(t, key string) string {
		return fmt.Sprintf("(SELECT count(*) FROM (SELECT %s FROM %s GROUP BY %s HAVING count(*) > 1) d)", key, t, key)
	}
	orphan := func(child, cond, parent, match string) string {
		return fmt.Sprintf("(SELECT count(*) FROM %s WHERE %s NOT EXISTS (SELECT 1 FROM %s WHERE %s))", child, cond, parent, match)
	}
	sum := func(parts ...string) string { return "SELECT " + strings.Join(parts, " + ") }
	applied := max(w.nextSet-1, 0) // refresh pairs applied since the build
	added := applied * sc.RefreshCount()
	checks := []workload.Check{
		{ID: "counts", Desc: "row counts as the scale factor gives them (region 5, nation 25, supplier SF×10,000, part SF×200,000, partsupp 4 per part, customer SF×150,000, orders SF×1,500,000)",
			SQL: sum(count("region", 5), count("nation", 25), count("supplier", sc.Suppliers), count("part", sc.Parts),
				count("partsupp", sc.PartSupps()), count("customer", sc.Customers), count("orders", sc.Orders))},
		{ID: "keys", Desc: "primary keys are unique in all eight tables",
			SQL: sum(dup("region", "r_regionkey"), dup("nation", "n_nationkey"), dup("supplier", "s_suppkey"), dup("part", "p_partkey"),
				dup("partsupp", "ps_partkey, ps_suppkey"), dup("customer", "c_custkey"), dup("orders", "o_orderkey"),
				dup("lineitem", "l_orderkey, l_linenumber"))},
		{ID: "references", Desc: "every foreign key finds its row: lineitem → orders and partsupp, orders → customer, partsupp → part and supplier, customer and supplier → nation, nation → region",
			SQL: sum(orphan("lineitem", "", "orders", "o_orderkey = l_orderkey"),
				orphan("lineitem", "", "partsupp", "ps_partkey = l_partkey AND ps_suppkey = l_suppkey"),
				orphan("orders", "", "customer", "c_custkey = o_custkey"),
				orphan("partsupp", "", "part", "p_partkey = ps_partkey"),
				orphan("partsupp", "", "supplier", "s_suppkey = ps_suppkey"),
				orphan("customer", "", "nation", "n_nationkey = c_nationkey"),
				orphan("supplier", "", "nation", "n_nationkey = s_nationkey"),
				orphan("nation", "", "region", "r_regionkey = n_regionkey"))},
		{ID: "lines", Desc: "every order has 1 to 7 lines, numbered from 1",
			SQL: "SELECT count(*) FROM orders LEFT JOIN (SELECT l_orderkey, count(*) AS n, max(l_linenumber) AS hi FROM lineitem GROUP BY l_orderkey) l ON l.l_orderkey = o_orderkey WHERE l.n IS NULL OR l.n > 7 OR l.hi <> l.n"},
		{ID: "totalprice", Desc: "o_totalprice is the sum of its lines' extended price × (1 + tax) × (1 − discount), within 3 cents a line (dbgen rounds each line down twice)",
			SQL: "SELECT count(*) FROM orders JOIN (SELECT l_orderkey, sum(l_extendedprice * (1 + l_tax) * (1 - l_discount)) AS t, count(*) AS n FROM lineitem GROUP BY l_orderkey) l ON l.l_orderkey = o_orderkey WHERE abs(o_totalprice - l.t) > 0.03 * l.n"},
		{ID: "orderstatus", Desc: "o_orderstatus is F when every line's l_linestatus is F, O when every one is O, else P",
			SQL: "SELECT count(*) FROM orders JOIN (SELECT l_orderkey, sum(CASE WHEN l_linestatus = 'F' THEN 1 ELSE 0 END) AS f, count(*) AS n FROM lineitem GROUP BY l_orderkey) l ON l.l_orderkey = o_orderkey " +
				"WHERE o_orderstatus <> (CASE WHEN l.f = l.n THEN 'F' WHEN l.f = 0 THEN 'O' ELSE 'P' END)"},
		{ID: "refresh", Desc: fmt.Sprintf("refresh state as %s says (next set %d): the orders refresh sets added (key bits 3–4 = 01) are %d, and as many of the build's are gone", metaTable, w.nextSet, added),
			SQL: fmt.Sprintf("SELECT (CASE WHEN (SELECT count(*) FROM orders WHERE o_orderkey %% 32 >= 8 AND o_orderkey %% 32 < 16) = %d THEN 0 ELSE 1 END)"+
				" + (CASE WHEN (SELECT count(*) FROM orders WHERE o_orderkey %% 32 < 8 OR o_orderkey %% 32 >= 16) = %d THEN 0 ELSE 1 END)", added, sc.Orders-added)},
	}
	if applied == 0 {
		checks[0].Desc += ", lineitem as dbgen made it"
		checks[0].SQL += " + " + count("lineitem", sc.LineItems())
	}
	return checks
}

// Streams is the throughput test's number of query streams: --streams,
// or the minimum for the scale factor.
func (w *Workload) Streams() int {
	if w.cfg.Streams > 0 {
		return w.cfg.Streams
	}
	return rules.MinStreams(w.sc.SF)
}

// Sessions is how many sessions a run holds at once: the throughput
// test's query streams and its refresh stream, or the power test's one.
func (w *Workload) Sessions() int {
	if w.cfg.Test == "power" {
		return 1
	}
	if w.cfg.NoRefresh {
		return w.Streams()
	}
	return w.Streams() + 1
}

// QueryStreams is the run's query streams, as the job store lists them:
// the power test's one alone, else the throughput test's.
func (w *Workload) QueryStreams() int {
	if w.cfg.Test == "power" {
		return 1
	}
	return w.Streams()
}

// Describe writes the run's header line.
func (w *Workload) Describe(out io.Writer) {
	tests := map[string]string{"power": "the power test", "throughput": "the throughput test", "both": "the power test, then the throughput test"}[w.cfg.Test]
	fmt.Fprintf(out, "%s with %s parameters", tests, w.cfg.Params)
	if w.cfg.Test != "power" {
		fmt.Fprintf(out, ", %d query streams", w.Streams())
	}
	if w.cfg.NoRefresh {
		fmt.Fprint(out, ", no refresh functions")
	}
}
