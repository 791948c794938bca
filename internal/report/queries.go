package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"time"
)

// The report of a compare of an analytic workload (tpch) across
// databases: one grouped bar chart of each query's seconds, a bar per
// database, on a logarithmic axis (a 1 ms query and a 1 s one are both
// readable), the composite figures and what each database was. Inline
// CSS and SVG, as the matrix's report: no script at all.

//go:embed queries.html
var queriesHTML string

var queriesPage = template.Must(template.Must(template.New("queries").Parse(queriesHTML)).Parse(factsHTML))

// QueryPlotBG is the query chart's plot background: tests find the chart
// in a screenshot by it.
const QueryPlotBG = "#eef5f1"

// Database is one database of the compare: what it is and its composite
// figures (nil: not measured).
type Database struct {
	Name              string // the redacted URL
	Driver, Version   string
	Transport         string
	Scale             float64
	Power, Throughput *float64
	QphH              *float64
	ThroughputSeconds *float64
	Verified          *bool
	Ratio             *float64 // headline against the first database's
	JobID             int64
	Interrupted       bool
}

// QueryTimes is one query's seconds, one per database in Databases'
// order; nil where that database did not run it.
type QueryTimes struct {
	Query   int
	Seconds []*float64
}

// QueryReport is everything the page shows.
type QueryReport struct {
	Title       string
	Command     string
	Generated   time.Time
	Source      string // "power": the power test's seconds; "throughput": the streams' mean
	Databases   []Database
	Queries     []QueryTimes
	Host, Run   []Fact
	JobID       int64
	Interrupted bool
	// Rows, when set, is the figures table in place of TPC-H's composite
	// figures (a mixed compare's NOPM and queries per hour by side).
	Rows []FigureRow
}

// FigureRow is one row of the figures table: its name and a value per
// database (column), as text.
type FigureRow struct {
	Name   string
	Values []string
}

// WriteQueries renders r as HTML to w.
func WriteQueries(w io.Writer, r *QueryReport) error {
	if err := queriesPage.Execute(w, buildQueries(r)); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	return nil
}

type qview struct {
	*QueryReport
	CSS       template.CSS
	Generated string
	Legend    []legendItem
	Chart     chart
	Groups    []qgroup
	Figures   []figRow
	DBRows    []dbRow
}

// qgroup is one query's bars.
type qgroup struct {
	Label string
	Bars  []bar
}

type figRow struct {
	Name   string
	Values []string
}

type dbRow struct {
	Key, Name, What, Scale, Job, Color string
	Interrupted                        bool
}

const (
	qW, qH                    = 1100, 420
	qLeft, qRight, qTop, qBot = 70, 16, 16, 48
)

func buildQueries(r *QueryReport) *qview {
	v := &qview{QueryReport: r, CSS: template.CSS(styleCSS), Generated: r.Generated.Format("2006-01-02 15:04:05 MST")}
	for i, d := range r.Databases {
		col := Palette[i%len(Palette)]
		v.Legend = append(v.Legend, legendItem{Name: dbKey(i) + " · " + d.Name, Color: col})
		what := d.Driver + " " + d.Version
		if d.Transport != "" {
			what += " (" + d.Transport + ")"
		}
		row := dbRow{Key: dbKey(i), Name: d.Name, What: what, Scale: strconv.FormatFloat(d.Scale, 'g', -1, 64), Job: "-",
			Color: col, Interrupted: d.Interrupted}
		if d.JobID > 0 {
			row.Job = strconv.FormatInt(d.JobID, 10)
		}
		v.DBRows = append(v.DBRows, row)
	}
	v.Chart, v.Groups = queryChart(r)
	fig := func(name string, get func(Database) string) {
		row := figRow{Name: name}
		for _, d := range r.Databases {
			row.Values = append(row.Values, get(d))
		}
		v.Figures = append(v.Figures, row)
	}
	num := func(p *float64, format string) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf(format, *p)
	}
	if len(r.Rows) > 0 {
		for _, row := range r.Rows {
			v.Figures = append(v.Figures, figRow{Name: row.Name, Values: row.Values})
		}
		return v
	}
	fig("Power@Size", func(d Database) string { return num(d.Power, "%.1f") })
	fig("Throughput@Size", func(d Database) string { return num(d.Throughput, "%.1f") })
	fig("QphH@Size", func(d Database) string { return num(d.QphH, "%.1f") })
	fig("throughput test Ts (s)", func(d Database) string { return num(d.ThroughputSeconds, "%.3f") })
	fig("ratio to A (QphH, else Power)", func(d Database) string { return num(d.Ratio, "%.2f") })
	fig("answers", func(d Database) string {
		switch {
		case d.Verified == nil:
			return "not checked"
		case *d.Verified:
			return "verified"
		}
		return "DIFFER"
	})
	return v
}

