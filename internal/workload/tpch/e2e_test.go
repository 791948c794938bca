package tpch_test

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/cli"
	"github.com/sledge-bench/sledge/internal/db"
	_ "github.com/sledge-bench/sledge/internal/db/all" // tpch runs on every database
	"github.com/sledge-bench/sledge/internal/db/sqlite"
	"github.com/sledge-bench/sledge/internal/testdb"
	"github.com/sledge-bench/sledge/internal/workload/tpch/dbgen"
)

// The private servers, each started the first time a test needs it and
// stopped in TestMain.
var (
	pgServer    = testdb.LazyPostgres()
	mariaServer = testdb.LazyMariaDB()
	dbSeq       atomic.Int64
)

func TestMain(m *testing.M) { testdb.Main(m, pgServer, mariaServer) }

// sledge runs the CLI in-process with its job store in home.
func sledge(t testing.TB, home string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := cli.Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "HOME" || k == "XDG_DATA_HOME" {
			return home
		}
		return ""
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	code = cli.Main(ctx, args, env)
	return code, out.String(), errb.String()
}

// result is the --json contract of `run tpch` (tpch.md part 9.1).
type result struct {
	Workload          string   `json:"workload"`
	Scale             float64  `json:"scale"`
	Streams           int      `json:"streams"`
	Power             *float64 `json:"power"`
	Throughput        *float64 `json:"throughput"`
	QphH              *float64 `json:"qphh"`
	ThroughputSeconds *float64 `json:"throughput_seconds"`
	Queries           []struct {
		Stream  int     `json:"stream"`
		Query   int     `json:"query"`
		Seconds float64 `json:"seconds"`
		Rows    int64   `json:"rows"`
	} `json:"queries"`
	Refresh []struct {
		Stream   int     `json:"stream"`
		Function string  `json:"function"`
		Seconds  float64 `json:"seconds"`
		Set      int64   `json:"set"`
	} `json:"refresh"`
	Verified *bool    `json:"verified"`
	Plans    []any    `json:"plans"`
	Notes    []string `json:"notes"`
}

type checkResult struct {
	OK     bool `json:"ok"`
	Checks []struct {
		Name   string `json:"name"`
		OK     bool   `json:"ok"`
		Detail string `json:"detail"`
	} `json:"checks"`
}

func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("--json output: %v\n%s", err, s)
	}
	return v
}

// targets are fresh database URLs of each kind, built by nobody yet.
func targets(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"sqlite": func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "tpch.db") },
		"duckdb": func(t *testing.T) string { return "duckdb://" + filepath.Join(t.TempDir(), "tpch.duckdb") },
		"postgres": func(t *testing.T) string {
			s := pgServer.Get(t)
			name := fmt.Sprintf("tpch_e2e_%d", dbSeq.Add(1))
			s.DropAtEnd(t, name)
			return fmt.Sprintf("postgres://%s:%s@%s:%d/%s", s.User, s.Password, s.Host, s.Port, name)
		},
		"mariadb": func(t *testing.T) string {
			s := mariaServer.Get(t)
			name := fmt.Sprintf("tpch_e2e_%d", dbSeq.Add(1))
			s.DropAtEnd(t, name)
			return fmt.Sprintf("mysql://%s:%s@%s:%d/%s", s.User, s.Password, s.Host, s.Port, name)
		},
	}
}

