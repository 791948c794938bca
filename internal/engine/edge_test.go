package engine

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

// lazyServer keeps, like PostgreSQL, each session's commits to itself until
// the session publishes them; the probe reads only what was published.
type lazyServer struct {
	mu        sync.Mutex
	published int64
}

type lazyConn struct {
	workload.Conn
	srv     *lazyServer
	pending int64
}

func (c *lazyConn) Publish(context.Context) (int64, bool, error) {
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	c.srv.published += c.pending + 1 // the publishing statement is a transaction too
	c.pending = 0
	return 1, true, nil
}

func (c *lazyConn) Exec(context.Context, string, ...any) (int64, error) {
	c.pending++
	return 1, nil
}

// lazyTxn commits one transaction on its session after cost.
type lazyTxn struct{ cost time.Duration }

func (t lazyTxn) Kind() int { return 0 }
func (t lazyTxn) Run(_ context.Context, c workload.Conn) error {
	time.Sleep(t.cost)
	_, err := c.Exec(context.Background(), "commit")
	return err
}

type lazyTerm struct{ cost time.Duration }

func (t lazyTerm) Next() workload.Txn { return lazyTxn{t.cost} }

// The server's count between the edges, less what publishing added, is the
// transactions the VUs completed in the measured interval, exactly: every
// VU is held between transactions at both edges and its session publishes.
// Without that, the sessions' unpublished commits fall on the wrong side.
func TestEdgesReadTheServerExactly(t *testing.T) {
	for _, c := range []struct {
		vus            int
		rampup, dur    time.Duration
		cost           time.Duration
		iterations     int
		perStatement   bool
		keyingThinking bool
	}{
		{vus: 3, rampup: 1050 * time.Millisecond, dur: 5 * time.Second, cost: 100 * time.Millisecond},
		{vus: 4, rampup: 0, dur: 3 * time.Second, cost: 70 * time.Millisecond},
		{vus: 2, rampup: 0, iterations: 25, cost: 30 * time.Millisecond},
		{vus: 3, rampup: 500 * time.Millisecond, dur: 2 * time.Second, cost: 45 * time.Millisecond, perStatement: true},
		{vus: 2, rampup: 3 * time.Second, dur: 20 * time.Second, cost: 45 * time.Millisecond, keyingThinking: true},
	} {
		t.Run(fmt.Sprintf("vus=%d/rampup=%s/duration=%s/iterations=%d", c.vus, c.rampup, c.dur, c.iterations), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := &lazyServer{}
				p := &Plan{
					VUs: c.vus, Mix: twoTypes[:1], Seed: 1, Rampup: c.rampup, Duration: c.dur, Iterations: c.iterations,
					PerStatement: c.perStatement, KeyingThinking: c.keyingThinking,
					Connect: func(context.Context, int) (workload.Conn, error) {
						return &lazyConn{Conn: fakeConn{}, srv: srv}, nil
					},
					Terminal: func(int) workload.Terminal { return lazyTerm{c.cost} },
					Probe: func(context.Context) (map[string]int64, error) {
						srv.mu.Lock()
						defer srv.mu.Unlock()
						return map[string]int64{"commits": srv.published}, nil
					},
				}
				res, err := Run(t.Context(), p, nil)
				if err != nil {
					t.Fatal(err)
				}
				d, _ := res.Delta("commits")
				client := res.Stats.Total().Completed()
				if client == 0 || d-res.EdgeAdded != client {
					t.Errorf("server %d − %d added by publishing, client %d: want equal", d, res.EdgeAdded, client)
				}
				if res.EdgeAdded != int64(c.vus) || res.EdgeGap != "" {
					t.Errorf("added %d, gap %q: want %d and none", res.EdgeAdded, res.EdgeGap, c.vus)
				}
			})
		})
	}
}

type nopTxn struct{}

func (nopTxn) Kind() int                                { return 0 }
func (nopTxn) Run(context.Context, workload.Conn) error { return nil }

type nopTerm struct{}

func (nopTerm) Next() workload.Txn { return nopTxn{} }

// The VU's loop, gate included, allocates nothing per transaction:
// allocs/op is the run's own setup spread over b.N transactions.
func BenchmarkVULoop(b *testing.B) {
	p := &Plan{
		VUs: 1, Mix: twoTypes[:1], Seed: 1, Iterations: b.N,
		Connect:  func(context.Context, int) (workload.Conn, error) { return fakeConn{}, nil },
		Terminal: func(int) workload.Terminal { return nopTerm{} },
		Probe:    func(context.Context) (map[string]int64, error) { return map[string]int64{}, nil },
	}
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := Run(context.Background(), p, nil); err != nil {
		b.Fatal(err)
	}
}

// With NoTerminals and no VU the engine keeps the clock: the run lasts its
// ramp-up and duration, and both edges are probed (a mixed workload's
// analytic streams alone run beside it).
func TestNoTerminalsKeepsTheClock(t *testing.T) {
	var edges int
	p := &Plan{
		VUs: 0, NoTerminals: true, Mix: twoTypes, Seed: 1, Rampup: 50 * time.Millisecond, Duration: 200 * time.Millisecond,
		Connect:  func(context.Context, int) (workload.Conn, error) { return fakeConn{}, nil },
		Terminal: func(int) workload.Terminal { return nopTerm{} },
		Probe:    func(context.Context) (map[string]int64, error) { edges++; return map[string]int64{}, nil },
	}
	res, err := Run(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if edges != 2 {
		t.Errorf("probed %d edges, want 2", edges)
	}
	if got := res.MeasureEnd.Sub(res.MeasureStart); got < p.Duration {
		t.Errorf("measured %s, want at least the duration %s", got, p.Duration)
	}
	if res.Interrupted {
		t.Error("interrupted")
	}
	for _, bad := range []*Plan{{VUs: 0, Duration: time.Second}, {VUs: 0, NoTerminals: true, Iterations: 5}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}
