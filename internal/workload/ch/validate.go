package ch

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/tpch/answers"
)

// The reference answers (answers/README.md): the 22 queries on a fresh
// build with --warehouses 1 and seed 1, its rows loaded at refLoad.
//
//go:embed answers/w1
var answerFiles embed.FS

// refLoad is the load time of the rows the reference answers were
// computed on; refDate and refYear are what they show of it.
const (
	refLoad = "2020-06-15 12:00:00"
	refDate = "2020-06-15"
	refYear = "2020"
)

// digestRows: a reference of more rows than this is kept as a digest of
// its rows (digestLine) rather than the rows themselves.
const digestRows = 1000

// shape is how a query's answer is compared: each column's kind (as
// answers.NewCheckOf takes them), its ORDER BY columns, and the column
// that shows the load date (o_entry_d) or year (extract(year …)), -1
// for none.
type shape struct {
	kinds    string
	order    []int
	loadDate int
	loadYear int
}

var shapes = [numQueries + 1]shape{
	1:  {"issrri", []int{0}, -1, -1},
	2:  {"ittitttt", []int{2, 1, 3}, -1, -1},
	3:  {"iiisd", []int{3, 4}, 4, -1},
	4:  {"ii", []int{0}, -1, -1},
	5:  {"ts", []int{1}, -1, -1},
	6:  {"s", nil, -1, -1},
	7:  {"itis", []int{0, 1, 2}, -1, 2},
	8:  {"ir", []int{0}, -1, 0},
	9:  {"tis", []int{0, 1}, -1, 1},
	10: {"itsttt", []int{2}, -1, -1},
	11: {"ii", []int{1}, -1, -1},
	12: {"iii", []int{0}, -1, -1},
	13: {"ii", []int{1, 0}, -1, -1},
	14: {"r", nil, -1, -1},
	15: {"ittts", []int{0}, -1, -1},
	16: {"ttsi", []int{3}, -1, -1},
	17: {"r", nil, -1, -1},
	18: {"tiidis", []int{5, 3}, 3, -1},
	19: {"s", nil, -1, -1},
	20: {"tt", []int{0}, -1, -1},
	21: {"ti", []int{1, 0}, -1, -1},
	22: {"tis", []int{0}, -1, -1},
}

// reference is query q's reference answer: its columns and either its
// rows or (a large answer) its row count and digest.
type reference struct {
	cols   []string
	rows   [][]string
	digest string
	count  int
}

// digestLine starts the second line of a reference kept as a digest:
// "#digest <rows> <sha256 of the canonical rows>".
const digestLine = "#digest "

func loadReference(q int) (*reference, error) {
	b, err := answerFiles.ReadFile(fmt.Sprintf("answers/w1/q%02d.txt", q))
	if err != nil {
		return nil, fmt.Errorf("ch: no reference answer for Q%d: %w", q, err)
	}
	text := string(b)
	if i := strings.Index(text, "\n"+digestLine); i >= 0 {
		f := strings.Fields(strings.TrimSpace(text[i+1+len(digestLine):]))
		if len(f) != 2 {
			return nil, fmt.Errorf("ch: Q%d: bad digest line", q)
		}
		n, err := strconv.Atoi(f[0])
		if err != nil {
			return nil, fmt.Errorf("ch: Q%d: bad digest line: %w", q, err)
		}
		return &reference{cols: strings.Split(text[:i], "|"), count: n, digest: f[1]}, nil
	}
	cols, rows := answers.ParseReference(text)
	return &reference{cols: cols, rows: rows}, nil
}

// canonical is a value as a digest takes it: text without trailing
// blanks, dates YYYY-MM-DD, integers in decimal, sums and ratios rounded
// to cents (sums of money are whole cents; SQLite's binary floats are
// within far less of them).
func canonical(kind byte, v []byte) string {
	if v == nil {
		return answers.Null
	}
	s := string(v)
	switch kind {
	case 't':
		return strings.TrimRight(s, " ")
	case 'd':
		if len(s) > 10 {
			s = s[:10]
		}
		return s
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return s
	}
	if kind == 'i' {
		return strconv.FormatFloat(math.Round(f), 'f', 0, 64)
	}
	r := math.Round(f*100) / 100
	if r == 0 {
		r = 0 // no "-0.00"
	}
	return strconv.FormatFloat(r, 'f', 2, 64)
}

