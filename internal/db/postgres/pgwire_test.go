package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/db/postgres"
	"github.com/sledge-bench/sledge/internal/workload"
)

// wireModes are the modes whose sessions speak the protocol themselves.
var wireModes = []workload.Mode{workload.ModePrepared, workload.ModeProcedure, workload.ModeClient}

// wireConn is a session on the wire path with the given statement texts.
func wireConn(t *testing.T, u string, m workload.Mode, text map[string]string) workload.Conn {
	t.Helper()
	c := connect(t, open(t, u), m)
	if !postgres.WithStatements(c, text) {
		t.Fatalf("%s: %T does not speak the protocol itself", m, c)
	}
	if _, ok := c.(workload.StmtConn); !ok {
		t.Fatalf("%s: %T is not a workload.StmtConn", m, c)
	}
	return c
}

// Every argument type reaches the server and every destination type reads
// its column, NULL included, in each mode of the wire path.
func TestWireTypes(t *testing.T) {
	s := server(t)
	u := tcpURL(s, emptyDB(t, "wire_types"))
	var (
		i64   int64
		f64   float64
		str   string
		byt   []byte
		bl    bool
		ni    workload.NullInt64
		anyV  any
		dI64  int64
		dF64  float64
		dStr  string
		dByt  = make([]byte, 0, 64)
		dBool bool
		dNI   workload.NullInt64
	)
	cases := []struct {
		name, q string
		set     func()
		args    []any
		dest    []any
		check   func() string // "" when right
	}{
		{"int64", "SELECT $1::bigint", func() { i64 = -9000000000000000000 }, []any{&i64}, []any{&dI64},
			func() string { return want(dI64, int64(-9000000000000000000)) }},
		{"float64", "SELECT $1::float8", func() { f64 = 12.5 }, []any{&f64}, []any{&dF64},
			func() string { return want(dF64, 12.5) }},
		{"numeric into float64", "SELECT $1::numeric(12,2)", func() { f64 = 1234.56 }, []any{&f64}, []any{&dF64},
			func() string { return want(dF64, 1234.56) }},
		{"numeric into int64", "SELECT $1::numeric(12,2)", func() { f64 = 12 }, []any{&f64}, []any{&dI64},
			func() string { return want(dI64, int64(12)) }},
		{"string", "SELECT $1::text", func() { str = "O'Brien \\ ü $1 ;" }, []any{&str}, []any{&dStr},
			func() string { return want(dStr, "O'Brien \\ ü $1 ;") }},
		{"bytes", "SELECT $1::text || 'x'", func() { byt = []byte("abc") }, []any{&byt}, []any{&dByt},
			func() string { return want(string(dByt), "abcx") }},
		{"bool true", "SELECT $1::boolean", func() { bl = true }, []any{&bl}, []any{&dBool},
			func() string { return want(dBool, true) }},
		{"bool false", "SELECT NOT $1::boolean", func() { bl = true }, []any{&bl}, []any{&dBool},
			func() string { return want(dBool, false) }},
		{"null int", "SELECT $1::bigint", func() { ni = workload.NullInt64{} }, []any{&ni}, []any{&dNI},
			func() string { return want(dNI, workload.NullInt64{}) }},
		{"valid int", "SELECT $1::bigint", func() { ni = workload.NullInt64{V: 7, Valid: true} }, []any{&ni}, []any{&dNI},
			func() string { return want(dNI, workload.NullInt64{V: 7, Valid: true}) }},
		{"nil argument", "SELECT $1::bigint IS NULL", func() {}, []any{nil}, []any{&dBool},
			func() string { return want(dBool, true) }},
		{"NULL into bytes and bool", "SELECT NULL::text, NULL::boolean", func() { dByt = append(dByt[:0], "old"...); dBool = true },
			nil, []any{&dByt, &dBool}, func() string { return want(fmt.Sprint(len(dByt), dBool), "0 false") }},
		{"any int", "SELECT $1::int", func() { i64 = 5 }, []any{&i64}, []any{&anyV},
			func() string { return want(anyV, any(int64(5))) }},
		{"any numeric", "SELECT $1::numeric", func() { f64 = 2.25 }, []any{&f64}, []any{&anyV},
			func() string { return want(anyV, any(2.25)) }},
		{"any text", "SELECT $1::varchar", func() { str = "v" }, []any{&str}, []any{&anyV},
			func() string { return want(anyV, any("v")) }},
		{"any NULL", "SELECT NULL::int", func() {}, nil, []any{&anyV},
			func() string { return want(anyV, nil) }},
		{"timestamptz into string", "SELECT '2026-11-22 05:00:00.123+02'::timestamptz", func() {}, nil, []any{&dStr},
			func() string { return want(dStr, "2026-11-22 03:00:00.123") }},
		{"timestamptz into any", "SELECT '2026-11-22 05:00:00+00'::timestamptz", func() {}, nil, []any{&anyV},
			func() string { return want(anyV, any("2026-11-22 05:00:00")) }},
	}
	text := map[string]string{"set_utc": "SET TIME ZONE 'Europe/Paris'"}
	for i, tc := range cases {
		text[fmt.Sprintf("c%d", i)] = tc.q
	}
	for _, m := range wireModes {
		t.Run(m.String(), func(t *testing.T) {
			ctx := context.Background()
			c := wireConn(t, u, m, text)
			// A session time zone other than UTC: times still come back in UTC.
			if _, err := workload.ExecStmt(ctx, c, workload.Bind("set_utc", nil)); err != nil {
				t.Fatal(err)
			}
			for i, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					tc.set()
					st := workload.Bind(fmt.Sprintf("c%d", i), tc.args, tc.dest...)
					arr := &dByt[:1][0]
					if err := workload.QueryRowStmt(ctx, c, st); err != nil {
						t.Fatal(err)
					}
					if msg := tc.check(); msg != "" {
						t.Error(msg)
					}
					if cap(dByt) >= 64 && &dByt[:1][0] != arr {
						t.Error("*[]byte destination reallocated though it had room")
					}
				})
			}
		})
	}
}

