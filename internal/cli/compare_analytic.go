package cli

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
)

func figureText(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f", *v)
}

// dbLetter names the i-th database of an analytic compare: A, B, C…
func dbLetter(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return "D" + strconv.Itoa(i+1)
}

// printAnalyticCompare prints a compare of an analytic workload (tpch)
// across databases: the databases (A, B, …), then one row per query with
// each database's seconds and B/A, C/A…, then the composite figures.
func printAnalyticCompare(w io.Writer, c *runner.AnalyticCompareJSON) {
	fmt.Fprintf(w, "\n%s across %d database%s · seed %d", c.Workload, len(c.Cells), plural(len(c.Cells)), c.Seed)
	if len(c.Options) > 0 {
		var opts []string
		for _, k := range sortedKeys(c.Options) {
			if v := c.Options[k]; v == "true" {
				opts = append(opts, "--"+k)
			} else {
				opts = append(opts, "--"+k+" "+v)
			}
		}
		fmt.Fprintf(w, " · %s", strings.Join(opts, " "))
	}
	fmt.Fprintln(w)
	if len(c.Cells) == 0 {
		fmt.Fprintln(w, "no database was measured")
		return
	}
	for i, x := range c.Cells {
		mark := ""
		if x.Interrupted {
			mark = " (interrupted)"
		}
		job := ""
		if x.JobID != nil {
			job = fmt.Sprintf(" · job %d", *x.JobID)
		}
		fmt.Fprintf(w, "  %s  %s · %s %s · SF %g%s%s\n", dbLetter(i), x.Database, x.Driver, x.DBVersion, x.Scale, job, mark)
	}
	var t textTable
	head := []string{"query"}
	for i := range c.Cells {
		head = append(head, dbLetter(i)+" s")
	}
	for i := 1; i < len(c.Cells); i++ {
		head = append(head, dbLetter(i)+"/A")
	}
	t.row(head...)
	ratio := func(a, b *float64) string {
		if a == nil || b == nil || *a <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", *b / *a)
	}
	for _, q := range c.Queries {
		row := []string{"Q" + strconv.Itoa(q.Query)}
		vals := make([]*float64, len(c.Cells))
		for i, x := range c.Cells {
			if s, ok := q.Seconds[x.Database]; ok {
				vals[i] = &s
				row = append(row, fmt.Sprintf("%.4f", s))
			} else {
				row = append(row, "-")
			}
		}
		for i := 1; i < len(c.Cells); i++ {
			row = append(row, ratio(vals[0], vals[i]))
		}
		t.row(row...)
	}
	fig := func(name string, get func(x *runner.AnalyticCellJSON) *float64) {
		row := []string{name}
		for i := range c.Cells {
			row = append(row, figureText(get(&c.Cells[i])))
		}
		for i := 1; i < len(c.Cells); i++ {
			row = append(row, ratio(get(&c.Cells[0]), get(&c.Cells[i])))
		}
		t.row(row...)
	}
	fig("Power", func(x *runner.AnalyticCellJSON) *float64 { return x.Power })
	fig("Throughput", func(x *runner.AnalyticCellJSON) *float64 { return x.Throughput })
	fig("QphH", func(x *runner.AnalyticCellJSON) *float64 { return x.QphH })
	verified := []string{"answers"}
	for _, x := range c.Cells {
		switch {
		case x.Verified == nil:
			verified = append(verified, "-")
		case *x.Verified:
			verified = append(verified, "ok")
		default:
			verified = append(verified, "DIFFER")
		}
	}
	t.row(verified...)
	t.write(w)
	src := "the power test's seconds per query"
	if c.Source == "throughput" {
		src = "seconds per query: the mean over the throughput test's streams"
	}
	fmt.Fprintf(w, "%s (client clock, submit to last row); B/A: B's seconds over A's (below 1: B is faster),\n", src)
	fmt.Fprintln(w, "and for Power, Throughput and QphH (per hour × SF; higher is better) B's over A's; - where not measured")
	if c.JobID > 0 {
		fmt.Fprintf(w, "job %d\n", c.JobID)
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// diffAnalytic sets two analytic runs' figures side by side (tpch: the
// composite figures, then each query's seconds), in A's order: the
// figures both measured.
func diffAnalytic(a, b workload.AnalyticResult, num func(name string, x, y float64)) {
	fa, ok1 := a.(workload.AnalyticFigures)
	fb, ok2 := b.(workload.AnalyticFigures)
	if !ok1 || !ok2 {
		return
	}
	bv := map[string]float64{}
	for _, f := range fb.Figures() {
		bv[f.Name] = f.Value
	}
	for _, f := range fa.Figures() {
		if v, ok := bv[f.Name]; ok {
			num(f.Name, f.Value, v)
		}
	}
}

// diffAnalyticCompares compares two analytic compares database by
// database (matched by their redacted URLs): the composite figures and
// each query's seconds; it returns the databases only one of them has.
func diffAnalyticCompares(a, b *runner.AnalyticCompareJSON, num func(name string, x, y float64)) (onlyA, onlyB []string) {
	bc := map[string]*runner.AnalyticCellJSON{}
	for i := range b.Cells {
		bc[b.Cells[i].Database] = &b.Cells[i]
	}
	seen := map[string]bool{}
	for i := range a.Cells {
		ca := &a.Cells[i]
		cb, ok := bc[ca.Database]
		if !ok {
			onlyA = append(onlyA, ca.Database)
			continue
		}
		seen[ca.Database] = true
		for _, f := range []struct {
			name string
			x, y *float64
		}{{"power", ca.Power, cb.Power}, {"throughput", ca.Throughput, cb.Throughput}, {"qphh", ca.QphH, cb.QphH}} {
			if f.x != nil && f.y != nil {
				num(ca.Database+"."+f.name, *f.x, *f.y)
			}
		}
		bq := map[int]float64{}
		for _, q := range b.Queries {
			if s, ok := q.Seconds[ca.Database]; ok {
				bq[q.Query] = s
			}
		}
		for _, q := range a.Queries {
			sa, ok1 := q.Seconds[ca.Database]
			sb, ok2 := bq[q.Query]
			if ok1 && ok2 {
				num(fmt.Sprintf("%s.Q%d.seconds", ca.Database, q.Query), sa, sb)
			}
		}
	}
	for i := range b.Cells {
		if n := b.Cells[i].Database; !seen[n] {
			onlyB = append(onlyB, n)
		}
	}
	return onlyA, onlyB
}
