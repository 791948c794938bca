package tpcb_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/cli"
	"github.com/sledge-bench/sledge/internal/db"
	_ "github.com/sledge-bench/sledge/internal/db/mysql"    // mysql:, mariadb:
	_ "github.com/sledge-bench/sledge/internal/db/postgres" // postgres:, postgresql:
	"github.com/sledge-bench/sledge/internal/db/sqlite"
	_ "github.com/sledge-bench/sledge/internal/db/sqlite" // sqlite:, sqlite3:
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/testdb"
	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/tpcb"
)

// The private servers, each started the first time a test needs it (so
// the unit tests of this package need none) and stopped in TestMain.
var (
	pgServer    = testdb.LazyPostgres()
	mariaServer = testdb.LazyMariaDB()
	dbSeq       atomic.Int64
)

func TestMain(m *testing.M) { testdb.Main(m, pgServer, mariaServer) }

// sledge runs the CLI in-process, with its job store in a throwaway HOME.
func sledge(t testing.TB, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	home := t.TempDir()
	env := cli.Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "HOME" || k == "XDG_DATA_HOME" {
			return home
		}
		return ""
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code = cli.Main(ctx, args, env)
	return code, out.String(), errb.String()
}

// buildSchema builds scale 1 through the CLI's generic build path.
func buildSchema(t testing.TB, u string) {
	t.Helper()
	if code, _, stderr := sledge(t, "build", "tpcb", "--db", u, "--scale", "1", "--build-vus", "2", "--json"); code != 0 {
		t.Fatalf("build %s: exit %d: %s", db.Redact(u), code, stderr)
	}
}

// target is one database: how to get a freshly built scale-1 schema, how
// to read it back, and the modes to run (a mode may come with a URL
// suffix: PostgreSQL's procedures are procedure mode with
// ?routines=procedures).
type target struct {
	name  string
	modes []modeURL
	fresh func(t testing.TB) string // URL of a new database, built
	// sqlDB opens the database of a URL for reading it back
	// independently of sledge's sessions.
	sqlDB func(t *testing.T, u string) querier
	wired bool // round trips are counted (a server, not embedded)
}

type modeURL struct {
	name   string
	mode   workload.Mode
	suffix string
}

var (
	procedure  = modeURL{"procedure", workload.ModeProcedure, ""}
	procedures = modeURL{"procedure-call", workload.ModeProcedure, "?routines=procedures"}
	client     = modeURL{"client", workload.ModeClient, ""}
	prepared   = modeURL{"prepared", workload.ModePrepared, ""}
	block      = modeURL{"block", workload.ModeBlock, ""}
	pipeline   = modeURL{"pipeline", workload.ModePipeline, ""}
)

func targets() []target {
	return []target{
		{name: "sqlite", modes: []modeURL{client, prepared}, fresh: freshSQLite, sqlDB: sqliteDB},
		{name: "postgres", modes: []modeURL{procedure, procedures, client, prepared, block, pipeline}, fresh: freshPostgres, sqlDB: postgresDB, wired: true},
		{name: "mariadb", modes: []modeURL{procedure, client, prepared, block, pipeline}, fresh: freshMariaDB, sqlDB: mariaDB, wired: true},
	}
}

func freshSQLite(t testing.TB) string {
	u := "sqlite://" + filepath.Join(t.TempDir(), "tpcb.db")
	buildSchema(t, u)
	return u
}

// querier runs a query whose columns are all integers (NULL reads as 0).
type querier func(t *testing.T, q string) [][]int64

func sqliteDB(t *testing.T, u string) querier {
	d := sqlite.OpenFile(strings.TrimPrefix(u, "sqlite://"))
	t.Cleanup(func() { _ = d.Close() })
	return sqlQuerier(d)
}

func pgURL(s *testdb.Server, name string) string {
	return fmt.Sprintf("postgres://%s:%s@%s:%d/%s", s.User, s.Password, s.Host, s.Port, name)
}

var (
	pgTplOnce sync.Once
	pgTplErr  error
)

