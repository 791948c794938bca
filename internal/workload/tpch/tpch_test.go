package tpch

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseQueries(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
		bad  bool
	}{
		{in: "1", want: []int{1}},
		{in: "1,3,5-7", want: []int{1, 3, 5, 6, 7}},
		{in: "Q14, Q2", want: []int{14, 2}},
		{in: "22,22,21-22", want: []int{22, 21}},
		{in: "0", bad: true},
		{in: "23", bad: true},
		{in: "5-3", bad: true},
		{in: "x", bad: true},
		{in: "", bad: true},
	} {
		got, err := ParseQueries(c.in)
		if (err != nil) != c.bad || !c.bad && !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseQueries(%q) = %v, %v; want %v (error %v)", c.in, got, err, c.want, c.bad)
		}
	}
}

// The refresh functions' rows travel as literals: text quoted (a quote
// doubled), decimals with their two places, keys whole.
func TestInsertText(t *testing.T) {
	got := insertText("orders", [][]any{{int64(9), 12.5, "O", "1996-01-02", "it's"}, {int64(10), 0.0, "F", "1992-01-01", ""}})
	want := "INSERT INTO orders VALUES (9,12.50,'O','1996-01-02','it''s'),(10,0.00,'F','1992-01-01','')"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// Each dialect builds the eight tables and the metadata table, drops
// them children first, and gathers statistics after the indexes.
func TestScript(t *testing.T) {
	w, err := New(Config{SF: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"postgres", "mysql", "sqlite"} {
		tables := strings.Join(w.Script(d, "tables"), "\n")
		for _, name := range tableNames {
			if !strings.Contains(tables, "CREATE TABLE "+name+" ") {
				t.Errorf("%s: no CREATE TABLE %s", d, name)
			}
		}
		drop := w.Script(d, "drop")
		if len(drop) != len(tableNames) || drop[0] != "DROP TABLE IF EXISTS lineitem" {
			t.Errorf("%s: drop %v", d, drop)
		}
		idx := w.Script(d, "indexes")
		if last := idx[len(idx)-1]; !strings.HasPrefix(last, "ANALYZE") {
			t.Errorf("%s: indexes end with %q, want the statistics", d, last)
		}
		if w.Script(d, "procedures") != nil {
			t.Errorf("%s: tpch has procedures", d)
		}
	}
}