func want[T comparable](got, w T) string {
	if got != w {
		return fmt.Sprintf("got %#v, want %#v", got, w)
	}
	return ""
}

// Errors keep PostgreSQL's SQLSTATE, DETAIL and classification, and leave
// the session usable; no rows, row counts and many (and large) rows.
func TestWireResults(t *testing.T) {
	s := server(t)
	u := tcpURL(s, emptyDB(t, "wire_results"))
	text := map[string]string{
		"create":  "CREATE TEMP TABLE w (k bigint PRIMARY KEY, v text)",
		"insert":  "INSERT INTO w SELECT g, 'v' || g FROM generate_series(1, $1::int) g",
		"dup":     "INSERT INTO w VALUES ($1, 'dup')",
		"update":  "UPDATE w SET v = v || '!' WHERE k <= $1",
		"none":    "SELECT v FROM w WHERE k < 0",
		"many":    "SELECT k, repeat('x', $2::int) FROM w WHERE k <= $1 ORDER BY k",
		"div":     "SELECT 10 / (3 - g) FROM generate_series(1, 5) g",
		"missing": "SELECT * FROM no_such_table",
		"count":   "SELECT count(*) FROM w",
	}
	for _, m := range wireModes {
		t.Run(m.String(), func(t *testing.T) {
			ctx := context.Background()
			c := wireConn(t, u, m, text)
			var n, k, count int64
			var v []byte
			if _, err := workload.ExecStmt(ctx, c, workload.Bind("create", nil)); err != nil {
				t.Fatal(err)
			}
			n = 1000
			if got, err := workload.ExecStmt(ctx, c, workload.Bind("insert", []any{&n})); err != nil || got != 1000 {
				t.Fatalf("insert: %d rows, %v", got, err)
			}
			n = 37
			if got, err := workload.ExecStmt(ctx, c, workload.Bind("update", []any{&n})); err != nil || got != 37 {
				t.Errorf("update: %d rows, %v; want 37", got, err)
			}
			// A unique violation: SQLSTATE and DETAIL kept, not retried.
			n = 5
			_, err := workload.ExecStmt(ctx, c, workload.Bind("dup", []any{&n}))
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "23505" || !strings.Contains(pe.Detail, "(k)=(5)") {
				t.Errorf("duplicate key: %v (%#v)", err, pe)
			}
			if errors.Is(err, workload.ErrRetry) || errors.Is(err, workload.ErrConnLost) {
				t.Errorf("duplicate key classified as %v", err)
			}
			if c.(workload.Breakable).Broken() || postgres.TxStatus(c) != 'I' {
				t.Errorf("after an error: broken %v, status %q", c.(workload.Breakable).Broken(), postgres.TxStatus(c))
			}
			// No rows.
			if err := workload.QueryRowStmt(ctx, c, workload.Bind("none", nil, &v)); !errors.Is(err, workload.ErrNoRows) {
				t.Errorf("no rows: %v, want ErrNoRows", err)
			}
			// Many rows, each larger than the read buffer.
			var rows, sum int64
			n, size := int64(1000), int64(20000)
			err = workload.QueryStmt(ctx, c, workload.Bind("many", []any{&n, &size}, &k, &v), func() error {
				rows++
				sum += k
				if len(v) != int(size) {
					return fmt.Errorf("row %d: %d bytes", k, len(v))
				}
				return nil
			})
			if err != nil || rows != 1000 || sum != 500500 {
				t.Errorf("many rows: %d rows, sum %d, %v", rows, sum, err)
			}
			// A row function's error stops the scanning, comes back as is,
			// and the session reads on.
			stop := errors.New("enough")
			rows = 0
			err = workload.QueryStmt(ctx, c, workload.Bind("many", []any{&n, &size}, &k, &v), func() error {
				rows++
				if rows == 3 {
					return stop
				}
				return nil
			})
			if err != stop || rows != 3 {
				t.Errorf("row error: %v after %d rows", err, rows)
			}
			// An error after some rows.
			rows = 0
			err = workload.QueryStmt(ctx, c, workload.Bind("div", nil, &k), func() error { rows++; return nil })
			if !errors.As(err, &pe) || pe.Code != "22012" {
				t.Errorf("division by zero: %v after %d rows", err, rows)
			}
			// An undefined table: ErrNoSchema.
			if err := workload.QueryRowStmt(ctx, c, workload.Bind("missing", nil, &v)); !errors.Is(err, workload.ErrNoSchema) {
				t.Errorf("missing table: %v, want ErrNoSchema", err)
			}
			// A failed transaction rolls back; the next one works.
			err = c.InTx(ctx, workload.TxOptions{}, func(ctx context.Context) error {
				if _, err := workload.ExecStmt(ctx, c, workload.Bind("update", []any{&n})); err != nil {
					return err
				}
				if postgres.TxStatus(c) != 'T' {
					t.Errorf("in a transaction: status %q", postgres.TxStatus(c))
				}
				n := int64(7)
				_, err := workload.ExecStmt(ctx, c, workload.Bind("dup", []any{&n}))
				return err
			})
			if !errors.As(err, &pe) || pe.Code != "23505" {
				t.Errorf("transaction: %v", err)
			}
			if err := workload.QueryRowStmt(ctx, c, workload.Bind("count", nil, &count)); err != nil || count != 1000 {
				t.Errorf("after the rollback: %d rows, %v", count, err)
			}
			// The boxed calls on the same session.
			var got int64
			if err := c.QueryRow(ctx, "count").Scan(&got); err != nil || got != 1000 {
				t.Errorf("QueryRow: %d, %v", got, err)
			}
			rs, err := c.Query(ctx, "many", int64(3), int64(1))
			if err != nil {
				t.Fatal(err)
			}
			rows = 0
			for rs.Next() {
				var s string
				if err := rs.Scan(&k, &s); err != nil || s != "x" {
					t.Errorf("Scan: %v %q", err, s)
				}
				rows++
			}
			if rs.Err() != nil || rows != 3 {
				t.Errorf("Query: %d rows, %v", rows, rs.Err())
			}
			_ = rs.Close()
		})
	}
}

