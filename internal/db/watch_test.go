package db

import (
	"context"
	"net"
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
