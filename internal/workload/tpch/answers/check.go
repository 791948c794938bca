package answers

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// kind is how a column of an answer is compared (docs/tpch.md part 10).
type kind byte

const (
	text  kind = 't' // names, flags, text: equal but for trailing blanks (CHAR pads)
	date  kind = 'd' // YYYY-MM-DD: equal (a time of day of zero may follow)
	integ kind = 'i' // counts, keys, years: numerically equal
	sum   kind = 's' // sums of decimals: |a − b| ≤ 1e−4 + 1e−8·|b|
	ratio kind = 'r' // averages, quotients: as sum, or within 1% after rounding to 0.01
)

// shape is what the check needs to know of a query's answer: each
// column's kind, and the columns of its ORDER BY (0-based, into the
// answer's columns).
type shape struct {
	kinds string
	order []int
}

// shapes are the 22 queries' answers, from their select lists and ORDER
// BYs (docs/tpch.md part 7).
var shapes = [Queries + 1]shape{
	1:  {"ttssssrrri", []int{0, 1}},
	2:  {"sttitttt", []int{0, 2, 1, 3}},
	3:  {"isdi", []int{1, 2}},
	4:  {"ti", []int{0}},
	5:  {"ts", []int{1}},
	6:  {"s", nil},
	7:  {"ttis", []int{0, 1, 2}},
	8:  {"ir", []int{0}},
	9:  {"tis", []int{0, 1}},
	10: {"itsstttt", []int{2}},
	11: {"is", []int{1}},
	12: {"tii", []int{0}},
	13: {"ii", []int{1, 0}},
	14: {"r", nil},
	15: {"ittts", []int{0}},
	16: {"ttii", []int{3, 0, 1, 2}},
	17: {"r", nil},
	18: {"tiidss", []int{4, 3}},
	19: {"s", nil},
	20: {"tt", []int{0}},
	21: {"ti", []int{1, 0}},
	22: {"tis", []int{0}},
}

// value is one value of a database's answer.
type value struct {
	s    string
	null bool
}

func (v value) String() string {
	if v.null {
		return Null
	}
	return v.s
}

// Check compares a database's answer to query q with the reference, row
// by row as the database returns them: Row for each row, Done at the end.
// Row order must follow the query's ORDER BY; rows the reference has
// equal on the ORDER BY columns (within the tolerances) may come in any
// order among themselves. A Check is for one answer and one goroutine.
type Check struct {
	q     int
	cols  []string
	ref   [][]string
	shape shape
	ends  []int     // per row of ref: the end (exclusive) of its tie group
	n     int       // rows seen
	group [][]value // the rows seen of the current tie group
	err   error
}

// NewCheck is a check of query q's (1..22) answer with the validation
// values at scale factor sf; nil if there is no reference (see Has).
func NewCheck(sf float64, q int) *Check {
	a := load(sf, q)
	if a == nil {
		return nil
	}
	return newCheck(q, a.cols, a.rows, shapes[q])
}

func newCheck(q int, cols []string, ref [][]string, sh shape) *Check {
	c := &Check{q: q, cols: cols, ref: ref, shape: sh}
	if len(sh.kinds) != len(cols) {
		panic(fmt.Sprintf("answers: Q%d has %d columns, its shape %d", q, len(cols), len(sh.kinds)))
	}
	c.ends = make([]int, len(c.ref))
	for i := len(c.ref) - 1; i >= 0; i-- {
		c.ends[i] = i + 1
		if i+1 < len(c.ref) && c.tied(c.ref[i], c.ref[i+1]) {
			c.ends[i] = c.ends[i+1]
		}
	}
	return c
}

// tied tells whether two reference rows are equal on the ORDER BY columns,
// numbers within the tolerances: a database may return them either way.
func (c *Check) tied(a, b []string) bool {
	if len(c.shape.order) == 0 {
		return true
	}
	for _, k := range c.shape.order {
		if !c.match(k, value{s: a[k], null: a[k] == Null}, b[k]) {
			return false
		}
	}
	return true
}

// Row checks the next row of the answer: vals are its values as the
// driver gives them in text (PostgreSQL's and MariaDB's text protocol,
// SQLite's numbers as text), nil for NULL. It returns the first mismatch
// found, once; the rows of a tie group are checked when its last arrives.
func (c *Check) Row(vals [][]byte) error {
	row := make([]value, len(vals))
	for i, v := range vals {
		row[i] = value{s: string(v), null: v == nil}
	}
	return c.add(row)
}

