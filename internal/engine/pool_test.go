package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

// exclusiveConn is a session that notices when two transactions use it at
// once: a shared session must be held by one VU at a time.
type exclusiveConn struct {
	workload.Conn
	id      int
	inUse   atomic.Int32
	overlap *atomic.Int64
	used    *atomic.Int64 // transactions run on it
}

func (*exclusiveConn) Close(context.Context) error { return nil }

// exclusiveTxn runs for cost on its session and counts it for its VU.
type exclusiveTxn struct {
	kind int
	cost time.Duration
	mine *atomic.Int64
}

func (t exclusiveTxn) Kind() int { return t.kind }
func (t exclusiveTxn) Run(_ context.Context, c workload.Conn) error {
	ec := c.(*exclusiveConn)
	if ec.inUse.Add(1) != 1 {
		ec.overlap.Add(1)
	}
	time.Sleep(t.cost)
	ec.inUse.Add(-1)
	ec.used.Add(1)
	t.mine.Add(1)
	return nil
}

type exclusiveTerm struct {
	n    int
	cost time.Duration
	mine *atomic.Int64
}

func (f *exclusiveTerm) Next() workload.Txn {
	f.n++
	return exclusiveTxn{kind: f.n % 2, cost: f.cost, mine: f.mine}
}

// Many VUs over fewer sessions: no session is ever used by two VUs at
// once, every VU runs its iterations, every session serves, and the counts
// add up to VUs × iterations.
func TestConnectionsServeManyVUs(t *testing.T) {
	for _, c := range []struct {
		vus, conns, iterations int
		keyingThinking         bool
	}{
		{vus: 1, conns: 1, iterations: 20},
		{vus: 5, conns: 5, iterations: 10},
		{vus: 10, conns: 3, iterations: 10},
		{vus: 40, conns: 4, iterations: 5},
		{vus: 200, conns: 7, iterations: 3, keyingThinking: true},
	} {
		t.Run(fmt.Sprintf("vus=%d/connections=%d/keying=%v", c.vus, c.conns, c.keyingThinking), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var overlap atomic.Int64
				var mu sync.Mutex
				var conns []*exclusiveConn
				perVU := make([]atomic.Int64, c.vus)
				p := plan(c.vus, 0, nil)
				p.Connections, p.Iterations, p.KeyingThinking = c.conns, c.iterations, c.keyingThinking
				p.Connect = func(_ context.Context, i int) (workload.Conn, error) {
					ec := &exclusiveConn{id: i, overlap: &overlap, used: new(atomic.Int64)}
					mu.Lock()
					conns = append(conns, ec)
					mu.Unlock()
					return ec, nil
				}
				p.Terminal = func(vu int) workload.Terminal {
					return &exclusiveTerm{cost: 10 * time.Millisecond, mine: &perVU[vu]}
				}
				res, err := Run(t.Context(), p, nil)
				if err != nil {
					t.Fatal(err)
				}
				if n := overlap.Load(); n > 0 {
					t.Errorf("%d transactions ran on a session another VU was using", n)
				}
				if got, want := res.Stats.Total().Commits, int64(c.vus*c.iterations); got != want {
					t.Errorf("commits %d, want %d", got, want)
				}
				for vu := range perVU {
					if got := perVU[vu].Load(); got != int64(c.iterations) {
						t.Errorf("VU %d ran %d transactions, want %d", vu+1, got, c.iterations)
					}
				}
				ids := []int{}
				for _, ec := range conns {
					ids = append(ids, ec.id)
					if ec.used.Load() == 0 {
						t.Errorf("session %d served no transaction", ec.id)
					}
				}
				slices.Sort(ids)
				if len(ids) != c.conns || ids[0] != 0 || ids[len(ids)-1] != c.conns-1 {
					t.Errorf("sessions opened %v, want 0..%d", ids, c.conns-1)
				}
				if res.ConnWait.Count != int64(c.vus*c.iterations) {
					t.Errorf("connection waits counted %d, want one per transaction", res.ConnWait.Count)
				}
			})
		})
	}
}

