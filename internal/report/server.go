package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"strings"
)

// Issue 25: the server's side of a cell as sledge's sampler (in-process
// or through sledge agent) measured it: where its threads were, its cost
// per transaction, its on-CPU stacks.

// Threads is where the server's threads were over the measured interval:
// shares (0–1) of the thread samples, summing to 1.
type Threads struct {
	CPU, Runnable, Network, Lock, IO, Idle float64
	Samples                                int64
	Source                                 string // "agent db1:7078", "this host (/proc)"
}

// ServerCost is the server's cost per transaction; nil: not measured.
type ServerCost struct {
	CPUUs, VoluntarySwitches, InvoluntarySwitches, RunQueueDelayUs, PortBytesIn, PortBytesOut *float64
	Source                                                                                    string
}

// Stacks are the server's on-CPU stacks, folded ("proc;frame;…;leaf N").
type Stacks struct {
	Folded  string
	Hz      int
	Samples int64
	Source  string
}

// State colours, Okabe and Ito's: the server's CPU and waiting have the
// colours of the split chart's server CPU and waiting (its waiting is
// mostly the network), so a colour means one thing on the page. Tests
// look for them.
const (
	StateCPUColor      = ServerCPUColor
	StateRunnableColor = "#cc79a7"
	StateNetworkColor  = WaitColor
	StateLockColor     = "#009e73"
	StateIOColor       = "#56b4e9"
	StateIdleColor     = "#c8c8c8"
	ThreadsPlotBG      = "#f7f5ee"
)

// stateKeys are the thread states in drawing order, with their colours.
var stateKeys = []struct {
	name, color string
	share       func(Threads) float64
}{
	{"cpu", StateCPUColor, func(t Threads) float64 { return t.CPU }},
	{"runnable (waiting for a CPU)", StateRunnableColor, func(t Threads) float64 { return t.Runnable }},
	{"network (socket, poll)", StateNetworkColor, func(t Threads) float64 { return t.Network }},
	{"lock (futex)", StateLockColor, func(t Threads) float64 { return t.Lock }},
	{"io (disk)", StateIOColor, func(t Threads) float64 { return t.IO }},
	{"idle", StateIdleColor, func(t Threads) float64 { return t.Idle }},
}

const (
	thW, thLeft, thRight, thTop, thRowH, thGap, thBot = 1100, 260, 30, 10, 20, 10, 40
)

// note is a line of text inside a chart (a row without figures says why).
type note struct{ X, Y, Text string }

// threadsChart draws, per cell, the server's thread states as one 100%
// bar and beneath it the client's view of the same transaction (client
// CPU, server CPU, waiting, as shares of the mean latency).
func threadsChart(cells []Cell) (chart, bool) {
	have := false
	for _, c := range cells {
		if c.Threads != nil {
			have = true
		}
	}
	n := max(len(cells), 1)
	ph := float64(n*(2*thRowH+thGap) - thGap)
	ch := chart{W: thW, H: thTop + int(ph) + thBot, BG: ThreadsPlotBG, XLabel: "share of the transaction (server: of its threads' samples; client: of the mean latency)"}
	pw := float64(thW - thLeft - thRight)
	ch.frame(thLeft, thTop, pw, ph)
	ch.XLabelY = f(float64(thTop) + ph + 34)
	for x := 0.0; x <= 1.0001; x += 0.25 {
		ch.XTicks = append(ch.XTicks, tick{Pos: f(thLeft + x*pw), Label: fmt.Sprintf("%.0f%%", x*100)})
	}
	for i, c := range cells {
		y := float64(thTop + i*(2*thRowH+thGap))
		name := fmt.Sprintf("%s · %s · %d VUs", c.Mode, c.Transport, c.VUs)
		ch.YTicks = append(ch.YTicks, tick{Pos: f(y + thRowH/2), Label: name + " · server"}, tick{Pos: f(y + thRowH*1.5), Label: "client"})
		x := float64(thLeft)
		seg := func(y, v float64, color, title string) {
			if v <= 0 {
				return
			}
			w := v * pw
			ch.Bars = append(ch.Bars, bar{X: f(x), Y: f(y + 2), W: f(w), H: f(thRowH - 4), Color: color, Opacity: "1", Title: title})
			x += w
		}
		if t := c.Threads; t != nil {
			for _, k := range stateKeys {
				v := k.share(*t)
				seg(y, v, k.color, fmt.Sprintf("%s, server threads: %s %.1f%%", name, k.name, v*100))
			}
		} else {
			ch.Notes = append(ch.Notes, note{X: f(thLeft + 8), Y: f(y + thRowH/2), Text: "server threads not sampled: " + c.ThreadsWhy})
		}
		x = float64(thLeft)
		if s := c.Split; s != nil {
			total := s.ClientCPUUs + s.WaitUs
			if s.ServerCPUUs != nil {
				total += *s.ServerCPUUs
			}
			if total > 0 {
				yc := y + thRowH
				seg(yc, s.ClientCPUUs/total, ClientCPUColor, fmt.Sprintf("%s, client: client CPU %s µs (%.1f%%)", name, compact(s.ClientCPUUs), s.ClientCPUUs/total*100))
				if s.ServerCPUUs != nil {
					seg(yc, *s.ServerCPUUs/total, ServerCPUColor, fmt.Sprintf("%s, client: server CPU %s µs (%.1f%%)", name, compact(*s.ServerCPUUs), *s.ServerCPUUs/total*100))
				}
				seg(yc, s.WaitUs/total, WaitColor, fmt.Sprintf("%s, client: waiting %s µs (%.1f%%)", name, compact(s.WaitUs), s.WaitUs/total*100))
			}
		} else {
			ch.Notes = append(ch.Notes, note{X: f(thLeft + 8), Y: f(y + thRowH*1.5), Text: "no client CPU figures"})
		}
	}
	return ch, have
}

