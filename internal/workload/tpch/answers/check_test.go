package answers

import (
	"strings"
	"testing"
)

// Every query has its reference at the three scale factors, with as many
// columns as its shape says and rows of that width; at SF 0.01 the row
// counts are those of TPC's data (docs/tpch.md part 10).
func TestReferences(t *testing.T) {
	rowsSF001 := [Queries + 1]int{0, 4, 4, 10, 5, 5, 1, 4, 2, 173, 20, 1, 2, 33, 1, 1, 296, 1, 2, 1, 1, 1, 7}
	for _, sf := range []float64{0.01, 0.1, 1} {
		if !Has(sf) {
			t.Fatalf("no answers at SF %v", sf)
		}
		for q := 1; q <= Queries; q++ {
			cols, rows, ok := Reference(sf, q)
			if !ok {
				t.Fatalf("SF %v Q%d: no reference", sf, q)
			}
			if len(cols) != len(shapes[q].kinds) {
				t.Errorf("SF %v Q%d: %d columns %v, shape has %d", sf, q, len(cols), cols, len(shapes[q].kinds))
			}
			for i, r := range rows {
				if len(r) != len(cols) {
					t.Errorf("SF %v Q%d row %d: %d values, %d columns", sf, q, i+1, len(r), len(cols))
				}
			}
			if sf == 0.01 && len(rows) != rowsSF001[q] {
				t.Errorf("SF 0.01 Q%d: %d rows, want %d", q, len(rows), rowsSF001[q])
			}
		}
	}
	if Has(0.5) {
		t.Error("answers at SF 0.5")
	}
	if _, _, ok := Reference(0.01, 23); ok {
		t.Error("a Q23")
	}
	if c := NewCheck(3, 1); c != nil {
		t.Error("a check at SF 3")
	}
	if _, rows, _ := Reference(0.01, 17); rows[0][0] != Null {
		t.Errorf("Q17 at SF 0.01 is %q, want NULL", rows[0][0])
	}
}

// The reference passes its own check, every row given as bytes.
func TestReferencePassesItself(t *testing.T) {
	for _, sf := range []float64{0.01, 0.1, 1} {
		for q := 1; q <= Queries; q++ {
			_, rows, _ := Reference(sf, q)
			c := NewCheck(sf, q)
			for _, r := range rows {
				vals := make([][]byte, len(r))
				for i, v := range r {
					if v != Null {
						vals[i] = []byte(v)
					}
				}
				if err := c.Row(vals); err != nil {
					t.Fatalf("SF %v: %v", sf, err)
				}
			}
			if err := c.Done(); err != nil {
				t.Fatalf("SF %v: %v", sf, err)
			}
		}
	}
}

// run feeds rows of strings (NULL as nil) to a check and returns Done's error.
func run(c *Check, rows ...[]any) error {
	for _, r := range rows {
		if err := c.Values(r); err != nil {
			if d := c.Done(); d != err {
				return d // Done must return the error Row did
			}
			return err
		}
	}
	return c.Done()
}

// A made-up query ordered by revenue desc: rows 2–4 tie (90.5 and 90.50005
// are equal within the sums' tolerance).
func testCheck() *Check {
	return newCheck(3, []string{"name", "day", "n", "revenue", "avg_x"}, [][]string{
		{"a", "1995-03-01", "1", "100.00", "0.5"},
		{"b", "1995-03-02", "2", "90.5", "25.575154611454693"},
		{"c", "1995-03-03", "3", "90.5", "0.05008133906964238"},
		{"d", "1995-03-04", "4", "90.50005", "1"},
		{"e", "1995-03-05", "5", "80", Null},
	}, shape{"tdisr", []int{3}})
}

func row(name, day string, n, revenue, avg any) []any { return []any{name, day, n, revenue, avg} }

