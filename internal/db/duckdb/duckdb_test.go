//go:build cgo

package duckdb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/db/sqltexttest"
	"github.com/sledge-bench/sledge/internal/workload"
)

// holdEnv makes the test binary a second process that holds a database
// file open until its stdin closes (TestSecondProcess; TestMain in
// e2e_test.go).
const holdEnv = "SLEDGE_DUCKDB_HOLD"

// openTest opens a fresh database file in a temporary directory.
func openTest(t testing.TB) *DB {
	t.Helper()
	d, err := db.Open(context.Background(), "duckdb://"+filepath.Join(t.TempDir(), "test.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	return d.(*DB)
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		raw, path, bad string
		set            url.Values
	}{
		{raw: "duckdb:///abs/x.db", path: "/abs/x.db"},
		{raw: "duckdb:rel.db", path: "rel.db"},
		{raw: "duckdb://./rel.db", path: "./rel.db"},
		{raw: "duckdb::memory:", path: ":memory:"},
		{raw: "duckdb:///x.db?threads=2&memory_limit=1GB", path: "/x.db", set: url.Values{"threads": {"2"}, "memory_limit": {"1GB"}}},
		{raw: "duckdb:", bad: "has no file path"},
		{raw: "duckdb::mem:", bad: "the in-memory database is duckdb::memory:"},
		{raw: "duckdb:///x.db?bogus=1", bad: "unknown parameter bogus: known are threads, memory_limit"},
		{raw: "duckdb:///x.db?threads=", bad: "give threads once, with a value"},
		{raw: "duckdb:///x.db?threads=1&threads=2", bad: "give threads once"},
		{raw: "duckdb:///a%3Fb.db", bad: "has a ? or #"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			u, err := db.ParseURL(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			path, set, err := parseURL(u)
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("err %v, want %q", err, tc.bad)
				}
				// Through Open, the same refusal is bad input (exit 2).
				_, err := db.Open(context.Background(), tc.raw)
				var ue *db.URLError
				if !errors.As(err, &ue) || strings.Contains(err.Error(), "\n") {
					t.Errorf("Open: %v: not one line of db.URLError", err)
				}
				return
			}
			if err != nil || path != tc.path {
				t.Fatalf("path %q err %v, want %q", path, err, tc.path)
			}
			for k, v := range tc.set {
				if set.Get(k) != v[0] {
					t.Errorf("%s = %q, want %q", k, set.Get(k), v[0])
				}
			}
		})
	}
}

// Paths that cannot hold a database, and settings DuckDB refuses, are one
// line each.
func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "text.db")
	if err := os.WriteFile(notDB, []byte("not a database, and long enough to be read as a header by anyone who tries"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		raw, want string
		badURL    bool
	}{
		{raw: "duckdb://" + filepath.Join(dir, "no", "x.db"), want: "does not exist"},
		{raw: "duckdb://" + dir, want: "is a directory"},
		{raw: "duckdb://" + notDB, want: "is not a DuckDB database file"},
		{raw: "duckdb://" + filepath.Join(dir, "y.db") + "?threads=abc", want: "DuckDB refuses the setting threads=abc", badURL: true},
	} {
		d, err := db.Open(context.Background(), tc.raw)
		if err == nil {
			d.Close()
			t.Errorf("%s: opened", tc.raw)
			continue
		}
		var ue *db.URLError
		if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") || errors.As(err, &ue) != tc.badURL {
			t.Errorf("%s: %q, want one line with %q (bad URL %v)", tc.raw, err, tc.want, tc.badURL)
		}
	}
}

// DuckDB lets one process open a file: a second process gets one line
// that names the first.
func TestSecondProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held.duckdb")
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "holding\n" {
		t.Fatalf("holder: %q %v", line, err)
	}
	d, err := db.Open(context.Background(), "duckdb://"+path)
	if err == nil {
		d.Close()
		t.Fatal("a second process opened the held file")
	}
	want := fmt.Sprintf("duckdb: %s is open in process %d: DuckDB lets one process open a database file at a time", path, cmd.Process.Pid)
	if !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("%q\nwant one line starting %q", err, want)
	}
}