// On each database at SF 0.01: build, check, the power and throughput
// tests with two streams and the validation values (answers verified),
// check again after three refresh pairs, a subset run, drop.
func TestBuildRunCheckDrop(t *testing.T) {
	for name, fresh := range targets(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			u := fresh(t)
			home := t.TempDir()
			code, out, errs := sledge(t, home, "build", "tpch", "--db", u, "--scale", "0.01", "--json")
			if code != 0 {
				t.Fatalf("build: exit %d: %s", code, errs)
			}
			b := decode[struct {
				Rows  int64  `json:"rows"`
				Scale string `json:"scale"`
			}](t, out)
			// 86,805 rows at SF 0.01 (tpch.md part 1) and the 3 of tpch_meta.
			if b.Rows != 86_805+3 || b.Scale != "SF 0.01" {
				t.Errorf("build: %d rows at %q, want 86808 at SF 0.01", b.Rows, b.Scale)
			}
			sameTables(t, u, 0.01)
			check := func(when string) {
				code, out, errs := sledge(t, home, "check", "tpch", "--db", u, "--json")
				c := decode[checkResult](t, out)
				if code != 0 || !c.OK || len(c.Checks) < 7 {
					t.Fatalf("check %s: exit %d, %+v: %s", when, code, c, errs)
				}
			}
			check("after the build")

			code, out, errs = sledge(t, home, "run", "tpch", "--db", u, "--params", "validation", "--streams", "2", "--seed", "7", "--json")
			if code != 0 {
				t.Fatalf("run: exit %d: %s\n%s", code, errs, out)
			}
			r := decode[result](t, out)
			if r.Workload != "tpch" || r.Scale != 0.01 || r.Streams != 2 || r.Power == nil || r.Throughput == nil || r.QphH == nil || r.ThroughputSeconds == nil {
				t.Fatalf("run: %+v", r)
			}
			if r.Verified == nil || !*r.Verified {
				t.Errorf("answers not verified on a fresh build with --params validation: %v %v", r.Verified, r.Notes)
			}
			perStream := map[int]int{}
			for _, q := range r.Queries {
				perStream[q.Stream]++
				if q.Seconds <= 0 {
					t.Errorf("stream %d Q%d took %g s", q.Stream, q.Query, q.Seconds)
				}
			}
			if len(r.Queries) != 66 || perStream[0] != 22 || perStream[1] != 22 || perStream[2] != 22 {
				t.Errorf("queries per stream %v, want 22 in streams 0, 1, 2", perStream)
			}
			// Validation answers' row counts hold in the power test (the
			// refresh set's orders are not in any of these answers' counts
			// at SF 0.01: checked by the references in the validation pass).
			var rf []string
			for _, f := range r.Refresh {
				rf = append(rf, fmt.Sprintf("%d%s%d", f.Stream, f.Function, f.Set))
			}
			if got := strings.Join(rf, " "); got != "0RF11 0RF21 1RF12 1RF22 2RF13 2RF23" {
				t.Errorf("refresh functions %q, want the power pair (set 1) then pairs 1 and 2 of the throughput test (sets 2, 3)", got)
			}
			check("after three refresh pairs")

			code, out, errs = sledge(t, home, "run", "tpch", "--db", u, "--test", "power", "--no-refresh", "--queries", "1,6,15", "--explain", "--json")
			if code != 0 {
				t.Fatalf("subset run: exit %d: %s", code, errs)
			}
			r = decode[result](t, out)
			if len(r.Queries) != 3 || r.Power != nil || r.QphH != nil || len(r.Refresh) != 0 || len(r.Plans) != 3 {
				t.Errorf("subset run: %d queries, power %v, %d refresh, %d plans; want 3, null, 0, 3", len(r.Queries), r.Power, len(r.Refresh), len(r.Plans))
			}

			if code, _, errs := sledge(t, home, "drop", "tpch", "--db", u); code != 0 {
				t.Fatalf("drop: exit %d: %s", code, errs)
			}
			code, _, errs = sledge(t, home, "run", "tpch", "--db", u, "--test", "power")
			if code != 1 || !strings.Contains(errs, "no tpch schema") {
				t.Errorf("run after drop: exit %d: %s", code, errs)
			}
		})
	}
}

// TPC-H's customer and orders would replace TPC-C's: build and drop
// refuse a database with TPC-C's tables, which stay as they were.
func TestRefusesTPCCDatabase(t *testing.T) {
	home := t.TempDir()
	u := "sqlite://" + filepath.Join(t.TempDir(), "shared.db")
	if code, _, errs := sledge(t, home, "build", "tpcc", "--db", u, "--warehouses", "1"); code != 0 {
		t.Fatalf("build tpcc: exit %d: %s", code, errs)
	}
	for _, args := range [][]string{{"build", "tpch", "--db", u, "--scale", "0.01"}, {"drop", "tpch", "--db", u}} {
		code, _, errs := sledge(t, home, args...)
		if code == 0 || !strings.Contains(errs, "TPC-C's tables") {
			t.Errorf("%s: exit %d: %s", strings.Join(args, " "), code, errs)
		}
	}
	if code, _, errs := sledge(t, home, "check", "tpcc", "--db", u); code != 0 {
		t.Errorf("tpcc schema damaged: check exit %d: %s", code, errs)
	}
}

// Options that belong to the engine's runs are refused for tpch, and bad
// values of its own are bad input (exit 2), before anything is opened.
func TestBadInput(t *testing.T) {
	home := t.TempDir()
	u := "sqlite://" + filepath.Join(t.TempDir(), "x.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "tpch", "--db", u, "--vus", "4"}, "--vus: not for tpch"},
		{[]string{"run", "tpch", "--db", u, "--test", "speed"}, `--test "speed"`},
		{[]string{"run", "tpch", "--db", u, "--params", "odd"}, `--params "odd"`},
		{[]string{"run", "tpch", "--db", u, "--queries", "0,23"}, `--queries "0,23"`},
		{[]string{"build", "tpch", "--db", u, "--scale", "1.5"}, "above 1 must be a whole number"},
		{[]string{"build", "tpch", "--db", u, "--scale", "x"}, "--scale"},
		{[]string{"build", "tpcb", "--db", u, "--scale", "0.5"}, "--scale"},
	} {
		code, _, errs := sledge(t, home, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%s: exit %d, %q; want 2 and one line with %q", strings.Join(c.args, " "), code, errs, c.want)
		}
	}
}

