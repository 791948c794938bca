package report

import (
	"fmt"
	"math"
)

// Split is where one transaction's time went, in µs: the client's CPU,
// the server's CPU and the rest, waiting (the network, the other's CPU
// queue, locks, the disk). Waiting is derived: the mean latency less both
// CPU figures, never below 0. ServerCPUUs is nil when the server's CPU was
// not measured (remote, embedded): it is then inside waiting.
type Split struct {
	ClientCPUUs float64
	ServerCPUUs *float64
	WaitUs      float64
}

// NewSplit derives a Split from a cell's mean latency and CPU figures.
func NewSplit(latencyMs, clientCPUUs float64, serverCPUUs *float64) *Split {
	s := &Split{ClientCPUUs: clientCPUUs, ServerCPUUs: serverCPUUs}
	w := latencyMs*1000 - clientCPUUs
	if serverCPUUs != nil {
		w -= *serverCPUUs
	}
	s.WaitUs = math.Max(w, 0)
	return s
}

// Segment colours of the split chart (Okabe and Ito): tests look for them.
const (
	ClientCPUColor = "#0072b2"
	ServerCPUColor = "#d55e00"
	WaitColor      = "#e69f00"
	SplitPlotBG    = "#f2f7ee"
)

const (
	spW, spLeft, spRight, spTop, spRowH, spBot = 1100, 220, 30, 10, 22, 40
)

// splitChart draws one horizontal stacked bar per cell.
func splitChart(cells []Cell) (chart, bool) {
	have := false
	maxV := 0.0
	for _, c := range cells {
		if s := c.Split; s != nil {
			have = true
			t := s.ClientCPUUs + s.WaitUs
			if s.ServerCPUUs != nil {
				t += *s.ServerCPUUs
			}
			maxV = math.Max(maxV, t)
		}
	}
	n := max(len(cells), 1)
	ph := float64(n * spRowH)
	ch := chart{W: spW, H: spTop + int(ph) + spBot, BG: SplitPlotBG, XLabel: "µs per transaction"}
	pw := float64(spW - spLeft - spRight)
	ch.frame(spLeft, spTop, pw, ph)
	ch.XLabelY = f(float64(spTop) + ph + 34)
	top, step := niceScale(maxV)
	for x := 0.0; x <= top+step/2; x += step {
		ch.XTicks = append(ch.XTicks, tick{Pos: f(spLeft + x/top*pw), Label: compact(x)})
	}
	for i, c := range cells {
		y := float64(spTop + i*spRowH)
		name := fmt.Sprintf("%s · %s · %d VUs", c.Mode, c.Transport, c.VUs)
		ch.YTicks = append(ch.YTicks, tick{Pos: f(y + spRowH/2), Label: name})
		s := c.Split
		if s == nil {
			continue
		}
		x := float64(spLeft)
		seg := func(v float64, color, what string) {
			if v <= 0 {
				return
			}
			w := v / top * pw
			ch.Bars = append(ch.Bars, bar{X: f(x), Y: f(y + 3), W: f(w), H: f(spRowH - 6), Color: color, Opacity: "1",
				Title: fmt.Sprintf("%s: %s %s µs per transaction", name, what, compact(v))})
			x += w
		}
		seg(s.ClientCPUUs, ClientCPUColor, "client CPU")
		waiting := "waiting"
		if s.ServerCPUUs != nil {
			seg(*s.ServerCPUUs, ServerCPUColor, "server CPU")
		} else {
			waiting = "waiting (server CPU not measured: inside it)"
		}
		seg(s.WaitUs, WaitColor, waiting)
	}
	if !have {
		ch.Empty = "no CPU figures in these runs"
		ch.EmptyX, ch.EmptyY = f(spLeft+pw/2), f(spTop+ph/2)
	}
	return ch, have
}