// Database names carry the process's id: the run's shared servers see
// other processes of this package too (a second go test, a rerun), and
// testdb.LazyPostgres asks for names of the package and the process.
var pgTpl = fmt.Sprintf("tpcb_tpl_%d", os.Getpid())

func dbName() string { return fmt.Sprintf("tpcb_%d_%d", os.Getpid(), dbSeq.Add(1)) }

// freshPostgres copies a template built once (CREATE DATABASE … TEMPLATE).
func freshPostgres(t testing.TB) string {
	s := pgServer.Get(t)
	pgTplOnce.Do(func() {
		if code, _, stderr := sledge(t, "build", "tpcb", "--db", pgURL(s, pgTpl), "--scale", "1", "--json"); code != 0 {
			pgTplErr = fmt.Errorf("build template: exit %d: %s", code, stderr)
		}
	})
	if pgTplErr != nil {
		t.Fatal(pgTplErr)
	}
	name := dbName()
	s.CopyDatabase(t, pgTpl, name)
	return pgURL(s, name)
}

func pgExec(s *testdb.Server, stmt string) error {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, pgURL(s, "postgres"))
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, stmt)
	return err
}

func postgresDB(t *testing.T, u string) querier {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(ctx) })
	return func(t *testing.T, q string) [][]int64 {
		t.Helper()
		rows, err := c.Query(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		var out [][]int64
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			row := make([]int64, len(vals))
			for i, v := range vals {
				switch v := v.(type) {
				case nil:
				case int32:
					row[i] = int64(v)
				case int64:
					row[i] = v
				default:
					t.Fatalf("%s: column %d is %T", q, i, v)
				}
			}
			out = append(out, row)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return out
	}
}

func mariaURL(s *testdb.Server, name string) string {
	u := url.URL{Scheme: "mysql", User: url.UserPassword(s.User, s.Password), Host: s.Host + ":" + strconv.Itoa(s.Port), Path: "/" + name}
	return u.String()
}

// freshMariaDB builds a new database (the CLI's build creates it).
func freshMariaDB(t testing.TB) string {
	s := mariaServer.Get(t)
	name := dbName()
	u := mariaURL(s, name)
	t.Cleanup(func() { dropMariaDB(s, name) })
	buildSchema(t, u)
	return u
}

func mariaDB(t *testing.T, u string) querier {
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := p.User.Password()
	d, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s)%s", p.User.Username(), pw, p.Host, p.Path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return sqlQuerier(d)
}

func sqlQuerier(d *sql.DB) querier {
	return func(t *testing.T, q string) [][]int64 { t.Helper(); return sqlInts(t, d, q) }
}

func ints(t *testing.T, d querier, q string) [][]int64 {
	t.Helper()
	return d(t, q)
}

