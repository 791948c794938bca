package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/sysprobe"
)

// The server's processes and the hosts, read through internal/sysprobe
// (docs/cost.md, "Server side"): one reader whether the server is local
// (an in-process watch) or on another host (sledge agent). ServerCost
// holds up to three watches: the server's, sledge's own process and host,
// and, with --agent on a local server, an in-process cross-check.

// watched is one sysprobe source read at the edges of the measured
// interval and once a second in between.
type watched struct {
	src  sysprobe.Source
	role string // "server", "client_host" or "check"

	mu            sync.Mutex
	before, after *sysprobe.Snapshot // the edges' readings; nil: failed
	beforeErr     error
	afterErr      error
	lastSeq       int64
	silent        bool // the last read failed
	silentReads   int
	skew          time.Duration // its clock minus ours, from its last answer
	// The seconds inside the measured interval, summed: what the figures
	// fall back to when an edge's reading failed (an agent that died).
	acc      sysprobe.Interval
	accTx    float64 // transactions completed in those seconds
	accN     int     // seconds summed
	runnable float64 // sum of procs_running over those seconds
}

// mark is the run's completed transactions at an instant, to count those
// of each second a source answered for.
type mark struct {
	at time.Time
	n  int64
}

// followers reads the watches once a second during the run.
type followers struct {
	live    *engine.Live
	start   time.Time
	timeout time.Duration
	stderr  io.Writer
	fn      func(SystemSecond)
	fnMu    sync.Mutex

	mu     sync.Mutex
	marks  []mark
	edge1  time.Time // our clock; zero: not yet
	edge2  time.Time
	stop   chan struct{}
	wg     sync.WaitGroup
	closed bool
}

// completedAt interpolates the completed transactions at t from the marks.
func (f *followers) completedAt(t time.Time) float64 {
	m := f.marks
	i := sort.Search(len(m), func(i int) bool { return !m[i].at.Before(t) })
	switch {
	case len(m) == 0:
		return 0
	case i == 0:
		return float64(m[0].n)
	case i == len(m):
		return float64(m[len(m)-1].n)
	}
	a, b := m[i-1], m[i]
	span := b.at.Sub(a.at)
	if span <= 0 {
		return float64(b.n)
	}
	return float64(a.n) + float64(b.n-a.n)*float64(t.Sub(a.at))/float64(span)
}

func (f *followers) addMark(at time.Time) {
	f.mu.Lock()
	f.marks = append(f.marks, mark{at, f.live.Completed()})
	f.mu.Unlock()
}

// run starts the once-a-second loops: the marks, and one per watch, so
// that a slow agent does not hold the host's reading.
func (f *followers) run(ws ...*watched) {
	f.stop = make(chan struct{})
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		f.tick(func() { f.addMark(time.Now()) })
	}()
	for _, w := range ws {
		if w == nil || w.role == "check" {
			continue
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.tick(func() { f.read(w) })
		}()
	}
}

func (f *followers) tick(do func()) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		do()
	}
}

// read takes the seconds w has after the last one read, within the
// timeout, sums those of the measured interval and hands each on.
func (f *followers) read(w *watched) {
	ctx, cancel := context.WithTimeout(context.Background(), min(f.timeout, 5*time.Second))
	w.mu.Lock()
	after := w.lastSeq
	w.mu.Unlock()
	secs, err := w.src.Seconds(ctx, after)
	cancel()
	w.mu.Lock()
	if err != nil {
		w.silentReads++
		if !w.silent && w.role == "server" {
			fmt.Fprintf(f.stderr, "sledge: %s stopped answering (%v): the run goes on; the server's figures will cover the seconds it answered\n", w.src.Name(), oneLineErr(err))
		}
		w.silent = true
		w.mu.Unlock()
		return
	}
	if w.silent && w.role == "server" {
		fmt.Fprintf(f.stderr, "sledge: %s answers again\n", w.src.Name())
	}
	w.silent = false
	w.mu.Unlock()
	for _, s := range secs {
		w.mu.Lock()
		if s.Seq <= w.lastSeq {
			w.mu.Unlock()
			continue
		}
		w.lastSeq = s.Seq
		f.sum(w, s)
		skew := w.skew
		w.mu.Unlock()
		ours := s.At.Add(-skew)
		ph, _ := f.live.Phase()
		src := "server"
		if w.role == "client_host" {
			src = "client_host"
		}
		f.fnMu.Lock()
		if f.fn != nil {
			f.fn(SystemSecond{Source: src, Elapsed: ours.Sub(f.start), Phase: ph.String(), Second: s})
		}
		f.fnMu.Unlock()
	}
}

// sum adds s to w's interval sums when it ended inside the measured
// interval (its end, in our clock, after the first edge and not after the
// second), with the transactions completed in it. w.mu is held.
func (f *followers) sum(w *watched, s sysprobe.Second) {
	f.mu.Lock()
	defer f.mu.Unlock()
	end := s.At.Add(-w.skew)
	if f.edge1.IsZero() || !end.After(f.edge1) || (!f.edge2.IsZero() && end.After(f.edge2)) {
		return
	}
	begin := end.Add(-time.Duration(s.Interval.Seconds * float64(time.Second)))
	w.accTx += f.completedAt(end) - f.completedAt(begin)
	w.accN++
	w.runnable += float64(s.Interval.Host.ProcsRunning)
	w.acc.Add(s.Interval)
}

// close stops the loops.
func (f *followers) close() {
	f.mu.Lock()
	if f.closed || f.stop == nil {
		f.closed = true
		f.mu.Unlock()
		return
	}
	f.closed = true
	f.mu.Unlock()
	close(f.stop)
	f.wg.Wait()
}

// edge reads every watch at an edge of the measured interval, together,
// each within the timeout. first: the interval's start.
func (f *followers) edge(ctx context.Context, first bool, ws ...*watched) {
	now := time.Now()
	f.addMark(now)
	f.mu.Lock()
	if first {
		f.edge1 = now
	} else {
		f.edge2 = now
	}
	f.mu.Unlock()
	var wg sync.WaitGroup
	for _, w := range ws {
		if w == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.timeout)
			s, err := w.src.Snapshot(rctx)
			if err == nil && rctx.Err() != nil {
				err = rctx.Err() // an answer after the timeout is not the edge's
			}
			cancel()
			w.mu.Lock()
			defer w.mu.Unlock()
			var p *sysprobe.Snapshot
			if err == nil {
				p = &s
				w.skew = s.At.Sub(now)
			}
			if first {
				w.before, w.beforeErr = p, err
			} else {
				w.after, w.afterErr = p, err
			}
		}()
	}
	wg.Wait()
}

// interval is what w measured over the measured interval: the difference
// of the edges' readings, or, when one failed, the sum of the seconds it
// answered for (partial), with the transactions of those seconds.
func (w *watched) interval() (iv sysprobe.Interval, partial bool, tx float64, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.before != nil && w.after != nil {
		return sysprobe.Diff(*w.before, *w.after), false, 0, true
	}
	if w.accN == 0 {
		return iv, true, 0, false
	}
	return w.acc, true, w.accTx, true
}

// edgeErr is why an edge's reading failed, "" when both worked.
func (w *watched) edgeErr() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range []error{w.beforeErr, w.afterErr} {
		if e != nil {
			if errors.Is(e, context.DeadlineExceeded) {
				return "no answer within --stop-timeout"
			}
			return oneLineErr(e)
		}
	}
	return ""
}

// oneLineErr is err's message on one line.
func oneLineErr(err error) string { return oneLine(err.Error()) }
