package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

// The edges of the measured interval are where the server's counters are
// read (Plan.Probe). For those readings to count the same transactions as
// the VUs do, the engine holds every session between two transactions while
// it reads: the VU using a session takes its gate around each transaction,
// and the engine takes every session's gate at an edge, waiting for the
// transactions in flight to end. With the sessions held, each session whose
// server publishes its counters only now and then (workload.Publisher)
// publishes them, and then the probe reads. A VU that waits for a shared
// session meanwhile just waits (Plan.Connections). At the start the VUs go
// on once the measured interval has begun; at the end they have stopped.
// The pause lasts about one transaction and one round trip, outside the
// measured interval.

// edge is the engine's hold on the sessions at one edge.
type edge struct {
	held        []*session
	missed      int   // sessions still inside a transaction when the wait ran out
	unpublished int   // Publishers that could not publish
	added       int64 // transactions that publishing added to the server's counters
}

// holdSessions takes every session's gate, waiting until deadline for the
// transactions in flight; sessions still inside one then are missed. The
// waits run side by side, each queued on its session's gate, so every
// session is held as its transaction in flight ends and the pause is the
// longest of them, not their sum. An escalated stop (parent cancelled)
// ends the waits at once.
func holdSessions(parent context.Context, sessions []*session, deadline time.Time) *edge {
	e := &edge{held: make([]*session, 0, len(sessions))}
	var busy []*session
	for _, v := range sessions {
		select {
		case v.gate <- struct{}{}:
			e.held = append(e.held, v)
		default:
			busy = append(busy, v)
		}
	}
	if len(busy) == 0 {
		return e
	}
	ctx, cancel := context.WithDeadline(parent, deadline)
	defer cancel()
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for _, v := range busy {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case v.gate <- struct{}{}:
				mu.Lock()
				e.held = append(e.held, v)
				mu.Unlock()
			case <-ctx.Done():
				mu.Lock()
				e.missed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return e
}

// publishers bounds the sessions that publish at once: each is a round trip.
const publishers = 64

// publish has every held session publish its counters, within timeout.
func (e *edge) publish(ctx context.Context, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		sem = make(chan struct{}, publishers)
	)
	for _, v := range e.held {
		p, ok := v.publisher()
		if !ok {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			added, ok, err := p.Publish(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil || !ok {
				e.unpublished++
				return
			}
			e.added += added
		}()
	}
	wg.Wait()
}

// release lets the held sessions be used again.
func (e *edge) release() {
	for _, v := range e.held {
		<-v.gate
	}
	e.held = nil
}

// gap says why the edge's reading may miss or add transactions; "" when it
// is complete. at names the edge.
func (e *edge) gap(at string) string {
	switch {
	case e == nil:
		return ""
	case e.missed > 0:
		return fmt.Sprintf("%d virtual user%s still inside a transaction at the %s of the measured interval", e.missed, plural(e.missed), at)
	case e.unpublished > 0:
		return fmt.Sprintf("the server did not publish the counters of %d session%s at the %s of the measured interval", e.unpublished, plural(e.unpublished), at)
	}
	return ""
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// publisher is the session as a workload.Publisher, when it is one. Only
// the engine calls it, holding the session's gate.
func (s *session) publisher() (workload.Publisher, bool) {
	s.connMu.Lock()
	c := s.conn
	s.connMu.Unlock()
	if t, ok := c.(*timedConn); ok {
		c = t.Conn
	}
	p, ok := c.(workload.Publisher)
	return p, ok
}
