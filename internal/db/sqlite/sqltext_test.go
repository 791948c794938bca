package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/db/sqltexttest"
	"github.com/sledge-bench/sledge/internal/workload"
)

func TestSQLConn(t *testing.T) {
	d := openTest(t, "")
	if d.Dialect() != "sqlite" {
		t.Errorf("Dialect() = %q", d.Dialect())
	}
	sqltexttest.Run(t, sqltexttest.Dialect{
		DB:          d,
		Long:        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 1000000000) SELECT count(*) FROM c",
		CancelKeeps: true,
		// decimal(15,2) has NUMERIC affinity: 12.50 is stored as a real,
		// -3.00 as an integer. The DATE column's text comes back as it is.
		Rows: [][]any{
			{"1", "12.5", "one", "1998-09-02", nil},
			{"2", "-3", "it's two", "1992-01-01", "x"},
			{"3", nil, nil, nil, nil},
		},
		Sum: []any{"3", "9.5"},
	})
}

// Values of every storage class, and expressions, come back as text.
func TestSQLConnValues(t *testing.T) {
	c := sqltexttest.Connect(t, openTest(t, ""))
	for _, tc := range []struct {
		expr string
		want any
	}{
		{"1", "1"},
		{"-9223372036854775808", "-9223372036854775808"},
		{"0.1 + 0.2", "0.30000000000000004"},
		{"1e21", "1e+21"},
		{"2.50", "2.5"},
		{"'text'", "text"},
		{"''", ""},
		{"x'6869'", "hi"},
		{"x''", ""},
		{"NULL", nil},
		{"date('1998-12-01', '-90 days')", "1998-09-02"},
		{"CAST(12.5 AS TEXT)", "12.5"},
	} {
		got := sqltexttest.MustQuery(t, c, "SELECT "+tc.expr)
		if len(got) != 1 || len(got[0]) != 1 || got[0][0] != tc.want {
			t.Errorf("SELECT %s: %q, want %q", tc.expr, got, tc.want)
		}
	}
	// An empty value is not NULL.
	var isNil []bool
	if _, err := c.QuerySQL(context.Background(), "SELECT '', x'', NULL", func(vals [][]byte) error {
		for _, v := range vals {
			isNil = append(isNil, v == nil)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []bool{false, false, true}; len(isNil) != 3 || isNil[0] != want[0] || isNil[1] != want[1] || isNil[2] != want[2] {
		t.Errorf("nil values %v, want %v", isNil, want)
	}
}

// A session PRAGMA sticks to its session and to no other.
func TestSQLConnPragma(t *testing.T) {
	d := openTest(t, "")
	a, b := sqltexttest.Connect(t, d), sqltexttest.Connect(t, d)
	sqltexttest.Exec(t, a, "PRAGMA case_sensitive_like = ON")
	for i := 0; i < 3; i++ {
		if got := sqltexttest.MustQuery(t, a, "SELECT 'abc' LIKE 'ABC'"); got[0][0] != "0" {
			t.Errorf("session with the PRAGMA: %q", got)
		}
	}
	if got := sqltexttest.MustQuery(t, b, "SELECT 'abc' LIKE 'ABC'"); got[0][0] != "1" {
		t.Errorf("another session: %q", got)
	}
}

// One writer holds an open transaction: readers read, without an error;
// a second writer (of this process, or of another one through its own
// database handle) waits for the commit rather than failing.
func TestSQLConnWriters(t *testing.T) {
	d := openTest(t, "")
	other, err := open(context.Background(), d.path, d.set, testFiles) // another process's handle
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	w := sqltexttest.Connect(t, d)
	sqltexttest.Exec(t, w, "CREATE TABLE q (k INTEGER PRIMARY KEY)", "INSERT INTO q VALUES (1)")

	sqltexttest.Exec(t, w, "BEGIN", "INSERT INTO q VALUES (2)")
	for _, r := range []workload.SQLConn{sqltexttest.Connect(t, d), sqltexttest.Connect(t, other)} {
		if got := sqltexttest.Count(t, r, "q"); got != "1" {
			t.Errorf("reader during the transaction saw %s rows, want 1", got)
		}
	}
	ctx := context.Background()
	type result struct {
		name string
		err  error
	}
	done := make(chan result, 3)
	w2, w3, w4 := sqltexttest.Connect(t, d), sqltexttest.Connect(t, d), sqltexttest.Connect(t, other)
	go func() { done <- result{"insert", w2.ExecSQL(ctx, "INSERT INTO q VALUES (3)")} }()
	go func() {
		err := w3.ExecSQL(ctx, "BEGIN")
		if err == nil {
			err = w3.ExecSQL(ctx, "INSERT INTO q VALUES (4)")
		}
		if err == nil {
			err = w3.ExecSQL(ctx, "COMMIT")
		}
		done <- result{"transaction", err}
	}()
	go func() {
		err := w4.ExecSQL(ctx, "BEGIN")
		if err == nil {
			err = w4.ExecSQL(ctx, "INSERT INTO q VALUES (5)")
		}
		if err == nil {
			err = w4.ExecSQL(ctx, "COMMIT")
		}
		done <- result{"other handle's transaction", err}
	}()
	select {
	case r := <-done:
		t.Fatalf("%s did not wait for the open transaction: %v", r.name, r.err)
	case <-time.After(300 * time.Millisecond):
	}
	sqltexttest.Exec(t, w, "COMMIT")
	for range 3 {
		if r := <-done; r.err != nil {
			t.Errorf("%s: %v", r.name, r.err)
		}
	}
	if got := sqltexttest.Count(t, w, "q"); got != "5" {
		t.Errorf("%s rows, want 5", got)
	}
	if writerHeld(d) {
		t.Error("the writer queue is still held")
	}
}

// Closing a session inside a transaction rolls it back and leaves the
// writer queue.
func TestSQLConnCloseInTransaction(t *testing.T) {
	d := openTest(t, "")
	c, err := d.ConnectSQL(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sqltexttest.Exec(t, c, "CREATE TABLE q (k INTEGER)", "BEGIN", "INSERT INTO q VALUES (1)")
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if writerHeld(d) {
		t.Error("the writer queue is still held")
	}
	if got := sqltexttest.Count(t, sqltexttest.Connect(t, d), "q"); got != "0" {
		t.Errorf("%s rows after the close, want 0", got)
	}
}
