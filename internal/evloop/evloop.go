// Package evloop drives several virtual users' connections from one OS
// thread (pgbench's model): each virtual user's code runs as a coroutine
// of the loop and reads top to bottom; a read that would block yields to
// the loop, which waits for every connection it drives in one epoll_wait.
//
// This file is the part the database packages build on (issue 26): the
// loop a context carries, and Bind, which a database's session calls at
// the start of each call so that its connection's reads wait on the loop
// of the virtual user making the call.
package evloop

import (
	"context"
	"net"
)

// Loop is one thread's event loop.
type Loop struct{}

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
