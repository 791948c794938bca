package db

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// A context watched by an earlier call must not interrupt a later call that
// runs under a context without cancellation, when it is cancelled late.
func TestWatcherLateCancelSparesUncancellableCall(t *testing.T) {
	for _, tc := range []struct {
		name      string
		next      func() (context.Context, context.CancelFunc)
		interrupt bool
	}{
		{"background after cancellable", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }, false},
		{"another cancellable", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, false},
		{"the same context", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := net.Pipe()
			defer a.Close()
			defer b.Close()
			var w Watcher
			defer w.Close()
			first, cancel := context.WithCancel(context.Background())
			if err := w.Begin(first, a); err != nil {
				t.Fatal(err)
			}
			w.End()
			next := first
			if tc.next != nil {
				var stop context.CancelFunc
				next, stop = tc.next()
				defer stop()
			}
			if err := w.Begin(next, a); err != nil {
				t.Fatal(err)
			}
			cancel() // late: the call under next is in flight
			go func() {
				time.Sleep(50 * time.Millisecond)
				_, _ = b.Write([]byte{1})
			}()
			_, err := a.Read(make([]byte, 1))
			w.End()
			if got := err != nil; got != tc.interrupt {
				t.Fatalf("read error %v: interrupted %v, want %v", err, got, tc.interrupt)
			}
		})
	}
}

// deadlineConn records a deadline set in the past: the Watcher's interrupt.
type deadlineConn struct {
	net.Conn
	interrupted atomic.Int32
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	if !t.IsZero() && !t.After(time.Now()) {
		c.interrupted.Add(1)
	}
	return nil
}

// A context cancelled just after its call ended (the engine's publish at
// an edge, a connect's timeout) must not interrupt the next call, begun
// under another context, even when the cancelled one's handler runs while
// that call begins. The handler used to see the next call's busy flag
// before Begin moved the watch to the new context: the connection was shut
// down under a live context, and its first write failed with "i/o timeout"
// that no cancellation explained.
func TestWatcherCancelledContextSparesTheNextCall(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := &deadlineConn{Conn: a}
	var w Watcher
	defer w.Close()
	live, stop := context.WithCancel(context.Background())
	defer stop()
	for i := range 20000 {
		edge, cancel := context.WithCancel(context.Background())
		if err := w.Begin(edge, c); err != nil {
			t.Fatal(err)
		}
		w.End()
		cancel() // its handler races the next Begin
		if err := w.Begin(live, c); err != nil {
			t.Fatal(err)
		}
		w.End()
		if n := c.interrupted.Load(); n > 0 {
			t.Fatalf("round %d: a call under a live context was interrupted (%d times)", i, n)
		}
	}
}
