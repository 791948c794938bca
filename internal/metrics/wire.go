package metrics

import (
	"context"
	"net"
	"sync/atomic"
	"syscall"

	"github.com/sledge-bench/sledge/internal/evloop"
)

// Wire is what crossed one connection's socket: bytes each way and round
// trips (docs/cost.md has the definitions).
type Wire struct {
	RoundTrips    int64
	BytesSent     int64
	BytesReceived int64
}

// Sub is w − o, field by field.
func (w Wire) Sub(o Wire) Wire {
	return Wire{RoundTrips: w.RoundTrips - o.RoundTrips,
		BytesSent: w.BytesSent - o.BytesSent, BytesReceived: w.BytesReceived - o.BytesReceived}
}

// Add is w + o, field by field.
func (w Wire) Add(o Wire) Wire {
	return Wire{RoundTrips: w.RoundTrips + o.RoundTrips,
		BytesSent: w.BytesSent + o.BytesSent, BytesReceived: w.BytesReceived + o.BytesReceived}
}

// WireCounts counts the traffic of one connection as it happens. The fields
// are atomics because drivers may read on a goroutine of their own (pgx's
// background reader) while the virtual user's goroutine reads the counts.
type WireCounts struct {
	sent, received, trips atomic.Int64
	// wrote is set by a write and cleared by the first read that returns
	// data after it: that read completes one round trip.
	wrote atomic.Bool
}

// Load reads the counts so far.
func (c *WireCounts) Load() Wire {
	if c == nil {
		return Wire{}
	}
	return Wire{RoundTrips: c.trips.Load(), BytesSent: c.sent.Load(), BytesReceived: c.received.Load()}
}

func (c *WireCounts) addSent(n int) {
	if n > 0 {
		c.sent.Add(int64(n))
	}
}

// sending marks a request on its way before its bytes are written: a
// reader on another goroutine (pgx's background reader) may get the reply
// before the write call returns, and that reply completes the round trip.
func (c *WireCounts) sending(n int) {
	if n > 0 && !c.wrote.Load() {
		c.wrote.Store(true)
	}
}

func (c *WireCounts) addReceived(n int) {
	if n > 0 {
		c.received.Add(int64(n))
		// Load first: the common case (more of the same response) then
		// costs no locked instruction.
		if c.wrote.Load() && c.wrote.CompareAndSwap(true, false) {
			c.trips.Add(1)
		}
	}
}

// Wired is implemented by a workload.Conn whose socket traffic is counted;
// Wire returns its counter, or nil when it is not counted.
type Wired interface {
	Wire() *WireCounts
}

type wireKey struct{}

// WithWire returns ctx carrying c: a database package's dial function
// counts the connection it dials on such a context into c. Only virtual
// users' sessions are opened with one, so control connections never count.
func WithWire(ctx context.Context, c *WireCounts) context.Context {
	return context.WithValue(ctx, wireKey{}, c)
}

// WireFrom returns the counter ctx carries, or nil.
func WireFrom(ctx context.Context) *WireCounts {
	c, _ := ctx.Value(wireKey{}).(*WireCounts)
	return c
}

// CountConn returns nc with its traffic counted into c; nc itself when c
// is nil. The result is a syscall.Conn when nc is one, so drivers that
// check a socket's liveness through its file descriptor still can (those
// raw reads are not counted).
func CountConn(nc net.Conn, c *WireCounts) net.Conn {
	if c == nil {
		return nc
	}
	w := wireConn{Conn: nc, c: c}
	w.b, _ = nc.(evloop.Binder)
	if sc, ok := nc.(syscall.Conn); ok {
		return &wireSysConn{wireConn: w, sc: sc}
	}
	return &w
}

type wireConn struct {
	net.Conn
	c *WireCounts
	b evloop.Binder // nc's, or nil
}

// BindLoop forwards the session's loop (evloop.Bind) to the connection
// counted.
func (w *wireConn) BindLoop(l *evloop.Loop) {
	if w.b != nil {
		w.b.BindLoop(l)
	}
}

func (w *wireConn) Read(b []byte) (int, error) {
	n, err := w.Conn.Read(b)
	w.c.addReceived(n)
	return n, err
}

func (w *wireConn) Write(b []byte) (int, error) {
	w.c.sending(len(b))
	n, err := w.Conn.Write(b)
	w.c.addSent(n)
	return n, err
}

type wireSysConn struct {
	wireConn
	sc syscall.Conn
}

func (w *wireSysConn) SyscallConn() (syscall.RawConn, error) { return w.sc.SyscallConn() }
