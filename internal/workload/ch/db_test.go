package ch_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	_ "github.com/sledge-bench/sledge/internal/db/all" // the drivers know their URLs
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/testdb"
	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/ch"
	"github.com/sledge-bench/sledge/internal/workload/tpcc"
)

var (
	pgServer    = testdb.LazyPostgres()
	mariaServer = testdb.LazyMariaDB()
	dbSeq       atomic.Int64
)

func TestMain(m *testing.M) { testdb.Main(m, pgServer, mariaServer) }

// fresh is a new database URL of kind, built by nobody yet.
func fresh(t *testing.T, kind string) string {
	switch kind {
	case "sqlite":
		return "sqlite://" + filepath.Join(t.TempDir(), "ch.db")
	case "duckdb":
		u := "duckdb://" + filepath.Join(t.TempDir(), "ch.duckdb")
		d, err := db.Open(context.Background(), u)
		if err != nil && strings.Contains(err.Error(), `unknown scheme "duckdb"`) {
			t.Skip("this build has no DuckDB driver (issue 28 part 2)")
		}
		if err != nil {
			t.Fatalf("open %s: %v", u, err)
		}
		_ = d.Close()
		return u
	case "postgres":
		s := pgServer.Get(t)
		name := fmt.Sprintf("ch_test_%d", dbSeq.Add(1))
		s.DropAtEnd(t, name)
		return fmt.Sprintf("postgres://%s:%s@%s:%d/%s", s.User, s.Password, s.Host, s.Port, name)
	case "mariadb":
		s := mariaServer.Get(t)
		name := fmt.Sprintf("ch_test_%d", dbSeq.Add(1))
		s.DropAtEnd(t, name)
		return fmt.Sprintf("mysql://%s:%s@%s:%d/%s", s.User, s.Password, s.Host, s.Port, name)
	}
	t.Fatalf("no database kind %q", kind)
	return ""
}

func build(t *testing.T, ctx context.Context, u string, w workload.Workload) {
	t.Helper()
	if _, err := runner.Build(ctx, runner.BuildEnv{Stderr: io.Discard}, w, u, 1, 2, true); err != nil {
		t.Fatalf("build %s: %v", w.Name(), err)
	}
}

// attached opens a TPC-C session on u and attaches a ch workload to it,
// with a SQL text session beside it.
func attached(t *testing.T, ctx context.Context, u string, cfg ch.Config) (*ch.Workload, *runner.Session, workload.SQLConn, error) {
	t.Helper()
	s, err := runner.OpenSession(ctx, u, "tpcc", workload.ModePrepared, false)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	sc, err := s.DB.(db.SQLDB).ConnectSQL(ctx)
	if err != nil {
		t.Fatalf("connect SQL: %v", err)
	}
	t.Cleanup(func() { _ = sc.Close(context.Background()) })
	w := ch.New(cfg)
	return w, s, sc, w.Attach(ctx, s.Ctl)
}

func exec(t *testing.T, ctx context.Context, c workload.SQLConn, text string) {
	t.Helper()
	if err := c.ExecSQL(ctx, text); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
}

// violations runs every check of w (TPC-C's named statements on the
// control session, ch's SQL on the SQL session) and returns the IDs of
// those that found violations.
func violations(t *testing.T, ctx context.Context, w *ch.Workload, s *runner.Session, sc workload.SQLConn) []string {
	t.Helper()
	var bad []string
	for _, c := range w.Checks() {
		if c.Skip != nil {
			if why, err := c.Skip(ctx, s.Ctl); err != nil || why != "" {
				continue
			}
		}
		var n int64
		if c.SQL == "" {
			if err := s.Ctl.QueryRow(ctx, "check."+c.ID).Scan(&n); err != nil {
				t.Fatalf("check %s: %v", c.ID, err)
			}
		} else {
			var got string
			if _, err := sc.QuerySQL(ctx, c.SQL, func(v [][]byte) error { got = string(v[0]); return nil }); err != nil {
				t.Fatalf("check %s: %v", c.ID, err)
			}
			var f float64
			if _, err := fmt.Sscan(got, &f); err != nil {
				t.Fatalf("check %s: %q", c.ID, got)
			}
			n = int64(f)
		}
		if n != 0 {
			bad = append(bad, c.ID)
		}
	}
	return bad
}