// Procedure and prepared modes allocate nothing per call once the
// statement is parsed and the destinations have grown.
func TestWireNoAllocs(t *testing.T) {
	s := server(t)
	u := tcpURL(s, emptyDB(t, "wire_noallocs"))
	text := map[string]string{
		"q": "SELECT $1::bigint + 1, $2::text, $3::float8, $4::boolean, NULL::bigint",
		"u": "SELECT 1 WHERE $1::bigint > 0",
	}
	for _, m := range []workload.Mode{workload.ModePrepared, workload.ModeProcedure} {
		t.Run(m.String(), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background()) // cancellable, as the engine's
			defer cancel()
			c := wireConn(t, u, m, text)
			var (
				a, r  int64
				s     = "text"
				f, rf float64
				b, rb bool
				rs    = make([]byte, 0, 16)
				rn    workload.NullInt64
			)
			q := workload.Bind("q", []any{&a, &s, &f, &b}, &r, &rs, &rf, &rb, &rn)
			e := workload.Bind("u", []any{&a})
			// Made once, as a terminal makes its transaction's function.
			tx := func(ctx context.Context) error {
				_, err := workload.ExecStmt(ctx, c, e)
				return err
			}
			run := func() {
				a++
				if err := workload.QueryRowStmt(ctx, c, q); err != nil || r != a+1 {
					t.Fatalf("%d: %v", r, err)
				}
				if _, err := workload.ExecStmt(ctx, c, e); err != nil {
					t.Fatal(err)
				}
				if err := c.InTx(ctx, workload.TxOptions{}, tx); err != nil {
					t.Fatal(err)
				}
			}
			run()
			if n := testing.AllocsPerRun(50, run); n != 0 {
				t.Errorf("%v allocations per call", n)
			}
		})
	}
}

