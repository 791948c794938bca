package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/sledge-bench/sledge/internal/runner"
)

// progress redraws one status line on a terminal, or prints a plain line
// now and then when output goes to a file or a pipe.
type progress struct {
	w        io.Writer
	tty      bool
	render   func() (frac float64, text string)
	every    time.Duration
	stop     chan struct{}
	done     sync.WaitGroup
	mu       sync.Mutex // draw and Println
	lastLine string     // the status line drawn last, or the last plain line printed
}

// Println prints a line of its own above the status line (a TPC-H
// query that ended), which the next tick draws again.
func (p *progress) Println(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.lastLine != "" {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.lastLine = ""
	}
	fmt.Fprintln(p.w, line)
}

// startProgress begins drawing; render is called from another goroutine
// and must only read atomics. frac < 0 means "no bar".
func startProgress(env *Env, plainEvery time.Duration, render func() (float64, string)) *progress {
	p := &progress{w: env.Stderr, tty: env.IsTerminal, render: render, stop: make(chan struct{})}
	p.every = plainEvery
	if p.tty {
		p.every = 250 * time.Millisecond
	}
	p.done.Add(1)
	go p.loop()
	return p
}

func (p *progress) loop() {
	defer p.done.Done()
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.draw()
		}
	}
}

func (p *progress) draw() {
	frac, text := p.render()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty {
		fmt.Fprintln(p.w, text)
		p.lastLine = text
		return
	}
	line := text
	if frac >= 0 {
		line = bar(frac, 24) + " " + text
	}
	if line != p.lastLine {
		fmt.Fprintf(p.w, "\r\x1b[K%s", line)
		p.lastLine = line
	}
}

// Stop ends the display; on a terminal the status line is cleared so the
// result prints on a clean screen.
func (p *progress) Stop() {
	close(p.stop)
	p.done.Wait()
	if p.tty && p.lastLine != "" {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// StopWithLast ends the display as Stop does; in plain lines it then
// prints the last one, the run's end with its last seconds (its count is
// the summary's), unless that line is already the last printed.
func (p *progress) StopWithLast() {
	p.Stop()
	if p.tty {
		return
	}
	// The loop has ended (Stop waited for it): nothing else draws now.
	if _, text := p.render(); text != p.lastLine {
		fmt.Fprintln(p.w, text)
		p.lastLine = text
	}
}

func bar(frac float64, width int) string {
	if frac < 0 {
		frac = 0
	}
	if frac > 1 {
		frac = 1
	}
	n := int(frac*float64(width) + 0.5)
	return fmt.Sprintf("[%s%s] %3.0f%%", strings.Repeat("#", n), strings.Repeat(".", width-n), frac*100)
}

// thousands formats n with commas: 1234567 → 1,234,567 (runner.Thousands).
func thousands(n int64) string { return runner.Thousands(n) }

func seconds(d time.Duration) string { return runner.Seconds(d) }