// On each database (DuckDB where the build has its driver): build ch at 1 warehouse (on SQLite by adding ch's
// tables to a TPC-C build, with another --seed, elsewhere all at once), every check passes,
// the --validate pass finds all 22 answers equal to DuckDB's, a stream
// runs all 22 queries and reports each; then broken data fails the
// checks and a changed build is refused by --validate.
func TestBuildValidateStream(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres", "mariadb", "duckdb"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel() // each database its own build: they wait on servers more than they compute
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			u := fresh(t, kind)
			cfg := ch.Config{TPCC: tpcc.Config{Warehouses: 1, Seed: 1}, Streams: 1, Validate: true}
			if kind == "sqlite" {
				build(t, ctx, u, tpcc.New(cfg.TPCC))
				w, _, _, err := attached(t, ctx, u, cfg)
				if !errors.Is(err, workload.ErrNoSchema) || !w.BaseBuilt() {
					t.Fatalf("attach ch to a TPC-C build: %v, BaseBuilt %v; want ErrNoSchema and true", err, w.BaseBuilt())
				}
			}
			bcfg := cfg
			if kind == "sqlite" {
				// Added to TPC-C's build, ch's tables take its seed (1), not
				// the command's: the answers below are seed 1's.
				bcfg.TPCC.Seed = 9
			}
			build(t, ctx, u, ch.New(bcfg))
			w, s, sc, err := attached(t, ctx, u, cfg)
			if err != nil || w.BaseBuilt() {
				t.Fatalf("attach: %v (BaseBuilt %v)", err, w.BaseBuilt())
			}
			if bad := violations(t, ctx, w, s, sc); len(bad) > 0 {
				t.Errorf("checks failed on a fresh build: %v", bad)
			}

			// `sledge check ch`'s path: TPC-C's named checks and ch's SQL.
			res, failed, err := runner.Check(ctx, runner.CheckEnv{}, ch.New(cfg), u, true)
			if err != nil || failed != 0 || len(res.Checks) != 18 {
				t.Errorf("runner.Check: %v, %d failed, %d checks, want 0 of 18", err, failed, len(res.Checks))
			}

			var lines []string
			if err := w.Prelude(ctx, sc, func(l string) { lines = append(lines, l) }); err != nil {
				t.Errorf("validate: %v\n%s", err, strings.Join(lines, "\n"))
			}
			if len(lines) != 22 {
				t.Errorf("validate: %d progress lines, want 22", len(lines))
			}

			// A stream's pass and the changed answers are each another
			// pass of the 22 queries: one database (the fastest) runs them;
			// each query's text on each database is the validate pass's.
			thorough := kind == "duckdb"
			if thorough {
				sctx, stop := context.WithCancel(ctx)
				seen := map[int]int{}
				err = w.Stream(sctx, sc, 0, 1, func(r workload.QueryRun) {
					if r.Err != nil {
						t.Errorf("stream: Q%d: %v", r.Query+1, r.Err)
					}
					if r.Stream != 0 || r.End.Before(r.Start) {
						t.Errorf("stream: %+v", r)
					}
					seen[r.Query]++
					if len(seen) == 22 {
						stop()
					}
				})
				stop()
				if err != nil || len(seen) != 22 {
					t.Errorf("stream: %v, %d queries reported, want 22", err, len(seen))
				}
			}

			// Broken data: a supplier missing, a nation without its region.
			exec(t, ctx, sc, "delete from supplier where su_suppkey = 17")
			exec(t, ctx, sc, "update nation set n_regionkey = 9 where n_nationkey = 65")
			got := strings.Join(violations(t, ctx, w, s, sc), ",")
			if got != "ch1,ch4,ch6" {
				t.Errorf("checks on broken data failed %q, want ch1,ch4,ch6", got)
			}
			if thorough {
				// Changed answers: Q3's first row and Q18's digest (an
				// order's revenue), Q15's rows (supplier 17 is gone).
				exec(t, ctx, sc, "update order_line set ol_amount = ol_amount + 1 where ol_w_id = 1 and ol_d_id = 7 and ol_o_id = 2575 and ol_number = 1")
				lines = lines[:0]
				err = w.Prelude(ctx, sc, func(l string) { lines = append(lines, l) })
				if err == nil || errors.Is(err, workload.ErrCannotPrelude) || !strings.Contains(err.Error(), "answers differ") {
					t.Errorf("validate on changed data: %v", err)
				}
				differ := map[string]bool{}
				for _, l := range lines {
					if q, _, ok := strings.Cut(strings.TrimPrefix(l, "validate "), ":"); ok && strings.Contains(l, "differs") {
						differ[q] = true
					}
				}
				for _, q := range []string{"Q3", "Q15", "Q18"} {
					if !differ[q] {
						t.Errorf("validate on changed data: %s not found to differ:\n%s", q, strings.Join(lines, "\n"))
					}
				}
			}
			// A New-Order since the build: --validate refuses.
			exec(t, ctx, sc, "update district set d_next_o_id = 3002 where d_id = 3")
			err = w.Prelude(ctx, sc, nil)
			if !errors.Is(err, workload.ErrCannotPrelude) || !strings.Contains(err.Error(), "fresh build") || strings.Contains(err.Error(), "\n") {
				t.Errorf("validate on a changed build: %v", err)
			}
			// A build of another seed has no reference answers.
			exec(t, ctx, sc, "update sledge_meta set value = '2' where name = 'seed'")
			w2, _, _, err := attached(t, ctx, u, cfg)
			if err != nil {
				t.Fatalf("attach: %v", err)
			}
			err = w2.Prelude(ctx, sc, nil)
			if !errors.Is(err, workload.ErrCannotPrelude) || !strings.Contains(err.Error(), "seed 2") {
				t.Errorf("validate on a seed-2 build: %v", err)
			}
			// Without --validate the prelude does nothing.
			cfg.Validate = false
			if err := ch.New(cfg).Prelude(ctx, sc, nil); err != nil {
				t.Errorf("prelude without --validate: %v", err)
			}
		})
	}
}
