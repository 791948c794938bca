package metrics

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
)

// exchange is one step of a scripted conversation on a loopback socket:
// the client writes each of writes, then the server answers reply bytes
// (none: no answer), which the client reads readBuf bytes at a time.
type exchange struct {
	writes  []int
	reply   int
	readBuf int
}

// loopback returns a connected TCP pair on 127.0.0.1.
func loopback(t testing.TB) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func TestWireCountsRoundTrips(t *testing.T) {
	cases := []struct {
		name      string
		script    []exchange
		wantTrips int64
	}{
		{"one request one reply", []exchange{{writes: []int{10}, reply: 20, readBuf: 64}}, 1},
		{"burst of writes then one reply", []exchange{{writes: []int{5, 7, 9}, reply: 20, readBuf: 64}}, 1},
		{"reply read in many pieces", []exchange{{writes: []int{10}, reply: 1000, readBuf: 7}}, 1},
		{"five exchanges", []exchange{
			{writes: []int{1}, reply: 1, readBuf: 1}, {writes: []int{2}, reply: 2, readBuf: 1},
			{writes: []int{3}, reply: 3, readBuf: 1}, {writes: []int{4}, reply: 4, readBuf: 1},
			{writes: []int{5}, reply: 5, readBuf: 1}}, 5},
		{"write without reply joins the next burst", []exchange{
			{writes: []int{8}}, {writes: []int{16}, reply: 4, readBuf: 64}}, 1},
		{"no reply at all", []exchange{{writes: []int{8}}}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client, server := loopback(t)
			var wc WireCounts
			c := CountConn(client, &wc)
			var wantSent, wantRecv int64
			for i, e := range tc.script {
				n := 0
				for _, w := range e.writes {
					if _, err := c.Write(bytes.Repeat([]byte{'q'}, w)); err != nil {
						t.Fatal(err)
					}
					n += w
					wantSent += int64(w)
				}
				if _, err := io.ReadFull(server, make([]byte, n)); err != nil {
					t.Fatal(err)
				}
				if e.reply == 0 {
					continue
				}
				if _, err := server.Write(bytes.Repeat([]byte{'r'}, e.reply)); err != nil {
					t.Fatal(err)
				}
				got, buf := 0, make([]byte, e.readBuf)
				for got < e.reply {
					k, err := c.Read(buf[:min(len(buf), e.reply-got)])
					if err != nil {
						t.Fatalf("exchange %d: %v", i, err)
					}
					got += k
				}
				wantRecv += int64(e.reply)
			}
			want := Wire{RoundTrips: tc.wantTrips, BytesSent: wantSent, BytesReceived: wantRecv}
			if got := wc.Load(); got != want {
				t.Errorf("counted %+v, want %+v", got, want)
			}
		})
	}
}

func TestCountConnKeepsSyscallConn(t *testing.T) {
	client, _ := loopback(t)
	if _, ok := CountConn(client, new(WireCounts)).(syscall.Conn); !ok {
		t.Error("a counted TCP connection is not a syscall.Conn")
	}
	p, _ := net.Pipe()
	defer p.Close()
	if _, ok := CountConn(p, new(WireCounts)).(syscall.Conn); ok {
		t.Error("a counted pipe claims to be a syscall.Conn")
	}
	if CountConn(p, nil) != p {
		t.Error("no counter should leave the connection as it is")
	}
	if WireFrom(context.Background()) != nil {
		t.Error("a bare context carries a counter")
	}
}

// BenchmarkLoopbackPingPong is the overhead of counting: 64-byte request
// and reply on a loopback TCP socket, plain and counted (docs/cost.md).
func BenchmarkLoopbackPingPong(b *testing.B) {
	for _, counted := range []bool{false, true} {
		b.Run(fmt.Sprintf("counted=%v", counted), func(b *testing.B) {
			client, server := loopback(b)
			go func() {
				buf := make([]byte, 64)
				for {
					if _, err := io.ReadFull(server, buf); err != nil {
						return
					}
					if _, err := server.Write(buf); err != nil {
						return
					}
				}
			}()
			c := client
			if counted {
				c = CountConn(client, new(WireCounts))
			}
			buf := make([]byte, 64)
			b.ResetTimer()
			for b.Loop() {
				if _, err := c.Write(buf); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(c, buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCountOps is the counting alone: one write and one read's worth
// of atomics, no socket.
func BenchmarkCountOps(b *testing.B) {
	var wc WireCounts
	for b.Loop() {
		wc.addSent(64)
		wc.addReceived(64)
	}
}
