package queries

import (
	"database/sql"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/workload/tpch/answers"
	"github.com/sledge-bench/sledge/internal/workload/tpch/dbgen"
)

// load fills the schema with the generator's rows at scale factor sf,
// through multi-row INSERTs of literals (the workload's loaders will use
// each database's bulk path), then creates the keys and indexes.
func load(t *testing.T, db *sql.DB, sf float64) {
	t.Helper()
	sc, err := dbgen.NewScale(sf)
	if err != nil {
		t.Fatal(err)
	}
	var buf [][]any
	for _, tb := range dbgen.Tables(sc) {
		head := "INSERT INTO " + tb.Name + " (" + strings.Join(tb.Columns, ", ") + ") VALUES "
		for i := 0; i < tb.Batches; i++ {
			buf = tb.Fill(i, buf[:0])
			var b strings.Builder
			b.WriteString(head)
			for r, row := range buf {
				if r > 0 {
					b.WriteString(", ")
				}
				b.WriteByte('(')
				for c, v := range row {
					if c > 0 {
						b.WriteString(", ")
					}
					b.WriteString(literal(v))
				}
				b.WriteByte(')')
			}
			if _, err := db.Exec(b.String()); err != nil {
				t.Fatalf("load %s batch %d: %v", tb.Name, i, err)
			}
		}
	}
	for _, st := range Indexes() {
		if _, err := db.Exec(st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
}

// literal is one generated value as SQL: dates as YYYY-MM-DD strings,
// which every dialect's date (or TEXT) column takes.
func literal(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'f', 2, 64)
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case time.Time:
		return "'" + x.Format("2006-01-02") + "'"
	}
	panic(fmt.Sprintf("literal: %T", v))
}

// allRows fetches a statement's whole answer, every value as text.
func allRows(t *testing.T, db *sql.DB, st string) [][]string {
	t.Helper()
	return textRows(anyRows(t, db, st))
}

// anyRows fetches a statement's whole answer, every value as the driver
// gives it to an any (bytes copied, nil for NULL).
func anyRows(t *testing.T, db *sql.DB, st string) [][]any {
	t.Helper()
	rs, err := db.Query(st)
	if err != nil {
		t.Fatalf("%v\n%s", err, st)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var out [][]any
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, vals)
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("%v\n%s", err, st)
	}
	return out
}

// textRows writes values as text: dates YYYY-MM-DD, NULL as NULL, blanks
// trimmed (CHAR pads).
func textRows(rows [][]any) [][]string {
	var out [][]string
	for _, vals := range rows {
		row := make([]string, len(vals))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			switch x := v.(type) {
			case time.Time:
				v = x.Format("2006-01-02")
			case nil:
				v = "NULL"
			}
			row[i] = strings.TrimSpace(fmt.Sprint(v))
		}
		out = append(out, row)
	}
	return out
}

// same compares two answers value by value: text exactly, numbers within
// a relative 1e-6 (SQLite sums binary floats where the others sum exact
// decimals; docs/tpch.md part 10 allows far more).
func same(a, b [][]string) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d rows against %d", len(a), len(b))
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return fmt.Sprintf("row %d: %d columns against %d", i+1, len(a[i]), len(b[i]))
		}
		for j := range a[i] {
			x, y := a[i][j], b[i][j]
			fx, e1 := strconv.ParseFloat(x, 64)
			fy, e2 := strconv.ParseFloat(y, 64)
			if e1 == nil && e2 == nil {
				if math.Abs(fx-fy) > 1e-6*math.Max(1, math.Max(math.Abs(fx), math.Abs(fy))) {
					return fmt.Sprintf("row %d column %d: %s against %s", i+1, j+1, x, y)
				}
				continue
			}
			if x != y {
				return fmt.Sprintf("row %d column %d: %q against %q", i+1, j+1, x, y)
			}
		}
	}
	return ""
}

// validationRowsSF001 are the row counts of the 22 validation answers on
// TPC's SF 0.01 data (Q17's is one NULL average).
var validationRowsSF001 = [Queries]int{4, 4, 10, 5, 5, 1, 4, 2, 173, 20, 1, 2, 33, 1, 1, 296, 1, 2, 1, 1, 1, 7}

// On the generator's SF 0.01 data, the 22 queries with the validation
// values give the same answers on SQLite, PostgreSQL, MariaDB and DuckDB, with
// the row counts of the specification's data, and each database's
// answers are the reference answers (package answers: DuckDB's engine on
// the same data, checked by the rules of docs/tpch.md part 10).
func TestAnswersAgreeAtSF001(t *testing.T) {
	if testing.Short() {
		t.Skip("loads SF 0.01 into four databases")
	}
	results := map[Dialect][Queries][][]string{}
	for _, d := range Dialects {
		t.Run(string(d), func(t *testing.T) {
			db := open(t, d)
			load(t, db, 0.01)
			var got [Queries][][]string
			for q := 1; q <= Queries; q++ {
				sts, err := Render(d, q, 0, Validation(q, 0.01))
				if err != nil {
					t.Fatal(err)
				}
				got[q-1] = checkAnswer(t, d, db, q, 0.01, sts)
			}
			results[d] = got
		})
	}
	base, ok := results[Dialects[0]]
	if !ok {
		return
	}
	for q, rows := range base {
		// The row counts of the validation answers on TPC's dbgen SF 0.01
		// data (docs/tpch.md part 10): the generator and the queries
		// together find what dbgen's data and the spec's queries find.
		if len(rows) != validationRowsSF001[q] {
			t.Errorf("Q%d: %d rows on %s, want %d", q+1, len(rows), Dialects[0], validationRowsSF001[q])
		}
	}
	for _, d := range Dialects[1:] {
		other, ok := results[d]
		if !ok {
			continue
		}
		for q := range base {
			if diff := same(base[q], other[q]); diff != "" {
				t.Errorf("Q%d: %s and %s differ: %s", q+1, Dialects[0], d, diff)
			}
		}
	}
}

// checkAnswer runs query q's statements sts on db and checks its answer
// against the reference at scale factor sf; it returns the answer as text.
func checkAnswer(t *testing.T, d Dialect, db *sql.DB, q int, sf float64, sts []string) [][]string {
	t.Helper()
	var got [][]string
	for i, st := range sts {
		if i != Answer(q) {
			if _, err := db.Exec(st); err != nil {
				t.Fatalf("Q%d: %v\n%s", q, err, st)
			}
			continue
		}
		raw := anyRows(t, db, st)
		got = textRows(raw)
		c := answers.NewCheck(sf, q)
		for _, r := range raw {
			_ = c.Values(r) // Done returns the first mismatch
		}
		if err := c.Done(); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	return got
}

// At SF 0.1 too, each database's answers are the reference answers. It
// loads 0.1 GB of rows into each database through INSERTs: run it with
// SLEDGE_TPCH_SF01=1.
func TestAnswersAtSF01(t *testing.T) {
	if os.Getenv("SLEDGE_TPCH_SF01") == "" {
		t.Skip("set SLEDGE_TPCH_SF01=1 to load SF 0.1 into three databases and check the answers")
	}
	for _, d := range Dialects {
		t.Run(string(d), func(t *testing.T) {
			db := open(t, d)
			load(t, db, 0.1)
			for q := 1; q <= Queries; q++ {
				sts, err := Render(d, q, 0, Validation(q, 0.1))
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				checkAnswer(t, d, db, q, 0.1, sts)
				t.Logf("Q%d %v", q, time.Since(start).Round(time.Millisecond))
			}
		})
	}
}