// sqliteExec changes a built SQLite database behind sledge's back.
func sqliteExec(t *testing.T, u string, stmts ...string) {
	t.Helper()
	d := sqlite.OpenFile(strings.TrimPrefix(u, "sqlite://"))
	defer d.Close()
	for _, st := range stmts {
		if _, err := d.Exec(st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
}

// A wrong answer fails the run (exit 1) naming the query, the row and the
// column, and the result so far is printed and kept; a failed query
// likewise, with no composite figure.
func TestFailuresKeepTheResult(t *testing.T) {
	home := t.TempDir()
	for _, c := range []struct {
		name, change string
		args         []string
		want         string
	}{
		{"wrong answer", "UPDATE lineitem SET l_quantity = l_quantity + 1 WHERE l_orderkey = 1 AND l_linenumber = 1",
			[]string{"--params", "validation", "--no-refresh", "--test", "power"}, "Q1 row 3 column sum_qty: got 742803, want 742802"},
		// A refresh set applied: no validation pass before the power test.
		{"failed query", "DROP TABLE region; UPDATE tpch_meta SET value = '2' WHERE name = 'next_set'", []string{"--test", "power", "--no-refresh"}, "stream 0 Q2: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := "sqlite://" + filepath.Join(t.TempDir(), "tpch.db")
			if code, _, errs := sledge(t, home, "build", "tpch", "--db", u, "--scale", "0.01"); code != 0 {
				t.Fatalf("build: exit %d: %s", code, errs)
			}
			sqliteExec(t, u, strings.Split(c.change, "; ")...)
			code, out, errs := sledge(t, home, append([]string{"run", "tpch", "--db", u, "--json"}, c.args...)...)
			if code != 1 || !strings.Contains(errs, c.want) {
				t.Fatalf("exit %d, stderr %q; want 1 and %q", code, errs, c.want)
			}
			r := decode[struct {
				Power    *float64 `json:"power"`
				Queries  []any    `json:"queries"`
				Error    string   `json:"error"`
				Verified *bool    `json:"verified"`
				JobID    int64    `json:"job_id"`
			}](t, out)
			if r.Power != nil || !strings.Contains(r.Error, c.want) || r.JobID == 0 {
				t.Errorf("result %+v", r)
			}
			if c.name == "wrong answer" && (r.Verified == nil || *r.Verified) {
				t.Errorf("verified %v after a wrong answer", r.Verified)
			}
			if c.name == "failed query" && len(r.Queries) != 2 {
				t.Errorf("%d queries kept, want Q14 and the failed Q2", len(r.Queries))
			}
			code, out, _ = sledge(t, home, "jobs", "show", fmt.Sprint(r.JobID), "--json")
			if code != 0 || !strings.Contains(out, c.want) {
				t.Errorf("jobs show %d: exit %d, the stored result lacks the error: %.300s", r.JobID, code, out)
			}
		})
	}
}

// Answers are verified by default while the data is as built: a default
// run's validation pass checks the 22 answers before RF1 changes the
// data. The next run cannot verify, and says in one line the command
// that gets a verified run, which then verifies.
func TestVerifiedByDefault(t *testing.T) {
	home := t.TempDir()
	u := "sqlite://" + filepath.Join(t.TempDir(), "tpch.db")
	if code, _, errs := sledge(t, home, "build", "tpch", "--db", u, "--scale", "0.01"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, errs)
	}
	code, out, errs := sledge(t, home, "run", "tpch", "--db", u, "--test", "power", "--json")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	r := decode[struct {
		Verified   *bool    `json:"verified"`
		VerifyNote string   `json:"verify_note"`
		Params     string   `json:"params"`
		Validation []any    `json:"validation"`
		Refresh    []any    `json:"refresh"`
		Power      *float64 `json:"power"`
	}](t, out)
	if r.Verified == nil || !*r.Verified || len(r.Validation) != 22 || r.Params != "random" || len(r.Refresh) != 2 || r.Power == nil ||
		r.VerifyNote != "22 of 22 validation queries, against the references for SF 0.01" {
		t.Errorf("default run on a fresh build: %+v; want verified by a validation pass of 22, then the power test with its refresh pair", r)
	}

	code, out, errs = sledge(t, home, "run", "tpch", "--db", u, "--test", "power", "--no-refresh")
	cmd := fmt.Sprintf("sledge drop tpch --db %[1]s && sledge build tpch --db %[1]s --scale 0.01 && sledge run tpch --db %[1]s", u)
	want := "answers: not verified (refresh set 1 has changed the data since the build); a verified run: " + cmd + "\n"
	if code != 0 || !strings.Contains(out, want) {
		t.Fatalf("run after a refresh: exit %d, %s\n%s\nwant the line %q", code, errs, out, want)
	}
	for _, c := range strings.Split(cmd, " && ") {
		args := strings.Fields(c)[1:]
		if code, out, errs = sledge(t, home, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", c, code, errs)
		}
	}
	if want := "answers: verified (22 of 22 validation queries, against the references for SF 0.01)\n"; !strings.Contains(out, want) {
		t.Errorf("the suggested run:\n%s\nwant the line %q", out, want)
	}
}

