package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

var protocols = []workload.Protocol{workload.ProtoSimple, workload.ProtoExtended, workload.ProtoPrepared}

func connectScript(t *testing.T, d *DB, p workload.Protocol) *scriptConn {
	t.Helper()
	c, err := d.ConnectScript(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return c.(*scriptConn)
}

// sqlq makes the SQLQuery the script interpreter would: values pasted in
// for the simple protocol, ?n placeholders bound otherwise.
func sqlq(t *testing.T, p workload.Protocol, id int, text string, args ...any) *workload.SQLQuery {
	t.Helper()
	if p != workload.ProtoSimple {
		return &workload.SQLQuery{ID: id, Text: text, Args: args}
	}
	s, err := db.Interpolate(text, db.QuestionNumbered, args)
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

// writerHeld reports whether some session holds the writer queue.
func writerHeld(d *DB) bool { return len(d.writer) == 1 }

// Every protocol writes and reads int, float, string and NULL values, and
// keep sees the columns, the last row as text and the row count.
func TestScriptProtocols(t *testing.T) {
	d := openTest(t, "")
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			c := connectScript(t, d, p)
			if want := workload.ModePrepared; c.Mode() != want && !(p == workload.ProtoSimple && c.Mode() == workload.ModeClient) {
				t.Errorf("Mode() = %v", c.Mode())
			}
			if c.Placeholder(2) != "?2" {
				t.Errorf("Placeholder(2) = %q", c.Placeholder(2))
			}
			table := "t_" + p.String()
			mustRun(t, c, sqlq(t, p, 1, "CREATE TABLE "+table+" (k INTEGER PRIMARY KEY, f REAL, s TEXT, n INTEGER, b BOOLEAN, d DATE)"))
			ins := "INSERT INTO " + table + " (k, f, s, n, b, d) VALUES (?1, ?2, ?3, ?4, ?5, '2026-11-22 10:00:00')"
			for k := int64(1); k <= 3; k++ {
				if got := mustRun(t, c, sqlq(t, p, 2, ins, k, float64(k)+0.25, fmt.Sprintf("it's %d", k), nil, k == 2)); got != nil {
					t.Errorf("INSERT gave results %v", got)
				}
			}
			mustRun(t, c, sqlq(t, p, 2, ins, int64(9), 1e20, "", int64(-1), false))
			mustRun(t, c, sqlq(t, p, 3, "UPDATE "+table+" SET f = f * ?1, n = ?2 WHERE k = ?3", 2.0, int64(7), int64(2)))
			if writerHeld(d) {
				t.Fatal("the writer queue is still held after single writes")
			}
			sel := "SELECT k, f, s, n FROM " + table + " WHERE k >= ?1 AND k < 9 ORDER BY k"
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
			got := mustRun(t, c, sqlq(t, p, 5, "SELECT f, n, s, b, d FROM "+table+" WHERE k = ?1", int64(2)))
			if want := []result{{0, []string{"f", "n", "s", "b", "d"}, []any{"4.5", "7", "it's 2", "1", "2026-11-22 10:00:00"}, 1}}; !reflect.DeepEqual(got, want) {
				t.Errorf("updated row: got %v, want %v", got, want)
			}
			got = mustRun(t, c, sqlq(t, p, 5, "SELECT f, n, s, b, d FROM "+table+" WHERE k = ?1", int64(9)))
			if want := []result{{0, []string{"f", "n", "s", "b", "d"}, []any{"1e+20", "-1", "", "0", "2026-11-22 10:00:00"}, 1}}; !reflect.DeepEqual(got, want) {
				t.Errorf("big float: got %v, want %v", got, want)
			}
			if err := c.RunSQL(context.Background(), sqlq(t, p, 4, sel, int64(1)), nil); err != nil {
				t.Fatal(err)
			}
			// The prepared protocol keeps one statement per command; the
			// others keep none.
			want := map[workload.Protocol]int{workload.ProtoPrepared: 5}[p]
			if len(c.stmts) != want {
				t.Errorf("%d statements kept, want %d", len(c.stmts), want)
			}
		})
	}
}

