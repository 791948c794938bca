package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/workload"
)

var protocols = []workload.Protocol{workload.ProtoSimple, workload.ProtoExtended, workload.ProtoPrepared}

// scriptDB opens a new empty database name on the test server.
func scriptDB(t *testing.T, name string) db.ScriptDB {
	t.Helper()
	s := need(t)
	d, err := db.Open(context.Background(), freshDB(t, s, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = d.Close()
		admin(t, s, "DROP DATABASE IF EXISTS "+name)
	})
	return d.(db.ScriptDB)
}

func connectScript(t *testing.T, ctx context.Context, d db.ScriptDB, p workload.Protocol) workload.ScriptConn {
	t.Helper()
	c, err := d.ConnectScript(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// sqlq makes the SQLQuery the script interpreter would: values pasted in
// for the simple protocol, bound otherwise.
func sqlq(t *testing.T, p workload.Protocol, id int, text string, args ...any) *workload.SQLQuery {
	t.Helper()
	if p != workload.ProtoSimple {
		return &workload.SQLQuery{ID: id, Text: text, Args: args}
	}
	s, err := db.Interpolate(text, db.Question, args)
	if err != nil {
		t.Fatal(err)
	}
	return &workload.SQLQuery{ID: id, Text: s}
}

type result struct {
	Stmt int
	Cols []string
	Last []any
	Rows int
}

func run(t *testing.T, c workload.ScriptConn, q *workload.SQLQuery) ([]result, error) {
	t.Helper()
	var got []result
	err := c.RunSQL(context.Background(), q, func(stmt int, cols []string, last []any, rows int) {
		got = append(got, result{stmt, append([]string(nil), cols...), append([]any(nil), last...), rows})
	})
	return got, err
}

func mustRun(t *testing.T, c workload.ScriptConn, q *workload.SQLQuery) []result {
	t.Helper()
	got, err := run(t, c, q)
	if err != nil {
		t.Fatalf("%s: %v", q.Text, err)
	}
	return got
}

// scriptOneLine fails unless msg is one line mentioning every want.
func scriptOneLine(t *testing.T, msg string, want ...string) {
	t.Helper()
	if strings.Contains(msg, "\n") {
		t.Errorf("message is not one line:\n%s", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q does not say %q", msg, w)
		}
	}
}

// Every protocol writes and reads int, float, string and NULL values, and
// keep sees the columns, the last row as text and the row count.
func TestScriptProtocols(t *testing.T) {
	d := scriptDB(t, "sledge_script_protocols")
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			c := connectScript(t, context.Background(), d, p)
			if want := workload.ModePrepared; c.Mode() != want && !(p == workload.ProtoSimple && c.Mode() == workload.ModeClient) {
				t.Errorf("Mode() = %v", c.Mode())
			}
			if c.Placeholder(2) != "?" {
				t.Errorf("Placeholder(2) = %q", c.Placeholder(2))
			}
			table := "t_" + p.String()
			mustRun(t, c, sqlq(t, p, 1, "CREATE TABLE "+table+" (k BIGINT PRIMARY KEY, f DOUBLE, s VARCHAR(20), n INT, r FLOAT)"))
			ins := "INSERT INTO " + table + " (k, f, s, n, r) VALUES (?, ?, ?, ?, ?)"
			for k := int64(1); k <= 3; k++ {
				if got := mustRun(t, c, sqlq(t, p, 2, ins, k, float64(k)+0.25, fmt.Sprintf("it's %d", k), nil, 0.5)); got != nil {
					t.Errorf("INSERT gave results %v", got)
				}
			}
			mustRun(t, c, sqlq(t, p, 2, ins, int64(9), 1e20, "", int64(-1), 1e7))
			mustRun(t, c, sqlq(t, p, 3, "UPDATE "+table+" SET f = f * ?, n = ? WHERE k = ?", 2.0, int64(7), int64(2)))
			sel := "SELECT k, f, s, n FROM " + table + " WHERE k >= ? AND k < 9 ORDER BY k"
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
			got := mustRun(t, c, sqlq(t, p, 5, "SELECT f, n, s, r FROM "+table+" WHERE k = ?", int64(2)))
			if want := []result{{0, []string{"f", "n", "s", "r"}, []any{"4.5", "7", "it's 2", "0.5"}, 1}}; !reflect.DeepEqual(got, want) {
				t.Errorf("updated row: got %v, want %v", got, want)
			}
			// Floats print as PostgreSQL prints them.
			got = mustRun(t, c, sqlq(t, p, 5, "SELECT f, n, s, r FROM "+table+" WHERE k = ?", int64(9)))
			if want := []result{{0, []string{"f", "n", "s", "r"}, []any{"1e+20", "-1", "", "1e+07"}, 1}}; !reflect.DeepEqual(got, want) {
				t.Errorf("big floats: got %v, want %v", got, want)
			}
			if err := c.RunSQL(context.Background(), sqlq(t, p, 4, sel, int64(1)), nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A compound command of the simple protocol gives one result per
// statement; keep sees those with columns, with their index.
func TestScriptCompound(t *testing.T) {
	d := scriptDB(t, "sledge_script_compound")
	p := workload.ProtoSimple
	c := connectScript(t, context.Background(), d, p)
	mustRun(t, c, sqlq(t, p, 1, "CREATE TABLE c (k INT)"))
	got := mustRun(t, c, sqlq(t, p, 2, "SELECT 1 AS a; INSERT INTO c VALUES (1), (2); SELECT k, NULL AS z FROM c ORDER BY k; SELECT 1 AS b FROM DUAL WHERE 1 = 0"))
	want := []result{
		{0, []string{"a"}, []any{"1"}, 1},
		{2, []string{"k", "z"}, []any{"2", nil}, 2},
		{3, []string{"b"}, nil, 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// The driver skips the results of statements without rows: the index
	// still counts them.
	got = mustRun(t, c, sqlq(t, p, 5, "DELETE FROM c WHERE k > 2; (SELECT MAX(k) AS m FROM c); UPDATE c SET k = k WHERE k = 0"))
	if want := []result{{1, []string{"m"}, []any{"2"}, 1}}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// An error stops the compound; with autocommit the statements before
	// it stay. With and without keep.
	for i, keep := range []bool{true, false} {
		q := sqlq(t, p, 3, fmt.Sprintf("INSERT INTO c VALUES (%d); SELECT * FROM nope; INSERT INTO c VALUES (99)", 3+i))
		var err error
		if keep {
			_, err = run(t, c, q)
		} else {
			err = c.RunSQL(context.Background(), q, nil)
		}
		if !errors.Is(err, workload.ErrNoSchema) {
			t.Errorf("keep %v: err = %v, want the missing table", keep, err)
		}
	}
	if got := mustRun(t, c, sqlq(t, p, 4, "SELECT COUNT(*) AS n FROM c")); got[0].Last[0] != "4" {
		t.Errorf("rows after the failed compounds: %v, want 4", got)
	}
}

// sessionStatus reads a status counter of c's own session.
func sessionStatus(t *testing.T, c workload.ScriptConn, name string) string {
	t.Helper()
	got := mustRun(t, c, &workload.SQLQuery{ID: 1000, Text: "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = '" + name + "'"})
	return got[0].Last[0].(string)
}

// prepared prepares each command once per session; extended prepares it
// at every execution (and closes it). Round trips: 1 per execution, plus
// the prepare (prepared: the first time; extended: every time).
func TestScriptPrepares(t *testing.T) {
	d := scriptDB(t, "sledge_script_prepares")
	for _, p := range protocols[1:] {
		t.Run(p.String(), func(t *testing.T) {
			wire := new(metrics.WireCounts)
			c := connectScript(t, metrics.WithWire(context.Background(), wire), d, p)
			if w, ok := c.(metrics.Wired); !ok || w.Wire() != wire {
				t.Fatal("the session does not report its wire counter")
			}
			table := "u_" + p.String()
			mustRun(t, c, sqlq(t, p, 1, "CREATE TABLE "+table+" (k INT PRIMARY KEY, v INT)"))
			mustRun(t, c, sqlq(t, p, 2, "INSERT INTO "+table+" VALUES (1, 0)"))
			sessionStatus(t, c, "COM_STMT_PREPARE") // prepares the status query itself
			before := sessionStatus(t, c, "COM_STMT_PREPARE")
			upd := sqlq(t, p, 42, "UPDATE "+table+" SET v = v + ? WHERE k = ?;", int64(1), int64(1))
			for i := range 3 {
				w0 := wire.Load()
				mustRun(t, c, upd)
				trips := wire.Load().Sub(w0).RoundTrips
				want := int64(1)
				if p == workload.ProtoExtended || i == 0 {
					want = 2
				}
				if trips != want {
					t.Errorf("execution %d: %d round trips, want %d", i, trips, want)
				}
			}
			after := sessionStatus(t, c, "COM_STMT_PREPARE")
			var b, a int
			fmt.Sscan(before, &b)
			fmt.Sscan(after, &a)
			want := 1 // the UPDATE, once
			if p == workload.ProtoExtended {
				want = 4 // the UPDATE three times and the status query once more
			}
			if a-b != want {
				t.Errorf("Com_stmt_prepare went from %d to %d, want %d more", b, a, want)
			}
			if got := mustRun(t, c, sqlq(t, p, 3, "SELECT v FROM "+table)); got[0].Last[0] != "3" {
				t.Errorf("v = %v, want 3", got[0].Last)
			}
		})
	}
}

// A simple-protocol SELECT 1 is exactly one round trip.
func TestScriptRoundTrips(t *testing.T) {
	d := scriptDB(t, "sledge_script_trips")
	wire := new(metrics.WireCounts)
	c := connectScript(t, metrics.WithWire(context.Background(), wire), d, workload.ProtoSimple)
	for _, keep := range []bool{false, true} {
		before := wire.Load()
		q := &workload.SQLQuery{ID: 1, Text: "SELECT 1"}
		var err error
		if keep {
			_, err = run(t, c, q)
		} else {
			err = c.RunSQL(context.Background(), q, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		if w := wire.Load().Sub(before); w.RoundTrips != 1 || w.BytesSent == 0 {
			t.Errorf("keep %v: SELECT 1 cost %+v, want exactly 1 round trip", keep, w)
		}
	}
}

// InTransaction follows BEGIN … COMMIT, also inside a compound, and a
// failed statement inside a transaction until Rollback.
func TestScriptTransaction(t *testing.T) {
	d := scriptDB(t, "sledge_script_tx")
	ctx := context.Background()
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			c := connectScript(t, ctx, d, p)
			table := "tx_" + p.String()
			mustRun(t, c, sqlq(t, p, 1, "CREATE TABLE "+table+" (k INT PRIMARY KEY)"))
			for _, begin := range []string{"BEGIN", "START TRANSACTION", "begin work"} {
				if c.InTransaction() {
					t.Fatal("in a transaction before " + begin)
				}
				mustRun(t, c, sqlq(t, p, 2, begin))
				if !c.InTransaction() {
					t.Errorf("not in a transaction after %s", begin)
				}
				mustRun(t, c, sqlq(t, p, 3, "COMMIT"))
			}
			mustRun(t, c, sqlq(t, p, 2, "BEGIN"))
			mustRun(t, c, sqlq(t, p, 4, "INSERT INTO "+table+" VALUES (?)", int64(1)))
			mustRun(t, c, sqlq(t, p, 5, "SAVEPOINT s1"))
			mustRun(t, c, sqlq(t, p, 6, "ROLLBACK TO SAVEPOINT s1"))
			if !c.InTransaction() {
				t.Error("ROLLBACK TO SAVEPOINT ended the transaction")
			}
			mustRun(t, c, sqlq(t, p, 3, "COMMIT"))
			if c.InTransaction() {
				t.Error("in a transaction after COMMIT")
			}
			mustRun(t, c, sqlq(t, p, 2, "BEGIN"))
			mustRun(t, c, sqlq(t, p, 4, "INSERT INTO "+table+" VALUES (?)", int64(2)))
			if _, err := run(t, c, sqlq(t, p, 4, "INSERT INTO "+table+" VALUES (?)", int64(1))); err == nil {
				t.Fatal("duplicate key accepted")
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
			if got := mustRun(t, c, sqlq(t, p, 7, "SELECT COUNT(*) AS n FROM "+table)); got[0].Last[0] != "1" {
				t.Errorf("rows = %v, want 1: the rolled back insert stayed", got[0].Last)
			}
			if p == workload.ProtoSimple {
				mustRun(t, c, sqlq(t, p, 8, "BEGIN; INSERT INTO "+table+" VALUES (3); COMMIT"))
				if c.InTransaction() {
					t.Error("in a transaction after a compound BEGIN; …; COMMIT")
				}
				_, err := run(t, c, sqlq(t, p, 9, "BEGIN; INSERT INTO "+table+" VALUES (3); COMMIT"))
				if err == nil || !c.InTransaction() {
					t.Errorf("compound failing inside its transaction: err %v, in transaction %v", err, c.InTransaction())
				}
				if err := c.Rollback(ctx); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// Two sessions locking rows in opposite orders: one gets the deadlock,
// which is ErrRetry. A lock wait timeout is not retried (as pgbench).
func TestScriptDeadlockIsRetry(t *testing.T) {
	d := scriptDB(t, "sledge_script_deadlock")
	ctx := context.Background()
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			a, b := connectScript(t, ctx, d, p), connectScript(t, ctx, d, p)
			table := "dl_" + p.String()
			mustRun(t, a, sqlq(t, p, 1, "CREATE TABLE "+table+" (k INT PRIMARY KEY, v INT)"))
			mustRun(t, a, sqlq(t, p, 2, "INSERT INTO "+table+" VALUES (1, 0), (2, 0)"))
			upd := "UPDATE " + table + " SET v = v + 1 WHERE k = ?"
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
				var me *gomysql.MySQLError
				if !errors.Is(err, workload.ErrRetry) || !errors.As(err, &me) || me.Number != 1213 {
					t.Errorf("session %d: err = %v, want a retryable deadlock", i, err)
				}
				scriptOneLine(t, err.Error(), "1213", "UPDATE "+table)
			}
			if failed != 1 {
				t.Fatalf("%d sessions failed, want 1: %v", failed, errs)
			}
			for _, c := range []workload.ScriptConn{a, b} {
				if err := c.Rollback(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if p != workload.ProtoSimple {
				return
			}
			mustRun(t, b, sqlq(t, p, 3, "BEGIN"))
			mustRun(t, b, sqlq(t, p, 4, upd, int64(1)))
			mustRun(t, a, sqlq(t, p, 5, "SET SESSION innodb_lock_wait_timeout = 1"))
			_, err := run(t, a, sqlq(t, p, 4, upd, int64(1)))
			var me *gomysql.MySQLError
			if !errors.As(err, &me) || me.Number != 1205 || errors.Is(err, workload.ErrRetry) {
				t.Errorf("lock wait timeout: err = %v, want a 1205 that is not ErrRetry", err)
			}
			if err := b.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// MariaDB's snapshot isolation refuses a lost update with error 1020,
// its serialization failure: ErrRetry, as PostgreSQL's 40001.
func TestScriptSnapshotConflictIsRetry(t *testing.T) {
	d := scriptDB(t, "sledge_script_snapshot")
	ctx := context.Background()
	p := workload.ProtoPrepared
	a, b := connectScript(t, ctx, d, p), connectScript(t, ctx, d, p)
	mustRun(t, a, sqlq(t, p, 1, "CREATE TABLE sn (k INT PRIMARY KEY, v INT)"))
	mustRun(t, a, sqlq(t, p, 2, "INSERT INTO sn VALUES (1, 0)"))
	if _, err := run(t, a, sqlq(t, workload.ProtoSimple, 3, "SET SESSION innodb_snapshot_isolation = ON")); err != nil {
		t.Skipf("no innodb_snapshot_isolation on this server: %v", err)
	}
	mustRun(t, a, sqlq(t, p, 4, "BEGIN"))
	mustRun(t, a, sqlq(t, p, 5, "SELECT v FROM sn WHERE k = ?", int64(1))) // a's snapshot
	upd := sqlq(t, p, 6, "UPDATE sn SET v = v + 1 WHERE k = ?", int64(1))
	mustRun(t, b, upd)
	_, err := run(t, a, upd)
	var me *gomysql.MySQLError
	if !errors.Is(err, workload.ErrRetry) || !errors.As(err, &me) || me.Number != 1020 {
		t.Fatalf("err = %v, want a retryable 1020", err)
	}
	if err := a.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
}

// A missing table is ErrNoSchema in every protocol.
func TestScriptNoSchema(t *testing.T) {
	d := scriptDB(t, "sledge_script_noschema")
	for _, p := range protocols {
		c := connectScript(t, context.Background(), d, p)
		_, err := run(t, c, sqlq(t, p, 1, "SELECT abalance FROM pgbench_accounts\nWHERE aid = ?", int64(1)))
		if !errors.Is(err, workload.ErrNoSchema) || errors.Is(err, workload.ErrRetry) {
			t.Errorf("%s: err = %v, want ErrNoSchema", p, err)
			continue
		}
		scriptOneLine(t, err.Error(), "1146", "pgbench_accounts")
		// A syntax error quotes the statement, newlines and all: still one line.
		_, err = run(t, c, sqlq(t, p, 2, "SELEC 1\nFROM DUAL"))
		if err == nil {
			t.Fatal("syntax error accepted")
		}
		scriptOneLine(t, err.Error(), "1064")
	}
}

func TestScriptSupports(t *testing.T) {
	d := scriptDB(t, "sledge_script_supports")
	for _, p := range protocols {
		if err := d.ScriptSupports(p, false); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		err := d.ScriptSupports(p, true)
		if err == nil {
			t.Fatalf("%s with pipelines accepted", p)
		}
		scriptOneLine(t, err.Error(), `pipelines (\startpipeline) work only on PostgreSQL`)
	}
	c := connectScript(t, context.Background(), d, workload.ProtoPrepared)
	if _, ok := c.(workload.Pipeliner); ok {
		t.Error("a MariaDB script session claims to pipeline")
	}
	if _, err := c.Exec(context.Background(), "neword.district"); err == nil || !strings.Contains(err.Error(), "named statements are not available in a script session") {
		t.Errorf("Exec: %v", err)
	}
}

// A session whose connection the server kills fails with ErrConnLost and
// says it is broken, so the engine reconnects.
func TestScriptConnLost(t *testing.T) {
	d := scriptDB(t, "sledge_script_connlost")
	ctx := context.Background()
	for _, p := range protocols {
		c := connectScript(t, ctx, d, p)
		id := mustRun(t, c, sqlq(t, p, 1, "SELECT CONNECTION_ID() AS id"))[0].Last[0].(string)
		admin(t, need(t), "KILL CONNECTION "+id)
		_, err := run(t, c, sqlq(t, p, 2, "SELECT 1"))
		if !errors.Is(err, workload.ErrConnLost) || errors.Is(err, workload.ErrRetry) {
			t.Errorf("%s: err = %v, want ErrConnLost", p, err)
		}
		if b, ok := c.(workload.Breakable); !ok || !b.Broken() {
			t.Errorf("%s: the session does not say it is broken", p)
		}
	}
}

// A session that cannot log in says so on one line without the password.
func TestScriptConnectError(t *testing.T) {
	s := need(t)
	d, err := db.Open(context.Background(), tcpURL(s, s.User, "wrong-secret", "mysql"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = d.(db.ScriptDB).ConnectScript(context.Background(), workload.ProtoSimple)
	if err == nil {
		t.Fatal("connected with a wrong password")
	}
	scriptOneLine(t, err.Error(), "refused user")
	if strings.Contains(err.Error(), "wrong-secret") {
		t.Errorf("message shows the password: %s", err)
	}
}
