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
		start := time.Now()
		last := progressCount(live, meterKind)
		lastAt := start
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				c := progressCount(live, meterKind)
				line := progressLine(now.Sub(start), now.Sub(lastAt), c.sub(last), meter, meterKind >= 0, live)
				if epoch {
					line = epochLine(line, now)
				}
				fmt.Fprintln(w, line)
				last, lastAt = c, now
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
func progressLine(elapsed, span time.Duration, d progressCounts, meter string, hasMeter bool, live *engine.Live) string {
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
	if phase, _ := live.Phase(); phase != engine.PhaseMeasure {
		fmt.Fprintf(&b, " (%s)", phase)
	}
	return b.String()
}