// threadRow and serverRow are the tables under the chart.
type threadRow struct{ Cell, Source, CPU, Runnable, Network, Lock, IO, Idle, Samples string }

type serverRow struct {
	Cell, ClientCPU, ClientSwitches, ClientRunQueue                           string
	ServerCPU, Voluntary, Involuntary, RunQueue, PortIn, PortOut, Source, Why string
}

func serverTables(cells []Cell) ([]threadRow, []serverRow, bool) {
	var tr []threadRow
	var sr []serverRow
	have := false
	p := func(v *float64, format string) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf(format, *v)
	}
	pct := func(v float64) string { return fmt.Sprintf("%.1f%%", v*100) }
	for _, c := range cells {
		name := fmt.Sprintf("%s · %s · %d VUs", c.Mode, c.Transport, c.VUs)
		if t := c.Threads; t != nil {
			tr = append(tr, threadRow{name, t.Source, pct(t.CPU), pct(t.Runnable), pct(t.Network), pct(t.Lock), pct(t.IO), pct(t.Idle), thousands(float64(t.Samples))})
		} else {
			tr = append(tr, threadRow{Cell: name, Source: "not sampled: " + c.ThreadsWhy})
		}
		r := serverRow{Cell: name, ClientCPU: "-", ClientSwitches: "-", ClientRunQueue: "-", ServerCPU: "-", Voluntary: "-",
			Involuntary: "-", RunQueue: "-", PortIn: "-", PortOut: "-", Why: c.ThreadsWhy}
		if k := c.Cost; k != nil {
			r.ClientCPU, r.ClientSwitches = fmt.Sprintf("%.0f", k.ClientCPUUs), fmt.Sprintf("%.1f", k.ContextSwitches)
			r.ClientRunQueue = p(k.ClientRunQueueDelayUs, "%.1f")
		}
		if s := c.Server; s != nil {
			have = true
			r.ServerCPU, r.Voluntary, r.Involuntary = p(s.CPUUs, "%.0f"), p(s.VoluntarySwitches, "%.1f"), p(s.InvoluntarySwitches, "%.1f")
			r.RunQueue, r.PortIn, r.PortOut, r.Source = p(s.RunQueueDelayUs, "%.1f"), p(s.PortBytesIn, "%.0f"), p(s.PortBytesOut, "%.0f"), s.Source
			r.Why = ""
		}
		sr = append(sr, r)
	}
	return tr, sr, have
}

//go:embed vendor/flame-chart-js/flame-chart.min.js
var flameChartJS string

//go:embed flame.js
var flameJS string

// FlameFiles are the flame graph's library and sledge's wrapper of it, by
// the path the service's page loads them from: the page and the report
// draw stacks with the same files, kept once, here.
func FlameFiles() map[string]string {
	return map[string]string{"vendor/flame-chart-js/flame-chart.min.js": flameChartJS, "flame.js": flameJS}
}

// flame is one cell's flame graph as the template shows it.
type flame struct{ Cell, Folded, About string }

func flames(cells []Cell) []flame {
	var out []flame
	for _, c := range cells {
		s := c.Stacks
		if s == nil || strings.TrimSpace(s.Folded) == "" {
			continue
		}
		about := fmt.Sprintf("%s samples at %d Hz, %s", thousands(float64(s.Samples)), s.Hz, s.Source)
		out = append(out, flame{Cell: fmt.Sprintf("%s · %s · %d VUs", c.Mode, c.Transport, c.VUs), Folded: s.Folded, About: about})
	}
	return out
}

// flameScript is the library, sledge's flame.js and the call that draws
// every .flame of the page: inline, the report loads nothing.
func flameScript() template.JS {
	return template.JS(flameChartJS + "\n" + flameJS + "\n" +
		`for (const el of document.querySelectorAll(".flame[data-folded]")) sledgeFlame(el, el.dataset.folded, 1080);` + "\n")
}
