package tpcc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/workload"
)

// sqliteDir is where the SQLite dialect of this workload lives.
var sqliteDir = filepath.Join("..", "..", "db", "sqlite", "sql", "tpcc")

// readSections parses a "-- name:" file: a section starts at a line
// "-- name: X" and runs to the next such line. A small local parser, so this
// test does not depend on internal/db.
func readSections(t *testing.T, file string) map[string]string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(sqliteDir, file))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	name := ""
	var body strings.Builder
	flush := func() {
		if name != "" {
			out[name] = strings.TrimSpace(body.String())
		}
		body.Reset()
	}
	for _, line := range strings.Split(string(src), "\n") {
		tl := strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(tl, "-- name:"); ok {
			flush()
			name = strings.TrimSpace(rest)
			if _, dup := out[name]; dup {
				t.Fatalf("%s: %q defined twice", file, name)
			}
			continue
		}
		if strings.HasPrefix(tl, "--") {
			continue
		}
		body.WriteString(line)
		body.WriteByte('\n')
	}
	flush()
	return out
}

// sqliteStatements is statements.sql and checks.sql together.
func sqliteStatements(t *testing.T) map[string]string {
	t.Helper()
	all := readSections(t, "statements.sql")
	for k, v := range readSections(t, "checks.sql") {
		if _, dup := all[k]; dup {
			t.Fatalf("%q is in both statements.sql and checks.sql", k)
		}
		all[k] = v
	}
	return all
}

var placeholderRE = regexp.MustCompile(`\?(\d*)`)

// placeholders returns the parameter numbers of a statement in order of
// appearance.
func placeholders(t *testing.T, name, sql string) []int {
	t.Helper()
	var out []int
	for _, m := range placeholderRE.FindAllStringSubmatch(sql, -1) {
		if m[1] == "" {
			t.Fatalf("%s: bare ? (use ?1, ?2…)", name)
		}
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}

// arity counts a statement's placeholders outside its {{…}} groups and
// inside them (per = 0: no group).
func arity(sql string) (fixed, per int) {
	for i, part := range strings.Split(sql, "{{") {
		in, out := "", part
		if i > 0 {
			in, out, _ = strings.Cut(part, "}}")
		}
		per += len(placeholderRE.FindAllString(in, -1))
		fixed += len(placeholderRE.FindAllString(out, -1))
	}
	return fixed, per
}

// resultColumns counts the select-list columns of a SELECT (top-level
// commas between SELECT and FROM), or 0 for other statements.
func resultColumns(sql string) int {
	s := strings.ToUpper(strings.Join(strings.Fields(sql), " "))
	if !strings.HasPrefix(s, "SELECT ") {
		return 0
	}
	depth, n := 0, 1
	for i := len("SELECT"); i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				n++
			}
		}
		if depth == 0 && strings.HasPrefix(s[i:], " FROM ") {
			return n
		}
	}
	return n
}

// call is one statement a fake connection saw.
type call struct {
	stmt  string
	args  []any
	scans int // destinations of Scan, -1 for Exec and Query
	inTx  bool
}

// fakeConn is an in-memory workload.Conn that answers by statement name.
// It checks the argument and scan types of the contract and records every
// call. It is a test of the Go logic, not of any database.
type fakeConn struct {
	mode   workload.Mode
	answer func(stmt string, args []any) ([][]any, error) // rows, or an error
	calls  []call
	txs    []workload.TxOptions
	inTx   bool
	bad    []string // contract violations
}

func (f *fakeConn) Mode() workload.Mode { return f.mode }

func (f *fakeConn) record(stmt string, args []any, scans int) {
	for i, a := range args {
		switch a.(type) {
		case int64, float64, string, nil:
		default:
			f.bad = append(f.bad, fmt.Sprintf("%s: argument %d has type %T", stmt, i+1, a))
		}
	}
	f.calls = append(f.calls, call{stmt: stmt, args: append([]any(nil), args...), scans: scans, inTx: f.inTx})
}

func (f *fakeConn) Exec(_ context.Context, stmt string, args ...any) (int64, error) {
	f.record(stmt, args, -1)
	rows, err := f.answer(stmt, args)
	if err != nil {
		return 0, err
	}
	if len(rows) == 1 && len(rows[0]) == 1 {
		if n, ok := rows[0][0].(int64); ok {
			return n, nil
		}
	}
	return 1, nil
}

