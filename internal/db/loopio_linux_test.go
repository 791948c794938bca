//go:build linux

package db

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/evloop"
	"github.com/sledge-bench/sledge/internal/metrics"
)

// loopPair is a loopback TCP connection: the client through IOLoop (and
// byte counting, which must forward BindLoop), and the server's end.
func loopPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		acc <- c
	}()
	nc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	lc, err := IOLoop.Wrap(nc)
	if err != nil {
		t.Fatal(err)
	}
	c := metrics.CountConn(lc, new(metrics.WireCounts))
	srv := <-acc
	t.Cleanup(func() { c.Close(); srv.Close() })
	return c, srv
}

// onLoop runs f as the one coroutine of a new loop, with c bound to it;
// off the loop, on the test's goroutine with no loop bound.
func onLoop(t *testing.T, loop bool, kind evloop.WaitKind, c net.Conn, f func()) {
	t.Helper()
	if !loop {
		f()
		return
	}
	l := newTestLoop(t, kind)
	defer l.Close()
	l.Go(func() {
		evloop.Bind(evloop.With(context.Background(), l), c)
		f()
	})
	l.Run()
}

// newTestLoop makes a loop waiting as kind says; the test is skipped
// where the kernel refuses io_uring.
func newTestLoop(t *testing.T, kind evloop.WaitKind) *evloop.Loop {
	t.Helper()
	l, err := evloop.New(true, kind)
	if err != nil {
		t.Fatal(err)
	}
	if l.WaitKind() != kind {
		l.Close()
		t.Skipf("no %s wait here: %s", kind, l.Fallback())
	}
	return l
}

// loopModes runs f off any loop (poll) and on a loop of each wait.
func loopModes(t *testing.T, f func(t *testing.T, loop bool, kind evloop.WaitKind)) {
	t.Run("poll", func(t *testing.T) { f(t, false, 0) })
	for _, kind := range []evloop.WaitKind{evloop.WaitEpoll, evloop.WaitIOUring} {
		t.Run("loop-"+kind.String(), func(t *testing.T) { f(t, true, kind) })
	}
}

func TestLoopConnReadsAndWrites(t *testing.T) {
	loopModes(t, func(t *testing.T, loop bool, kind evloop.WaitKind) {
		c, srv := loopPair(t)
		go func() { // echo, then close
			buf := make([]byte, 4)
			io.ReadFull(srv, buf)
			time.Sleep(20 * time.Millisecond) // the client waits for the answer
			srv.Write(buf)
			srv.Close()
		}()
		onLoop(t, loop, kind, c, func() {
			if _, err := c.Write([]byte("ping")); err != nil {
				t.Error(err)
				return
			}
			buf := make([]byte, 4)
			if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
				t.Errorf("read %q, %v", buf, err)
			}
			if _, err := c.Read(buf); !errors.Is(err, io.EOF) {
				t.Errorf("read after the peer closed: %v, want EOF", err)
			}
		})
	})
}

// A deadline in the past (how drivers interrupt a call) and Close, from
// another goroutine, end a read waiting for an answer that never comes;
// a future deadline ends it with a timeout.
func TestLoopConnInterrupts(t *testing.T) {
	cases := []struct {
		name      string
		deadline  time.Duration
		interrupt func(c net.Conn)
		want      error
	}{
		{"deadline in the past", 0, func(c net.Conn) { _ = c.SetDeadline(time.Now().Add(-time.Second)) }, os.ErrDeadlineExceeded},
		{"close", 0, func(c net.Conn) { _ = c.Close() }, nil},
		{"future deadline", 50 * time.Millisecond, func(net.Conn) {}, os.ErrDeadlineExceeded},
	}
	loopModes(t, func(t *testing.T, loop bool, kind evloop.WaitKind) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				c, _ := loopPair(t)
				if tc.deadline > 0 {
					c.SetReadDeadline(time.Now().Add(tc.deadline))
				}
				done := make(chan error, 1)
				var l *evloop.Loop
				if loop {
					l = newTestLoop(t, kind)
					defer l.Close()
				}
				go func() {
					if l == nil {
						_, err := c.Read(make([]byte, 1))
						done <- err
						return
					}
					l.Go(func() {
						evloop.Bind(evloop.With(context.Background(), l), c)
						_, err := c.Read(make([]byte, 1))
						done <- err
					})
					l.Run()
				}()
				time.Sleep(30 * time.Millisecond)
				tc.interrupt(c)
				select {
				case err := <-done:
					if err == nil {
						t.Fatal("read returned no error")
					}
					if tc.want != nil && !errors.Is(err, tc.want) {
						t.Errorf("read: %v, want %v", err, tc.want)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("a waiting read was not interrupted")
				}
			})
		}
	})
}