// Ctrl-C while a query waits: the run stops at once with exit 130 and
// what was measured until then.
func TestInterrupt(t *testing.T) {
	u := targets(t)["postgres"](t)
	home := t.TempDir()
	if code, _, errs := sledge(t, home, "build", "tpch", "--db", u, "--scale", "0.01"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, errs)
	}
	// Another session holds lineitem: the power test's first query waits.
	lock, err := pgx.Connect(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close(context.Background())
	tx, err := lock.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(t.Context(), "LOCK TABLE lineitem IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := cli.Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "HOME" || k == "XDG_DATA_HOME" {
			return home
		}
		return ""
	}}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(2*time.Second, cancel)
	start := time.Now()
	code := cli.Main(ctx, []string{"run", "tpch", "--db", u, "--test", "power", "--no-refresh", "--json"}, env)
	if took := time.Since(start); code != 130 || took > 10*time.Second {
		t.Fatalf("exit %d after %s: %s", code, took, errb.String())
	}
	if !strings.Contains(out.String(), `"interrupted": true`) || !strings.Contains(out.String(), `"power": null`) {
		t.Errorf("result: %s", out.String())
	}
}

// digest is an order-free digest of a table's rows: the sum of the first
// 8 bytes of each row's SHA-1 over its values joined by '|' (dbgen's .tbl
// line without the trailing bar), as the dbgen package's tests compute it.
type digest uint64

func (d *digest) add(vals []string) {
	h := sha1.Sum([]byte(strings.Join(vals, "|")))
	*d += digest(binary.BigEndian.Uint64(h[:8]))
}

// cell is a value as dbgen writes it: decimals with two places, text
// without the blanks a char(N) column pads it with.
func cell(col string, v []byte) string {
	s := string(v)
	if !strings.HasSuffix(col, "_comment") && !strings.HasSuffix(col, "_address") {
		s = strings.TrimRight(s, " ") // char(N); comments and addresses are varchar and may end in a blank
	}
	for _, d := range []string{"acctbal", "retailprice", "supplycost", "totalprice", "quantity", "extendedprice", "discount", "tax"} {
		if strings.HasSuffix(col, "_"+d) {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return "bad decimal " + s
			}
			return strconv.FormatFloat(f, 'f', 2, 64)
		}
	}
	return s
}

// sameTables checks that every table in the database at u holds exactly
// the generator's rows at sf (whose digests the dbgen package pins to
// TPC dbgen 2.14's): the load changed no value.
func sameTables(t *testing.T, u string, sf float64) {
	t.Helper()
	ctx := t.Context()
	d, err := db.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c, err := d.(db.SQLDB).ConnectSQL(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	sc, err := dbgen.NewScale(sf)
	if err != nil {
		t.Fatal(err)
	}
	var buf [][]any
	for _, tab := range dbgen.Tables(sc) {
		var want, got digest
		vals := make([]string, len(tab.Columns))
		for i := range tab.Batches {
			buf = tab.Fill(i, buf)
			for _, row := range buf {
				for k, v := range row {
					switch x := v.(type) {
					case int64:
						vals[k] = strconv.FormatInt(x, 10)
					case float64:
						vals[k] = strconv.FormatFloat(x, 'f', 2, 64)
					case string:
						vals[k] = x
					default:
						t.Fatalf("%s: cell %T", tab.Name, v)
					}
				}
				want.add(vals)
			}
		}
		n, err := c.QuerySQL(ctx, "SELECT "+strings.Join(tab.Columns, ", ")+" FROM "+tab.Name, func(row [][]byte) error {
			for k, v := range row {
				vals[k] = cell(tab.Columns[k], v)
			}
			got.add(vals)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != tab.Rows || got != want {
			t.Errorf("%s: %d rows with digest %016x, want %d with %016x (dbgen's)", tab.Name, n, uint64(got), tab.Rows, uint64(want))
		}
	}
}
