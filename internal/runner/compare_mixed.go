package runner

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/sledge-bench/sledge/internal/report"
	"github.com/sledge-bench/sledge/internal/workload"
)

// A mixed workload's compare (CH-benCHmark: `compare ch`) runs each cell
// of its matrix three times: the terminals alone, the analytic streams
// alone and both at once, and sets what each side costs the other side
// by side: NOPM with and without the streams, each query's time with and
// without the terminals.
const (
	sideOLTP     = "oltp"
	sideAnalytic = "analytic"
	sideBoth     = "both"
)

var mixedSides = []string{sideOLTP, sideAnalytic, sideBoth}

// streamsOption is the run option that sets a mixed workload's streams.
const streamsOption = "analytic-streams"

// mixedDefaults checks a mixed workload's compare and gives it its
// defaults: one count of virtual users (4 unless -c is given) and at
// least one analytic stream.
func mixedDefaults(o *CompareOptions, w workload.Mixed) error {
	given := map[string]bool{}
	for _, n := range o.MatrixSet {
		given[n] = true
	}
	if !given["vus"] {
		o.VUs = "4"
	}
	o.defaultMode = !given["modes"]
	if w.AnalyticStreams() < 1 {
		return Usagef("compare %s sets the terminals and the analytic streams side by side: --%s must be at least 1", w.Name(), streamsOption)
	}
	if o.Iterations > 0 {
		return Usagef("compare %s runs timed cells (the streams run as long as the terminals): give -T/--duration, not -t/--iterations", w.Name())
	}
	return nil
}

// mixedStreams is w's streams, 0 when it is not a mixed workload.
func mixedStreams(w workload.Mixed) int {
	if w == nil {
		return 0
	}
	return w.AnalyticStreams()
}

// sideText names a cell's side: "4 VUs alone", "2 streams alone", "4 VUs + 2 streams".
func sideText(side string, vus, streams int) string {
	v := fmt.Sprintf("%d VU%s", vus, plural(vus))
	st := fmt.Sprintf("%d stream%s", streams, plural(streams))
	switch side {
	case sideOLTP:
		return v + " alone"
	case sideAnalytic:
		return st + " alone"
	}
	return v + " + " + st
}

// sideOptions sets a cell's run options for its side: the terminals
// alone run no stream, the streams alone no virtual user.
func sideOptions(opts map[string]any, side string) {
	switch side {
	case sideOLTP:
		opts[streamsOption] = "0"
	case sideAnalytic:
		opts["vus"] = 0
	}
}

// InterferenceJSON is one cell of a mixed compare's matrix (mode,
// transport, virtual users) with its three runs set side by side
// (--json "interference"). A figure is null where its run was not
// measured; a ratio is with / alone.
type InterferenceJSON struct {
	Mode      string `json:"mode"`
	Transport string `json:"transport"`
	VUs       int    `json:"vus"`
	Streams   int    `json:"streams"`
	// NOPM of the terminals alone and beside the streams.
	NOPMAlone        *float64 `json:"nopm_alone"`
	NOPMWithAnalytic *float64 `json:"nopm_with_analytic"`
	NOPMRatio        *float64 `json:"nopm_ratio"`
	// Queries per hour of the streams alone and beside the terminals.
	QphAlone         *float64 `json:"qph_alone"`
	QphWithTerminals *float64 `json:"qph_with_terminals"`
	QphRatio         *float64 `json:"qph_ratio"`
	// Each query's mean seconds alone and beside the terminals.
	Queries []QueryInterferenceJSON `json:"queries"`
}

// QueryInterferenceJSON is one query's mean time alone and beside the
// terminals; null where it did not end inside the measured interval.
type QueryInterferenceJSON struct {
	Query          string   `json:"query"`
	AloneS         *float64 `json:"alone_s"`
	WithTerminalsS *float64 `json:"with_terminals_s"`
	SlowdownRatio  *float64 `json:"slowdown"` // with / alone
}

// interference sets each (mode, transport, VUs) group's three sides side
// by side.
func interference(cells []CellJSON, matrixVUs []int) []InterferenceJSON {
	type key struct {
		mode, transport string
		vus             int
	}
	groups := map[key]map[string]*CellJSON{}
	var order []key
	for i := range cells {
		c := &cells[i]
		if c.Side == "" {
			continue
		}
		k := key{c.Mode, c.Transport, matrixVUs[i]} // the streams-alone cell ran none
		if groups[k] == nil {
			groups[k] = map[string]*CellJSON{}
			order = append(order, k)
		}
		groups[k][c.Side] = c
	}
	var out []InterferenceJSON
	for _, k := range order {
		g := groups[k]
		ij := InterferenceJSON{Mode: k.mode, Transport: k.transport, VUs: k.vus, Queries: []QueryInterferenceJSON{}}
		if c := g[sideOLTP]; c != nil {
			ij.NOPMAlone = c.NOPM
		}
		var alone, with *MixedJSON
		if c := g[sideAnalytic]; c != nil && c.Analytic != nil {
			alone = c.Analytic
			ij.QphAlone = ptr(alone.QueriesPerHour)
			ij.Streams = alone.Streams
		}
		if c := g[sideBoth]; c != nil {
			ij.NOPMWithAnalytic = c.NOPM
			if c.Analytic != nil {
				with = c.Analytic
				ij.QphWithTerminals = ptr(with.QueriesPerHour)
				ij.Streams = with.Streams
			}
		}
		ij.NOPMRatio = ratioOf(ij.NOPMWithAnalytic, ij.NOPMAlone)
		ij.QphRatio = ratioOf(ij.QphWithTerminals, ij.QphAlone)
		n := 0
		if alone != nil {
			n = len(alone.PerQuery)
		} else if with != nil {
			n = len(with.PerQuery)
		}
		for i := 0; i < n; i++ {
			q := QueryInterferenceJSON{}
			if alone != nil && i < len(alone.PerQuery) {
				q.Query = alone.PerQuery[i].Query
				if alone.PerQuery[i].Count > 0 {
					q.AloneS = ptr(alone.PerQuery[i].AvgS)
				}
			}
			if with != nil && i < len(with.PerQuery) {
				q.Query = with.PerQuery[i].Query
				if with.PerQuery[i].Count > 0 {
					q.WithTerminalsS = ptr(with.PerQuery[i].AvgS)
				}
			}
			q.SlowdownRatio = ratioOf(q.WithTerminalsS, q.AloneS)
			ij.Queries = append(ij.Queries, q)
		}
		out = append(out, ij)
	}
	return out
}

