//go:build linux

package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/evloop"
	"github.com/sledge-bench/sledge/internal/workload"
)

// loopTxn checks that it runs as a coroutine of an event loop: its
// context carries one, and its thread is one of the loops'.
type loopTxn struct {
	kind    int
	threads *sync.Map // thread id → true
	noLoop  *atomic.Int64
	mine    *atomic.Int64
}

func (t loopTxn) Kind() int { return t.kind }
func (t loopTxn) Run(ctx context.Context, c workload.Conn) error {
	if evloop.From(ctx) == nil {
		t.noLoop.Add(1)
	}
	t.threads.Store(syscall.Gettid(), true)
	if ec, ok := c.(*exclusiveConn); ok {
		if ec.inUse.Add(1) != 1 {
			ec.overlap.Add(1)
		}
		// Yield to the loop's other VUs while "waiting for the server".
		evloop.From(ctx).Sleep(ctx, time.Millisecond)
		ec.inUse.Add(-1)
		ec.used.Add(1)
	}
	t.mine.Add(1)
	return nil
}

type loopTerm struct {
	n  int
	tx loopTxn
}

func (f *loopTerm) Next() workload.Txn {
	f.n++
	f.tx.kind = f.n % 2
	return f.tx
}

// VUs on event loops, with their own sessions and sharing fewer, with
// keying and thinking times slept on the loop: every VU runs its
// iterations on one of the loops' threads with its loop in its context,
// no shared session is used by two VUs at once, and the counts add up;
// on either wait, which the result names.
func TestLoopsRunTheVUs(t *testing.T) {
	type tc struct {
		vus, conns, loops int
		keyingThinking    bool
		wait              evloop.WaitKind
	}
	var cases []tc
	for _, wait := range []evloop.WaitKind{evloop.WaitEpoll, evloop.WaitIOUring} {
		cases = append(cases, tc{vus: 4, loops: 2, wait: wait},
			tc{vus: 7, loops: 3, keyingThinking: true, wait: wait},
			tc{vus: 20, conns: 3, loops: 2, wait: wait},
			tc{vus: 30, conns: 4, loops: 2, keyingThinking: true, wait: wait})
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/vus=%d/connections=%d/loops=%d/keying=%v", c.wait, c.vus, c.conns, c.loops, c.keyingThinking), func(t *testing.T) {
			const iterations = 5
			var overlap, noLoop atomic.Int64
			var threads sync.Map
			perVU := make([]atomic.Int64, c.vus)
			p := plan(c.vus, 0, nil)
			p.Loops, p.Connections, p.Iterations, p.KeyingThinking = c.loops, c.conns, iterations, c.keyingThinking
			p.LoopWait = c.wait
			if c.keyingThinking {
				p.Mix = []workload.TxType{{Name: "a", Weight: 1, Keying: 2 * time.Millisecond, Think: 3 * time.Millisecond},
					{Name: "b", Weight: 1, Keying: time.Millisecond, Think: time.Millisecond}}
			}
			p.Connect = func(_ context.Context, i int) (workload.Conn, error) {
				return &exclusiveConn{id: i, overlap: &overlap, used: new(atomic.Int64)}, nil
			}
			p.Terminal = func(vu int) workload.Terminal {
				return &loopTerm{tx: loopTxn{threads: &threads, noLoop: &noLoop, mine: &perVU[vu]}}
			}
			res, err := Run(t.Context(), p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Loops != c.loops || res.LoopWait != c.wait.String() && res.LoopFallback == "" {
				t.Errorf("ran on %d loops waiting on %s (%q), want %d on %s", res.Loops, res.LoopWait, res.LoopFallback, c.loops, c.wait)
			}
			if n := overlap.Load(); n > 0 {
				t.Errorf("%d transactions ran on a session another VU was using", n)
			}
			if n := noLoop.Load(); n > 0 {
				t.Errorf("%d transactions ran without their loop in the context", n)
			}
			if got, want := res.Stats.Total().Commits, int64(c.vus*iterations); got != want {
				t.Errorf("commits %d, want %d", got, want)
			}
			for vu := range perVU {
				if got := perVU[vu].Load(); got != iterations {
					t.Errorf("VU %d ran %d transactions, want %d", vu+1, got, iterations)
				}
			}
			n := 0
			threads.Range(func(any, any) bool { n++; return true })
			if n > c.loops {
				t.Errorf("the VUs ran on %d threads, want at most the %d loops'", n, c.loops)
			}
		})
	}
}

// A run on loops ends when its context is cancelled while every VU sleeps
// on its loop (an hour's keying time), with its own session or a shared one.
func TestLoopsEndOnCancel(t *testing.T) {
	for _, c := range []struct {
		conns int
		wait  evloop.WaitKind
	}{{0, evloop.WaitEpoll}, {1, evloop.WaitEpoll}, {0, evloop.WaitIOUring}, {1, evloop.WaitIOUring}} {
		conns := c.conns
		t.Run(fmt.Sprintf("%s/connections=%d", c.wait, conns), func(t *testing.T) {
			p := plan(6, 0, nil)
			p.Loops, p.Connections, p.KeyingThinking, p.LoopWait = 2, conns, true, c.wait
			p.Duration = time.Hour
			p.Mix = []workload.TxType{{Name: "a", Weight: 1, Keying: time.Hour}, {Name: "b", Weight: 1, Keying: time.Hour}}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() {
				_, err := Run(ctx, p, nil)
				done <- err
			}()
			time.Sleep(200 * time.Millisecond)
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the run did not end after its context was cancelled")
			}
		})
	}
}
