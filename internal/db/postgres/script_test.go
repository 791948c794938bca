package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/testdb"
	"github.com/sledge-bench/sledge/internal/workload"
)

var protocols = []workload.Protocol{workload.ProtoSimple, workload.ProtoExtended, workload.ProtoPrepared}

// scriptDB returns a new empty database on the test server, opened, and
// its URL; both go away at the end of the test.
func scriptDB(t testing.TB) (db.ScriptDB, string) {
	t.Helper()
	s := testdb.Need(t, srv, startErr)
	name := fmt.Sprintf("script%d", dbSeq.Add(1))
	if err := tryExec(s, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tryExec(s, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	u := tcpURL(s, name)
	d, err := db.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d.(db.ScriptDB), u
}

func connectScript(t testing.TB, ctx context.Context, d db.ScriptDB, p workload.Protocol) workload.ScriptConn {
	t.Helper()
	c, err := d.ConnectScript(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// sqlq makes the SQLQuery the script interpreter would: text written with
// $n, values pasted in for the simple protocol.
func sqlq(t testing.TB, p workload.Protocol, id int, text string, args ...any) *workload.SQLQuery {
	t.Helper()
	if p != workload.ProtoSimple {
		return &workload.SQLQuery{ID: id, Text: text, Args: args}
	}
	s, err := db.Interpolate(text, db.Dollar, args)
	if err != nil {
		t.Fatal(err)
	}
	return &workload.SQLQuery{ID: id, Text: s}
}

// result is one call of keep.
type result struct {
	Stmt int
	Cols []string
	Last []any
	Rows int
}

// run runs q and returns what keep received.
func run(t testing.TB, c workload.ScriptConn, q *workload.SQLQuery) ([]result, error) {
	t.Helper()
	var got []result
	err := c.RunSQL(context.Background(), q, func(stmt int, cols []string, last []any, rows int) {
		got = append(got, result{stmt, append([]string(nil), cols...), append([]any(nil), last...), rows})
	})
	return got, err
}

func mustRun(t testing.TB, c workload.ScriptConn, q *workload.SQLQuery) []result {
	t.Helper()
	got, err := run(t, c, q)
	if err != nil {
		t.Fatalf("%s: %v", q.Text, err)
	}
	return got
}

// Every protocol writes and reads int, float, string and NULL values, and
// keep sees the columns, the last row as text and the row count.
func TestScriptProtocols(t *testing.T) {
	d, _ := scriptDB(t)
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			c := connectScript(t, context.Background(), d, p)
			if want := workload.ModePrepared; c.Mode() != want && !(p == workload.ProtoSimple && c.Mode() == workload.ModeClient) {
				t.Errorf("Mode() = %v", c.Mode())
			}
			if c.Placeholder(3) != "$3" {
				t.Errorf("Placeholder(3) = %q", c.Placeholder(3))
			}
			table := "t_" + p.String()
			mustRun(t, c, sqlq(t, p, 1, "CREATE TABLE "+table+" (k bigint PRIMARY KEY, f float8, s text, n int)"))
			ins := "INSERT INTO " + table + " (k, f, s, n) VALUES ($1, $2, $3, $4)"
			for k := int64(1); k <= 3; k++ {
				if got := mustRun(t, c, sqlq(t, p, 2, ins, k, float64(k)+0.25, fmt.Sprintf("it's %d", k), nil)); got != nil {
					t.Errorf("INSERT gave results %v", got)
				}
			}
			mustRun(t, c, sqlq(t, p, 3, "UPDATE "+table+" SET f = f * $1, n = $2 WHERE k = $3", 2.0, int64(7), int64(2)))
			sel := "SELECT k, f, s, n FROM " + table + " WHERE k >= $1 ORDER BY k"
			cols := []string{"k", "f", "s", "n"}
			for _, c2 := range []struct {
				from int64
				want []result
			}{
				{4, []result{{0, cols, nil, 0}}},
				{3, []result{{0, cols, []any{"3", "3.25", "it's 3", nil}, 1}}},
				{1, []result{{0, cols, []any{"3", "3.25", "it's 3", nil}, 3}}},
				{2, []result{{0, cols, []any{"3", "3.25", "it's 3", nil}, 2}}},
			} {
				if got := mustRun(t, c, sqlq(t, p, 4, sel, c2.from)); !reflect.DeepEqual(got, c2.want) {
					t.Errorf("from %d: keep got %v, want %v", c2.from, got, c2.want)
				}
			}
			got := mustRun(t, c, sqlq(t, p, 5, "SELECT f, n, s FROM "+table+" WHERE k = $1", int64(2)))
			if want := []result{{0, []string{"f", "n", "s"}, []any{"4.5", "7", "it's 2"}, 1}}; !reflect.DeepEqual(got, want) {
				t.Errorf("updated row: got %v, want %v", got, want)
			}
			// Without keep the rows are skipped.
			if err := c.RunSQL(context.Background(), sqlq(t, p, 4, sel, int64(1)), nil); err != nil {
				t.Fatal(err)
			}
			// Values PostgreSQL infers from the statement: a boolean, a
			// float in exponent form, an empty string.
			got = mustRun(t, c, sqlq(t, p, 6, "SELECT $1::bool AS b, $2::float8 AS e, $3::text AS s, $4::int AS z", true, 1e20, "", nil))
			if want := []result{{0, []string{"b", "e", "s", "z"}, []any{"t", "1e+20", "", nil}, 1}}; !reflect.DeepEqual(got, want) {
				t.Errorf("inferred types: got %v, want %v", got, want)
			}
		})
	}
}

// A compound command of the simple protocol gives one result per
// statement, each with its index; keep sees those with columns.
func TestScriptCompound(t *testing.T) {
	d, _ := scriptDB(t)
	c := connectScript(t, context.Background(), d, workload.ProtoSimple)
	mustRun(t, c, sqlq(t, workload.ProtoSimple, 1, "CREATE TABLE c (k int)"))
	got := mustRun(t, c, sqlq(t, workload.ProtoSimple, 2, "SELECT 1 AS a; INSERT INTO c VALUES (1), (2); SELECT k, NULL AS z FROM c ORDER BY k; SELECT 1 AS b WHERE false"))
	want := []result{
		{0, []string{"a"}, []any{"1"}, 1},
		{2, []string{"k", "z"}, []any{"2", nil}, 2},
		{3, []string{"b"}, nil, 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// An error stops the compound, which PostgreSQL runs as one implicit
	// transaction: the statement before it is undone too.
	_, err := run(t, c, sqlq(t, workload.ProtoSimple, 3, "INSERT INTO c VALUES (3); SELECT 1/0; INSERT INTO c VALUES (4)"))
	if err == nil || !strings.Contains(err.Error(), "22012") {
		t.Fatalf("err = %v, want division by zero", err)
	}
	got = mustRun(t, c, sqlq(t, workload.ProtoSimple, 4, "SELECT count(*) AS n FROM c"))
	if got[0].Last[0] != "2" {
		t.Errorf("rows after the failed compound: %v, want 2", got)
	}
}

// The prepared protocol prepares each command once per connection, as
// P_<ID>: one more round trip the first time, then one per execution.
func TestScriptPreparedOnce(t *testing.T) {
	d, _ := scriptDB(t)
	wire := new(metrics.WireCounts)
	c := connectScript(t, metrics.WithWire(context.Background(), wire), d, workload.ProtoPrepared)
	if w, ok := c.(metrics.Wired); !ok || w.Wire() != wire {
		t.Fatal("the session does not report its wire counter")
	}
	p := workload.ProtoPrepared
	mustRun(t, c, sqlq(t, p, 1, "CREATE TABLE u (k int PRIMARY KEY, v int)"))
	mustRun(t, c, sqlq(t, p, 2, "INSERT INTO u VALUES (1, 0)"))
	upd := "UPDATE u SET v = v + $1 WHERE k = $2"
	for i := range 3 {
		before := wire.Load()
		mustRun(t, c, sqlq(t, p, 42, upd, int64(1), int64(1)))
		trips := wire.Load().Sub(before).RoundTrips
		if want := map[bool]int64{true: 2, false: 1}[i == 0]; trips != want {
			t.Errorf("execution %d: %d round trips, want %d", i, trips, want)
		}
	}
	got := mustRun(t, c, sqlq(t, p, 3, "SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'P\\_%' ORDER BY name"))
	want := []result{{0, []string{"name", "statement"}, []any{"P_42", upd}, 4}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pg_prepared_statements: %v, want %v (P_1, P_2, P_3, P_42: one each)", got, want)
	}
	got = mustRun(t, c, sqlq(t, p, 4, "SELECT v FROM u"))
	if got[0].Last[0] != "3" {
		t.Errorf("v = %v, want 3", got[0].Last)
	}
}

// One SELECT 1 of the simple protocol is one round trip; extended is one
// too (Parse, Bind, Describe, Execute, Sync in one write).
func TestScriptRoundTrips(t *testing.T) {
	d, _ := scriptDB(t)
	for _, p := range protocols[:2] {
		wire := new(metrics.WireCounts)
		c := connectScript(t, metrics.WithWire(context.Background(), wire), d, p)
		for range 3 {
			before := wire.Load()
			mustRun(t, c, sqlq(t, p, 1, "SELECT 1"))
			if w := wire.Load().Sub(before); w.RoundTrips != 1 || w.BytesSent == 0 || w.BytesReceived == 0 {
				t.Errorf("%s: SELECT 1 cost %+v, want exactly 1 round trip", p, w)
			}
		}
	}
}

// InTransaction follows BEGIN … COMMIT and a failed block until Rollback.
func TestScriptTransaction(t *testing.T) {
	d, _ := scriptDB(t)
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			ctx := context.Background()
			c := connectScript(t, ctx, d, p)
			table := "tx_" + p.String()
			mustRun(t, c, sqlq(t, p, 1, "CREATE TABLE "+table+" (k int)"))
			if c.InTransaction() {
				t.Fatal("in a transaction before BEGIN")
			}
			mustRun(t, c, sqlq(t, p, 2, "BEGIN"))
			mustRun(t, c, sqlq(t, p, 3, "INSERT INTO "+table+" VALUES ($1)", int64(1)))
			if !c.InTransaction() {
				t.Error("not in a transaction after BEGIN")
			}
			mustRun(t, c, sqlq(t, p, 4, "COMMIT"))
			if c.InTransaction() {
				t.Error("in a transaction after COMMIT")
			}
			mustRun(t, c, sqlq(t, p, 2, "BEGIN"))
			mustRun(t, c, sqlq(t, p, 3, "INSERT INTO "+table+" VALUES ($1)", int64(2)))
			if _, err := run(t, c, sqlq(t, p, 5, "SELECT 1/0")); err == nil {
				t.Fatal("no error from 1/0")
			}
			if !c.InTransaction() {
				t.Error("not in a transaction after an error inside it")
			}
			if err := c.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			if c.InTransaction() {
				t.Error("in a transaction after Rollback")
			}
			if err := c.Rollback(ctx); err != nil {
				t.Errorf("Rollback without a transaction: %v", err)
			}
			got := mustRun(t, c, sqlq(t, p, 6, "SELECT count(*) AS n FROM "+table))
			if got[0].Last[0] != "1" {
				t.Errorf("rows = %v, want 1: the rolled back insert stayed", got[0].Last)
			}
		})
	}
}

