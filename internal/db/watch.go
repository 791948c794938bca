package db

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Watcher makes the cancellation of a session's context interrupt the
// session's I/O. Drivers watch every call's context themselves, at a cost
// per call: pgconn allocates a context.AfterFunc and a channel;
// go-sql-driver/mysql hands the context to a watcher goroutine, and
// database/sql starts a goroutine for every result set and transaction
// under a cancellable context. A virtual user runs every statement under
// the same context, so it is registered once per context here and the
// driver gets one it need not watch (context.Background()).
//
// A cancellation interrupts only a call in flight (busy): it sets the
// socket's deadline in the past, as pgconn's own handler does, and that
// connection is not used again. A context cancelled between calls (a
// probe's timeout that ended after its query) leaves the connection
// alone; the next call under it fails at once with ctx.Err().
type Watcher struct {
	watched context.Context
	stop    func() bool
	busy    atomic.Bool
	// mu orders a change of the watched context against the handler of
	// the one before: a handler that runs late, after the session moved on
	// to another context (the engine's, at an edge of the measured
	// interval), must not interrupt the call under the new one.
	mu sync.Mutex
}

// Begin starts a call under ctx on nc; End must follow. It returns ctx's error
// when ctx is done already.
func (w *Watcher) Begin(ctx context.Context, nc net.Conn) error {
	if ctx == w.watched || (ctx.Done() == nil && w.watched == nil) {
		w.busy.Store(true)
		if err := ctx.Err(); err != nil {
			w.busy.Store(false)
			return err
		}
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stop != nil {
		w.stop()
		w.stop = nil
	}
	w.watched = nil
	if err := ctx.Err(); err != nil {
		return err
	}
	if ctx.Done() != nil {
		w.watched = ctx
		w.stop = context.AfterFunc(ctx, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.watched == ctx && w.busy.Load() {
				_ = nc.SetDeadline(time.Now())
			}
		})
	}
	// Busy only now, under the lock and with the watch moved to ctx: the
	// handler of the context before (cancelled as its call ended: an edge's
	// publish, a connect's timeout) may be waiting for the lock, and must
	// find the watch moved, not this call busy under its context.
	w.busy.Store(true)
	return nil
}

// End ends the call begun by Begin.
func (w *Watcher) End() { w.busy.Store(false) }

// Interrupted reports whether the watched context is done: then an I/O
// error of the call is the interruption's doing.
func (w *Watcher) Interrupted() error {
	if w.watched != nil {
		return w.watched.Err()
	}
	return nil
}

// Close stops watching.
func (w *Watcher) Close() {
	if w.stop != nil {
		w.stop()
	}
}
