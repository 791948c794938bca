// Package report renders the result of `sledge compare` as one
// self-contained HTML file: inline CSS and inline SVG charts drawn here
// (and, when a cell has stacks, the vendored flame graph library inline),
// no script, font or stylesheet from anywhere else, so the file works
// offline and can be mailed or attached to a ticket as it is.
package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed facts.html
var factsHTML string

//go:embed template.html
var pageHTML string

//go:embed style.css
var styleCSS string

var page = template.Must(template.Must(template.New("report").Parse(pageHTML)).Parse(factsHTML))

// Cost is what one transaction cost on average, measured by the client.
type Cost struct {
	RoundTrips      float64
	BytesSent       float64
	BytesReceived   float64
	ClientCPUUs     float64
	ContextSwitches float64
	// ClientRunQueueDelayUs is the time sledge's threads waited for a CPU
	// (issue 25); nil where not measured.
	ClientRunQueueDelayUs *float64
}

// Cell is one run of the matrix.
type Cell struct {
	Mode        string
	Transport   string
	VUs         int
	NOPM        *float64 // nil when the workload has no such meter
	TPM         float64
	TPMSource   string // "database" or "client"
	P90Ms       float64
	Cost        *Cost    // nil when the run did not report its cost
	Split       *Split   // where a transaction's time went; nil without CPU figures
	Ratio       *float64 // throughput against the first cell
	JobID       int64    // 0 when not recorded
	Interrupted bool
	// Issue 25 (server.go): where the server's threads were, its cost per
	// transaction and its on-CPU stacks; nil when not measured, and
	// ThreadsWhy says why there are no thread states.
	Threads    *Threads
	ThreadsWhy string
	Server     *ServerCost
	Stacks     *Stacks
}

// Pair is two cells that differ only in mode: To's throughput over From's,
// and To − From per transaction. A nil figure was not measured in both.
type Pair struct {
	From, To         string
	Transport        string
	VUs              int
	Ratio            *float64
	RoundTripsDelta  *float64
	ClientCPUUsDelta *float64
	ServerCPUUsDelta *float64
}

// Fact is one named value shown in the report's fact lists.
type Fact struct{ Name, Value string }

// Report is everything the page shows.
type Report struct {
	Title       string
	Command     string // the compare command, password redacted
	Generated   time.Time
	Database    string // URL, password redacted
	DBVersion   string
	P90Type     string            // the transaction type of the p90 column
	Settings    map[string]string // database settings the cells ran with
	Host        []Fact
	Run         []Fact // seed, ramp-up, duration or iterations, scale
	Cells       []Cell
	Pairs       []Pair // mode against mode
	JobID       int64  // the compare job, 0 when not recorded
	Interrupted bool
}

// Series colours: Okabe and Ito's palette, told apart also by people with
// colour-blindness. Tests look for these exact colours in a screenshot.
var Palette = []string{"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9"}

// Plot area backgrounds: tests find the charts in a screenshot by them.
const (
	ThroughputPlotBG = "#eef3f9"
	CostPlotBG       = "#f5f0f9"
)

// Write renders r as HTML to w.
func Write(w io.Writer, r *Report) error {
	if err := page.Execute(w, build(r)); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	return nil
}

// view is what the template sees: geometry already computed, every number
// already formatted.
type view struct {
	*Report
	CSS        template.CSS
	Generated  string
	Metric     string
	Legend     []legendItem
	Throughput chart
	Costs      []chart
	HasCost    bool
	Split      chart // split.go
	HasSplit   bool
	SplitKeys  []legendItem
	Threads    chart // server.go
	HasThreads bool
	ThreadKeys []legendItem
	ThreadRows []threadRow
	ServerRows []serverRow
	HasServer  bool
	Flames     []flame
	FlameJS    template.JS // only when there are flames
	Rows       []row
	PairRows   []pairRow
	Settings   []Fact
	Version    string // the one "version" fact: the server's own words, else DBVersion
}

// pairRow is a Pair as the table shows it.
type pairRow struct{ From, To, Transport, VUs, Ratio, RoundTrips, ClientCPU, ServerCPU string }

