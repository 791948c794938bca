package queries

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/sledge-bench/sledge/internal/db/sqlite"
	"github.com/sledge-bench/sledge/internal/testdb"
)

var (
	pgServer    = testdb.LazyPostgres()
	mariaServer = testdb.LazyMariaDB()
	dbSeq       atomic.Int64
)

func TestMain(m *testing.M) { testdb.Main(m, pgServer, mariaServer) }

// open gives a fresh, empty database of dialect d, with the session set up
// as the workload will.
func open(t *testing.T, d Dialect) *sql.DB {
	t.Helper()
	var db *sql.DB
	var err error
	name := fmt.Sprintf("tpch_queries_%d", dbSeq.Add(1)) // each test its own database
	switch d {
	case SQLite:
		db = sqlite.OpenFile(filepath.Join(t.TempDir(), "tpch.db"))
		db.SetMaxOpenConns(1) // the PRAGMA holds for this one connection
	case DuckDB:
		if !slices.Contains(sql.Drivers(), "duckdb") {
			t.Skip("built without cgo: no DuckDB driver (duckdb_test.go)")
		}
		db, err = sql.Open("duckdb", filepath.Join(t.TempDir(), "tpch.duckdb"))
		if err != nil {
			t.Fatal(err)
		}
	case Postgres:
		s := pgServer.Get(t)
		admin, err := sql.Open("pgx", fmt.Sprintf("postgres://%s:%s@%s:%d/postgres", s.User, s.Password, s.Host, s.Port))
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
			t.Fatal(err)
		}
		s.DropAtEnd(t, name)
		db, err = sql.Open("pgx", fmt.Sprintf("postgres://%s:%s@%s:%d/%s", s.User, s.Password, s.Host, s.Port, name))
		if err != nil {
			t.Fatal(err)
		}
	case MySQL:
		s := mariaServer.Get(t)
		admin, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s:%d)/", s.User, s.Password, s.Host, s.Port))
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
			t.Fatal(err)
		}
		s.DropAtEnd(t, name)
		db, err = sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s:%d)/%s", s.User, s.Password, s.Host, s.Port, name))
		if err != nil {
			t.Fatal(err)
		}
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	for _, st := range append(Session(d), Schema(d)...) {
		if _, err = db.Exec(st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	return db
}

// rows runs one statement and fetches every row, as the timing rule
// wants, and returns how many there were and the first row's values.
func rows(t *testing.T, db *sql.DB, st string) (int, []any) {
	t.Helper()
	all := allRows(t, db, st)
	if len(all) == 0 {
		return 0, nil
	}
	first := make([]any, len(all[0]))
	for i, v := range all[0] {
		first[i] = v
	}
	return len(all), first
}

// Every query runs on every database, with the validation values, on a
// small hand-made data set whose answers are known for a few of them:
// the SQL, the dialect functions and the schema agree everywhere.
func TestQueriesRunEverywhere(t *testing.T) {
	answers := map[Dialect][]string{} // per query: row count and first row, normalised
	for _, d := range Dialects {
		t.Run(string(d), func(t *testing.T) {
			db := open(t, d)
			for _, st := range fixture(d) {
				if _, err := db.Exec(st); err != nil {
					t.Fatalf("%v\n%s", err, st)
				}
			}
			for q := 1; q <= Queries; q++ {
				sts, err := Render(d, q, 1, Validation(q, 0.01))
				if err != nil {
					t.Fatal(err)
				}
				var n int
				var first []any
				for i, st := range sts {
					if i == Answer(q) {
						n, first = rows(t, db, st)
					} else if _, err := db.Exec(st); err != nil {
						t.Fatalf("Q%d: %v\n%s", q, err, st)
					}
				}
				if want, ok := fixtureRows[q]; ok && n != want {
					t.Errorf("Q%d: %d rows, want %d (first %v)", q, n, want, first)
				}
				answers[d] = append(answers[d], fmt.Sprintf("Q%d: %d rows, first %s", q, n, normal(first)))
				t.Logf("%s", answers[d][len(answers[d])-1])
			}
		})
	}
	// The databases answer alike on the same data.
	for _, d := range Dialects[1:] {
		a, b := answers[Dialects[0]], answers[d]
		if len(a) != Queries || len(b) != Queries {
			continue // a database was skipped or failed above
		}
		for i := range a {
			if a[i] != b[i] {
				t.Errorf("%s and %s differ:\n  %s\n  %s", Dialects[0], d, a[i], b[i])
			}
		}
	}
}

// normal writes a row's values alike for every driver: numbers with two
// decimals, text trimmed (CHAR pads), bytes as text.
func normal(row []any) string {
	out := make([]string, len(row))
	for i, v := range row {
		if b, ok := v.([]byte); ok {
			v = string(b)
		}
		switch x := v.(type) {
		case string:
			if f, err := strconv.ParseFloat(x, 64); err == nil {
				out[i] = fmt.Sprintf("%.2f", f)
			} else {
				out[i] = strings.TrimSpace(x)
			}
		case int64:
			out[i] = fmt.Sprintf("%.2f", float64(x))
		case float64:
			out[i] = fmt.Sprintf("%.2f", x)
		case time.Time:
			out[i] = x.Format("2006-01-02")
		case nil:
			out[i] = "NULL"
		default:
			// pgx numerics and the like print their digits.
			if f, err := strconv.ParseFloat(fmt.Sprint(x), 64); err == nil {
				out[i] = fmt.Sprintf("%.2f", f)
			} else {
				out[i] = fmt.Sprint(x)
			}
		}
	}
	return "[" + strings.Join(out, " | ") + "]"
}

// fixtureRows are the answers' row counts on the fixture.
var fixtureRows = map[int]int{
	1:  2, // (N,O) and (R,F)
	4:  1, // 1-URGENT: order 1 of 1993-07-05 has a late line
	6:  1, // an aggregate over nothing is one row too
	9:  3, // the green part: (FRANCE 1995), (GERMANY 1995), (GERMANY 1993)
	13: 2, // customer 1 with 2 orders, customer 2 with 0
	14: 1,
	15: 1, // the supplier with the most revenue in 1996-Q1
	16: 0, // size 15 is not among the eight sizes
	22: 1, // customer 2 (no orders, phone 13-…) above the average
}

// fixture is a few rows in every table, written to make the queries above
// find something, and nothing in the others.
func fixture(d Dialect) []string {
	date := func(s string) string {
		if d == SQLite {
			return "'" + s + "'"
		}
		return "date '" + s + "'"
	}
	return []string{
		`insert into region values (0, 'AFRICA', 'x'), (3, 'EUROPE', 'x')`,
		`insert into nation values (7, 'GERMANY', 3, 'x'), (6, 'FRANCE', 3, 'x')`,
		`insert into supplier values (1, 'Supplier#000000001', 'a', 7, '17-000-000-0001', 100.00, 'fine'),
			(2, 'Supplier#000000002', 'b', 6, '16-000-000-0002', 50.00, 'Customer very Complaints')`,
		`insert into part values (1, 'dark green lace', 'Manufacturer#1', 'Brand#13', 'PROMO BURNISHED BRASS', 15, 'JUMBO PKG', 900.00, 'x')`,
		`insert into partsupp values (1, 1, 100, 10.00, 'x'), (1, 2, 50, 12.00, 'x')`,
		`insert into customer values (1, 'Customer#000000001', 'a', 7, '17-989-741-2988', 711.56, 'BUILDING', 'x'),
			(2, 'Customer#000000002', 'b', 6, '13-111-111-1111', 5000.00, 'BUILDING', 'x')`,
		`insert into orders values (1, 1, 'F', 1000.00, ` + date("1993-07-05") + `, '1-URGENT', 'Clerk#000000001', 0, 'ok'),
			(2, 1, 'O', 500.00, ` + date("1995-10-01") + `, '5-LOW', 'Clerk#000000002', 0, 'ok')`,
		`insert into lineitem values
			(1, 1, 1, 1, 17.00, 1000.00, 0.04, 0.02, 'R', 'F', ` + date("1993-07-10") + `, ` + date("1993-07-20") + `, ` + date("1993-08-01") + `, 'DELIVER IN PERSON', 'MAIL', 'x'),
			(2, 1, 2, 1, 5.00, 500.00, 0.06, 0.01, 'N', 'O', ` + date("1996-01-15") + `, ` + date("1996-01-10") + `, ` + date("1996-01-20") + `, 'NONE', 'SHIP', 'x'),
			(2, 1, 1, 2, 3.00, 300.00, 0.06, 0.01, 'N', 'O', ` + date("1995-09-15") + `, ` + date("1995-09-10") + `, ` + date("1995-09-20") + `, 'NONE', 'TRUCK', 'x')`,
	}
}

// The per-dialect texts stay few: every dialect difference found so far
// is a template function. A new override is a decision, made here.
func TestOverridesStayFew(t *testing.T) {
	for _, d := range Dialects {
		if n := len(Overrides[d]); n > 0 {
			t.Errorf("%s overrides %d queries; the template functions cover all so far", d, n)
		}
	}
}

// The dialects spell the same thing their own way, and the date
// arithmetic on parameters is done once, here, for all of them.
func TestDialectSpellings(t *testing.T) {
	for _, c := range []struct {
		d    Dialect
		q    int
		want []string
	}{
		{Postgres, 1, []string{"l_shipdate <= date '1998-09-02'"}},
		{SQLite, 1, []string{"l_shipdate <= '1998-09-02'"}},
		{MySQL, 4, []string{"o_orderdate >= date '1993-07-01' and o_orderdate < date '1993-10-01'"}},
		{SQLite, 7, []string{"cast(strftime('%Y', l_shipdate) as integer) as l_year"}},
		{Postgres, 7, []string{"extract(year from l_shipdate) as l_year"}},
		{SQLite, 22, []string{"substr(c_phone, 1, 2) in ('13', '31', '23', '29', '30', '18', '17')"}},
		{MySQL, 22, []string{"substring(c_phone from 1 for 2)"}},
		{DuckDB, 1, []string{"l_shipdate <= date '1998-09-02'"}},
		{DuckDB, 7, []string{"extract(year from l_shipdate) as l_year"}},
		{DuckDB, 22, []string{"substring(c_phone from 1 for 2)"}},
		{Postgres, 6, []string{"l_discount between 0.05 and 0.07", "l_quantity < 24"}},
		{SQLite, 11, []string{"* 0.01"}}, // 0.0001/SF at SF 0.01
		{Postgres, 15, []string{"create view revenue1 (supplier_no, total_revenue)", "drop view revenue1"}},
	} {
		sts, err := Render(c.d, c.q, 1, Validation(c.q, 0.01))
		if err != nil {
			t.Fatal(err)
		}
		all := strings.Join(sts, "\n;\n")
		flat := strings.Join(strings.Fields(all), " ")
		for _, w := range c.want {
			if !strings.Contains(flat, w) {
				t.Errorf("%s Q%d lacks %q:\n%s", c.d, c.q, w, all)
			}
		}
	}
	if _, err := Render(Postgres, 1, 1, Params{}); err == nil {
		t.Error("Q1 without DELTA rendered")
	}
}
