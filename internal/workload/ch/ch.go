// Package ch is CH-benCHmark (Cole et al., "The mixed workload
// CH-benCHmark", DBTest 2011): TPC-C's terminals and 22 analytic queries
// adapted to TPC-C's schema, at the same time on the same data. The
// OLTP side is TPC-C's own (package tpcc: its tables, statements, modes,
// checks and NOPM); ch adds the supplier, nation and region tables, their
// checks, the queries and the analytic streams (docs/ch.md).
package ch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/tpcc"
)

func init() {
	workload.Register(workload.Meta{
		Name:        "ch",
		Description: "CH-benCHmark: TPC-C's terminals and 22 analytic queries on the same data at once (TPC-C's 9 tables plus supplier, nation, region)",
		Flags:       flags,
		Rampup:      10 * time.Second,
		Report:      workload.ReportTPCC,
		Throughput:  "NOPM",
	})
}

// flags binds ch's options for cmd: TPC-C's, plus the streams and the
// validation pass of a run.
func flags(cmd string, fs *pflag.FlagSet) func(seed uint64) (workload.Workload, error) {
	cfg := Config{TPCC: tpcc.Config{Warehouses: 1}, Streams: 1}
	switch cmd {
	case "build":
		fs.IntVar(&cfg.TPCC.Warehouses, "warehouses", 1, "number of warehouses, the scale factor (1..10000; about 100 MB each)")
	case "run":
		fs.BoolVar(&cfg.TPCC.AllWarehouses, "all-warehouses", false,
			"spread each virtual user over a round-robin list of warehouses, picking one at random before every transaction (HammerDB \"Use All Warehouses\")")
		fs.IntVar(&cfg.Streams, "analytic-streams", 1, "analytic query streams beside the terminals, each running the 22 queries in its own order (0: the terminals alone)")
		fs.BoolVar(&cfg.Validate, "validate", false,
			"before the run, run the 22 queries once and check their answers against the reference (a fresh build with --warehouses 1 and seed 1 only)")
	}
	return func(seed uint64) (workload.Workload, error) {
		c := cfg
		c.TPCC.Seed = seed
		w := New(c)
		if err := w.Validate(); err != nil {
			return nil, err
		}
		return w, nil
	}
}

// Config is what the user chose.
type Config struct {
	TPCC     tpcc.Config
	Streams  int  // --analytic-streams
	Validate bool // --validate: the Prelude checks the answers
}

// Workload is CH-benCHmark: TPC-C (embedded: its mix, statements,
// terminals, meter, scale and share) plus the added tables and the
// analytic queries.
type Workload struct {
	*tpcc.Workload
	cfg       Config
	baseBuilt bool   // Attach found TPC-C complete without ch's tables
	buildSeed uint64 // the seed the schema was built with (sledge_meta)
}

var (
	_ workload.Extension = (*Workload)(nil)
	_ workload.Mixed     = (*Workload)(nil)
	_ workload.Meter     = (*Workload)(nil)
	_ workload.MeterTxn  = (*Workload)(nil)
	_ workload.Scaler    = (*Workload)(nil)
	_ workload.Sharer    = (*Workload)(nil)
)

// New makes the workload; call Validate before using it with user input.
func New(cfg Config) *Workload {
	return &Workload{Workload: tpcc.New(cfg.TPCC), cfg: cfg, buildSeed: cfg.TPCC.Seed}
}

// Name is "ch"; its statements and scripts are TPC-C's (Base).
func (w *Workload) Name() string { return "ch" }

// Base is the workload whose schema and statements ch uses.
func (w *Workload) Base() string { return "tpcc" }

// BaseBuilt is true once Attach found a complete TPC-C build without
// ch's tables: a build then adds only those.
func (w *Workload) BaseBuilt() bool { return w.baseBuilt }

// Validate checks the configuration, each error one line naming the flag.
func (w *Workload) Validate() error {
	if err := w.Workload.Validate(); err != nil {
		return err
	}
	if w.cfg.Streams < 0 {
		return errors.New("--analytic-streams must be at least 0")
	}
	if w.cfg.Streams > 1000 {
		return errors.New("--analytic-streams must be at most 1000")
	}
	return nil
}

// Added is ch's own statements of a build step in a dialect.
func (w *Workload) Added(dialect, step string) []string { return added(dialect, step) }