func newPairRow(p Pair) pairRow {
	f := func(v *float64, format string) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf(format, *v)
	}
	return pairRow{From: p.From, To: p.To, Transport: p.Transport, VUs: strconv.Itoa(p.VUs), Ratio: f(p.Ratio, "%.2f"),
		RoundTrips: f(p.RoundTripsDelta, "%+.1f"), ClientCPU: f(p.ClientCPUUsDelta, "%+.0f"), ServerCPU: f(p.ServerCPUUsDelta, "%+.0f")}
}

type legendItem struct{ Name, Color, Dash string }

type chart struct {
	W, H                      int
	X, Y, PW, PH, XEnd, YEnd  string // plot area
	TickX, TickY              string // where the axes' tick labels sit
	BG                        string
	Title, XLabel, YLabel     string
	XLabelX, XLabelY, YLabelY string
	YTicks, XTicks            []tick
	Lines                     []line
	Bars                      []bar
	Notes                     []note
	Empty                     string // shown in the plot when there is nothing to draw
	EmptyX, EmptyY            string
}

// frame places the plot area.
func (ch *chart) frame(left, top, pw, ph float64) {
	ch.X, ch.Y, ch.PW, ch.PH = f(left), f(top), f(pw), f(ph)
	ch.XEnd, ch.YEnd = f(left+pw), f(top+ph)
	ch.TickX, ch.TickY = f(left-6), f(top+ph+18)
	ch.XLabelX = f(left + pw/2)
}

type tick struct{ Pos, Label string }

type line struct {
	Name, Color, Dash, Points string
	Dots                      []dot
}

type dot struct{ X, Y, Color, Title string }

type bar struct{ X, Y, W, H, Color, Opacity, Title string }

type row struct {
	Mode, Transport, VUs, NOPM, TPM, P90, RoundTrips, Bytes, CPU, Ratio, Job string
	Interrupted                                                              bool
}

// series is one line of the throughput chart: a mode over one transport.
type series struct {
	key, name string
	color     string
	dash      string
	cells     []Cell
	hasPoints bool
}

