package metrics

import (
	"net"
	"testing"

	"github.com/sledge-bench/sledge/internal/evloop"
)

// bindingConn records the loop it is bound to, as db's loop connection
// does (a real connection underneath: one end of a pipe).
type bindingConn struct {
	net.Conn
	bound *evloop.Loop
	calls int
}

func (b *bindingConn) BindLoop(l *evloop.Loop) { b.bound, b.calls = l, b.calls+1 }

// A counted connection passes a session's loop on to the connection it
// counts (evloop.Bind), with and without a descriptor; one that cannot
// wait on a loop ignores it.
func TestCountConnForwardsBindLoop(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	l := new(evloop.Loop) // a loop is only passed on here, never run
	inner := &bindingConn{Conn: a}
	counted := CountConn(inner, new(WireCounts))
	binder, ok := counted.(evloop.Binder)
	if !ok {
		t.Fatal("a counted connection is not an evloop.Binder")
	}
	binder.BindLoop(l)
	if inner.bound != l || inner.calls != 1 {
		t.Errorf("the counted connection was bound to %p (%d calls), want %p", inner.bound, inner.calls, l)
	}
	binder.BindLoop(nil)
	if inner.bound != nil {
		t.Error("unbinding was not forwarded")
	}
	// A plain connection underneath: nothing to forward to, no panic.
	CountConn(b, new(WireCounts)).(evloop.Binder).BindLoop(l)
}