// Tables is the initial population in load order: TPC-C's tables, then
// region, nation and supplier, then sledge_meta with TPC-C's rows and
// ch's marker row, last, so that an interrupted build never looks
// complete. When the base is built already, only the three tables (from
// the base's seed) and the marker row.
func (w *Workload) Tables() []workload.Table {
	if w.baseBuilt {
		// The TPC-C build's seed (sledge_meta), so that the twelve tables
		// are what one build with that seed makes.
		return append(ownTables(w.buildSeed), markerTable())
	}
	own := ownTables(w.cfg.TPCC.Seed)
	base := w.Workload.Tables()
	last := base[len(base)-1] // sledge_meta, TPC-C's marker
	fill := last.Fill
	last.Fill = func(i int, buf [][]any) [][]any {
		buf = fill(i, buf)
		return append(buf, []any{marker[0], marker[1]})
	}
	last.Rows++
	out := slices.Clone(base[:len(base)-1])
	out = append(out, own...)
	return append(out, last)
}

// Attach reads TPC-C's build (scale, C_LOAD, version) and finds ch's
// marker row in sledge_meta. Without it the schema is TPC-C's alone
// (BaseBuilt) or incomplete: ErrNoSchema either way.
func (w *Workload) Attach(ctx context.Context, c workload.Conn) error {
	w.baseBuilt = false
	if err := w.Workload.Attach(ctx, c); err != nil {
		if errors.Is(err, workload.ErrNoSchema) {
			return fmt.Errorf("no CH-benCHmark schema: run `sledge build ch` first: %w", err)
		}
		return err
	}
	meta, err := readMeta(ctx, c)
	if err != nil {
		return fmt.Errorf("ch: read sledge_meta: %w", err)
	}
	if s, ok := meta["seed"]; ok {
		if v, err := strconv.ParseUint(s, 10, 64); err == nil {
			w.buildSeed = v
		}
	}
	if meta[marker[0]] != marker[1] {
		w.baseBuilt = true
		return fmt.Errorf("the TPC-C schema has no CH-benCHmark tables (supplier, nation, region): run `sledge build ch` to add them: %w", workload.ErrNoSchema)
	}
	return nil
}

// readMeta returns sledge_meta through TPC-C's statement meta.get.
func readMeta(ctx context.Context, c workload.Conn) (map[string]string, error) {
	rows, err := c.Query(ctx, "meta.get")
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	meta := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		meta[k] = v
	}
	return meta, rows.Err()
}

// Checks are TPC-C's 12 conditions and the added tables' (docs/ch.md
// part 2), each counting violations; the added ones as SQL text that
// every dialect runs as it is (% is mod everywhere).
func (w *Workload) Checks() []workload.Check {
	return append(w.Workload.Checks(), ownChecks()...)
}

func ownChecks() []workload.Check {
	return []workload.Check{
		{ID: "ch1", Desc: "SUPPLIER has 10,000 rows, keys 0..9999",
			SQL: "select case when count(*) = 10000 and count(distinct su_suppkey) = 10000 and min(su_suppkey) = 0 and max(su_suppkey) = 9999 then 0 else 1 end from supplier"},
		{ID: "ch2", Desc: "NATION has 62 rows, keys the ASCII codes of 0-9, A-Z, a-z",
			SQL: "select case when count(*) = 62 and count(distinct n_nationkey) = 62 then 0 else 1 end + " +
				"sum(case when n_nationkey between 48 and 57 or n_nationkey between 65 and 90 or n_nationkey between 97 and 122 then 0 else 1 end) from nation"},
		{ID: "ch3", Desc: "REGION has 5 rows, keys 1..5",
			SQL: "select case when count(*) = 5 and count(distinct r_regionkey) = 5 and min(r_regionkey) = 1 and max(r_regionkey) = 5 then 0 else 1 end from region"},
		{ID: "ch4", Desc: "every STOCK row's supplier mod(S_W_ID * S_I_ID, 10000) exists",
			SQL: "select count(*) from stock where not exists (select 1 from supplier where su_suppkey = (s_w_id * s_i_id) % 10000)"},
		{ID: "ch5", Desc: "every SUPPLIER's nation exists",
			SQL: "select count(*) from supplier where not exists (select 1 from nation where n_nationkey = su_nationkey)"},
		{ID: "ch6", Desc: "every NATION's region exists",
			SQL: "select count(*) from nation where not exists (select 1 from region where r_regionkey = n_regionkey)"},
	}
}

// AnalyticStreams is --analytic-streams.
func (w *Workload) AnalyticStreams() int { return w.cfg.Streams }

// Queries names the 22 queries.
func (w *Workload) Queries() []string {
	out := make([]string, numQueries)
	for i := range out {
		out[i] = "Q" + strconv.Itoa(i+1)
	}
	return out
}
