package runner

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/sledge-bench/sledge/internal/engine"
)

// ProgressLines prints one line to w (stderr) every interval, as pgbench
// -P does: rates over the interval just ended, from the run's live
// counters. meterKind is the mix type whose commits make the business
// meter (TPC-C New-Order for NOPM), or -1. With epoch (pgbench's
// --progress-timestamp) each line starts with the Unix time, in seconds
// with milliseconds, instead of the time since the start. stop prints
// nothing more.
func ProgressLines(w io.Writer, every time.Duration, live *engine.Live, meter string, meterKind int, epoch bool) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		pr := newProgressPrinter(w, live, meter, meterKind, epoch)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				note := ""
				if phase, _ := live.Phase(); phase != engine.PhaseMeasure {
					note = phase.String()
				}
				pr.print(now, note)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
		})
	}
}

// epochLine puts the Unix time (pgbench: "%.3f s") in place of the
// elapsed time of a progress line.
func epochLine(line string, now time.Time) string {
	_, rest, _ := strings.Cut(line, " s, ")
	return fmt.Sprintf("progress: %.3f s, %s", float64(now.UnixMicro())/1e6, rest)
}

// progressPrinter prints progress lines, each with the counts since the
// one before (the first: since it was made).
type progressPrinter struct {
	w             io.Writer
	live          *engine.Live
	meter         string
	meterKind     int
	epoch         bool
	start, lastAt time.Time
	last          progressCounts
}

func newProgressPrinter(w io.Writer, live *engine.Live, meter string, meterKind int, epoch bool) *progressPrinter {
	now := time.Now()
	return &progressPrinter{w: w, live: live, meter: meter, meterKind: meterKind, epoch: epoch,
		start: now, lastAt: now, last: progressCount(live, meterKind)}
}

// print prints the line of the interval that ends at at, with note in
// parentheses after it unless "".
func (p *progressPrinter) print(at time.Time, note string) {
	c := progressCount(p.live, p.meterKind)
	line := progressLine(at.Sub(p.start), at.Sub(p.lastAt), c.sub(p.last), p.meter, p.meterKind >= 0)
	if note != "" {
		line += " (" + note + ")"
	}
	if p.epoch {
		line = epochLine(line, at)
	}
	fmt.Fprintln(p.w, line)
	p.last, p.lastAt = c, at
}

// progressCounts are the live counters one progress line compares.
type progressCounts struct {
	completed, errors, meter, reconnects int64
	latency                              time.Duration
	latencySq                            int64 // Σ latency², µs²
}

func progressCount(live *engine.Live, meterKind int) progressCounts {
	c := progressCounts{completed: live.Completed(), errors: live.Errors(), latency: live.Latency(),
		latencySq: live.LatencySquares(), reconnects: live.Reconnects()}
	if meterKind >= 0 {
		c.meter = live.Kind(meterKind) - live.Rollbacks(meterKind)
	}
	return c
}

func (c progressCounts) sub(o progressCounts) progressCounts {
	return progressCounts{completed: c.completed - o.completed, errors: c.errors - o.errors,
		meter: c.meter - o.meter, latency: c.latency - o.latency, latencySq: c.latencySq - o.latencySq,
		reconnects: c.reconnects - o.reconnects}
}

// progressLine is pgbench's -P line, "progress: 10.0 s, 1234.5 tps, lat
// 3.210 ms stddev 1.234, 0 failed", then sledge's own figures (NOPM,
// reconnects): elapsed since the start, then the interval's figures.
func progressLine(elapsed, span time.Duration, d progressCounts, meter string, hasMeter bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "progress: %.1f s, %.1f tps", elapsed.Seconds(), float64(d.completed)/span.Seconds())
	if d.completed > 0 {
		n := float64(d.completed)
		mean := float64(d.latency.Nanoseconds()) / 1e6 / n
		sq := float64(d.latencySq) / 1e6 / n // ms²
		sd := math.Sqrt(math.Max(sq-mean*mean, 0))
		fmt.Fprintf(&b, ", lat %.3f ms stddev %.3f", mean, sd)
	} else {
		b.WriteString(", lat - ms stddev -")
	}
	fmt.Fprintf(&b, ", %d failed", d.errors)
	if hasMeter {
		fmt.Fprintf(&b, ", %s %s", Thousands(int64(float64(d.meter)/span.Minutes()+0.5)), meter)
	}
	if d.reconnects > 0 {
		fmt.Fprintf(&b, ", %d reconnects", d.reconnects)
	}
	return b.String()
}

// RunProgressLines prints sledge run's -P lines, in pgbench's format
// (ProgressLines), each line of one phase: ramp-up lines end "(ramp-up)";
// when the measured interval begins, the ramp-up's last, shorter line is
// printed with its length ("(ramp-up, 0.4 s)") and the lines start again
// from there, so the measured lines count measured transactions only;
// stop prints the measured interval's last, shorter line with its length
// ("(last 2.0 s)"), which a line every interval would miss.
// sledge pgbench keeps pgbench's own lines (ProgressLines).
func RunProgressLines(w io.Writer, every time.Duration, live *engine.Live, meter string, meterKind int, epoch bool) (stop func()) {
	var mu sync.Mutex // the fields below, between the loop and stop
	pr, measuring := newProgressPrinter(w, live, meter, meterKind, epoch), false
	polled := engine.PhaseConnect // the phase the loop saw last
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTimer(every)
		defer tick.Stop()
		// The phase is looked at often, so that the measured lines
		// start close to the measured interval's start.
		poll := time.NewTicker(min(every, 100*time.Millisecond))
		defer poll.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				mu.Lock()
				note := ""
				if phase, _ := live.Phase(); phase != engine.PhaseMeasure || !measuring {
					note = phase.String()
				}
				pr.print(now, note)
				mu.Unlock()
				tick.Reset(every)
			case now := <-poll.C:
				mu.Lock()
				phase, since := live.Phase()
				if phase == engine.PhaseMeasure && !measuring {
					measuring = true
					switch {
					case polled == engine.PhaseRampup:
						// The ramp-up's last part gets its line.
						pr.print(now, fmt.Sprintf("ramp-up, %.1f s", now.Sub(pr.lastAt).Seconds()))
						tick.Reset(every)
					case since.After(pr.lastAt):
						// No ramp-up: connecting ran no transaction, and
						// the first line covers the measured interval's
						// first N seconds.
						pr.lastAt = since
						tick.Reset(max(every-now.Sub(since), 0))
					}
				}
				polled = phase
				mu.Unlock()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			mu.Lock()
			defer mu.Unlock()
			if !measuring {
				return // nothing measured, or too short to see
			}
			// The measured interval ends where the stop phase begins;
			// its transactions in flight then are counted in it.
			end := time.Now()
			if phase, since := live.Phase(); phase == engine.PhaseStop && since.After(pr.lastAt) {
				end = since
			}
			if span := end.Sub(pr.lastAt); span >= 50*time.Millisecond {
				pr.print(end, fmt.Sprintf("last %.1f s", span.Seconds()))
			}
		})
	}
}
