package ch

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/workload/tpcc"
)

func fillAll(t *testing.T, name string, fill func(int, [][]any) [][]any, batches int) [][]any {
	t.Helper()
	var out [][]any
	var buf [][]any
	for i := range batches {
		buf = fill(i, buf)
		for _, r := range buf {
			out = append(out, slices.Clone(r))
		}
	}
	return out
}

// The three tables: their counts and keys, the same rows from the same
// seed (again, and in another order of calls), other rows from another.
func TestOwnTables(t *testing.T) {
	want := map[string]int{"region": regions, "nation": nations, "supplier": suppliers}
	a, b, c := ownTables(1), ownTables(1), ownTables(2)
	for i, tb := range a {
		rows := fillAll(t, tb.Name, tb.Fill, tb.Batches)
		if len(rows) != want[tb.Name] || int64(len(rows)) != tb.Rows {
			t.Errorf("%s: %d rows (Rows %d), want %d", tb.Name, len(rows), tb.Rows, want[tb.Name])
		}
		for _, r := range rows {
			if len(r) != len(tb.Columns) {
				t.Fatalf("%s: a row of %d cells for %d columns", tb.Name, len(r), len(tb.Columns))
			}
		}
		again := fillAll(t, tb.Name, b[i].Fill, tb.Batches)
		if !reflect.DeepEqual(rows, again) {
			t.Errorf("%s: not the same rows from the same seed", tb.Name)
		}
		other := fillAll(t, tb.Name, c[i].Fill, tb.Batches)
		if reflect.DeepEqual(rows, other) {
			t.Errorf("%s: the same rows from another seed", tb.Name)
		}
		switch tb.Name {
		case "supplier":
			nkeys := map[int64]bool{}
			for i := range nations {
				nkeys[int64(nationKey(i))] = true
			}
			bad := 0
			for k, r := range rows {
				if r[0] != int64(k) {
					t.Fatalf("supplier row %d has key %v, want %d", k, r[0], k)
				}
				if !nkeys[r[3].(int64)] {
					t.Fatalf("supplier %d: nation %v is none of the 62", k, r[3])
				}
				if strings.Contains(r[6].(string), "bad") {
					bad++
				}
				if n := len(r[6].(string)); n < 51 || n > 101 {
					t.Fatalf("supplier %d: su_comment of %d characters", k, n)
				}
			}
			if bad < suppliers/badEvery {
				t.Errorf("%d suppliers have 'bad' in su_comment, want at least %d", bad, suppliers/badEvery)
			}
		case "nation":
			for k, r := range rows {
				key := r[0].(int64)
				if !(key >= '0' && key <= '9' || key >= 'A' && key <= 'Z' || key >= 'a' && key <= 'z') {
					t.Errorf("nation %d: key %d is not the code of 0-9, A-Z, a-z", k, key)
				}
				if reg := r[2].(int64); reg < 1 || reg > regions {
					t.Errorf("nation %v: region %d", r[1], reg)
				}
			}
		}
	}
}

// A full build loads TPC-C's tables, then ch's, then sledge_meta with
// ch's marker row; a build on a complete TPC-C loads only ch's and the
// marker row.
func TestTablesOrder(t *testing.T) {
	w := New(Config{TPCC: tpcc.Config{Warehouses: 1, Seed: 1}})
	var names []string
	for _, tb := range w.Tables() {
		names = append(names, tb.Name)
	}
	want := []string{"item", "warehouse", "district", "stock", "customer", "history", "orders", "new_order", "order_line",
		"region", "nation", "supplier", "sledge_meta"}
	if !slices.Equal(names, want) {
		t.Errorf("tables %v, want %v", names, want)
	}
	meta := w.Tables()[len(want)-1]
	rows := fillAll(t, "sledge_meta", meta.Fill, 1)
	if int64(len(rows)) != meta.Rows || rows[len(rows)-1][0] != "ch" || rows[0][1] != "tpcc" {
		t.Errorf("sledge_meta rows %v (Rows %d), want TPC-C's then ch's", rows, meta.Rows)
	}
	w.baseBuilt = true
	names = names[:0]
	for _, tb := range w.Tables() {
		names = append(names, tb.Name)
	}
	if !slices.Equal(names, []string{"region", "nation", "supplier", "sledge_meta"}) {
		t.Errorf("tables on a TPC-C build %v", names)
	}
	rows = fillAll(t, "sledge_meta", w.Tables()[3].Fill, 1)
	if len(rows) != 1 || rows[0][0] != "ch" {
		t.Errorf("marker rows %v", rows)
	}
}