// Two REPEATABLE READ sessions updating the same row: the second fails
// with a serialization failure, which is ErrRetry.
func TestScriptSerializationIsRetry(t *testing.T) {
	d, _ := scriptDB(t)
	ctx := context.Background()
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			a, b := connectScript(t, ctx, d, p), connectScript(t, ctx, d, p)
			table := "ser_" + p.String()
			mustRun(t, a, sqlq(t, p, 1, "CREATE TABLE "+table+" (k int PRIMARY KEY, v int)"))
			mustRun(t, a, sqlq(t, p, 2, "INSERT INTO "+table+" VALUES (1, 0)"))
			begin := sqlq(t, p, 3, "BEGIN ISOLATION LEVEL REPEATABLE READ")
			upd := sqlq(t, p, 4, "UPDATE "+table+" SET v = v + $1 WHERE k = $2", int64(1), int64(1))
			read := sqlq(t, p, 5, "SELECT v FROM "+table)
			mustRun(t, a, begin)
			mustRun(t, b, begin)
			mustRun(t, b, read) // b's snapshot starts here
			mustRun(t, a, upd)
			done := make(chan error, 1)
			go func() { done <- b.RunSQL(ctx, upd, nil) }() // waits for a
			mustRun(t, a, sqlq(t, p, 6, "COMMIT"))
			err := <-done
			var pe *pgconn.PgError
			if !errors.Is(err, workload.ErrRetry) || !errors.As(err, &pe) || pe.Code != "40001" {
				t.Fatalf("err = %v, want a retryable serialization failure", err)
			}
			oneLine(t, err.Error(), "40001", "UPDATE "+table)
			if !b.InTransaction() {
				t.Error("b is not in a (failed) transaction")
			}
			if err := b.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			mustRun(t, b, read)
		})
	}
}

