package answers

import (
	"fmt"
	"strings"
)

// ParseReference reads a reference answer in the form of this package's
// files: a header line of column names, then one line per row, values
// separated by '|' (Null for NULL).
func ParseReference(text string) (cols []string, rows [][]string) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	cols = strings.Split(lines[0], "|")
	for _, l := range lines[1:] {
		rows = append(rows, strings.Split(l, "|"))
	}
	return cols, rows
}

// NewCheckOf is a check of query q's answer against any reference by the
// same rules as NewCheck: kinds gives each column's comparison ('t' text,
// 'd' date, 'i' integer, 's' sum, 'r' ratio) and order the ORDER BY
// columns (0-based), within which tied rows may come in any order. Its
// messages name the query "Q<q>". The error is a reference that does not
// fit kinds or order.
func NewCheckOf(q int, cols []string, ref [][]string, kinds string, order []int) (*Check, error) {
	if len(kinds) != len(cols) {
		return nil, fmt.Errorf("answers: Q%d has %d columns, its kinds %d", q, len(cols), len(kinds))
	}
	for _, k := range kinds {
		if !strings.ContainsRune("tdisr", k) {
			return nil, fmt.Errorf("answers: Q%d: unknown column kind %q", q, k)
		}
	}
	for _, o := range order {
		if o < 0 || o >= len(cols) {
			return nil, fmt.Errorf("answers: Q%d: ORDER BY column %d out of range", q, o)
		}
	}
	for i, r := range ref {
		if len(r) != len(cols) {
			return nil, fmt.Errorf("answers: Q%d reference row %d has %d values, want %d", q, i+1, len(r), len(cols))
		}
	}
	return newCheck(q, cols, ref, shape{kinds: kinds, order: order}), nil
}