// Digest is the digest of an answer's rows, each given as its canonical
// values: the sha256 of the rows sorted, one per line, values joined by
// '|'. Row order is not part of it.
func Digest(rows []string) string {
	sort.Strings(rows)
	h := sha256.New()
	for _, r := range rows {
		h.Write([]byte(r))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// loadShown is what a fresh build shows of its load time: the date and
// the year of its o_entry_d, as the database writes them.
type loadShown struct{ date, year string }

// toRef maps a value of the build's load date or year to the reference's.
func (l loadShown) toRef(sh shape, k int, v []byte) []byte {
	switch {
	case v == nil:
	case k == sh.loadDate && len(v) >= 10 && string(v[:10]) == l.date:
		return []byte(refDate)
	case k == sh.loadYear && strings.TrimSpace(string(v)) == l.year:
		return []byte(refYear)
	}
	return v
}

// checkAnswer runs query q on c and compares its answer with the
// reference; the error names the first difference.
func checkAnswer(ctx context.Context, c workload.SQLConn, d string, q int, l loadShown) (int64, error) {
	ref, err := loadReference(q)
	if err != nil {
		return 0, err
	}
	sh := shapes[q]
	text, err := Render(d, q)
	if err != nil {
		return 0, err
	}
	if ref.digest != "" {
		var rows []string
		vals := make([]string, len(sh.kinds))
		n, err := c.QuerySQL(ctx, text, func(row [][]byte) error {
			if len(row) != len(sh.kinds) {
				return fmt.Errorf("Q%d: got %d columns, want %d", q, len(row), len(sh.kinds))
			}
			for k, v := range row {
				vals[k] = canonical(sh.kinds[k], l.toRef(sh, k, v))
			}
			rows = append(rows, strings.Join(vals, "|"))
			return nil
		})
		if err != nil {
			return n, err
		}
		if n != int64(ref.count) {
			return n, fmt.Errorf("Q%d: got %d rows, want %d", q, n, ref.count)
		}
		if got := Digest(rows); got != ref.digest {
			return n, fmt.Errorf("Q%d: the %d rows differ from the reference's (digest %.12s, want %.12s)", q, n, got, ref.digest)
		}
		return n, nil
	}
	chk, err := answers.NewCheckOf(q, ref.cols, ref.rows, sh.kinds, sh.order)
	if err != nil {
		return 0, err
	}
	mapped := make([][]byte, len(sh.kinds))
	n, err := c.QuerySQL(ctx, text, func(row [][]byte) error {
		if len(row) != len(mapped) {
			return chk.Row(row) // names the column count
		}
		for k, v := range row {
			mapped[k] = l.toRef(sh, k, v)
		}
		return chk.Row(mapped)
	})
	if err != nil {
		return n, err
	}
	return n, chk.Done()
}

// queryInt runs a query of one integer.
func queryInt(ctx context.Context, c workload.SQLConn, text string) (int64, error) {
	var v int64
	var got bool
	_, err := c.QuerySQL(ctx, text, func(row [][]byte) error {
		if len(row) != 1 || row[0] == nil {
			return fmt.Errorf("%s: not one integer", text)
		}
		f, err := strconv.ParseFloat(string(row[0]), 64)
		if err != nil {
			return fmt.Errorf("%s: %w", text, err)
		}
		v, got = int64(f), true
		return nil
	})
	if err == nil && !got {
		err = fmt.Errorf("%s: no row", text)
	}
	return v, err
}

// refusal is a build --validate cannot check: the user's to fix
// (workload.ErrCannotPrelude), its message one line.
type refusal struct{ msg string }

func (r *refusal) Error() string        { return r.msg }
func (r *refusal) Is(target error) bool { return target == workload.ErrCannotPrelude }

func refuse(format string, args ...any) error { return &refusal{fmt.Sprintf(format, args...)} }

// fresh refuses a schema whose answers are not the reference's: another
// scale or seed, or data the terminals have changed since the build
// (New-Order raises d_next_o_id, Payment adds history rows, Delivery
// deletes new_order rows; the other two only read).
func (w *Workload) fresh(ctx context.Context, c workload.SQLConn) (loadShown, error) {
	if wh := w.Warehouses(); wh != 1 || w.buildSeed != 1 {
		return loadShown{}, refuse("--validate has reference answers for --warehouses 1 and seed 1 only; this schema was built with --warehouses %d and seed %d", wh, w.buildSeed)
	}
	for _, f := range []struct {
		text string
		want int64
		what string
	}{
		{"select count(*) from district where d_next_o_id <> 3001", 0, "New-Order transactions"},
		{"select count(*) from history", 30_000, "Payment transactions"},
		{"select count(*) from new_order", 9_000, "Delivery transactions"},
	} {
		n, err := queryInt(ctx, c, f.text)
		if err != nil {
			return loadShown{}, fmt.Errorf("ch: validate: %w", err)
		}
		if n != f.want {
			return loadShown{}, refuse("--validate needs a fresh build: %s have changed the data since (run `sledge drop ch` and `sledge build ch` again)", f.what)
		}
	}
	var l loadShown
	_, err := c.QuerySQL(ctx, "select min(o_entry_d) from orders", func(row [][]byte) error {
		if len(row) != 1 || len(row[0]) < 10 {
			return fmt.Errorf("min(o_entry_d) is %q, not a date", row)
		}
		l.date, l.year = string(row[0][:10]), string(row[0][:4])
		return nil
	})
	if err != nil {
		return loadShown{}, fmt.Errorf("ch: validate: read the load time: %w", err)
	}
	if l.date < "2007-01-02" || l.date >= "2030-01-01" {
		return loadShown{}, refuse("--validate: the build's load date %s is outside 2007-01-02..2029-12-31, where the queries' date bounds keep the reference's answers", l.date)
	}
	return l, nil
}

// Prelude is the --validate pass (nothing without it): on a fresh build
// with --warehouses 1 and seed 1, each of the 22 queries once, its
// answer checked against the reference; one progress line per query.
func (w *Workload) Prelude(ctx context.Context, c workload.SQLConn, progress func(string)) error {
	if !w.cfg.Validate {
		return nil
	}
	return w.validate(ctx, c, progress)
}

func (w *Workload) validate(ctx context.Context, c workload.SQLConn, progress func(string)) error {
	d, err := dialectOf(c)
	if err != nil {
		return err
	}
	l, err := w.fresh(ctx, c)
	if err != nil {
		return err
	}
	if err := startSession(ctx, c, d); err != nil {
		return err
	}
	var bad []string
	for q := 1; q <= numQueries; q++ {
		start := time.Now()
		n, err := checkAnswer(ctx, c, d, q, l)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		line := fmt.Sprintf("validate Q%d: %d rows, %.3f s, ", q, n, time.Since(start).Seconds())
		if err != nil {
			bad = append(bad, err.Error())
			line += "differs: " + err.Error()
		} else {
			line += "matches"
		}
		if progress != nil {
			progress(line)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("--validate: %d of %d answers differ from the reference; first: %s", len(bad), numQueries, bad[0])
	}
	return nil
}
