package db

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
)

// pair is a loopback TCP connection: the blocking client and the server's end.
func pair(t *testing.T, raw bool) (net.Conn, net.Conn) {
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
	bc, err := newBlockingConn(nc, raw)
	if err != nil {
		t.Fatal(err)
	}
	srv := <-acc
	t.Cleanup(func() { bc.Close(); srv.Close() })
	return bc, srv
}

// waits runs a test with ordinary and with raw blocking system calls.
func waits(t *testing.T, f func(t *testing.T, raw bool)) {
	for _, raw := range []bool{false, true} {
		name := "syscall"
		if raw {
			name = "raw"
		}
		t.Run(name, func(t *testing.T) { f(t, raw) })
	}
}

func TestBlockingConnReadsAndWrites(t *testing.T) { waits(t, readsAndWrites) }

func readsAndWrites(t *testing.T, raw bool) {
	c, srv := pair(t, raw)
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(srv, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("server read %q, %v", buf, err)
	}
	if _, err := srv.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "pong" {
		t.Fatalf("client read %q, %v", buf, err)
	}
	srv.Close()
	if _, err := c.Read(buf); !errors.Is(err, io.EOF) {
		t.Errorf("read after the peer closed: %v, want EOF", err)
	}
}

func TestBlockingConnInterrupts(t *testing.T) { waits(t, interrupts) }

func interrupts(t *testing.T, raw bool) {
	cases := []struct {
		name      string
		interrupt func(c net.Conn)
		want      error
	}{
		{"deadline in the past", func(c net.Conn) { _ = c.SetDeadline(time.Now().Add(-time.Second)) }, os.ErrDeadlineExceeded},
		{"close", func(c net.Conn) { _ = c.Close() }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := pair(t, raw)
			done := make(chan error, 1)
			go func() {
				_, err := c.Read(make([]byte, 1)) // the server never answers
				done <- err
			}()
			time.Sleep(50 * time.Millisecond)
			tc.interrupt(c)
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("read returned no error")
				}
				if tc.want != nil && !errors.Is(err, tc.want) {
					t.Errorf("read: %v, want %v", err, tc.want)
				}
			case <-time.After(2 * time.Second):
				t.Fatal("a blocked read was not interrupted")
			}
		})
	}
}

func TestBlockingConnFutureDeadlineTimesOut(t *testing.T) { waits(t, futureDeadline) }

func futureDeadline(t *testing.T, raw bool) {
	c, _ := pair(t, raw)
	if err := c.SetReadDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := c.Read(make([]byte, 1))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read: %v, want a deadline error", err)
	}
	if took := time.Since(start); took < 80*time.Millisecond || took > 2*time.Second {
		t.Errorf("timed out after %s, want about 100ms", took)
	}
	c.Close()
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("read after Close: %v, want net.ErrClosed", err)
	}
}

// TestRawWaitLetsTheWorldStop: a raw system call cannot be interrupted by
// the runtime, so a read waiting raw for an answer that never comes must
// still let a garbage collection stop the world soon (it continues as an
// ordinary system call after rawSlice), and then still get its answer.
func TestRawWaitLetsTheWorldStop(t *testing.T) {
	c, srv := pair(t, true)
	got := make(chan error, 1)
	go func() {
		buf := make([]byte, 4)
		_, err := io.ReadFull(c, buf)
		if err == nil && string(buf) != "late" {
			err = errors.New("read " + string(buf))
		}
		got <- err
	}()
	time.Sleep(20 * time.Millisecond) // the reader is waiting by now
	gcDone := make(chan struct{})
	go func() { runtime.GC(); close(gcDone) }()
	select {
	case <-gcDone:
	case <-time.After(2 * time.Second):
		t.Fatal("a garbage collection waited for a raw read that had no answer")
	}
	if _, err := srv.Write([]byte("late")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the answer after the slow wait was not read")
	}
}