// sqlInts runs a query whose columns are all integers (or NULL, read as 0).
func sqlInts(t *testing.T, d *sql.DB, q string) [][]int64 {
	t.Helper()
	rows, err := d.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]int64
	for rows.Next() {
		vals := make([]sql.NullInt64, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		row := make([]int64, len(cols))
		for i, v := range vals {
			row[i] = v.Int64
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

func one(t *testing.T, d querier, q string) int64 {
	t.Helper()
	r := ints(t, d, q)
	if len(r) != 1 || len(r[0]) != 1 {
		t.Fatalf("%s: %v", q, r)
	}
	return r[0][0]
}

// run runs the tpcb workload with the given builtins through the engine,
// in mode m (0: the database's default), and fails the test on any failed
// transaction.
func run(t *testing.T, u string, m workload.Mode, vus, iters int, seed uint64, builtins ...string) (*engine.Result, *tpcb.Workload) {
	t.Helper()
	ctx := context.Background()
	d, err := db.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if m == 0 {
		m = d.DefaultMode()
	}
	mix, err := tpcb.ParseBuiltins(builtins)
	if err != nil {
		t.Fatal(err)
	}
	w := tpcb.New(tpcb.Config{Builtins: mix, Seed: seed})
	ctl, err := d.Connect(ctx, w.Name(), m)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close(ctx)
	if err := w.Attach(ctx, ctl); err != nil {
		t.Fatal(err)
	}
	if w.ScaleFactor() != 1 {
		t.Fatalf("attached scale %d", w.ScaleFactor())
	}
	plan := &engine.Plan{VUs: vus, Iterations: iters, MaxRetries: 10, Seed: seed, Mix: w.Mix(), Cost: true,
		Connect:  func(ctx context.Context, vu int) (workload.Conn, error) { return d.Connect(ctx, w.Name(), m) },
		Terminal: func(vu int) workload.Terminal { return w.NewTerminal(vu, vus, seed) },
	}
	res, err := engine.Run(ctx, plan, engine.NewLive(plan))
	if err != nil {
		t.Fatal(err)
	}
	total := res.Stats.Total()
	if len(res.Errors) > 0 || total.Errors > 0 || total.Completed() != int64(vus*iters) {
		t.Fatalf("%d of %d transactions, errors %v", total.Completed(), vus*iters, res.Errors)
	}
	return res, w
}

// TestEndToEnd builds scale 1 on each database, runs every builtin in
// every mode the database has with 2 virtual users, then checks the
// consistency conditions, that every committed tpcb-like and
// simple-update left one history row, and the round trips of each mode.
func TestEndToEnd(t *testing.T) {
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			base := tg.fresh(t)
			if code, out, stderr := sledge(t, "check", "tpcb", "--db", base); code != 0 || !strings.Contains(out, "all conditions hold") {
				t.Fatalf("check of the initial population: exit %d: %s%s", code, out, stderr)
			}
			sqlDB := tg.sqlDB(t, base)
			// The population, as pgbench -i makes it.
			if got := ints(t, sqlDB, `SELECT (SELECT count(*) FROM pgbench_accounts), (SELECT count(*) FROM pgbench_tellers),
				(SELECT count(*) FROM pgbench_branches), (SELECT count(*) FROM pgbench_history),
				(SELECT count(*) FROM pgbench_accounts WHERE bid = 1 AND abalance = 0 AND filler IS NOT NULL),
				(SELECT count(*) FROM pgbench_tellers WHERE bid = 1 AND tbalance = 0 AND filler IS NULL)`); fmt.Sprint(got) != "[[100000 10 1 0 100000 10]]" {
				t.Fatalf("population: %v", got)
			}
			var writes int64 // committed tpcb-like and simple-update transactions
			const vus, iters = 2, 150
			for _, mu := range tg.modes {
				for _, b := range []string{"tpcb-like", "simple-update", "select-only"} {
					t.Run(mu.name+"/"+b, func(t *testing.T) {
						res, _ := run(t, base+mu.suffix, mu.mode, vus, iters, 5, b)
						st := &res.Stats[0]
						n := st.Completed()
						if b != "select-only" {
							writes += st.Commits
						}
						if !tg.wired {
							return
						}
						if !res.Wired {
							t.Fatal("the connections were not counted")
						}
						// BEGIN, the statements, COMMIT (pgbench's BEGIN; … END;) in
						// client mode; in prepared mode one more the first time a
						// session runs each statement; one call in procedure mode (and
						// for PostgreSQL one prepare per session) and block mode;
						// one group in pipeline mode.
						per := map[string]int64{"tpcb-like": 7, "simple-update": 5, "select-only": 1}[b]
						stmts := per - 2
						if b == "select-only" || mu.mode.ProcedureLike() {
							per, stmts = 1, 1
						}
						// Pipeline: the update builtins are one group (BEGIN to
						// COMMIT), whose Parse messages travel with it.
						if mu.mode == workload.ModePipeline && b != "select-only" {
							per, stmts = 1, 0
						}
						rt := st.Wire.RoundTrips
						lo, hi := per*n, per*n+stmts*vus
						// A block is never prepared (select-only's SELECT is, as
						// in procedure mode; MariaDB's CALL too, on sledge's
						// own wire).
						if mu.mode == workload.ModeClient ||
							(mu.mode == workload.ModeBlock && b != "select-only") {
							hi = lo
						}
						extra := st.Retries * per // a retried attempt travels again
						// The counter (metrics/wire.go) marks a request sent after its
						// Write returns. A Write that takes over 15 ms (a loaded
						// machine) starts pgconn's background reader, which can read
						// the reply first: two round trips then count as one. Seen
						// once in many runs: allow 1%.
						lo -= n / 100
						if rt < lo || rt > hi+extra {
							t.Errorf("%d round trips for %d transactions, want %d..%d (%.3f per transaction)", rt, n, lo, hi+extra, float64(rt)/float64(n))
						}
						t.Logf("%s %s: %.3f round trips per transaction (%d retries)", mu.name, b, float64(rt)/float64(n), st.Retries)
					})
				}
			}
			// A weighted mix of all three in the database's default mode.
			res, _ := run(t, base, 0, vus, iters, 6, "tpcb-like@2", "simple-update", "select-only")
			for i := range res.Stats {
				if i < 2 {
					writes += res.Stats[i].Commits
				}
			}
			if got := one(t, sqlDB, "SELECT count(*) FROM pgbench_history"); got != writes {
				t.Errorf("%d history rows, %d committed tpcb-like and simple-update transactions", got, writes)
			}
			code, out, stderr := sledge(t, "check", "tpcb", "--db", base)
			if code != 0 || strings.Count(out, "pass") != 3 {
				t.Errorf("check: exit %d: %s%s", code, out, stderr)
			}
			// The three conditions and more, read independently.
			sums := ints(t, sqlDB, `SELECT (SELECT sum(bbalance) FROM pgbench_branches), (SELECT sum(tbalance) FROM pgbench_tellers),
				(SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(delta) FROM pgbench_history)`)[0]
			if sums[0] != sums[1] || sums[2] != sums[3] || sums[0] == 0 || sums[0] == sums[2] {
				t.Errorf("sums of bbalance, tbalance, abalance, delta: %v", sums)
			}
		})
	}
}