// Four VUs on one session queue for it: each waits for the three others'
// transactions, and that wait is part of its latency.
func TestConnectionWaitIsMeasured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := plan(4, 100*time.Millisecond, nil)
		p.Connections, p.Iterations = 1, 10
		res, err := Run(t.Context(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		w := res.ConnWait
		if w.Count != 40 || w.Max != 300*time.Millisecond {
			t.Errorf("wait %d times, max %s: want 40 and 300ms", w.Count, w.Max)
		}
		// The session is always busy: the run is 40 transactions end to end.
		if got := res.Measured(); got != 4*time.Second {
			t.Errorf("measured %s, want 4s", got)
		}
		if w.Mean() < 250*time.Millisecond || w.Mean() > 300*time.Millisecond {
			t.Errorf("mean wait %s, want 250–300ms", w.Mean())
		}
		lat := res.Stats.Total().Summarize("t")
		want := w.Mean() + 100*time.Millisecond
		if d := lat.Mean - want; d < -5*time.Millisecond || d > 5*time.Millisecond {
			t.Errorf("mean latency %s, want the wait plus the transaction: %s", lat.Mean, want)
		}
		// The histograms keep three significant digits.
		if lat.Max < 400*time.Millisecond || lat.Max > 401*time.Millisecond {
			t.Errorf("max latency %s, want 400ms", lat.Max)
		}

		// A VU with its own session never waits for one.
		p = plan(4, 100*time.Millisecond, nil)
		p.Iterations = 10
		res, err = Run(t.Context(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if mx := res.Stats.Total().Summarize("t").Max; res.ConnWait != (Lag{}) || mx < 100*time.Millisecond || mx > 101*time.Millisecond {
			t.Errorf("own sessions: wait %+v, max latency %s", res.ConnWait, res.Stats.Total().Summarize("t").Max)
		}
	})
}

// At both edges the engine holds every shared session, not every VU: the
// server's count agrees exactly, and each session published once per edge.
func TestEdgesHoldEverySession(t *testing.T) {
	for _, c := range []struct {
		vus, conns     int
		rampup, dur    time.Duration
		iterations     int
		keyingThinking bool
	}{
		{vus: 6, conns: 2, rampup: 1050 * time.Millisecond, dur: 5 * time.Second},
		{vus: 1, conns: 1, iterations: 25},
		{vus: 30, conns: 3, rampup: 3 * time.Second, dur: 20 * time.Second, keyingThinking: true},
	} {
		t.Run(fmt.Sprintf("vus=%d/connections=%d", c.vus, c.conns), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := &lazyServer{}
				p := &Plan{
					VUs: c.vus, Connections: c.conns, Mix: twoTypes[:1], Seed: 1, Rampup: c.rampup, Duration: c.dur,
					Iterations: c.iterations, KeyingThinking: c.keyingThinking,
					Connect: func(context.Context, int) (workload.Conn, error) {
						return &lazyConn{Conn: fakeConn{}, srv: srv}, nil
					},
					Terminal: func(int) workload.Terminal { return lazyTerm{30 * time.Millisecond} },
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
				if res.EdgeAdded != int64(c.conns) || res.EdgeGap != "" {
					t.Errorf("added %d, gap %q: want %d (one per session) and none", res.EdgeAdded, res.EdgeGap, c.conns)
				}
			})
		})
	}
}

// epochServer breaks every session opened before its last outage, as a
// restarted server does.
type epochServer struct {
	epoch atomic.Int64
	down  atomic.Bool
}

type epochConn struct {
	workload.Conn
	epoch int64
}

func (epochConn) Close(context.Context) error { return nil }

// A lost shared session is reconnected by the VU holding it before any
// other VU gets it: one reconnect per session, not per VU, and no VU ever
// runs on the dead connection.
func TestPooledReconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &epochServer{}
		p := plan(6, 0, nil)
		p.Connections = 2
		p.Duration = 20 * time.Second
		p.Connect = func(context.Context, int) (workload.Conn, error) {
			if srv.down.Load() {
				return nil, errors.New("connection refused")
			}
			return epochConn{epoch: srv.epoch.Load()}, nil
		}
		p.Terminal = func(int) workload.Terminal {
			return connTerm{run: func(_ context.Context, c workload.Conn) error {
				time.Sleep(100 * time.Millisecond)
				if srv.down.Load() || c.(epochConn).epoch != srv.epoch.Load() {
					return workload.ErrConnLost
				}
				return nil
			}}
		}
		go func() {
			time.Sleep(5 * time.Second)
			srv.epoch.Add(1)
			srv.down.Store(true) // the server restarts and is away for 4 s
			time.Sleep(4 * time.Second)
			srv.down.Store(false)
		}()
		res, err := Run(t.Context(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Reconnects != 2 || res.ConnLost != 2 {
			t.Errorf("reconnects %d, lost transactions %d: want 2 and 2 (one per session)", res.Reconnects, res.ConnLost)
		}
		if res.Outage < 4 || res.Outage > 10 {
			t.Errorf("outage %d s (%v)", res.Outage, res.OutageSeconds)
		}
		// Two sessions of 100 ms transactions: ~20 a second when up.
		if n := res.Stats.Total().Commits; n < 150 {
			t.Errorf("%d commits: the VUs did not carry on after the reconnect", n)
		}
		if len(res.Stopped) != 0 {
			t.Errorf("stopped %v", res.Stopped)
		}
	})
}