// A compound command of the simple protocol runs statement by statement;
// keep sees those with columns, with their index.
func TestScriptCompound(t *testing.T) {
	d := openTest(t, "")
	p := workload.ProtoSimple
	c := connectScript(t, d, p)
	mustRun(t, c, sqlq(t, p, 1, "CREATE TABLE c (k INTEGER)"))
	got := mustRun(t, c, sqlq(t, p, 2, "SELECT 1 AS a; INSERT INTO c VALUES (1), (2); SELECT k, NULL AS z FROM c ORDER BY k; SELECT 1 AS b WHERE 0"))
	want := []result{
		{0, []string{"a"}, []any{"1"}, 1},
		{2, []string{"k", "z"}, []any{"2", nil}, 2},
		{3, []string{"b"}, nil, 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	mustRun(t, c, sqlq(t, p, 3, "BEGIN; INSERT INTO c VALUES (3); END"))
	if c.InTransaction() || writerHeld(d) {
		t.Error("a compound BEGIN; …; END left the transaction open")
	}
	if got := mustRun(t, c, sqlq(t, p, 4, "SELECT count(*) AS n FROM c")); got[0].Last[0] != "3" {
		t.Errorf("rows: %v, want 3", got)
	}
}

// Every BEGIN a script may write opens a transaction in the writer queue
// (BEGIN IMMEDIATE); COMMIT, END and ROLLBACK end it and leave the queue;
// an error inside leaves it open until Rollback, which undoes it.
func TestScriptTransaction(t *testing.T) {
	d := openTest(t, "")
	ctx := context.Background()
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			c := connectScript(t, d, p)
			table := "tx_" + p.String()
			mustRun(t, c, sqlq(t, p, 1, "CREATE TABLE "+table+" (k INTEGER PRIMARY KEY)"))
			for i, pair := range [][2]string{
				{"BEGIN", "COMMIT"}, {"BEGIN TRANSACTION;", "END"}, {"START TRANSACTION", "commit work"},
				{"begin deferred", "END TRANSACTION"}, {"BEGIN IMMEDIATE", "ROLLBACK"}, {"  -- a comment\nBEGIN EXCLUSIVE", "ABORT"},
			} {
				if c.InTransaction() || writerHeld(d) {
					t.Fatalf("in a transaction before %s", pair[0])
				}
				mustRun(t, c, sqlq(t, p, 10+i, pair[0]))
				if !c.InTransaction() || !writerHeld(d) {
					t.Errorf("%s: in transaction %v, writer held %v", pair[0], c.InTransaction(), writerHeld(d))
				}
				mustRun(t, c, sqlq(t, p, 20+i, pair[1]))
			}
			mustRun(t, c, sqlq(t, p, 2, "BEGIN"))
			mustRun(t, c, sqlq(t, p, 3, "INSERT INTO "+table+" VALUES (?1)", int64(1)))
			mustRun(t, c, sqlq(t, p, 4, "COMMIT"))
			mustRun(t, c, sqlq(t, p, 2, "BEGIN"))
			mustRun(t, c, sqlq(t, p, 3, "INSERT INTO "+table+" VALUES (?1)", int64(2)))
			if _, err := run(t, c, sqlq(t, p, 3, "INSERT INTO "+table+" VALUES (?1)", int64(1))); err == nil {
				t.Fatal("duplicate key accepted")
			}
			if !c.InTransaction() || !writerHeld(d) {
				t.Error("the transaction or the writer queue was let go after an error inside it")
			}
			if err := c.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			if c.InTransaction() || writerHeld(d) {
				t.Error("still in a transaction after Rollback")
			}
			if err := c.Rollback(ctx); err != nil {
				t.Errorf("Rollback without a transaction: %v", err)
			}
			if got := mustRun(t, c, sqlq(t, p, 5, "SELECT count(*) AS n FROM "+table)); got[0].Last[0] != "1" {
				t.Errorf("rows = %v, want 1: the rolled back insert stayed", got[0].Last)
			}
			// COMMIT without a transaction is SQLite's error.
			if _, err := run(t, c, sqlq(t, p, 4, "COMMIT")); err == nil || writerHeld(d) {
				t.Errorf("COMMIT outside a transaction: %v", err)
			}
			// Close ends an open transaction and leaves the queue.
			c2, err := d.ConnectScript(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			mustRun(t, c2, sqlq(t, p, 2, "BEGIN"))
			if err := c2.Close(ctx); err != nil || writerHeld(d) {
				t.Errorf("Close in a transaction: %v, writer held %v", err, writerHeld(d))
			}
		})
	}
}