func build(r *Report) *view {
	v := &view{Report: r, CSS: template.CSS(styleCSS), Generated: r.Generated.Format("2006-01-02 15:04:05 MST")}
	v.Metric = "NOPM"
	for _, c := range r.Cells {
		if c.NOPM == nil {
			v.Metric = "TPM" // a workload without New-Orders: plot what every cell has
			break
		}
	}
	ss, vus := group(r.Cells)
	for _, s := range ss {
		v.Legend = append(v.Legend, legendItem{Name: s.name, Color: s.color, Dash: s.dash})
	}
	v.Throughput = throughputChart(ss, vus, v.Metric)
	v.Costs, v.HasCost = costCharts(ss, vus)
	v.Split, v.HasSplit = splitChart(r.Cells)
	v.SplitKeys = []legendItem{{Name: "client CPU", Color: ClientCPUColor}, {Name: "server CPU", Color: ServerCPUColor},
		{Name: "waiting (derived: mean latency − both CPUs)", Color: WaitColor}}
	v.Threads, v.HasThreads = threadsChart(r.Cells)
	for _, k := range stateKeys {
		v.ThreadKeys = append(v.ThreadKeys, legendItem{Name: "server: " + k.name, Color: k.color})
	}
	v.ThreadKeys = append(v.ThreadKeys, legendItem{Name: "client: client CPU", Color: ClientCPUColor},
		legendItem{Name: "client: server CPU", Color: ServerCPUColor}, legendItem{Name: "client: waiting", Color: WaitColor})
	v.ThreadRows, v.ServerRows, v.HasServer = serverTables(r.Cells)
	if v.Flames = flames(r.Cells); len(v.Flames) > 0 {
		v.FlameJS = flameScript()
	}
	for _, c := range r.Cells {
		v.Rows = append(v.Rows, tableRow(c))
	}
	for _, p := range r.Pairs {
		v.PairRows = append(v.PairRows, newPairRow(p))
	}
	// PostgreSQL's settings carry version() ("PostgreSQL 15.14 on
	// x86_64-pc-linux-gnu, compiled by …"): it is the version row, not a
	// second row of the same name.
	v.Version = r.DBVersion
	keys := make([]string, 0, len(r.Settings))
	for k := range r.Settings {
		if k == "version" {
			v.Version = r.Settings[k]
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v.Settings = append(v.Settings, Fact{k, r.Settings[k]})
	}
	return v
}

// group splits the cells into series (in the order they first appear) and
// the VU counts on the x axis (ascending).
func group(cells []Cell) ([]*series, []int) {
	var ss []*series
	byKey := map[string]*series{}
	seenVU := map[int]bool{}
	var vus []int
	transports := map[string]bool{}
	for _, c := range cells {
		transports[c.Transport] = true
	}
	for _, c := range cells {
		key := c.Mode + "/" + c.Transport
		s := byKey[key]
		if s == nil {
			name := c.Mode
			if len(transports) > 1 {
				name += " · " + c.Transport
			}
			s = &series{key: key, name: name, color: Palette[len(ss)%len(Palette)]}
			if c.Transport == "unix" && len(transports) > 1 {
				s.dash = "7 4" // the same colours twice would be ambiguous: unix is dashed
			}
			byKey[key] = s
			ss = append(ss, s)
		}
		s.cells = append(s.cells, c)
		if !seenVU[c.VUs] {
			seenVU[c.VUs] = true
			vus = append(vus, c.VUs)
		}
	}
	sort.Ints(vus)
	return ss, vus
}

func metricOf(c Cell, metric string) (float64, bool) {
	if metric == "NOPM" {
		if c.NOPM == nil {
			return 0, false
		}
		return *c.NOPM, true
	}
	return c.TPM, true
}

const (
	tpW, tpH                      = 1100, 380
	tpLeft, tpRight, tpTop, tpBot = 80, 20, 16, 56
)

func throughputChart(ss []*series, vus []int, metric string) chart {
	ch := chart{W: tpW, H: tpH, BG: ThroughputPlotBG, XLabel: "virtual users", YLabel: metric + " (per minute)"}
	pw, ph := float64(tpW-tpLeft-tpRight), float64(tpH-tpTop-tpBot)
	ch.frame(tpLeft, tpTop, pw, ph)
	ch.XLabelY, ch.YLabelY = f(tpH-12), f(tpTop+ph/2)
	maxV := 0.0
	for _, s := range ss {
		for _, c := range s.cells {
			if m, ok := metricOf(c, metric); ok {
				maxV = math.Max(maxV, m)
			}
		}
	}
	top, step := niceScale(maxV)
	for y := 0.0; y <= top+step/2; y += step {
		ch.YTicks = append(ch.YTicks, tick{Pos: f(tpTop + ph - y/top*ph), Label: compact(y)})
	}
	// VU counts are evenly spaced (1, 2, 4, 8 reads better than to scale),
	// half a step in from each edge.
	xOf := map[int]float64{}
	for i, n := range vus {
		xOf[n] = tpLeft + (float64(i)+0.5)*pw/float64(len(vus))
		ch.XTicks = append(ch.XTicks, tick{Pos: f(xOf[n]), Label: strconv.Itoa(n)})
	}
	for _, s := range ss {
		l := line{Name: s.name, Color: s.color, Dash: s.dash}
		var pts []string
		for _, c := range s.cells {
			m, ok := metricOf(c, metric)
			if !ok {
				continue
			}
			x, y := xOf[c.VUs], tpTop+ph-m/top*ph
			pts = append(pts, f(x)+","+f(y))
			l.Dots = append(l.Dots, dot{X: f(x), Y: f(y), Color: s.color, Title: fmt.Sprintf("%s, %d VUs: %s %s", s.name, c.VUs, thousands(m), metric)})
		}
		l.Points = strings.Join(pts, " ")
		ch.Lines = append(ch.Lines, l)
	}
	if maxV == 0 {
		ch.Empty = "no throughput was measured"
		ch.EmptyX, ch.EmptyY = f(tpLeft+pw/2), f(tpTop+ph/2)
	}
	return ch
}

// costPanel is one measure of the cost chart.
type costPanel struct {
	title string
	value func(Cost) (total, lower float64) // lower: the solid part of a stacked bar
}

var costPanels = []costPanel{
	{"round trips per transaction", func(c Cost) (float64, float64) { return c.RoundTrips, c.RoundTrips }},
	{"bytes per transaction (sent, received)", func(c Cost) (float64, float64) { return c.BytesSent + c.BytesReceived, c.BytesSent }},
	{"client CPU µs per transaction", func(c Cost) (float64, float64) { return c.ClientCPUUs, c.ClientCPUUs }},
}

const (
	cpW, cpH                      = 360, 300
	cpLeft, cpRight, cpTop, cpBot = 60, 12, 30, 44
)

// costCharts draws one bar chart per measure: a group of bars per VU
// count, a bar per series in the series' colour.
func costCharts(ss []*series, vus []int) ([]chart, bool) {
	have := false
	for _, s := range ss {
		for _, c := range s.cells {
			if c.Cost != nil {
				have = true
			}
		}
	}
	var out []chart
	pw, ph := float64(cpW-cpLeft-cpRight), float64(cpH-cpTop-cpBot)
	for _, p := range costPanels {
		ch := chart{W: cpW, H: cpH, BG: CostPlotBG, Title: p.title, XLabel: "virtual users"}
		ch.frame(cpLeft, cpTop, pw, ph)
		ch.XLabelY = f(cpH - 6)
		maxV := 0.0
		for _, s := range ss {
			for _, c := range s.cells {
				if c.Cost != nil {
					t, _ := p.value(*c.Cost)
					maxV = math.Max(maxV, t)
				}
			}
		}
		top, step := niceScale(maxV)
		for y := 0.0; y <= top+step/2; y += step {
			ch.YTicks = append(ch.YTicks, tick{Pos: f(cpTop + ph - y/top*ph), Label: compact(y)})
		}
		groupW := pw / float64(max(len(vus), 1))
		barW := groupW * 0.8 / float64(max(len(ss), 1))
		for i, n := range vus {
			gx := cpLeft + float64(i)*groupW
			ch.XTicks = append(ch.XTicks, tick{Pos: f(gx + groupW/2), Label: strconv.Itoa(n)})
			for k, s := range ss {
				for _, c := range s.cells {
					if c.VUs != n || c.Cost == nil {
						continue
					}
					total, lower := p.value(*c.Cost)
					x := gx + groupW*0.1 + float64(k)*barW
					title := fmt.Sprintf("%s, %d VUs: %s", s.name, n, compact(total))
					hl := lower / top * ph
					ch.Bars = append(ch.Bars, bar{X: f(x), Y: f(cpTop + ph - hl), W: f(barW * 0.92), H: f(hl),
						Color: s.color, Opacity: "1", Title: title})
					if total > lower {
						ht := (total - lower) / top * ph
						ch.Bars = append(ch.Bars, bar{X: f(x), Y: f(cpTop + ph - hl - ht), W: f(barW * 0.92), H: f(ht),
							Color: s.color, Opacity: "0.45", Title: title})
					}
				}
			}
		}
		if !have {
			ch.Empty = "no cost figures in these runs"
			ch.EmptyX, ch.EmptyY = f(cpLeft+pw/2), f(cpTop+ph/2)
		}
		out = append(out, ch)
	}
	return out, have
}

// niceScale returns an axis maximum at or above v and a tick step, both
// 1, 2 or 5 times a power of ten, with about five ticks.
func niceScale(v float64) (top, step float64) {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1, 0.2
	}
	raw := v / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	return math.Ceil(v/step) * step, step
}