// The VU's context interrupts a long statement: the call returns its
// error, the session is Broken (the engine reconnects) and the server
// cancels the statement (a CancelRequest with the session's key).
func TestWireCancel(t *testing.T) {
	s := server(t)
	name := emptyDB(t, "wire_cancel")
	text := map[string]string{"sleep": "SELECT pg_sleep(600) /* wire-cancel */"}
	for _, m := range wireModes {
		t.Run(m.String(), func(t *testing.T) {
			c := wireConn(t, tcpURL(s, name), m, text)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := workload.ExecStmt(ctx, c, workload.Bind("sleep", nil))
				done <- err
			}()
			waitActivity(t, name, 1)
			cancel()
			err := <-done
			if !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled call: %v, want context.Canceled", err)
			}
			if !c.(workload.Breakable).Broken() {
				t.Error("not Broken after the interruption")
			}
			waitActivity(t, name, 0) // the server cancelled it
		})
	}
}

// waitActivity waits until n statements of TestWireCancel run on database
// name.
func waitActivity(t *testing.T, name string, n int) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, tcpURL(server(t), "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var got int
	for range 600 {
		err := c.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND state = 'active'
			AND query LIKE '%wire-cancel%' AND pid <> pg_backend_pid()`, name).Scan(&got)
		if err != nil {
			t.Fatal(err)
		}
		if got == n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%d statements running, never %d", got, n)
}

// cpuTime is the process's CPU time so far (user and system), in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkRoundTrip is one prepared statement's round trip (one bigint
// in, three columns out) on sledge's own reader and writer (api=wire,
// the default) and on pgconn's (api=pgconn): ns and allocations per round
// trip, and cpu-ns/op, the client process's CPU per round trip
// (docs/cost.md). stmt is the typed call (workload.Stmt), boxed the
// ...any call both paths have.
func BenchmarkRoundTrip(b *testing.B) {
	if srv == nil {
		b.Skip(startErr)
	}
	text := map[string]string{"q": "SELECT $1::bigint + 1, 'abc'::text, 2.5::float8"}
	for _, api := range []string{"wire", "pgconn"} {
		ctx, cancel := context.WithCancel(context.Background()) // cancellable, as the engine's
		d, err := db.Open(ctx, tcpURL(srv, "postgres")+"?api="+api)
		if err != nil {
			b.Fatal(err)
		}
		c, err := d.Connect(ctx, "tpcc", workload.ModePrepared)
		if err != nil {
			b.Fatal(err)
		}
		postgres.WithStatements(c, text)
		var n, r int64
		var s []byte
		var f float64
		st := workload.Bind("q", []any{&n}, &r, &s, &f)
		var str string
		calls := map[string]func() error{
			"stmt":  func() error { return workload.QueryRowStmt(ctx, c, st) },
			"boxed": func() error { return c.QueryRow(ctx, "q", n).Scan(&r, &str, &f) },
		}
		for _, kind := range []string{"stmt", "boxed"} {
			call := calls[kind]
			b.Run(api+"/"+kind, func(b *testing.B) {
				for range 100 {
					if err := call(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				before := cpuTime()
				for b.Loop() {
					n++
					if err := call(); err != nil {
						b.Fatal(err)
					}
				}
				// The client's CPU (the process's, user and system): what a
				// loaded machine's wall-clock ns/op cannot show.
				b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
			})
		}
		_ = c.Close(ctx)
		_ = d.Close()
		cancel()
	}
}
