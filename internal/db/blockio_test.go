package db

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// pair is a loopback TCP connection: the blocking client and the server's end.
func pair(t *testing.T) (net.Conn, net.Conn) {
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
	bc, err := BlockingConn(nc)
	if err != nil {
		t.Fatal(err)
	}
	srv := <-acc
	t.Cleanup(func() { bc.Close(); srv.Close() })
	return bc, srv
}

func TestBlockingConnReadsAndWrites(t *testing.T) {
	c, srv := pair(t)
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

func TestBlockingConnInterrupts(t *testing.T) {
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
			c, _ := pair(t)
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

func TestBlockingConnFutureDeadlineTimesOut(t *testing.T) {
	c, _ := pair(t)
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