func TestInfo(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ raw, threads, storage string }{
		{"duckdb://" + filepath.Join(t.TempDir(), "a.duckdb") + "?threads=1&memory_limit=512MB", "1", "file"},
		{"duckdb::memory:", "", "memory"},
	} {
		d, err := db.Open(ctx, tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		info, err := d.Info(ctx)
		d.Close()
		if err != nil {
			t.Fatal(err)
		}
		if info.Driver != "duckdb" || info.Transport != "embedded" || !strings.HasPrefix(info.Version, "v1.") ||
			!strings.Contains(info.Version, goDriver) || info.Settings["storage"] != tc.storage ||
			info.Settings["memory_limit"] == "" || info.Settings["threads"] == "" {
			t.Errorf("%s: info = %+v", tc.raw, info)
		}
		if tc.threads != "" && info.Settings["threads"] != tc.threads {
			t.Errorf("%s: threads %q, want %q", tc.raw, info.Settings["threads"], tc.threads)
		}
		if _, ok, err := d.Counters(ctx); ok || err != nil {
			t.Errorf("Counters ok=%v err=%v; want false, nil", ok, err)
		}
		if got := db.Ephemeral(d); got != (tc.storage == "memory") {
			t.Errorf("%s: Ephemeral %v", tc.raw, got)
		}
	}
}

func TestSupports(t *testing.T) {
	d := openTest(t)
	for _, m := range []workload.Mode{workload.ModeClient, workload.ModePrepared, workload.ModeBatched} {
		if err := d.Supports("tpcc", m); err != nil {
			t.Errorf("%v: %v", m, err)
		}
	}
	for _, m := range []workload.Mode{workload.ModeProcedure, workload.ModePipeline, workload.ModeBlock} {
		err := d.Supports("tpcc", m)
		if err == nil || !strings.Contains(err.Error(), "use --mode client or prepared") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line naming client and prepared", m, err)
		}
	}
	if d.DefaultMode() != workload.ModePrepared {
		t.Errorf("default mode %v", d.DefaultMode())
	}
}

func TestSQLConn(t *testing.T) {
	d := openTest(t)
	if d.Dialect() != "duckdb" {
		t.Errorf("Dialect() = %q", d.Dialect())
	}
	sqltexttest.Run(t, sqltexttest.Dialect{
		DB:          d,
		Long:        "SELECT count(*) FROM range(100000000000) a WHERE a.range % 7 = 3",
		CancelKeeps: true,
		// DECIMAL as its digits without the fraction's trailing zeros.
		Rows: [][]any{
			{"1", "12.5", "one", "1998-09-02", nil},
			{"2", "-3", "it's two", "1992-01-01", "x"},
			{"3", nil, nil, nil, nil},
		},
		Sum: []any{"3", "9.5"},
	})
}

// DuckDB's own types come back as text.
func TestSQLConnValues(t *testing.T) {
	c := sqltexttest.Connect(t, openTest(t))
	for _, tc := range []struct {
		expr string
		want any
	}{
		{"1", "1"},
		{"42::TINYINT", "42"},
		{"-7::SMALLINT", "-7"},
		{"(-9223372036854775808)::BIGINT", "-9223372036854775808"},
		{"170141183460469231731687303715884105727::HUGEINT", "170141183460469231731687303715884105727"},
		{"sum(x) FROM (VALUES (1), (2)) t(x)", "3"},
		{"0.1::DOUBLE + 0.2::DOUBLE", "0.30000000000000004"},
		{"2.50::DECIMAL(15,2)", "2.5"},
		{"-0.05::DECIMAL(15,2)", "-0.05"},
		{"1234567890123.45::DECIMAL(15,2) * 10", "12345678901234.5"},
		{"'text'", "text"},
		{"''", ""},
		{"NULL", nil},
		{"date '1998-12-01' - INTERVAL 90 DAY", "1998-09-02"},
		{"date '1998-12-01'", "1998-12-01"},
		{"TIMESTAMP '2026-01-02 03:04:05.25'", "2026-01-02 03:04:05.25"},
		{"true", "true"},
	} {
		got := sqltexttest.MustQuery(t, c, "SELECT "+tc.expr)
		if len(got) != 1 || len(got[0]) != 1 || got[0][0] != tc.want {
			t.Errorf("SELECT %s: %q, want %q", tc.expr, got, tc.want)
		}
	}
}

