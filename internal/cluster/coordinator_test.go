package cluster

import (
	"context"
	"strings"
	"testing"
	"time"
)

// hello dials co and says hello; it returns the answer.
func sayHello(t *testing.T, addr string, m Msg) (*Conn, Msg) {
	t.Helper()
	c, err := Dial(context.Background(), addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	m.Type = TypeHello
	if err := c.Send(m); err != nil {
		t.Fatal(err)
	}
	a, err := c.Recv(time.Now().Add(5 * time.Second))
	if err != nil {
		t.Fatalf("worker %d: %v", m.Index, err)
	}
	return c, a
}

func TestAcceptBarrierAndStart(t *testing.T) {
	co, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	type acc struct {
		peers []*Peer
		err   error
	}
	out := make(chan acc, 1)
	go func() {
		p, err := co.Accept(context.Background(), 2, "spec", 42, 5*time.Second)
		out <- acc{p, err}
	}()
	// Refused, each with its reason; the run still waits for two good ones.
	refusals := []struct {
		m    Msg
		want string
	}{
		{Msg{Version: Version, Index: 0, Workers: 2, Spec: "other"}, "run options differ"},
		{Msg{Version: Version, Index: 5, Workers: 2, Spec: "spec"}, "out of range"},
		{Msg{Version: Version, Index: 0, Workers: 3, Spec: "spec"}, "--workers 3"},
		{Msg{Version: Version + 1, Index: 0, Workers: 2, Spec: "spec"}, "protocol version"},
	}
	for _, r := range refusals {
		_, a := sayHello(t, co.Addr(), r.m)
		if a.Type != TypeAbort || !strings.Contains(a.Reason, r.want) {
			t.Errorf("hello %+v: got %+v, want abort with %q", r.m, a, r.want)
		}
	}
	var conns []*Conn
	for k := range 2 {
		c, a := sayHello(t, co.Addr(), Msg{Version: Version, Index: k, Workers: 2, Spec: "spec"})
		if a.Type != TypeAccept || a.Seed != 42 {
			t.Fatalf("worker %d: got %+v, want accept with seed 42", k, a)
		}
		conns = append(conns, c)
	}
	got := <-out
	if got.err != nil {
		t.Fatal(got.err)
	}
	for k, c := range conns {
		if err := c.Send(Msg{Type: TypeReady, VUs: k + 1, Share: "clients"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := WaitReady(got.peers, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got.peers[1].VUs != 2 {
		t.Errorf("worker 1's VUs: %d, want 2", got.peers[1].VUs)
	}
	at := time.Now().Add(time.Second).UnixNano()
	if err := Broadcast(got.peers, Msg{Type: TypeStart, At: at}); err != nil {
		t.Fatal(err)
	}
	for k, c := range conns {
		m, err := c.Recv(time.Now().Add(5 * time.Second))
		if err != nil || m.Type != TypeStart || m.At != at {
			t.Errorf("worker %d: got %+v, %v; want start at %d", k, m, err, at)
		}
	}
}

func TestAcceptNamesMissingWorkers(t *testing.T) {
	co, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	done := make(chan error, 1)
	go func() {
		_, err := co.Accept(context.Background(), 4, "spec", 1, 1500*time.Millisecond)
		done <- err
	}()
	sayHello(t, co.Addr(), Msg{Version: Version, Index: 1, Workers: 4, Spec: "spec"})
	// A second worker 1 is turned away: the index is taken.
	_, a := sayHello(t, co.Addr(), Msg{Version: Version, Index: 1, Workers: 4, Spec: "spec"})
	if a.Type != TypeAbort || !strings.Contains(a.Reason, "taken") {
		t.Errorf("duplicate index: got %+v, want abort", a)
	}
	err = <-done
	if err == nil || !strings.Contains(err.Error(), "workers 0, 2, 3 of 4 did not connect") {
		t.Fatalf("got %v, want the missing indices 0, 2, 3", err)
	}
}