// A deadlock is ErrRetry too; a lock timeout (55P03) is not, as in pgbench.
func TestScriptDeadlockAndLockTimeout(t *testing.T) {
	d, _ := scriptDB(t)
	ctx := context.Background()
	p := workload.ProtoExtended
	a, b := connectScript(t, ctx, d, p), connectScript(t, ctx, d, p)
	mustRun(t, a, sqlq(t, p, 1, "CREATE TABLE dl (k int PRIMARY KEY, v int)"))
	mustRun(t, a, sqlq(t, p, 2, "INSERT INTO dl VALUES (1, 0), (2, 0)"))
	upd := "UPDATE dl SET v = v + 1 WHERE k = $1"
	for _, c := range []workload.ScriptConn{a, b} {
		mustRun(t, c, sqlq(t, p, 3, "BEGIN"))
	}
	mustRun(t, a, sqlq(t, p, 4, upd, int64(1)))
	mustRun(t, b, sqlq(t, p, 4, upd, int64(2)))
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, c := range []workload.ScriptConn{a, b} {
		wg.Go(func() { errs[i] = c.RunSQL(ctx, sqlq(t, p, 4, upd, int64(2-i)), nil) })
	}
	wg.Wait()
	failed := 0
	for i, err := range errs {
		if err == nil {
			continue
		}
		failed++
		if !errors.Is(err, workload.ErrRetry) || !strings.Contains(err.Error(), "40P01") {
			t.Errorf("session %d: err = %v, want a retryable deadlock", i, err)
		}
	}
	if failed != 1 {
		t.Fatalf("%d sessions failed, want 1: %v", failed, errs)
	}
	for _, c := range []workload.ScriptConn{a, b} {
		if err := c.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// b holds the row; a gives up after lock_timeout: not retried.
	mustRun(t, b, sqlq(t, p, 3, "BEGIN"))
	mustRun(t, b, sqlq(t, p, 4, upd, int64(1)))
	mustRun(t, a, sqlq(t, p, 5, "SET lock_timeout = '50ms'"))
	_, err := run(t, a, sqlq(t, p, 4, upd, int64(1)))
	if err == nil || errors.Is(err, workload.ErrRetry) || !strings.Contains(err.Error(), "55P03") {
		t.Errorf("lock timeout: err = %v, want a 55P03 that is not ErrRetry", err)
	}
	if err := b.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
}

// A missing table is ErrNoSchema in every protocol (prepared: at Prepare).
func TestScriptNoSchema(t *testing.T) {
	d, _ := scriptDB(t)
	for _, p := range protocols {
		c := connectScript(t, context.Background(), d, p)
		_, err := run(t, c, sqlq(t, p, 1, "SELECT abalance FROM pgbench_accounts WHERE aid = $1", int64(1)))
		if !errors.Is(err, workload.ErrNoSchema) || errors.Is(err, workload.ErrRetry) {
			t.Errorf("%s: err = %v, want ErrNoSchema", p, err)
			continue
		}
		oneLine(t, err.Error(), "42P01", "pgbench_accounts")
		// The session goes on; the prepared protocol prepares again.
		mustRun(t, c, sqlq(t, p, 2, "CREATE TABLE pgbench_accounts_"+p.String()+" (aid int)"))
	}
}

// Pipelines: commands queue until EndPipeline, which returns the first
// error; the session works afterwards. The simple protocol refuses them.
func TestScriptPipeline(t *testing.T) {
	d, _ := scriptDB(t)
	ctx := context.Background()
	simple := connectScript(t, ctx, d, workload.ProtoSimple)
	pl, ok := simple.(workload.Pipeliner)
	if !ok {
		t.Fatal("script session is not a Pipeliner")
	}
	if err := pl.StartPipeline(ctx); err == nil || !strings.Contains(err.Error(), "cannot use pipeline mode with the simple query protocol") {
		t.Errorf("simple StartPipeline: %v", err)
	}
	for _, p := range protocols[1:] {
		t.Run(p.String(), func(t *testing.T) {
			wire := new(metrics.WireCounts)
			c := connectScript(t, metrics.WithWire(ctx, wire), d, p)
			pl := c.(workload.Pipeliner)
			table := "pl_" + p.String()
			mustRun(t, c, sqlq(t, p, 1, "CREATE TABLE "+table+" (k int PRIMARY KEY, s text)"))
			ins := "INSERT INTO " + table + " VALUES ($1, $2)"
			before := wire.Load()
			if err := pl.StartPipeline(ctx); err != nil {
				t.Fatal(err)
			}
			for k := int64(1); k <= 5; k++ {
				if err := c.RunSQL(ctx, sqlq(t, p, 2, ins, k, fmt.Sprint("v", k)), nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.RunSQL(ctx, sqlq(t, p, 3, "SELECT 1"), func(int, []string, []any, int) {}); err == nil {
				t.Error("keep inside a pipeline was accepted")
			}
			if w := wire.Load().Sub(before); w.BytesSent != 0 {
				t.Errorf("queued commands were sent before the end: %+v", w)
			}
			if err := pl.EndPipeline(ctx); err != nil {
				t.Fatal(err)
			}
			if w := wire.Load().Sub(before); w.RoundTrips != 1 {
				t.Errorf("pipeline of 5 INSERTs: %d round trips, want 1", w.RoundTrips)
			}
			if got := mustRun(t, c, sqlq(t, p, 4, "SELECT count(*) AS n FROM "+table)); got[0].Last[0] != "5" {
				t.Errorf("rows after the pipeline: %v", got)
			}
			// An error inside: a duplicate key. The requests after it up to
			// the sync are skipped; those after the sync point run.
			if err := pl.StartPipeline(ctx); err != nil {
				t.Fatal(err)
			}
			for _, k := range []int64{6, 1, 7} {
				if err := c.RunSQL(ctx, sqlq(t, p, 2, ins, k, "again"), nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := pl.SyncPipeline(ctx); err != nil {
				t.Fatal(err)
			}
			if err := c.RunSQL(ctx, sqlq(t, p, 5, "INSERT INTO "+table+" VALUES ($1, 'new statement')", int64(8)), nil); err != nil {
				t.Fatal(err)
			}
			err := pl.EndPipeline(ctx)
			if err == nil || !strings.Contains(err.Error(), "23505") || errors.Is(err, workload.ErrRetry) {
				t.Fatalf("EndPipeline: err = %v, want the duplicate key", err)
			}
			oneLine(t, err.Error(), "INSERT INTO "+table)
			got := mustRun(t, c, sqlq(t, p, 6, "SELECT string_agg(k::text, ',' ORDER BY k) AS ks FROM "+table))
			if got[0].Last[0] != "1,2,3,4,5,8" {
				t.Errorf("keys after the failed pipeline: %v, want 1,2,3,4,5,8", got[0].Last)
			}
			// A statement prepared inside a pipeline is reused after it.
			mustRun(t, c, sqlq(t, p, 5, "INSERT INTO "+table+" VALUES ($1, 'new statement')", int64(9)))
			if c.InTransaction() {
				t.Error("in a transaction after the pipelines")
			}
			if err := pl.EndPipeline(ctx); err == nil {
				t.Error("EndPipeline outside a pipeline was accepted")
			}
		})
	}
}

// Cancelling the context interrupts a command in flight; a context done
// already fails at once.
func TestScriptCancel(t *testing.T) {
	d, _ := scriptDB(t)
	for _, p := range protocols {
		ctx, cancel := context.WithCancel(context.Background())
		c := connectScript(t, ctx, d, p)
		mustRun(t, c, sqlq(t, p, 1, "SELECT 1"))
		start := time.Now()
		time.AfterFunc(100*time.Millisecond, cancel)
		err := c.RunSQL(ctx, sqlq(t, p, 2, "SELECT pg_sleep(10)"), nil)
		if !errors.Is(err, context.Canceled) || errors.Is(err, workload.ErrConnLost) || time.Since(start) > 5*time.Second {
			t.Errorf("%s: err = %v after %v, want context.Canceled at once", p, err, time.Since(start))
		}
		if err := c.RunSQL(ctx, sqlq(t, p, 1, "SELECT 1"), nil); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: with a cancelled context: %v", p, err)
		}
		_ = c.Rollback(ctx)
	}
}

func TestScriptSupports(t *testing.T) {
	d, _ := scriptDB(t)
	for _, p := range protocols {
		if err := d.ScriptSupports(p, false); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	err := d.ScriptSupports(workload.ProtoSimple, true)
	if err == nil {
		t.Fatal("simple protocol with pipelines accepted")
	}
	oneLine(t, err.Error(), "--protocol extended or prepared", "cannot use pipeline mode with the simple query protocol")
	for _, p := range protocols[1:] {
		if err := d.ScriptSupports(p, true); err != nil {
			t.Errorf("%s with pipelines: %v", p, err)
		}
	}
	c := connectScript(t, context.Background(), d, workload.ProtoExtended)
	if _, err := c.Exec(context.Background(), "neword.district"); err == nil || !strings.Contains(err.Error(), "named statements are not available in a script session") {
		t.Errorf("Exec: %v", err)
	}
}

// A session that cannot connect says so on one line without the password.
func TestScriptConnectError(t *testing.T) {
	s := server(t)
	u := fmt.Sprintf("postgres://%s:%s@%s:%d/postgres", s.User, "wrong-secret", s.Host, s.Port)
	d, err := db.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = d.(db.ScriptDB).ConnectScript(context.Background(), workload.ProtoPrepared)
	if err == nil {
		t.Fatal("connected with a wrong password")
	}
	oneLine(t, err.Error(), "password authentication failed")
	if strings.Contains(err.Error(), "wrong-secret") {
		t.Errorf("message shows the password: %s", err)
	}
}

// BenchmarkRunSQLPrepared is the hot path of a pgbench TPC-B script in
// prepared mode: one UPDATE with two integer values, with each way of
// waiting for the socket (URL option io), and on pgconn (api=pgconn).
func BenchmarkRunSQLPrepared(b *testing.B) {
	d, u := scriptDB(b)
	// Cancellable, as the engine's is: pgconn would watch it at every call.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := workload.ProtoPrepared
	setup := connectScript(b, ctx, d, p)
	mustRun(b, setup, sqlq(b, p, 1, "CREATE TABLE pgbench_accounts (aid int PRIMARY KEY, abalance int)"))
	mustRun(b, setup, sqlq(b, p, 2, "INSERT INTO pgbench_accounts SELECT g, 0 FROM generate_series(1, 1000) g"))
	// The values are boxed beforehand: the interpreter keeps its variables
	// as values already, and boxing is not RunSQL's cost.
	deltas, aids := make([]any, 1000), make([]any, 1000)
	for i := range 1000 {
		deltas[i], aids[i] = int64(i*7%5000-2500), int64(i+1)
	}
	// On sledge's wire (the default) with each wait, and on pgconn.
	for _, opts := range []string{"io=blocking", "io=poller", "io=blocking&api=pgconn"} {
		b.Run(opts, func(b *testing.B) {
			od, err := db.Open(ctx, u+"?"+opts)
			if err != nil {
				b.Fatal(err)
			}
			defer od.Close()
			c := connectScript(b, ctx, od.(db.ScriptDB), p)
			q := &workload.SQLQuery{ID: 3, Text: "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2", Args: []any{int64(0), int64(0)}}
			b.ReportAllocs()
			i := 0
			before := cpuTime()
			for b.Loop() {
				i++
				q.Args[0], q.Args[1] = deltas[i*13%1000], aids[i%1000]
				if err := c.RunSQL(ctx, q, nil); err != nil {
					b.Fatal(err)
				}
			}
			// The client's CPU per command: wall time is mostly the
			// server's.
			b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
		})
	}
}

// COPY fails the command at once, in every protocol, as it aborts a
// pgbench client; the session goes on: the next command runs, in a
// transaction block too. Without the guard COPY FROM STDIN waits for data
// forever and COPY TO STDOUT passes.
func TestScriptCopyRefused(t *testing.T) {
	d, _ := scriptDB(t)
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			// One context for every call: the session's watcher is for a
			// context that outlives its calls (a virtual user's).
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c := connectScript(t, ctx, d, p)
			table := "copy_" + p.String()
			mustRun(t, c, sqlq(t, p, 1, "CREATE TABLE "+table+" (x int)"))
			for i, text := range []string{"COPY " + table + " FROM STDIN", "COPY (SELECT g FROM generate_series(1, 1000) g) TO STDOUT",
				"COPY " + table + " FROM STDIN WITH (FORMAT csv)"} {
				start := time.Now()
				err := c.RunSQL(ctx, sqlq(t, p, 10+i, text), nil)
				if err == nil || !strings.Contains(err.Error(), "COPY is not supported") {
					t.Errorf("%s: %v, want COPY is not supported", text, err)
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("%s took %v", text, d)
				}
				if got := mustRun(t, c, sqlq(t, p, 2, "SELECT count(*) AS n FROM "+table)); len(got) != 1 || got[0].Last[0] != "0" {
					t.Errorf("after %s: %v", text, got)
				}
			}
			// In a transaction block: the block has failed, ROLLBACK ends it.
			mustRun(t, c, sqlq(t, p, 3, "BEGIN"))
			if _, err := run(t, c, sqlq(t, p, 10, "COPY "+table+" FROM STDIN")); err == nil {
				t.Error("COPY in a block: no error")
			}
			if err := c.Rollback(context.Background()); err != nil {
				t.Fatal(err)
			}
			if c.InTransaction() {
				t.Error("still in a transaction after Rollback")
			}
			mustRun(t, c, sqlq(t, p, 2, "SELECT count(*) AS n FROM "+table))
		})
	}
	// In a pipeline the session cannot answer in time: the command fails
	// just as promptly, and the session is broken, to be opened again.
	c := connectScript(t, context.Background(), d, workload.ProtoExtended)
	pl := c.(workload.Pipeliner)
	mustRun(t, c, sqlq(t, workload.ProtoExtended, 1, "CREATE TABLE copy_pipe (x int)"))
	if err := pl.StartPipeline(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{"SELECT 1", "COPY copy_pipe FROM STDIN", "SELECT 2"} {
		if err := c.RunSQL(context.Background(), sqlq(t, workload.ProtoExtended, 20+i, text), nil); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	err := pl.EndPipeline(context.Background())
	if err == nil || !strings.Contains(err.Error(), "COPY is not supported") {
		t.Errorf("pipeline with COPY: %v, want COPY is not supported", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("pipeline with COPY took %v", d)
	}
	if b, ok := c.(interface{ Broken() bool }); !ok || !b.Broken() {
		t.Error("the session of a pipeline with COPY is not broken")
	}
}