func ptr(v float64) *float64 { return &v }

// ratioOf is a / b, nil when either is missing or b is 0.
func ratioOf(a, b *float64) *float64 {
	if a == nil || b == nil || *b == 0 {
		return nil
	}
	return ptr(*a / *b)
}

// ratioText is a ratio for a table: "0.82x", "-" when there is none.
func ratioText(r *float64) string {
	if r == nil {
		return "-"
	}
	return strconv.FormatFloat(*r, 'f', 2, 64) + "x"
}

// writeMixedReport writes a mixed compare's HTML report: each query's
// mean seconds with the streams alone and beside the terminals, a bar
// each (the query chart of compare tpch), and the figures of each side.
// One group of the matrix (its first) is charted; --json has them all.
func writeMixedReport(path string, c *CompareJSON, command string) error {
	g := c.Interference[0]
	r := &report.QueryReport{Title: fmt.Sprintf("sledge compare: %s on %s %s, analytic streams alone and beside %d terminal%s", c.Workload, c.Driver, c.DBVersion, g.VUs, plural(g.VUs)),
		Command: command, Generated: time.Now(), Source: "mean seconds of each query that ended inside the measured interval, measured by sledge",
		JobID: c.JobID, Interrupted: c.Interrupted}
	side := func(name string, analytic string) report.Database {
		d := report.Database{Name: name, Driver: c.Driver, Version: c.DBVersion, Transport: g.Transport}
		for _, cell := range c.Cells {
			if cell.Side == analytic && cell.Mode == g.Mode && cell.Transport == g.Transport && (cell.VUs == g.VUs || analytic == sideAnalytic) {
				if cell.JobID != nil {
					d.JobID = *cell.JobID
				}
				d.Interrupted = cell.Interrupted
			}
		}
		return d
	}
	r.Databases = []report.Database{
		side(fmt.Sprintf("%d terminal%s alone (mode %s)", g.VUs, plural(g.VUs), g.Mode), sideOLTP),
		side(fmt.Sprintf("%d stream%s alone", g.Streams, plural(g.Streams)), sideAnalytic),
		side(fmt.Sprintf("%d terminal%s with %d stream%s", g.VUs, plural(g.VUs), g.Streams, plural(g.Streams)), sideBoth),
	}
	for i, q := range g.Queries {
		r.Queries = append(r.Queries, report.QueryTimes{Query: i + 1, Seconds: []*float64{nil, q.AloneS, q.WithTerminalsS}})
	}
	num := func(p *float64, format string) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf(format, *p)
	}
	r.Rows = []report.FigureRow{
		{Name: "NOPM (from the database)", Values: []string{num(g.NOPMAlone, "%.0f"), "-", num(g.NOPMWithAnalytic, "%.0f")}},
		{Name: "NOPM both / alone", Values: []string{"-", "-", ratioText(g.NOPMRatio)}},
		{Name: "queries per hour (measured by sledge)", Values: []string{"-", num(g.QphAlone, "%.1f"), num(g.QphWithTerminals, "%.1f")}},
		{Name: "queries per hour both / alone", Values: []string{"-", "-", ratioText(g.QphRatio)}},
	}
	h := c.Host
	for _, f := range []report.Fact{{Name: "hostname", Value: h.Hostname}, {Name: "CPU", Value: h.CPUModel},
		{Name: "CPUs", Value: strconv.Itoa(h.CPUs)}, {Name: "memory", Value: gib(h.MemoryBytes)}, {Name: "OS", Value: h.OS},
		{Name: "kernel", Value: h.Kernel}, {Name: "Go", Value: h.GoVersion}} {
		if f.Value != "" {
			r.Host = append(r.Host, f)
		}
	}
	r.Run = []report.Fact{{Name: "workload", Value: c.Workload}, {Name: "scale", Value: c.Scale},
		{Name: "each cell", Value: fmt.Sprintf("%gs ramp-up, %gs measured", c.RampupS, c.DurationS)},
		{Name: "seed", Value: strconv.FormatUint(c.Seed, 10)}, {Name: "sledge", Value: Version()}}
	return writeReportFile(path, func(w io.Writer) error { return report.WriteQueries(w, r) })
}