func tableRow(c Cell) row {
	r := row{Mode: c.Mode, Transport: c.Transport, VUs: strconv.Itoa(c.VUs), NOPM: "-", Ratio: "-", Job: "-",
		RoundTrips: "-", Bytes: "-", CPU: "-", Interrupted: c.Interrupted}
	if c.NOPM != nil {
		r.NOPM = thousands(*c.NOPM)
	}
	src := "client"
	if c.TPMSource == "database" {
		src = "db"
	}
	r.TPM = thousands(c.TPM) + " " + src
	r.P90 = fmt.Sprintf("%.2f", c.P90Ms)
	if c.Cost != nil {
		r.RoundTrips = fmt.Sprintf("%.1f", c.Cost.RoundTrips)
		r.Bytes = thousands(c.Cost.BytesSent + c.Cost.BytesReceived)
		r.CPU = fmt.Sprintf("%.0f", c.Cost.ClientCPUUs)
	}
	if c.Ratio != nil {
		r.Ratio = fmt.Sprintf("%.2f", *c.Ratio)
	}
	if c.JobID > 0 {
		r.Job = strconv.FormatInt(c.JobID, 10)
	}
	return r
}

// f formats a coordinate: one decimal is finer than a pixel.
func f(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func compact(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return trimZero(v/1e6) + "M"
	case a >= 1e4:
		return trimZero(v/1e3) + "k"
	case a >= 10 || v == 0:
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

func trimZero(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

func thousands(v float64) string {
	n := int64(math.Round(v))
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