func (f *fakeConn) QueryRow(_ context.Context, stmt string, args ...any) workload.Row {
	return &fakeRow{f: f, stmt: stmt, args: args}
}

func (f *fakeConn) Query(_ context.Context, stmt string, args ...any) (workload.Rows, error) {
	f.record(stmt, args, -1)
	rows, err := f.answer(stmt, args)
	if err != nil {
		return nil, err
	}
	return &fakeRows{f: f, stmt: stmt, rows: rows, i: -1}, nil
}

func (f *fakeConn) InTx(ctx context.Context, opts workload.TxOptions, fn func(ctx context.Context) error) error {
	if f.inTx {
		f.bad = append(f.bad, "nested InTx")
	}
	f.txs = append(f.txs, opts)
	f.inTx = true
	defer func() { f.inTx = false }()
	return fn(ctx)
}

func (f *fakeConn) Close(context.Context) error { return nil }

type fakeRow struct {
	f    *fakeConn
	stmt string
	args []any
}

func (r *fakeRow) Scan(dest ...any) error {
	r.f.record(r.stmt, r.args, len(dest))
	rows, err := r.f.answer(r.stmt, r.args)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return workload.ErrNoRows
	}
	return r.f.scan(r.stmt, rows[0], dest)
}

type fakeRows struct {
	f    *fakeConn
	stmt string
	rows [][]any
	i    int
}

func (r *fakeRows) Next() bool             { r.i++; return r.i < len(r.rows) }
func (r *fakeRows) Scan(dest ...any) error { return r.f.scan(r.stmt, r.rows[r.i], dest) }
func (r *fakeRows) Err() error             { return nil }
func (r *fakeRows) Close() error           { return nil }

// scan copies a row into the portable destinations (*int64, *float64,
// *string, *any) and rejects anything else.
func (f *fakeConn) scan(stmt string, row []any, dest []any) error {
	if len(row) != len(dest) {
		return fmt.Errorf("fake %s: %d columns scanned into %d destinations", stmt, len(row), len(dest))
	}
	for i, d := range dest {
		v := row[i]
		ok := true
		switch p := d.(type) {
		case *any:
			*p = v
		case *int64:
			*p, ok = v.(int64)
		case *float64:
			switch x := v.(type) {
			case float64:
				*p = x
			case int64:
				*p = float64(x)
			default:
				ok = false
			}
		case *string:
			*p, ok = v.(string)
		default:
			f.bad = append(f.bad, fmt.Sprintf("%s: scan destination %d has type %T", stmt, i+1, d))
		}
		if !ok {
			return fmt.Errorf("fake %s: column %d value %v (%T) does not fit %T", stmt, i+1, v, v, d)
		}
	}
	return nil
}

// one is a one-row answer.
func one(vals ...any) ([][]any, error) { return [][]any{vals}, nil }