// dbKey names the i-th database in the tables: A, B, C…
func dbKey(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return "D" + strconv.Itoa(i+1)
}

// secondsLabel writes a time on the axis: 100 µs, 1 ms, 10 s.
func secondsLabel(s float64) string {
	switch {
	case s >= 1:
		return strconv.FormatFloat(s, 'g', -1, 64) + " s"
	case s >= 1e-3:
		return strconv.FormatFloat(math.Round(s*1e6)/1e3, 'g', -1, 64) + " ms"
	}
	return strconv.FormatFloat(math.Round(s*1e9)/1e3, 'g', -1, 64) + " µs"
}

// queryChart draws a group of bars per query, a bar per database in its
// colour, on a logarithmic seconds axis of whole decades.
func queryChart(r *QueryReport) (chart, []qgroup) {
	ch := chart{W: qW, H: qH, BG: QueryPlotBG, XLabel: "query", YLabel: "seconds (log scale)"}
	pw, ph := float64(qW-qLeft-qRight), float64(qH-qTop-qBot)
	ch.frame(qLeft, qTop, pw, ph)
	ch.XLabelY, ch.YLabelY = f(qH-8), f(qTop+ph/2)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, q := range r.Queries {
		for _, s := range q.Seconds {
			if s != nil && *s > 0 {
				lo, hi = math.Min(lo, *s), math.Max(hi, *s)
			}
		}
	}
	if math.IsInf(lo, 0) {
		ch.Empty = "no query was measured"
		ch.EmptyX, ch.EmptyY = f(qLeft+pw/2), f(qTop+ph/2)
		lo, hi = 1e-3, 1
	}
	dlo, dhi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if dhi <= dlo {
		dhi = dlo + 1
	}
	yOf := func(s float64) float64 {
		return qTop + ph - (math.Log10(s)-dlo)/(dhi-dlo)*ph
	}
	for d := dlo; d <= dhi; d++ {
		ch.YTicks = append(ch.YTicks, tick{Pos: f(yOf(math.Pow(10, d))), Label: secondsLabel(math.Pow(10, d))})
	}
	n := max(len(r.Queries), 1)
	groupW := pw / float64(n)
	barW := groupW * 0.8 / float64(max(len(r.Databases), 1))
	var groups []qgroup
	for i, q := range r.Queries {
		gx := qLeft + float64(i)*groupW
		label := "Q" + strconv.Itoa(q.Query)
		ch.XTicks = append(ch.XTicks, tick{Pos: f(gx + groupW/2), Label: label})
		g := qgroup{Label: label}
		for k, s := range q.Seconds {
			if s == nil || *s <= 0 {
				continue
			}
			name := ""
			if k < len(r.Databases) {
				name = r.Databases[k].Name
			}
			y := math.Min(yOf(*s), qTop+ph-1) // at least a pixel: the fastest query shows too
			x := gx + groupW*0.1 + float64(k)*barW
			g.Bars = append(g.Bars, bar{X: f(x), Y: f(y), W: f(barW * 0.92), H: f(qTop + ph - y), Color: Palette[k%len(Palette)],
				Opacity: "1", Title: fmt.Sprintf("%s on %s %s: %s", label, dbKey(k), name, secondsText(*s))})
		}
		groups = append(groups, g)
	}
	return ch, groups
}

// secondsText is a query's time for a tooltip.
func secondsText(s float64) string {
	if s >= 1 {
		return fmt.Sprintf("%.3f s", s)
	}
	return fmt.Sprintf("%.2f ms", s*1000)
}