// Values is Row for values as database/sql scans them into any: []byte,
// string, int64, float64, bool, time.Time (a date), nil for NULL.
func (c *Check) Values(vals []any) error {
	row := make([]value, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case nil:
			row[i].null = true
		case []byte:
			row[i].s = string(x)
		case string:
			row[i].s = x
		case int64:
			row[i].s = strconv.FormatInt(x, 10)
		case float64:
			row[i].s = strconv.FormatFloat(x, 'g', -1, 64)
		case bool:
			row[i].s = strconv.FormatBool(x)
		case time.Time:
			row[i].s = x.Format("2006-01-02")
		default:
			row[i].s = fmt.Sprint(x)
		}
	}
	return c.add(row)
}

func (c *Check) add(row []value) error {
	if c.err != nil {
		return nil
	}
	c.n++
	if c.n > len(c.ref) {
		c.err = fmt.Errorf("Q%d row %d: got more than the %d rows of the reference", c.q, c.n, len(c.ref))
		return c.err
	}
	if len(row) != len(c.cols) {
		c.err = fmt.Errorf("Q%d row %d: got %d columns, want %d (%s)", c.q, c.n, len(row), len(c.cols), strings.Join(c.cols, ", "))
		return c.err
	}
	c.group = append(c.group, row)
	start := c.n - len(c.group)
	if c.n < c.ends[start] {
		return nil // the tie group goes on
	}
	c.err = c.checkGroup(start)
	c.group = c.group[:0]
	return c.err
}

// checkGroup matches the rows of the tie group that starts at reference
// row start with the reference's, in any order.
func (c *Check) checkGroup(start int) error {
	ref := c.ref[start : start+len(c.group)]
	if len(ref) == 1 {
		if k, ok := c.diff(c.group[0], ref[0]); !ok {
			return c.mismatch(start, k, c.group[0], ref[0], "")
		}
		return nil
	}
	used := make([]bool, len(ref))
	for j, got := range c.group {
		if _, ok := c.diff(got, ref[j]); ok && !used[j] {
			used[j] = true
			continue
		}
		found := false
		for i := range ref {
			if _, ok := c.diff(got, ref[i]); ok && !used[i] {
				used[i], found = true, true
				break
			}
		}
		if !found {
			note := fmt.Sprintf(" (rows %d–%d tie on the ORDER BY and may come in any order; this row matches none of them)",
				start+1, start+len(ref))
			k, _ := c.diff(got, ref[j])
			return c.mismatch(start+j, k, got, ref[j], note)
		}
	}
	return nil
}

func (c *Check) mismatch(i, k int, got []value, want []string, note string) error {
	return fmt.Errorf("Q%d row %d column %s: got %s, want %s%s", c.q, i+1, c.cols[k], got[k], want[k], note)
}

// diff is the first column where got does not match want, and false; or
// true if none.
func (c *Check) diff(got []value, want []string) (int, bool) {
	for k := range want {
		if !c.match(k, got[k], want[k]) {
			return k, false
		}
	}
	return 0, true
}

// match tells whether got matches the reference value want in column k.
func (c *Check) match(k int, got value, want string) bool {
	if got.null || want == Null {
		return got.null && want == Null
	}
	switch kind(c.shape.kinds[k]) {
	case text:
		return strings.TrimRight(got.s, " ") == strings.TrimRight(want, " ")
	case date:
		g := got.s
		if len(g) > 10 && (g[10] == ' ' || g[10] == 'T') {
			g = g[:10]
		}
		return g == want
	}
	a, err1 := strconv.ParseFloat(strings.TrimSpace(got.s), 64)
	b, err2 := strconv.ParseFloat(want, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	switch kind(c.shape.kinds[k]) {
	case integ:
		return a == b
	case sum:
		return closeSum(a, b)
	default: // ratio
		return closeSum(a, b) || closeRatio(a, b)
	}
}

// closeSum is part 10's tolerance for sums: |a − b| ≤ 1e−4 + 1e−8·|b|,
// which exact decimals and SQLite's binary floats both meet.
func closeSum(a, b float64) bool {
	return math.Abs(a-b) <= 1e-4+1e-8*math.Abs(b)
}

// closeRatio is the specification's rule for averages and ratios: within
// 1% of the reference after both are rounded to 0.01.
func closeRatio(a, b float64) bool {
	ra, rb := math.Round(a*100)/100, math.Round(b*100)/100
	return math.Abs(ra-rb) <= 0.01*math.Abs(rb)+1e-12
}

// Done ends the answer: the first mismatch Row found, or an error if the
// answer has fewer rows than the reference.
func (c *Check) Done() error {
	if c.err != nil {
		return c.err
	}
	if c.n != len(c.ref) {
		c.err = fmt.Errorf("Q%d: got %d rows, want %d", c.q, c.n, len(c.ref))
	}
	return c.err
}
