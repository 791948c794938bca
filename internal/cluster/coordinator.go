package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"time"
)

// Peer is one accepted worker.
type Peer struct {
	*Conn
	Index    int
	Host     string
	VUs      int     // from its ready
	Share    string  // from its ready
	Sessions []int64 // from its ready: the server's ids of its sessions
}

// Coordinator listens for a run's workers.
type Coordinator struct {
	ln net.Listener
}

// Listen opens the coordinator's port.
func Listen(addr string) (*Coordinator, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for workers on %s: %w", addr, err)
	}
	return &Coordinator{ln: ln}, nil
}

// Addr is the address the coordinator listens on.
func (c *Coordinator) Addr() string { return c.ln.Addr().String() }

// Close stops listening.
func (c *Coordinator) Close() error { return c.ln.Close() }

// Accept waits until n distinct workers have said hello with the right
// version, number of workers and spec, and accepts each with seed. A
// worker that does not fit is told why (abort) and dropped; the others
// are still waited for. After timeout, the error names the missing
// indices. The peers are returned by index.
func (c *Coordinator) Accept(ctx context.Context, n int, spec string, seed uint64, timeout time.Duration) ([]*Peer, error) {
	peers := make([]*Peer, n)
	got := make(chan *Peer)
	done := make(chan struct{})
	defer close(done)
	var mu sync.Mutex
	var refused []string // why workers were turned away, for the error
	go func() {
		for {
			nc, err := c.ln.Accept()
			if err != nil {
				return // closed
			}
			go func() {
				conn := NewConn(nc)
				p, err := hello(conn, n, spec)
				if err != nil {
					_ = conn.Send(Msg{Type: TypeAbort, Reason: err.Error()})
					_ = conn.Close()
					mu.Lock()
					refused = append(refused, fmt.Sprintf("%s: %v", conn.RemoteAddr(), err))
					mu.Unlock()
					return
				}
				select {
				case got <- p:
				case <-done:
					_ = conn.Close()
				}
			}()
		}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	for have := 0; have < n; {
		select {
		case p := <-got:
			if peers[p.Index] != nil {
				_ = p.Send(Msg{Type: TypeAbort, Reason: fmt.Sprintf("worker index %d is taken by another worker", p.Index)})
				_ = p.Close()
				continue
			}
			if err := p.Send(Msg{Type: TypeAccept, Version: Version, Seed: seed}); err != nil {
				_ = p.Close()
				continue
			}
			peers[p.Index] = p
			have++
		case <-t.C:
			var missing []string
			for i, p := range peers {
				if p == nil {
					missing = append(missing, fmt.Sprint(i))
				}
			}
			AbortAll(peers, "not all workers came")
			mu.Lock()
			why := ""
			if len(refused) > 0 {
				why = "; refused: " + strings.Join(refused, "; ")
			}
			mu.Unlock()
			return nil, fmt.Errorf("workers %s of %d did not connect within %s (--worker-timeout)%s", strings.Join(missing, ", "), n, timeout, why)
		case <-ctx.Done():
			AbortAll(peers, "the coordinator was interrupted")
			return nil, ctx.Err()
		}
	}
	return peers, nil
}

// hello reads and checks a worker's first message.
func hello(c *Conn, n int, spec string) (*Peer, error) {
	m, err := c.Recv(time.Now().Add(30 * time.Second))
	if err != nil {
		return nil, fmt.Errorf("no hello: %w", err)
	}
	switch {
	case m.Type != TypeHello:
		return nil, fmt.Errorf("expected hello, got %q", m.Type)
	case m.Version != Version:
		return nil, fmt.Errorf("protocol version %d, the coordinator speaks %d (use the same sledge)", m.Version, Version)
	case m.Workers != n:
		return nil, fmt.Errorf("worker of --workers %d, the coordinator runs %d", m.Workers, n)
	case m.Index < 0 || m.Index >= n:
		return nil, fmt.Errorf("worker index %d out of range 0-%d", m.Index, n-1)
	case m.Spec != spec:
		return nil, errors.New("the worker's run options differ from the coordinator's (same workload, options and sledge version needed)")
	}
	return &Peer{Conn: c, Index: m.Index, Host: m.Host}, nil
}

// WaitReady waits for every peer's ready (its sessions are open) until
// timeout; the error names the workers that did not report.
func WaitReady(peers []*Peer, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	errs := make([]error, len(peers))
	var wg sync.WaitGroup
	for i, p := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := p.Recv(deadline)
			switch {
			case err != nil:
				errs[i] = fmt.Errorf("worker %d: not ready: %w", i, err)
			case m.Type != TypeReady:
				errs[i] = fmt.Errorf("worker %d: expected ready, got %q%s", i, m.Type, orReason(m))
			default:
				p.VUs, p.Share, p.Sessions = m.VUs, m.Share, m.Sessions
			}
		}()
	}
	wg.Wait()
	var out []error
	for _, e := range errs {
		if e != nil {
			out = append(out, e)
		}
	}
	if len(out) > 0 {
		AbortAll(peers, "not all workers are ready")
		sort.Slice(out, func(i, j int) bool { return out[i].Error() < out[j].Error() })
		return errors.Join(out...)
	}
	return nil
}

func orReason(m Msg) string {
	if m.Reason != "" {
		return ": " + m.Reason
	}
	return ""
}

// Broadcast sends m to every peer still connected; it returns the first
// error.
func Broadcast(peers []*Peer, m Msg) error {
	var first error
	for _, p := range peers {
		if p == nil {
			continue
		}
		if err := p.Send(m); err != nil && first == nil {
			first = fmt.Errorf("worker %d: %w", p.Index, err)
		}
	}
	return first
}

// AbortAll tells every peer to stop and closes the connections.
func AbortAll(peers []*Peer, reason string) {
	for _, p := range peers {
		if p != nil {
			_ = p.Send(Msg{Type: TypeAbort, Reason: reason})
			_ = p.Close()
		}
	}
}