// TestCLI: the commands of docs/tpcb.md through the CLI's generic paths.
func TestCLI(t *testing.T) {
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			u := tg.fresh(t)
			code, out, stderr := sledge(t, "run", "tpcb", "--db", u, "--builtin", "select-only", "--mode", "prepared",
				"--vus", "2", "--duration", "2s", "--rampup", "0s")
			if code != 0 || !strings.Contains(out, "select-only") {
				t.Fatalf("run: exit %d: %s%s", code, out, stderr)
			}
			code, out, stderr = sledge(t, "run", "tpcb", "--db", u, "-b", "t@3", "-b", "si", "--iterations", "50", "--seed", "1")
			if code != 0 || !strings.Contains(out, "tpcb-like") || !strings.Contains(out, "simple-update") {
				t.Fatalf("run: exit %d: %s%s", code, out, stderr)
			}
			if code, out, stderr := sledge(t, "check", "tpcb", "--db", u); code != 0 {
				t.Fatalf("check: exit %d: %s%s", code, out, stderr)
			}
			if code, _, stderr := sledge(t, "build", "tpcb", "--db", u); code != 1 || !strings.Contains(stderr, "a tpcb schema already exists") {
				t.Errorf("build over a schema: exit %d: %s", code, stderr)
			}
			if code, _, stderr := sledge(t, "drop", "tpcb", "--db", u); code != 0 {
				t.Fatalf("drop: exit %d: %s", code, stderr)
			}
			if code, _, stderr := sledge(t, "run", "tpcb", "--db", u, "--iterations", "1"); code == 0 || !strings.Contains(stderr, "no tpcb schema") {
				t.Errorf("run after drop: exit %d: %s", code, stderr)
			}
			if tg.name == "sqlite" {
				code, _, stderr := sledge(t, "run", "tpcb", "--db", u, "--mode", "procedure", "--iterations", "1")
				if code != 2 || strings.TrimSpace(stderr) != "sledge: sqlite has no stored procedures; use --mode client or prepared" {
					t.Errorf("procedure mode on SQLite: exit %d: %q", code, stderr)
				}
			}
		})
	}
}