// connTerm makes transactions from a function of the session.
type connTerm struct {
	run func(ctx context.Context, c workload.Conn) error
}

type connTxn connTerm

func (f connTerm) Next() workload.Txn                            { return connTxn(f) }
func (connTxn) Kind() int                                        { return 0 }
func (f connTxn) Run(ctx context.Context, c workload.Conn) error { return f.run(ctx, c) }

// With --reconnect off, the VU holding a lost session stops and the
// session leaves service; when none is left the other VUs stop too, so an
// iterations run cannot wait forever for a session.
func TestPooledReconnectOffEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := plan(5, 0, nil)
		p.Connections, p.Iterations = 2, 1000
		p.Reconnect.Off = true
		var n atomic.Int64
		p.Terminal = func(int) workload.Terminal {
			return funcTerm{run: func(context.Context) error {
				time.Sleep(10 * time.Millisecond)
				if n.Add(1) > 20 {
					return workload.ErrConnLost
				}
				return nil
			}}
		}
		res, err := Run(t.Context(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Stopped) != 2 || res.ConnLost != 2 || res.Stats.Total().Commits != 20 {
			t.Errorf("stopped %v, lost %d, commits %d: want 2 VUs, 2, 20", res.Stopped, res.ConnLost, res.Stats.Total().Commits)
		}
	})
}

// The watchdog and the stuck report work per session: a hung transaction
// is cancelled on its session, and a VU whose transaction ignores the
// cancel is reported by its own number while the others go on.
func TestPooledTimeoutAndStuck(t *testing.T) {
	t.Run("tx-timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := plan(4, 0, nil)
			p.Connections, p.Iterations, p.TxTimeout = 2, 5, time.Second
			var n atomic.Int64
			p.Terminal = func(vu int) workload.Terminal {
				return funcTerm{run: func(ctx context.Context) error {
					if vu == 2 && n.Add(1) == 3 {
						<-ctx.Done() // VU 3's third transaction hangs until cancelled
						return ctx.Err()
					}
					time.Sleep(10 * time.Millisecond)
					return nil
				}}
			}
			res, err := Run(t.Context(), p, nil)
			if err != nil {
				t.Fatal(err)
			}
			total := res.Stats.Total()
			if total.Commits != 19 || total.Errors != 1 {
				t.Errorf("commits %d errors %d, want 19 and 1", total.Commits, total.Errors)
			}
			if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, "longer than --tx-timeout 1s") {
				t.Errorf("errors %+v", res.Errors)
			}
		})
	})
	t.Run("stuck", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := plan(5, 0, nil)
			p.Connections = 2
			p.Duration, p.StopTimeout = 5*time.Second, 3*time.Second
			hang := make(chan struct{})
			defer close(hang)
			p.Terminal = func(vu int) workload.Terminal {
				return funcTerm{run: func(context.Context) error {
					if vu == 3 {
						<-hang // ignores cancellation
						return nil
					}
					time.Sleep(100 * time.Millisecond)
					return nil
				}}
			}
			res, err := Run(t.Context(), p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Stuck) != 1 || res.Stuck[0] != 4 {
				t.Errorf("stuck %v, want [4]", res.Stuck)
			}
			// The other four VUs share the one session left: 10 a second.
			if n := res.Stats.Total().Commits; n < 40 {
				t.Errorf("%d commits: the other VUs did not go on", n)
			}
		})
	})
}

