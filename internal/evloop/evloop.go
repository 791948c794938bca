// Package evloop drives several virtual users' connections from one OS
// thread (pgbench's model): each virtual user's code runs as a coroutine
// of the loop and reads top to bottom; a read that would block yields to
// the loop, which waits for every connection it drives in one epoll_pwait2
// (or one io_uring_enter: WaitKind).
//
// This file is the part the database packages build on (issue 26): the
// loop a context carries, and Bind, which a database's session calls at
// the start of each call so that its connection's reads wait on the loop
// of the virtual user making the call. The loop itself is in loop_linux.go,
// its io_uring wait in uring_linux.go (loop_other.go elsewhere: no loop,
// New fails).
package evloop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

type ctxKey struct{}

// With returns ctx carrying l.
func With(ctx context.Context, l *Loop) context.Context { return context.WithValue(ctx, ctxKey{}, l) }

// From returns the loop ctx carries, or nil.
func From(ctx context.Context) *Loop {
	l, _ := ctx.Value(ctxKey{}).(*Loop)
	return l
}

// Binder is a connection whose reads and writes wait on a loop when they
// would block (and block the thread when it has none). Wrappers of a
// connection (byte counting) forward BindLoop to what they wrap.
type Binder interface {
	BindLoop(l *Loop)
}

// Bind makes nc wait on ctx's loop (none: block the thread) when nc is a
// Binder; nothing otherwise. It allocates nothing.
func Bind(ctx context.Context, nc net.Conn) {
	if b, ok := nc.(Binder); ok {
		b.BindLoop(From(ctx))
	}
}

// ErrNotOnLoop is Wait's answer to a caller that is not a coroutine of the
// loop (a driver's background reader, the engine at an edge of the
// measured interval): it must wait by itself, blocking its thread.
var ErrNotOnLoop = errors.New("evloop: not called from a coroutine of the loop")

// sleepAlone is a sleep off any loop, on a timer of its own.
func sleepAlone(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// pollAlone waits for cond off any loop, trying it every pollEvery.
func pollAlone(ctx context.Context, cond func() bool) bool {
	for !cond() {
		if !sleepAlone(ctx, pollEvery) {
			return false
		}
	}
	return true
}

// WaitKind is how a loop waits for its descriptors and timers.
type WaitKind uint8

const (
	// WaitDefault is the measured better of the two (docs/cost.md).
	WaitDefault WaitKind = iota
	// WaitEpoll: one edge-triggered epoll_pwait2.
	WaitEpoll
	// WaitIOUring: a multishot poll per descriptor in an io_uring, one
	// io_uring_enter per wait; epoll where io_uring_setup is refused.
	WaitIOUring
)

// DefaultWait is what WaitDefault means.
const DefaultWait = WaitEpoll

func (k WaitKind) resolve() WaitKind {
	if k == WaitDefault {
		return DefaultWait
	}
	return k
}

// String is the kind's name in URLs and reports: "epoll", "io_uring".
func (k WaitKind) String() string {
	switch k.resolve() {
	case WaitIOUring:
		return "io_uring"
	}
	return "epoll"
}

// ParseWaitKind reads a kind's name (the loopwait URL option).
func ParseWaitKind(s string) (WaitKind, error) {
	switch s {
	case "epoll":
		return WaitEpoll, nil
	case "io_uring":
		return WaitIOUring, nil
	}
	return 0, fmt.Errorf("bad loop wait %q: use epoll or io_uring", s)
}

// pollEvery is how often waits on a condition (WaitFor) are retried at the
// latest when nothing pokes the loop.
const pollEvery = time.Millisecond