// Every query renders in every dialect with nothing left of the
// templates, and only through the template functions: no dialect needs
// a text of its own.
func TestRender(t *testing.T) {
	if n := len(Overrides); n > 0 {
		t.Errorf("%d dialects with overrides: keep the list short and say why in docs/ch.md", n)
	}
	for _, d := range dialects {
		for q := 1; q <= numQueries; q++ {
			s, err := Render(d, q)
			if err != nil {
				t.Fatalf("%s Q%d: %v", d, q, err)
			}
			if strings.Contains(s, "{{") || strings.Contains(s, "<no value>") || strings.Contains(s, ";") {
				t.Errorf("%s Q%d: %s", d, q, s)
			}
			if d == "sqlite" && (strings.Contains(s, "mod(") || strings.Contains(s, "ascii(") || strings.Contains(s, "extract(")) {
				t.Errorf("sqlite Q%d uses a function SQLite lacks: %s", q, s)
			}
		}
	}
	if _, err := Render("oracle", 1); err == nil {
		t.Error("Render oracle: no error")
	}
	if _, err := Render("sqlite", 23); err == nil {
		t.Error("Render Q23: no error")
	}
}

// Each stream's order is a permutation of the 22, fixed by the seed and
// the stream, and streams differ.
func TestOrder(t *testing.T) {
	seen := map[string]bool{}
	for s := range 8 {
		o := Order(7, s)
		if !slices.Equal(o, Order(7, s)) {
			t.Fatalf("stream %d: another order on the second call", s)
		}
		sorted := slices.Sorted(slices.Values(o))
		for i, q := range sorted {
			if q != i+1 {
				t.Fatalf("stream %d: order %v is not a permutation of 1..22", s, o)
			}
		}
		seen[fmt.Sprint(o)] = true
	}
	if len(seen) < 8 {
		t.Errorf("8 streams have %d orders", len(seen))
	}
}

// Added has the drop, the three tables and their indexes in every dialect
// and nothing else.
func TestAdded(t *testing.T) {
	for _, d := range dialects {
		if n := len(added(d, "tables")); n != 3 {
			t.Errorf("%s tables: %d statements", d, n)
		}
		if n := len(added(d, "drop")); n != 3 {
			t.Errorf("%s drop: %d statements", d, n)
		}
		if n := len(added(d, "indexes")); n != 5 {
			t.Errorf("%s indexes: %d statements", d, n)
		}
		if n := len(added(d, "procedures")); n != 0 {
			t.Errorf("%s procedures: %d statements", d, n)
		}
		for _, st := range added(d, "tables") {
			if strings.Contains(st, "<no value>") || strings.Contains(st, "  NOT NULL") {
				t.Errorf("%s: a type left out: %s", d, st)
			}
		}
	}
	if added("oracle", "tables") != nil {
		t.Error("an unknown dialect has statements")
	}
}

// Validate refuses bad stream counts with one line naming the flag.
func TestValidateFlags(t *testing.T) {
	for _, c := range []struct {
		streams int
		ok      bool
	}{{0, true}, {1, true}, {1000, true}, {-1, false}, {1001, false}} {
		err := New(Config{TPCC: tpcc.Config{Warehouses: 1}, Streams: c.streams}).Validate()
		if (err == nil) != c.ok || err != nil && !strings.Contains(err.Error(), "--analytic-streams") {
			t.Errorf("streams %d: %v", c.streams, err)
		}
	}
}

// Every reference answer loads and fits its query's shape.
func TestReferences(t *testing.T) {
	for q := 1; q <= numQueries; q++ {
		ref, err := loadReference(q)
		if err != nil {
			t.Fatal(err)
		}
		sh := shapes[q]
		if len(ref.cols) != len(sh.kinds) {
			t.Errorf("Q%d: %d columns %v, shape %q", q, len(ref.cols), ref.cols, sh.kinds)
		}
		for _, r := range ref.rows {
			if sh.loadDate >= 0 && r[sh.loadDate] != refDate || sh.loadYear >= 0 && r[sh.loadYear] != refYear {
				t.Errorf("Q%d: row %v does not show the reference's load time", q, r)
				break
			}
		}
		if ref.digest != "" && strings.ContainsRune(sh.kinds, 'r') {
			t.Errorf("Q%d: a digested answer with a ratio column", q)
		}
	}
}