func TestOpenConnectionFailureEndsTheRun(t *testing.T) {
	p := plan(10, 0, nil)
	p.Connections, p.Duration = 3, time.Second
	var opened atomic.Int64
	p.Connect = func(_ context.Context, i int) (workload.Conn, error) {
		opened.Add(1)
		if i == 1 {
			return nil, errors.New("too many connections")
		}
		return fakeConn{}, nil
	}
	_, err := Run(t.Context(), p, nil)
	if err == nil || err.Error() != "open connection 2: too many connections" {
		t.Fatalf("err = %v", err)
	}
	if n := opened.Load(); n > 3 {
		t.Errorf("%d connections opened for 3", n)
	}
}

// Sessions open side by side, a bounded number at a time.
func TestSessionsOpenInParallelBounded(t *testing.T) {
	for _, conns := range []int{0, 100} {
		t.Run(fmt.Sprintf("connections=%d", conns), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var now, peak atomic.Int64
				p := plan(100, 0, nil)
				p.Connections, p.Iterations = conns, 1
				p.Connect = func(context.Context, int) (workload.Conn, error) {
					n := now.Add(1)
					for {
						m := peak.Load()
						if n <= m || peak.CompareAndSwap(m, n) {
							break
						}
					}
					time.Sleep(100 * time.Millisecond) // a slow handshake
					now.Add(-1)
					return fakeConn{}, nil
				}
				start := time.Now()
				if _, err := Run(t.Context(), p, nil); err != nil {
					t.Fatal(err)
				}
				if peak.Load() != connectors {
					t.Errorf("at most %d opening at once, want %d", peak.Load(), connectors)
				}
				// 100 handshakes of 100 ms, 32 at a time: 4 rounds.
				if took := time.Since(start); took > 500*time.Millisecond {
					t.Errorf("opening took %s", took)
				}
			})
		})
	}
}

func TestPooledRaiseErrorGivesTheSessionBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("constraint violated")
		p := plan(3, time.Millisecond, nil)
		p.Connections, p.Iterations, p.RaiseError = 1, 20, true
		p.Terminal = func(vu int) workload.Terminal {
			if vu == 1 {
				return &fakeTerm{cost: time.Millisecond, mk: func(n int) []error {
					if n == 5 {
						return []error{boom}
					}
					return nil
				}}
			}
			return &fakeTerm{cost: time.Millisecond}
		}
		res, err := Run(t.Context(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The stopped VU's session serves the two others to their end.
		if tot := res.Stats.Total(); tot.Commits != 44 || tot.Errors != 1 {
			t.Errorf("commits %d errors %d, want 44 and 1", tot.Commits, tot.Errors)
		}
		if len(res.Stopped) != 1 || res.Stopped[0] != 2 {
			t.Errorf("stopped %v, want [2]", res.Stopped)
		}
	})
}

// The pooled VU loop, the hand-over of its session included, allocates
// nothing per transaction either.
func BenchmarkVULoopPooled(b *testing.B) {
	p := &Plan{
		VUs: 1, Connections: 1, Mix: twoTypes[:1], Seed: 1, Iterations: b.N,
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

// The engine's own client CPU per transaction with many thinking VUs over
// few sessions whose transactions cost nothing: what the VUs, their timers
// and the hand-over of sessions cost (docs/benchmarks.md). Real time: 10,000
// VUs on a cycle of about a second, 200 sessions, 5 s measured.
func BenchmarkManyTerminals(b *testing.B) {
	mix := []workload.TxType{{Name: "a", Weight: 1, Keying: 500 * time.Millisecond, Think: 500 * time.Millisecond}}
	for range b.N {
		p := &Plan{
			VUs: 10000, Connections: 200, Mix: mix, Seed: 1, KeyingThinking: true, Cost: true,
			Rampup: 2 * time.Second, Duration: 5 * time.Second,
			Connect:  func(context.Context, int) (workload.Conn, error) { return fakeConn{}, nil },
			Terminal: func(int) workload.Terminal { return nopTerm{} },
		}
		res, err := Run(context.Background(), p, nil)
		if err != nil {
			b.Fatal(err)
		}
		n := res.Stats.Total().Completed()
		b.ReportMetric(float64(res.Process.CPU.Nanoseconds())/1e3/float64(n), "cpu-µs/txn")
		b.ReportMetric(float64(n)/res.Measured().Seconds(), "txn/s")
	}
}