func TestCheck(t *testing.T) {
	good := [][]any{
		row("a", "1995-03-01", int64(1), "100", "0.5"),
		row("b", "1995-03-02", "2", "90.5000", "25.5751546"),
		row("c", "1995-03-03", "3", 90.50000000001, "0.050081"), // MariaDB's 4 more digits
		row("d", "1995-03-04 00:00:00", "4.0", "90.5", []byte("1.0000")),
		row("e   ", "1995-03-05", "5", "8e1", nil),
	}
	if err := run(testCheck(), good...); err != nil {
		t.Fatalf("the right answer: %v", err)
	}
	for _, c := range []struct {
		name string
		rows [][]any
		want string // "" = passes
	}{
		{"ties in any order", [][]any{good[0], good[3], good[1], good[2], good[4]}, ""},
		{"avg rounded to 0.01", [][]any{good[0], row("b", "1995-03-02", "2", "90.5", "25.58"), good[2], good[3], good[4]}, ""},
		{"not tied", [][]any{good[1], good[0], good[2], good[3], good[4]},
			"Q3 row 1 column name: got b, want a"},
		{"a sum off by a cent", [][]any{row("a", "1995-03-01", "1", "100.01", "0.5"), good[1], good[2], good[3], good[4]},
			"Q3 row 1 column revenue: got 100.01, want 100.00"},
		{"within 1e-4", [][]any{row("a", "1995-03-01", "1", "100.00009", "0.5"), good[1], good[2], good[3], good[4]}, ""},
		{"an average off by 2%", [][]any{good[0], row("b", "1995-03-02", "2", "90.5", "26.1"), good[2], good[3], good[4]},
			"Q3 row 2 column avg_x: got 26.1, want 25.575154611454693 (rows 2–4 tie on the ORDER BY"},
		{"an integer off", [][]any{row("a", "1995-03-01", "1.5", "100", "0.5"), good[1], good[2], good[3], good[4]},
			"Q3 row 1 column n: got 1.5, want 1"},
		{"a date off", [][]any{row("a", "1995-03-02", "1", "100", "0.5"), good[1], good[2], good[3], good[4]},
			"Q3 row 1 column day: got 1995-03-02, want 1995-03-01"},
		{"text differs", [][]any{row("A", "1995-03-01", "1", "100", "0.5"), good[1], good[2], good[3], good[4]},
			"Q3 row 1 column name: got A, want a"},
		{"not a number", [][]any{row("a", "1995-03-01", "1", "lots", "0.5"), good[1], good[2], good[3], good[4]},
			"Q3 row 1 column revenue: got lots, want 100.00"},
		{"NULL for a value", [][]any{good[0], good[1], good[2], good[3], row("e", "1995-03-05", "5", "80", "0")},
			"Q3 row 5 column avg_x: got 0, want NULL"},
		{"a value for NULL", [][]any{row("a", "1995-03-01", "1", nil, "0.5"), good[1], good[2], good[3], good[4]},
			"Q3 row 1 column revenue: got NULL, want 100.00"},
		{"one row less", good[:4], "Q3: got 4 rows, want 5"},
		{"none", nil, "Q3: got 0 rows, want 5"},
		{"one row more", append(good[:5:5], good[4]), "Q3 row 6: got more than the 5 rows of the reference"},
		{"a column less", [][]any{good[0][:4]}, "Q3 row 1: got 4 columns, want 5"},
		{"a row twice in a tie", [][]any{good[0], good[1], good[1], good[3], good[4]},
			"Q3 row 3 column name: got b, want c (rows 2–4 tie"},
	} {
		err := run(testCheck(), c.rows...)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && err == nil:
			t.Errorf("%s: passed, want %q", c.name, c.want)
		case c.want != "" && !strings.HasPrefix(err.Error(), c.want):
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, c.want)
		}
	}
}

// The ratio rule: within 1% after rounding to 0.01, or the sums' tolerance.
func TestTolerances(t *testing.T) {
	for _, c := range []struct {
		a, b     float64
		sum, rat bool
	}{
		{1234567.89, 1234567.89, true, true},
		{1234567.8901, 1234567.89, true, true},      // 1e-4 + 1e-8·|b| ≈ 0.0124
		{1234567.90, 1234567.89, true, true},        // 0.01 ≤ 0.0124
		{1234567.91, 1234567.89, false, true},       // 0.02: a sum fails, a ratio passes
		{0.0501, 0.05008133906964238, true, true},   // a quotient with 4 digits
		{0.0503, 0.05008133906964238, false, true},  // 0.05 both after rounding
		{0.050081, 0.05008133906964238, true, true}, // MariaDB's 6
		{0.06, 0.05008133906964238, false, false},   // 0.06 against 0.05
		{25.58, 25.575154611454693, false, true},    // rounded to 0.01
		{26.0, 25.575154611454693, false, false},    // 1.7%
		{0.0, 0.0, true, true},
		{0.004, 0.0, false, true}, // rounds to 0.00
	} {
		if got := closeSum(c.a, c.b); got != c.sum {
			t.Errorf("closeSum(%v, %v) = %v", c.a, c.b, got)
		}
		if got := closeSum(c.a, c.b) || closeRatio(c.a, c.b); got != c.rat {
			t.Errorf("ratio(%v, %v) = %v", c.a, c.b, got)
		}
	}
}

// Row takes the drivers' text bytes, nil for NULL.
func TestRowBytes(t *testing.T) {
	c := NewCheck(0.01, 17)
	if err := c.Row([][]byte{nil}); err != nil {
		t.Fatal(err)
	}
	if err := c.Done(); err != nil {
		t.Fatal(err)
	}
	c = NewCheck(0.01, 17)
	if err := c.Row([][]byte{[]byte("0")}); err == nil || err.Error() != "Q17 row 1 column avg_yearly: got 0, want NULL" {
		t.Fatalf("got %v", err)
	}
	_, rows, _ := Reference(0.01, 6)
	c = NewCheck(0.01, 6)
	if err := c.Row([][]byte{[]byte(rows[0][0] + "00001")}); err != nil {
		t.Fatal(err)
	}
	if err := c.Done(); err != nil {
		t.Fatal(err)
	}
}