// The named-statement sessions scan DuckDB's types into what the
// workloads scan into, in both modes.
func TestScanTypes(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	d.files = db.SQLFiles{FS: os.DirFS("testdata")}
	for _, m := range []workload.Mode{workload.ModeClient, workload.ModePrepared} {
		t.Run(m.String(), func(t *testing.T) {
			c, err := d.Connect(ctx, "types", m)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			var (
				dec, dbl   float64
				small, sum int64
				text, ds   string
				ts         any
				n          int
			)
			err = c.QueryRow(ctx, "values", int64(7), 2.5, "x").Scan(&dec, &dbl, &small, &sum, &text, &ds, &ts, &n)
			if err != nil {
				t.Fatal(err)
			}
			if dec != 12.34 || dbl != 2.5 || small != 7 || sum != 6 || text != "x" || ds != "12.34" || n != 3 {
				t.Errorf("got %v %v %v %v %q %q %v", dec, dbl, small, sum, text, ds, n)
			}
			if err := c.QueryRow(ctx, "none").Scan(&n); !errors.Is(err, workload.ErrNoRows) {
				t.Errorf("no rows: %v, want ErrNoRows", err)
			}
			if _, err := c.Exec(ctx, "missing"); !errors.Is(err, workload.ErrNoSchema) {
				t.Errorf("missing table: %v, want ErrNoSchema", err)
			}
		})
	}
}

// Two transactions that write the same row: DuckDB's optimistic
// concurrency fails the second, and that is ErrRetry; the first commits.
func TestConflictIsRetry(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	d.files = db.SQLFiles{FS: os.DirFS("testdata")}
	if err := d.Script(ctx, "types", "tables"); err != nil {
		t.Fatal(err)
	}
	for _, m := range []workload.Mode{workload.ModeClient, workload.ModePrepared} {
		t.Run(m.String(), func(t *testing.T) {
			a, err := d.Connect(ctx, "types", m)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close(ctx)
			b, err := d.Connect(ctx, "types", m)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close(ctx)
			var second error
			err = a.InTx(ctx, workload.TxOptions{}, func(ctx context.Context) error {
				if _, err := a.Exec(ctx, "bump", int64(1)); err != nil {
					return err
				}
				// b writes the same row while a's write is not committed.
				second = b.InTx(ctx, workload.TxOptions{}, func(ctx context.Context) error {
					_, err := b.Exec(ctx, "bump", int64(1))
					return err
				})
				return nil
			})
			if err != nil {
				t.Fatalf("first writer: %v", err)
			}
			if !errors.Is(second, workload.ErrRetry) {
				t.Errorf("second writer: %v, want ErrRetry", second)
			}
			// b's session goes on.
			if _, err := b.Exec(ctx, "bump", int64(1)); err != nil {
				t.Errorf("after the conflict: %v", err)
			}
		})
	}
	c := sqltexttest.Connect(t, d)
	if got := sqltexttest.MustQuery(t, c, "SELECT v FROM counter WHERE k = 1"); got[0][0] != "4" {
		t.Errorf("counter %q, want 4 (two first writers, two after the conflicts)", got)
	}
}

// Load appends through the appender: decimals scaled, not truncated,
// dates and text as given, NULLs; a wrong row count is an error.
func TestLoad(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	d.files = db.SQLFiles{FS: os.DirFS("testdata")}
	if err := d.Script(ctx, "types", "tables"); err != nil {
		t.Fatal(err)
	}
	tb := &workload.Table{Name: "loaded", Columns: []string{"id", "amount", "day", "note"}}
	rows := [][]any{
		{int64(1), 12.5, "1998-09-02", "one"},
		{int64(2), -0.07, "1992-01-01", nil},
		{int64(3), int64(7), "1995-03-15", "it's"},
		{int64(4), 0.125, "1995-03-15", "rounds half away"},
	}
	if err := d.Load(ctx, tb, rows); err != nil {
		t.Fatal(err)
	}
	c := sqltexttest.Connect(t, d)
	got := sqltexttest.MustQuery(t, c, "SELECT id, amount, day, note FROM loaded ORDER BY id")
	want := [][]any{
		{"1", "12.5", "1998-09-02", "one"},
		{"2", "-0.07", "1992-01-01", nil},
		{"3", "7", "1995-03-15", "it's"},
		{"4", "0.13", "1995-03-15", "rounds half away"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("loaded\n got %q\nwant %q", got, want)
	}
	if err := d.Load(ctx, tb, [][]any{{int64(5), 1.0}}); err == nil || !strings.Contains(err.Error(), "2 values for 4 columns") {
		t.Errorf("short row: %v", err)
	}
	err := d.Load(ctx, &workload.Table{Name: "nothere", Columns: []string{"a"}}, [][]any{{int64(1)}})
	if !errors.Is(err, workload.ErrNoSchema) {
		t.Errorf("missing table: %v, want ErrNoSchema", err)
	}
	if got := sqltexttest.Count(t, c, "loaded"); got != "4" {
		t.Errorf("%s rows after the failed loads, want 4", got)
	}
}
