// Package interrupt is how sledge stops on Ctrl-C and SIGTERM
// (docs/reliability.md, "Ctrl-C and SIGTERM: however many arrive"). It catches both signals for the
// whole life of the process, so no copy of them ever reaches the Go
// runtime's default handler, which would kill the process before it
// printed and saved what it measured:
//
//   - the first starts the graceful stop: the context Catch returns is
//     cancelled, runs stop measuring, let the transactions in flight
//     finish within their stop timeout, print and save;
//   - the second (GNU timeout signals the process and then its group; a
//     person presses Ctrl-C twice) changes nothing but one line on stderr;
//   - the third, or a second one once the stop timeout has run out,
//     escalates: Abandoned(ctx) is closed, and the waits for transactions
//     and connections end at once; what was measured is still printed and
//     saved. If even that does not finish within SaveBound, the process
//     exits 130 by itself, saying so.
package interrupt

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SaveBound is how long, after an escalation, printing and saving what was
// measured may take before the process exits without it.
const SaveBound = 5 * time.Second

// saveBound is SaveBound, shorter in this package's tests.
var saveBound = SaveBound

// ExitCode is the status of a process that a signal stopped (the shell's
// 128+SIGINT, for SIGTERM too: docs/contracts.md#exit-codes).
const ExitCode = 130

// DefaultStopTimeout is the stop timeout assumed until a run says its own
// (engine.DefaultStopTimeout).
const DefaultStopTimeout = 10 * time.Second

type key struct{}

// state is one process's (or one test's) stop: how many signals came, and
// the context cancelled on escalation.
type state struct {
	mu          sync.Mutex
	signals     int
	first       time.Time
	stopTimeout time.Duration // the longest a run said (StopTimeout); 0: none yet
	hard        context.Context
	abandon     context.CancelFunc
	pending     map[int]string // what is not saved yet (Pending), by token
	next        int
}

// Catch catches SIGINT and SIGTERM for the rest of the process's life. The
// context it returns is cancelled by the first signal. Lines about later
// signals go to stderr; exit ends the process when saving after an
// escalation does not finish within SaveBound (os.Exit when nil).
func Catch(stderr io.Writer, exit func(int)) context.Context {
	if exit == nil {
		exit = os.Exit
	}
	ctx, cancel := context.WithCancel(context.Background())
	st := newState()
	ctx = context.WithValue(ctx, key{}, st)
	// Buffered so that no signal waits on this loop. (Go's runtime still
	// merges a copy that arrives before it handed over the one before.)
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for range sigs {
			switch st.signal(time.Now()) {
			case first:
				cancel()
			case repeated:
				fmt.Fprintln(stderr, "sledge: already stopping: what was measured will be printed and saved; a third Ctrl-C or SIGTERM stops without waiting for transactions in flight")
			case escalate:
				fmt.Fprintln(stderr, "sledge: stopping without waiting for transactions in flight; what was measured is saved")
				time.AfterFunc(saveBound, func() {
					fmt.Fprintf(stderr, "sledge: printing and saving what was measured took longer than %s: exiting %s\n", saveBound, st.unsaved())
					exit(ExitCode)
				})
			}
		}
	}()
	return ctx
}

// unsaved says what an exit now leaves unsaved.
func (s *state) unsaved() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 {
		return "before it finished (no job result was left unsaved)"
	}
	whats := make([]string, 0, len(s.pending))
	for _, w := range s.pending {
		whats = append(whats, w)
	}
	sort.Strings(whats)
	return "without saving " + strings.Join(whats, ", ")
}

// Pending notes that what (such as "the result of job 12 (it stays
// incomplete in the job store)") is not saved yet; the returned func says
// it is. An exit after an escalation names what is still pending.
func Pending(ctx context.Context, what string) (done func()) {
	st := from(ctx)
	if st == nil {
		return func() {}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.pending == nil {
		st.pending = map[int]string{}
	}
	st.next++
	k := st.next
	st.pending[k] = what
	return func() {
		st.mu.Lock()
		delete(st.pending, k)
		st.mu.Unlock()
	}
}

func newState() *state {
	hard, abandon := context.WithCancel(context.Background())
	return &state{hard: hard, abandon: abandon}
}

type action int

const (
	first action = iota
	repeated
	escalate
	ignore
)

// signal counts one signal at now and says what it does.
func (s *state) signal(now time.Time) action {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signals++
	switch {
	case s.hard.Err() != nil: // escalated already
		return ignore
	case s.signals == 1:
		s.first = now
		return first
	case s.signals == 2 && now.Sub(s.first) <= s.within():
		return repeated
	}
	s.abandon()
	return escalate
}

func from(ctx context.Context) *state {
	st, _ := ctx.Value(key{}).(*state)
	return st
}

// within is the stop timeout: the longest a run said, else the default.
func (s *state) within() time.Duration {
	if s.stopTimeout == 0 {
		return DefaultStopTimeout
	}
	return s.stopTimeout
}

// StopTimeout tells the signal handler how long the run under ctx waits
// for transactions in flight after it was stopped: a second signal after
// that escalates. The longest one given counts.
func StopTimeout(ctx context.Context, d time.Duration) {
	if st := from(ctx); st != nil {
		st.mu.Lock()
		st.stopTimeout = max(st.stopTimeout, d)
		st.mu.Unlock()
	}
}

// Abandoned is closed when the stop escalated: waits for transactions and
// connections in flight end at once. Never closed (nil) when ctx comes
// from no Catch.
func Abandoned(ctx context.Context) <-chan struct{} {
	if st := from(ctx); st != nil {
		return st.hard.Done()
	}
	return nil
}

// IsAbandoned reports whether the stop under ctx escalated.
func IsAbandoned(ctx context.Context) bool {
	select {
	case <-Abandoned(ctx):
		return true
	default:
		return false
	}
}

// Detach is context.WithoutCancel(ctx) for the work that follows a stop
// (the last transactions, the final counters, closing, saving) but still
// ends on an escalation: it keeps ctx's values, is not cancelled with ctx,
// and is cancelled when the stop escalates.
func Detach(ctx context.Context) context.Context {
	base := context.WithoutCancel(ctx)
	st := from(ctx)
	if st == nil {
		return base
	}
	return detached{Context: base, hard: st.hard}
}

// detached has its parent's values and the escalation's cancellation.
type detached struct {
	context.Context
	hard context.Context
}

func (d detached) Done() <-chan struct{} { return d.hard.Done() }
func (d detached) Err() error            { return d.hard.Err() }