// fingerprint is what a run leaves in the tables, timestamps aside.
type fingerprint struct {
	Branches, Tellers string // every balance
	Accounts          string // hash of (aid, abalance) of the accounts that moved
	Moved, SumA       int64
	History           string // hash of the (tid, bid, aid, delta) rows, in order
	HistoryRows       int64
}

func fingerprintOf(t *testing.T, d querier) fingerprint {
	hash := func(rows [][]int64) string {
		h := sha256.New()
		for _, r := range rows {
			fmt.Fprintln(h, r)
		}
		return hex.EncodeToString(h.Sum(nil))[:16]
	}
	accounts := ints(t, d, "SELECT aid, abalance FROM pgbench_accounts WHERE abalance <> 0 ORDER BY aid")
	var sum int64
	for _, r := range accounts {
		sum += r[1]
	}
	history := ints(t, d, "SELECT tid, bid, aid, delta FROM pgbench_history ORDER BY aid, tid, bid, delta")
	return fingerprint{
		Branches:    fmt.Sprint(ints(t, d, "SELECT bid, bbalance FROM pgbench_branches ORDER BY bid")),
		Tellers:     fmt.Sprint(ints(t, d, "SELECT tid, tbalance FROM pgbench_tellers ORDER BY tid")),
		Accounts:    hash(accounts),
		Moved:       int64(len(accounts)),
		SumA:        sum,
		History:     hash(history),
		HistoryRows: int64(len(history)),
	}
}

// TestModesLeaveTheSameBalances: with one virtual user and the same seed,
// every mode of every database leaves the same balances and history.
func TestModesLeaveTheSameBalances(t *testing.T) {
	var (
		first     fingerprint
		firstName string
	)
	for _, tg := range targets() {
		for _, mu := range tg.modes {
			t.Run(tg.name+"/"+mu.name, func(t *testing.T) {
				u := tg.fresh(t)
				run(t, u+mu.suffix, mu.mode, 1, 400, 77, "tpcb-like@2", "simple-update", "select-only")
				fp := fingerprintOf(t, tg.sqlDB(t, u))
				if fp.Moved == 0 || fp.HistoryRows == 0 {
					t.Fatalf("nothing changed: %+v", fp)
				}
				if firstName == "" {
					first, firstName = fp, tg.name+"/"+mu.name
					t.Logf("%+v", fp)
					return
				}
				if fp != first {
					t.Errorf("differs from %s:\n got %+v\nwant %+v", firstName, fp, first)
				}
			})
		}
	}
}

// TestStatementOrder: what a transaction sends, on a real SQLite session
// recorded statement by statement: pgbench's order inside one transaction
// for the updates, the lone SELECT outside any for select-only, and the
// balance read back.
func TestStatementOrder(t *testing.T) {
	u := freshSQLite(t)
	ctx := context.Background()
	d, err := db.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	want := map[string]string{
		"tpcb-like":     "BEGIN tpcb.account_update tpcb.account_select tpcb.teller_update tpcb.branch_update tpcb.history_insert COMMIT",
		"simple-update": "BEGIN tpcb.account_update tpcb.account_select tpcb.history_insert COMMIT",
		"select-only":   "tpcb.account_select",
	}
	for b, w := range want {
		mix, _ := tpcb.ParseBuiltins([]string{b})
		wl := tpcb.New(tpcb.Config{Builtins: mix})
		c, err := d.Connect(ctx, "tpcb", workload.ModePrepared)
		if err != nil {
			t.Fatal(err)
		}
		if err := wl.Attach(ctx, c); err != nil {
			t.Fatal(err)
		}
		rec := &recorder{Conn: c}
		term := wl.NewTerminal(0, 1, 3)
		for range 3 {
			rec.calls = nil
			if err := term.Next().Run(ctx, rec); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(rec.calls, " "); got != w {
				t.Errorf("%s sent %s, want %s", b, got, w)
			}
		}
		_ = c.Close(ctx)
	}
	// The balance the SELECT read is the account's balance after the update.
	sqlDB := sqliteDB(t, u)
	if n := one(t, sqlDB, "SELECT count(*) FROM pgbench_accounts a WHERE abalance <> (SELECT sum(delta) FROM pgbench_history h WHERE h.aid = a.aid)"); n != 0 {
		t.Errorf("%d accounts differ from their history", n)
	}
}

