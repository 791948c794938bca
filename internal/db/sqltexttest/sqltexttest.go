// Package sqltexttest holds the tests every database package runs on its
// workload.SQLConn (db.SQLDB.ConnectSQL) against a real database: the
// same statements and checks, with the answers each dialect gives.
package sqltexttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// Dialect is what Run needs of a database.
type Dialect struct {
	// DB opens the database under test: an empty one of its own.
	DB db.SQLDB
	// Long is a query that runs for ten seconds or more.
	Long string
	// CancelKeeps: the session that ran Long, cancelled, still works
	// (PostgreSQL cancels the statement, the MySQL driver closes the
	// connection).
	CancelKeeps bool
	// Rows is what "SELECT k, amount, name, day, note FROM sqlt ORDER BY
	// k" gives for the rows Run inserts (nil: NULL).
	Rows [][]any
	// Terminate ends the server session whose id (db.ServerSessioner) is
	// its %d; "": no server.
	Terminate string
	// Analyze updates sqlt's statistics; "" is "ANALYZE sqlt".
	Analyze string
	// Sum is what "SELECT count(*), sum(amount) FROM sqlt" gives.
	Sum []any
}

// Connect opens a session that closes at the end of the test.
func Connect(t testing.TB, d db.SQLDB) workload.SQLConn {
	t.Helper()
	c, err := d.ConnectSQL(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// Exec runs statements on c and fails the test on an error.
func Exec(t testing.TB, c workload.SQLConn, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if err := c.ExecSQL(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// Query runs text on c and returns its rows, values as strings (nil for
// NULL), and the count QuerySQL returned.
func Query(ctx context.Context, c workload.SQLConn, text string) ([][]any, int64, error) {
	var rows [][]any
	n, err := c.QuerySQL(ctx, text, func(vals [][]byte) error {
		r := make([]any, len(vals))
		for i, v := range vals {
			if v != nil {
				r[i] = string(v)
			}
		}
		rows = append(rows, r)
		return nil
	})
	return rows, n, err
}

// MustQuery is Query that fails the test on an error or a count that is
// not the number of rows.
func MustQuery(t testing.TB, c workload.SQLConn, text string) [][]any {
	t.Helper()
	rows, n, err := Query(context.Background(), c, text)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	if n != int64(len(rows)) {
		t.Fatalf("%s: count %d for %d rows", text, n, len(rows))
	}
	return rows
}

// Count is the count(*) of table as seen by c.
func Count(t testing.TB, c workload.SQLConn, table string) string {
	t.Helper()
	rows := MustQuery(t, c, "SELECT count(*) FROM "+table)
	if len(rows) != 1 || len(rows[0]) != 1 {
		t.Fatalf("count(*) gave %v", rows)
	}
	s, _ := rows[0][0].(string)
	return s
}

// counter is a query of the numbers 1 to n (at most a million), in
// order, in every dialect: MariaDB stops a recursive CTE after 1000
// iterations (max_recursive_iterations), hence the join.
func counter(n int) string {
	return "WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < 999) " +
		"SELECT a.i * 1000 + b.i + 1 AS n FROM r a, r b WHERE a.i * 1000 + b.i < " + strconv.Itoa(n) + " ORDER BY n"
}

var errStop = errors.New("stop here")

// Run runs the table of checks on sessions of d.DB.
func Run(t *testing.T, d Dialect) {
	c := Connect(t, d.DB)
	Exec(t, c,
		"CREATE TABLE sqlt (k int PRIMARY KEY, amount decimal(15,2), name varchar(25), day date, note varchar(10))",
		"INSERT INTO sqlt VALUES (1, 12.50, 'one', '1998-09-02', NULL)",
		"INSERT INTO sqlt VALUES (2, -3.00, 'it''s two', '1992-01-01', 'x')",
		"INSERT INTO sqlt VALUES (3, NULL, NULL, NULL, NULL)",
	)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"mode", func(t *testing.T) {
			if m := c.Mode(); m != workload.ModeClient {
				t.Errorf("Mode() = %v, want client", m)
			}
			if _, err := c.Exec(ctx, "x"); err == nil {
				t.Error("Exec of a named statement did not refuse")
			}
			if err := c.QueryRow(ctx, "x").Scan(); err == nil {
				t.Error("QueryRow of a named statement did not refuse")
			}
			if _, err := c.Query(ctx, "x"); err == nil {
				t.Error("Query of a named statement did not refuse")
			}
			if err := c.InTx(ctx, workload.TxOptions{}, func(context.Context) error { return nil }); err == nil {
				t.Error("InTx did not refuse")
			}
		}},
		{"values", func(t *testing.T) {
			got := MustQuery(t, c, "SELECT k, amount, name, day, note FROM sqlt ORDER BY k")
			if !equal(got, d.Rows) {
				t.Errorf("rows\n got %q\nwant %q", got, d.Rows)
			}
		}},
		{"aggregate", func(t *testing.T) {
			got := MustQuery(t, c, "SELECT count(*), sum(amount) FROM sqlt")
			if want := [][]any{d.Sum}; !equal(got, want) {
				t.Errorf("rows\n got %q\nwant %q", got, want)
			}
		}},
		{"no rows", func(t *testing.T) {
			if got := MustQuery(t, c, "SELECT k FROM sqlt WHERE k < 0"); len(got) != 0 {
				t.Errorf("rows %q", got)
			}
		}},
		{"many rows", func(t *testing.T) {
			got := MustQuery(t, c, counter(10000))
			if len(got) != 10000 || got[0][0] != "1" || got[9999][0] != "10000" {
				t.Errorf("%d rows, first %q", len(got), got[:min(len(got), 1)])
			}
		}},
		{"missing table", func(t *testing.T) {
			_, _, err := Query(ctx, c, "SELECT k\nFROM no_such_table")
			if !errors.Is(err, workload.ErrNoSchema) {
				t.Errorf("query: %v, want ErrNoSchema", err)
			} else if !strings.Contains(err.Error(), "SELECT k…") {
				t.Errorf("query: %v does not name the statement's first line", err)
			}
			if err := c.ExecSQL(ctx, "INSERT INTO no_such_table VALUES (1)"); !errors.Is(err, workload.ErrNoSchema) {
				t.Errorf("exec: %v, want ErrNoSchema", err)
			}
			Count(t, c, "sqlt") // still usable
		}},
		{"syntax error", func(t *testing.T) {
			if err := c.ExecSQL(ctx, "SELEKT 1"); err == nil {
				t.Error("no error")
			} else if errors.Is(err, workload.ErrNoSchema) || errors.Is(err, workload.ErrConnLost) {
				t.Errorf("%v: classified as %v", err, err)
			}
			Count(t, c, "sqlt")
		}},
		{"row error stops", func(t *testing.T) {
			calls := 0
			n, err := c.QuerySQL(ctx, counter(100000), func([][]byte) error {
				if calls++; calls == 5 {
					return errStop
				}
				return nil
			})
			if !errors.Is(err, errStop) || calls != 5 || n != 4 {
				t.Errorf("err %v after %d calls, count %d; want errStop after 5 calls, count 4", err, calls, n)
			}
			if got := MustQuery(t, c, counter(3)); len(got) != 3 {
				t.Errorf("afterwards: %q", got)
			}
		}},
		{"commit", func(t *testing.T) {
			other := Connect(t, d.DB)
			Exec(t, c, "BEGIN", "INSERT INTO sqlt VALUES (10, 1.00, 'ten', '1995-03-15', NULL)")
			if got := Count(t, other, "sqlt"); got != "3" {
				t.Errorf("another session sees %s rows before the commit", got)
			}
			Exec(t, c, "COMMIT")
			if got := Count(t, other, "sqlt"); got != "4" {
				t.Errorf("another session sees %s rows after the commit, want 4", got)
			}
		}},
		{"rollback", func(t *testing.T) {
			Exec(t, c, "BEGIN", "INSERT INTO sqlt VALUES (11, 1.00, 'eleven', '1995-03-15', NULL)", "DELETE FROM sqlt WHERE k = 1")
			if got := Count(t, c, "sqlt"); got != "4" {
				t.Errorf("inside the transaction: %s rows, want 4", got)
			}
			Exec(t, c, "ROLLBACK")
			if got := Count(t, c, "sqlt"); got != "4" {
				t.Errorf("after the rollback: %s rows, want 4", got)
			}
			if got := MustQuery(t, c, "SELECT k FROM sqlt WHERE k IN (1, 11) ORDER BY k"); !equal(got, [][]any{{"1"}}) {
				t.Errorf("after the rollback: %q, want [[1]]", got)
			}
		}},
		{"ddl", func(t *testing.T) {
			Exec(t, c,
				"CREATE INDEX sqlt_day ON sqlt (day)",
				"CREATE VIEW sqlt_v AS SELECT k FROM sqlt WHERE amount > 0",
			)
			if got := Count(t, c, "sqlt_v"); got != "2" {
				t.Errorf("view: %s rows, want 2", got)
			}
			Exec(t, c, "DROP VIEW sqlt_v")
			if _, _, err := Query(ctx, c, "SELECT * FROM sqlt_v"); !errors.Is(err, workload.ErrNoSchema) {
				t.Errorf("dropped view: %v, want ErrNoSchema", err)
			}
			// Statistics; the answer (rows on MariaDB) is not read.
			analyze := d.Analyze
			if analyze == "" {
				analyze = "ANALYZE sqlt"
			}
			Exec(t, c, analyze)
		}},
		{"cancel", func(t *testing.T) {
			s := Connect(t, d.DB) // may be closed by the cancellation
			ctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(300*time.Millisecond, cancel)
			start := time.Now()
			_, _, err := Query(ctx, s, d.Long)
			if el := time.Since(start); el > 3*time.Second {
				t.Errorf("the cancelled query returned after %v", el)
			}
			if err == nil {
				t.Fatal("the cancelled query did not fail")
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%v: not context.Canceled", err)
			}
			// Another session works.
			Count(t, c, "sqlt")
			b, breakable := s.(workload.Breakable)
			if d.CancelKeeps {
				Count(t, s, "sqlt")
				if breakable && b.Broken() {
					t.Error("Broken() after a cancelled statement")
				}
			} else if breakable && !b.Broken() {
				t.Error("not Broken() after the driver closed the connection")
			}
		}},
		{"connection lost", func(t *testing.T) {
			if d.Terminate == "" {
				t.Skip("no server")
			}
			s := Connect(t, d.DB)
			id, err := s.(db.ServerSessioner).ServerSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			Exec(t, c, fmt.Sprintf(d.Terminate, id))
			var lost error
			for range 50 { // the server may take a moment
				if _, _, lost = Query(ctx, s, "SELECT 1"); lost != nil {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if !errors.Is(lost, workload.ErrConnLost) {
				t.Errorf("%v, want ErrConnLost", lost)
			}
			if b, ok := s.(workload.Breakable); ok && !b.Broken() {
				t.Error("not Broken() after the connection was lost")
			}
		}},
	} {
		t.Run(tc.name, tc.run)
	}
}

func equal(a, b [][]any) bool {
	return slices.EqualFunc(a, b, func(x, y []any) bool { return slices.Equal(x, y) })
}