// Writers of the process queue for the one write lock instead of failing
// on it: a write outside a transaction waits for a script's transaction
// even with a 1 ms busy_timeout; a read does not wait.
func TestScriptWriterQueue(t *testing.T) {
	d := openTest(t, "busy_timeout=1")
	ctx := context.Background()
	p := workload.ProtoPrepared
	a, b := connectScript(t, d, p), connectScript(t, d, p)
	mustRun(t, a, sqlq(t, p, 1, "CREATE TABLE q (k INTEGER)"))
	mustRun(t, a, sqlq(t, p, 2, "BEGIN"))
	mustRun(t, a, sqlq(t, p, 3, "INSERT INTO q VALUES (?1)", int64(1)))
	if got := mustRun(t, b, sqlq(t, p, 4, "SELECT count(*) AS n FROM q")); got[0].Last[0] != "0" {
		t.Errorf("reader saw %v", got)
	}
	done := make(chan error, 1)
	go func() { done <- b.RunSQL(ctx, sqlq(t, p, 3, "INSERT INTO q VALUES (?1)", int64(2)), nil) }()
	select {
	case err := <-done:
		t.Fatalf("the write did not wait for the transaction: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	mustRun(t, a, sqlq(t, p, 5, "COMMIT"))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := mustRun(t, b, sqlq(t, p, 4, "SELECT count(*) AS n FROM q")); got[0].Last[0] != "2" {
		t.Errorf("rows: %v, want 2", got)
	}
}

// SQLITE_BUSY that still happens (another process holds the lock) is
// ErrRetry, and the failed BEGIN leaves the writer queue.
func TestScriptBusyIsRetry(t *testing.T) {
	ctx := context.Background()
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			d := openTest(t, "busy_timeout=1")
			c := connectScript(t, d, p)
			mustRun(t, c, sqlq(t, p, 1, "CREATE TABLE b (k INTEGER)"))
			hold := sql.OpenDB(newConnector(d.path, d.set))
			defer hold.Close()
			hc, err := hold.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer hc.Close()
			if _, err := hc.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
				t.Fatal(err)
			}
			for _, q := range []*workload.SQLQuery{sqlq(t, p, 2, "BEGIN"), sqlq(t, p, 3, "INSERT INTO b VALUES (?1)", int64(1))} {
				_, err := run(t, c, q)
				if !errors.Is(err, workload.ErrRetry) || errors.Is(err, workload.ErrNoSchema) {
					t.Errorf("%s: err = %v, want ErrRetry", q.Text, err)
				}
				if c.InTransaction() || writerHeld(d) {
					t.Errorf("%s: in transaction %v, writer held %v after the failure", q.Text, c.InTransaction(), writerHeld(d))
				}
			}
			if _, err := hc.ExecContext(ctx, "ROLLBACK"); err != nil {
				t.Fatal(err)
			}
			mustRun(t, c, sqlq(t, p, 2, "BEGIN"))
			mustRun(t, c, sqlq(t, p, 4, "COMMIT"))
		})
	}
}

// A missing table is ErrNoSchema in every protocol, in one line.
func TestScriptNoSchema(t *testing.T) {
	d := openTest(t, "")
	for _, p := range protocols {
		c := connectScript(t, d, p)
		_, err := run(t, c, sqlq(t, p, 1, "SELECT abalance FROM pgbench_accounts\nWHERE aid = ?1", int64(1)))
		if !errors.Is(err, workload.ErrNoSchema) || errors.Is(err, workload.ErrRetry) {
			t.Errorf("%s: err = %v, want ErrNoSchema", p, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "pgbench_accounts") {
			t.Errorf("%s: message %q", p, msg)
		}
	}
}

func TestScriptSupports(t *testing.T) {
	d := openTest(t, "")
	for _, p := range protocols {
		if err := d.ScriptSupports(p, false); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		if err := d.ScriptSupports(p, true); err == nil || err.Error() != `pipelines (\startpipeline) work only on PostgreSQL` {
			t.Errorf("%s with pipelines: %v", p, err)
		}
	}
	var c workload.ScriptConn = connectScript(t, d, workload.ProtoSimple)
	if _, ok := c.(workload.Pipeliner); ok {
		t.Error("a SQLite script session claims to pipeline")
	}
	if _, err := c.Exec(context.Background(), "counter.set", int64(1)); err == nil || !strings.Contains(err.Error(), "named statements are not available in a script session") {
		t.Errorf("Exec: %v", err)
	}
}

func TestClassifyStatement(t *testing.T) {
	for s, want := range map[string]stmtKind{
		"SELECT 1":                               stRead,
		"  /* x */ values (1)":                   stRead,
		"WITH a AS (SELECT 1) SELECT * FROM a":   stRead,
		"WITH a AS (SELECT 1) DELETE FROM t":     stWrite,
		"UPDATE t SET v = 1":                     stWrite,
		"BEGIN":                                  stBegin,
		"begin deferred transaction;":            stBegin,
		"START TRANSACTION":                      stBegin,
		"BEGIN ISOLATION LEVEL SERIALIZABLE":     stWrite, // SQLite's syntax error
		"COMMIT":                                 stCommit,
		"END":                                    stCommit,
		"end transaction ; -- done":              stCommit,
		"ROLLBACK":                               stRollback,
		"ABORT":                                  stRollback,
		"ROLLBACK TO SAVEPOINT s":                stWrite,
		"SAVEPOINT s":                            stWrite,
		"-- only a comment\nSELECT 2":            stRead,
		"PRAGMA user_version = 3":                stWrite,
		"EXPLAIN QUERY PLAN SELECT * FROM t":     stRead,
		"INSERT INTO t SELECT * FROM u":          stWrite,
		"select * from t where s = 'BEGIN'":      stRead,
		"COMMIT AND CHAIN":                       stWrite,
		"START TRANSACTION READ ONLY":            stWrite,
		"/* unterminated":                        stWrite,
		"WITH x AS (SELECT 1) INSERT INTO t ...": stWrite,
	} {
		if got := classifyStatement(s); got != want {
			t.Errorf("classifyStatement(%q) = %d, want %d", s, got, want)
		}
	}
}