// recorder passes every call to a real session and notes its name.
type recorder struct {
	workload.Conn
	calls []string
}

func (r *recorder) Exec(ctx context.Context, stmt string, args ...any) (int64, error) {
	r.calls = append(r.calls, stmt)
	return r.Conn.Exec(ctx, stmt, args...)
}

func (r *recorder) QueryRow(ctx context.Context, stmt string, args ...any) workload.Row {
	r.calls = append(r.calls, stmt)
	return r.Conn.QueryRow(ctx, stmt, args...)
}

func (r *recorder) InTx(ctx context.Context, opts workload.TxOptions, fn func(ctx context.Context) error) error {
	r.calls = append(r.calls, "BEGIN")
	err := r.Conn.InTx(ctx, opts, func(ctx context.Context) error { return fn(ctx) })
	if err == nil {
		r.calls = append(r.calls, "COMMIT")
	}
	return err
}

// TestBuildSteps: after the load, the build made pgbench's primary keys
// and, on PostgreSQL, vacuumed and analyzed the four tables (VACUUM runs
// outside a transaction block through db.Script).
func TestBuildSteps(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		q := postgresDB(t, freshPostgres(t))
		if got := ints(t, q, `SELECT count(*) FROM pg_constraint WHERE contype = 'p'
			AND conname IN ('pgbench_branches_pkey', 'pgbench_tellers_pkey', 'pgbench_accounts_pkey')`); got[0][0] != 3 {
			t.Errorf("%d primary keys", got[0][0])
		}
		// The template database was vacuumed; a copy keeps the visibility
		// map and the statistics, not pg_stat_user_tables, so look there.
		q = postgresDB(t, pgURL(pgServer.Get(t), pgTpl))
		if got := ints(t, q, `SELECT count(*) FROM pg_stat_user_tables WHERE relname LIKE 'pgbench_%'
			AND last_vacuum IS NOT NULL AND last_analyze IS NOT NULL`); got[0][0] != 4 {
			t.Errorf("%d of the 4 tables vacuumed and analyzed", got[0][0])
		}
		// relallvisible is not asked for: VACUUM marks no page all-visible
		// while another test's transaction on this shared server holds an
		// older snapshot, which made that check fail now and then in CI.
	})
	t.Run("mariadb", func(t *testing.T) {
		u := freshMariaDB(t)
		q := mariaDB(t, u)
		if got := ints(t, q, `SELECT COUNT(*) FROM information_schema.table_constraints WHERE table_schema = DATABASE()
			AND constraint_type = 'PRIMARY KEY' AND table_name IN ('pgbench_branches', 'pgbench_tellers', 'pgbench_accounts')`); got[0][0] != 3 {
			t.Errorf("%d primary keys", got[0][0])
		}
	})
}