// happy answers every statement of the workload with plausible values.
func happy(stmt string, args []any) ([][]any, error) {
	switch stmt {
	case stmtNOWarehouse:
		return one(0.1234)
	case stmtNODistrict:
		return one(0.05, int64(3001))
	case stmtNOCustomer:
		return one(0.25, "BARBARBAR", "GC")
	case stmtNOItem:
		if args[0].(int64) == unusedItem {
			return nil, nil
		}
		return one(12.34, "item name", "xxORIGINALxx")
	case stmtNOStock:
		return one(int64(50), "abcORIGINAL", "dist-info-24-characters!")
	case stmtPayWarehouse:
		return one("wname", "s1", "s2", "city", "ST", "123411111")
	case stmtPayDistrict:
		return one("dname", "s1", "s2", "city", "ST", "123411111")
	case stmtPayCustomerCount, stmtOSCustomerCount:
		return one(int64(3))
	case stmtPayCustomer, stmtPayCustomerByName:
		credit := "GC"
		if stmt == stmtPayCustomer && args[2].(int64)%2 == 0 {
			credit = "BC"
		}
		return one(int64(7), "first", "OE", "BARBARBAR", "s1", "s2", "city", "ST", "123411111", "0123456789012345",
			"2024-01-01 00:00:00", credit, 50000.0, 0.1, -10.0)
	case stmtPayCustomerData:
		return one(strings.Repeat("x", 500))
	case stmtOSCustomer:
		return one(-10.0, "first", "OE", "BARBARBAR")
	case stmtOSCustomerByName:
		return one(int64(7), -10.0, "first", "OE")
	case stmtOSOrder:
		return one(int64(42), "2024-01-01 00:00:00", nil)
	case stmtOSOrderLines:
		return [][]any{
			{int64(1), int64(1), int64(5), 0.0, "2024-01-01 00:00:00"},
			{int64(2), int64(1), int64(5), 12.5, nil},
		}, nil
	case stmtDelOldest:
		return one(int64(2101))
	case stmtDelOrder:
		return one(int64(9))
	case stmtDelOrderLineSum:
		return one(123.45)
	case stmtSLDistrict:
		return one(int64(3001))
	case stmtNOHeader:
		return one(0.1234, 0.05, int64(3002), 0.25, "BARBARBAR", "GC")
	case stmtNOItems:
		var rows [][]any
		for _, a := range args {
			if a.(int64) != unusedItem {
				rows = append(rows, []any{a, 12.34, "item name", "xxORIGINALxx"})
			}
		}
		return rows, nil
	case stmtNOStocks:
		var rows [][]any
		for i := 1; i+1 < len(args); i += 2 {
			rows = append(rows, []any{args[i], args[i+1], int64(50), "abcORIGINAL", "dist-info-24-characters!"})
		}
		return rows, nil
	case stmtPayCustomerWD, stmtPayCustomersWDByName:
		var ids []int64
		if stmt == stmtPayCustomerWD {
			ids = []int64{args[4].(int64)}
		} else {
			ids = []int64{7, 8, 9}
		}
		var rows [][]any
		for _, id := range ids {
			credit, data := "GC", any(nil)
			if id%2 == 0 {
				credit, data = "BC", strings.Repeat("x", 500)
			}
			rows = append(rows, []any{"wname", "s1", "s2", "city", "ST", "123411111", "dname", "s1", "s2", "city", "ST", "123411111",
				id, "first", "OE", "BARBARBAR", "s1", "s2", "city", "ST", "123411111", "0123456789012345",
				"2024-01-01 00:00:00", credit, 50000.0, 0.1, -10.0, data})
		}
		return rows, nil
	case stmtOSCustomerOrder:
		return one(-10.0, "first", "OE", "BARBARBAR", int64(42), "2024-01-01 00:00:00", nil)
	case stmtOSCustomersOrderByName:
		return [][]any{
			{int64(6), -10.0, "a", "OE", int64(40), "2024-01-01 00:00:00", nil},
			{int64(7), -10.0, "b", "OE", int64(42), "2024-01-01 00:00:00", int64(3)},
		}, nil
	case stmtDelOldestAll:
		var rows [][]any
		for d := int64(1); d <= districtsPerWH; d++ {
			rows = append(rows, []any{d, int64(2101)})
		}
		return rows, nil
	case stmtDelDeletes:
		return one(int64((len(args) - 1) / 2))
	case stmtDelOrders:
		var rows [][]any
		for i := 1; i+1 < len(args); i += 2 {
			rows = append(rows, []any{args[i], int64(9), 123.45})
		}
		return rows, nil
	case stmtSLCount, stmtSLLowStock, stmtNOCall, stmtPayCall, stmtDelCall, stmtSLCall, stmtOSCall, stmtNOPM, stmtCheck11Applies:
		return one(int64(0))
	case stmtMetaGet:
		return [][]any{{"workload", "tpcc"}, {"version", strconv.Itoa(dataVersion)}, {"warehouses", "3"},
			{"seed", "1"}, {"c_load", "200"}}, nil
	}
	if strings.HasPrefix(stmt, "neword.") || strings.HasPrefix(stmt, "payment.") || strings.HasPrefix(stmt, "delivery.") {
		return nil, nil // exec statements: one row affected
	}
	return nil, errors.New("fake: unknown statement " + stmt)
}