// TestProcedureCheck: procedure mode checks at connect time for this
// workload's routines, not TPC-C's, and only where this workload's
// schema is built: a database holding another workload's built marker
// (tpcc's sledge_meta) and an interrupted tpcb build still build; a built
// schema without its routines is refused with one line.
func TestProcedureCheck(t *testing.T) {
	servers := []struct {
		name  string
		empty func(t *testing.T) string // URL of a new, empty database
		fresh func(t testing.TB) string
		drop  string
		want  []string
	}{
		{"postgres", emptyPostgres, freshPostgres, "DROP FUNCTION pgbench_tpcb_like",
			[]string{"routines missing from database", "function pgbench_tpcb_like", "sledge build"}},
		{"mariadb", emptyMariaDB, freshMariaDB, "DROP PROCEDURE pgbench_tpcb_like",
			[]string{"the tpcb procedures are missing", "sledge build"}},
	}
	for _, sv := range servers {
		t.Run(sv.name, func(t *testing.T) {
			u := sv.empty(t)
			execIn(t, u, "CREATE TABLE sledge_meta (name VARCHAR(20) NOT NULL PRIMARY KEY, value VARCHAR(20) NOT NULL)",
				"INSERT INTO sledge_meta VALUES ('workload', 'tpcc')")
			ctx := context.Background()
			d, err := db.Open(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Script(ctx, "tpcb", "tables"); err != nil {
				t.Fatal(err)
			}
			_ = d.Close()
			buildSchema(t, u) // its session connects in procedure mode first
			if code, _, stderr := sledge(t, "run", "tpcb", "--db", u, "--mode", "procedure", "--iterations", "5"); code != 0 {
				t.Fatalf("run: exit %d: %s", code, stderr)
			}

			u = sv.fresh(t)
			execIn(t, u, sv.drop)
			code, _, stderr := sledge(t, "run", "tpcb", "--db", u, "--mode", "procedure", "--iterations", "1")
			stderr = strings.TrimSpace(stderr)
			if code == 0 || strings.Contains(stderr, "\n") {
				t.Errorf("exit %d: %q", code, stderr)
			}
			for _, w := range sv.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("%q does not say %q", stderr, w)
				}
			}
			if code, _, stderr := sledge(t, "run", "tpcb", "--db", u, "--mode", "client", "--iterations", "5"); code != 0 {
				t.Errorf("client mode without the routines: exit %d: %s", code, stderr)
			}
		})
	}
}

func emptyPostgres(t *testing.T) string {
	s := pgServer.Get(t)
	name := dbName()
	if err := pgExec(s, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pgExec(s, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	return pgURL(s, name)
}

func emptyMariaDB(t *testing.T) string {
	s := mariaServer.Get(t)
	name := dbName()
	execIn(t, mariaURL(s, ""), "CREATE DATABASE "+name)
	t.Cleanup(func() { dropMariaDB(s, name) })
	return mariaURL(s, name)
}

func dropMariaDB(s *testdb.Server, name string) {
	if d, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s:%d)/", s.User, s.Password, s.Host, s.Port)); err == nil {
		_, _ = d.Exec("DROP DATABASE IF EXISTS " + name)
		_ = d.Close()
	}
}

// execIn runs statements on the database of a postgres or mysql URL.
func execIn(t *testing.T, u string, stmts ...string) {
	t.Helper()
	if strings.HasPrefix(u, "postgres") {
		pgExecIn(t, u, stmts...)
	} else {
		mariaExecIn(t, u, stmts...)
	}
}

func pgExecIn(t *testing.T, u string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func mariaExecIn(t *testing.T, u string, stmts ...string) {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := p.User.Password()
	d, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s)%s", p.User.Username(), pw, p.Host, p.Path))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, s := range stmts {
		if _, err := d.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestIncompleteBuild: a schema whose branches are missing or do not
// match its tellers is no schema: run says so, build starts over.
func TestIncompleteBuild(t *testing.T) {
	for _, stmt := range []string{"DELETE FROM pgbench_branches", "DELETE FROM pgbench_tellers WHERE tid = 10"} {
		u := freshSQLite(t)
		d := sqlite.OpenFile(strings.TrimPrefix(u, "sqlite://"))
		if _, err := d.Exec(stmt); err != nil {
			t.Fatal(err)
		}
		_ = d.Close()
		code, _, stderr := sledge(t, "run", "tpcb", "--db", u, "--iterations", "1")
		if code == 0 || !(strings.Contains(stderr, "tpcb schema in "+u+" is incomplete") || strings.Contains(stderr, "no tpcb schema")) {
			t.Errorf("%s: run: exit %d: %s", stmt, code, stderr)
		}
		buildSchema(t, u)
		if code, _, stderr := sledge(t, "check", "tpcb", "--db", u); code != 0 {
			t.Errorf("%s: check after the rebuild: exit %d: %s", stmt, code, stderr)
		}
	}
}
