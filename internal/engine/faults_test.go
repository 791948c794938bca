package engine

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

// funcTerm makes transactions from a function of the VU's clock.
type funcTerm struct {
	run func(ctx context.Context) error
}

type funcTxn struct {
	run func(ctx context.Context) error
}

func (f funcTerm) Next() workload.Txn                            { return funcTxn(f) }
func (f funcTxn) Kind() int                                      { return 0 }
func (f funcTxn) Run(ctx context.Context, _ workload.Conn) error { return f.run(ctx) }

func TestRateThrottlesAndReportsLag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := plan(2, 0, nil)
		p.Duration = 100 * time.Second
		p.Rate = 10 // in all: 5 per VU
		p.Terminal = func(int) workload.Terminal {
			return funcTerm{run: func(context.Context) error { time.Sleep(10 * time.Millisecond); return nil }}
		}
		res, err := Run(t.Context(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := res.Stats.Total().Commits
		if n < 900 || n > 1100 {
			t.Errorf("throttled to 10 tps for 100 s: %d transactions, want about 1000", n)
		}
		// Transactions take 10 ms and arrive 200 ms apart on average: most
		// start on time, so the lag is small but a few queue behind.
		if res.Lag.Count != n || res.Lag.Max <= 0 || res.Lag.Mean() > 50*time.Millisecond {
			t.Errorf("lag %+v for %d transactions", res.Lag, n)
		}
		// Latency counts from the schedule: never less than the work.
		if got := res.Stats.Total().Summarize("t").P50; got < 10*time.Millisecond {
			t.Errorf("p50 %s below the transaction's own 10ms", got)
		}
	})
}

func TestLatencyLimitCountsLateAndSkips(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := plan(1, 0, nil)
		p.Duration = 10 * time.Second
		p.Rate = 100 // far more than a 50 ms transaction allows
		p.LatencyLimit = 20 * time.Millisecond
		p.Terminal = func(int) workload.Terminal {
			return funcTerm{run: func(context.Context) error { time.Sleep(50 * time.Millisecond); return nil }}
		}
		res, err := Run(t.Context(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := res.Stats.Total().Commits
		if n == 0 || res.Late != n {
			t.Errorf("%d transactions, %d late: every 50 ms transaction is over a 20 ms limit", n, res.Late)
		}
		if res.Skipped < 500 {
			t.Errorf("skipped %d, want most of the 1000 scheduled", res.Skipped)
		}
	})
}

func TestStopTimeoutReportsStuckVUs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := plan(3, 0, nil)
		p.Duration = 5 * time.Second
		p.StopTimeout = 3 * time.Second
		hang := make(chan struct{})
		defer close(hang)
		p.Terminal = func(vu int) workload.Terminal {
			return funcTerm{run: func(ctx context.Context) error {
				if vu == 1 {
					<-hang // a server that never answers, and ignores cancellation
					return nil
				}
				time.Sleep(100 * time.Millisecond)
				return nil
			}}
		}
		start := time.Now()
		res, err := Run(t.Context(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 5*time.Second+3*time.Second+cancelGrace+time.Second {
			t.Errorf("run took %s", took)
		}
		if len(res.Stuck) != 1 || res.Stuck[0] != 2 {
			t.Errorf("stuck %v, want [2]", res.Stuck)
		}
		if res.Stats.Total().Commits < 90 {
			t.Errorf("the other VUs' work was lost: %d commits", res.Stats.Total().Commits)
		}
	})
}

func TestStopTimeoutCancelsStatements(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := plan(2, 0, nil)
		p.Duration = 2 * time.Second
		p.StopTimeout = time.Second
		p.Terminal = func(vu int) workload.Terminal {
			return funcTerm{run: func(ctx context.Context) error {
				<-ctx.Done() // a lock held forever: only cancellation ends it
				return ctx.Err()
			}}
		}
		start := time.Now()
		res, err := Run(t.Context(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Both were inside a transaction when the stop timeout ran out;
		// cancelling their statements ended them at once.
		if len(res.Stuck) != 2 {
			t.Errorf("stuck %v, want [1 2]", res.Stuck)
		}
		if took := time.Since(start); took > 2*time.Second+time.Second+100*time.Millisecond {
			t.Errorf("run took %s: the cancelled statements should end it at the stop timeout", took)
		}
	})
}

func TestReconnectAfterLostConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var connects atomic.Int64
		down := atomic.Bool{}
		p := plan(2, 0, nil)
		p.Duration = 20 * time.Second
		p.Connect = func(context.Context, int) (workload.Conn, error) {
			connects.Add(1)
			if down.Load() {
				return nil, errors.New("connection refused")
			}
			return fakeConn{}, nil
		}
		p.Terminal = func(int) workload.Terminal {
			return funcTerm{run: func(context.Context) error {
				time.Sleep(100 * time.Millisecond)
				if down.Load() {
					return workload.ErrConnLost
				}
				return nil
			}}
		}
		go func() {
			time.Sleep(5 * time.Second)
			down.Store(true) // the server goes away for 4 s
			time.Sleep(4 * time.Second)
			down.Store(false)
		}()
		res, err := Run(t.Context(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Reconnects != 2 {
			t.Errorf("reconnects %d, want 2 (one per VU)", res.Reconnects)
		}
		if res.ConnLost != 2 {
			t.Errorf("transactions failed by the lost connection: %d, want 2", res.ConnLost)
		}
		// 4 s down plus up to 5 s of backoff: at least 4 whole seconds
		// without a transaction, and the run went on after.
		if res.Outage < 4 || res.Outage > 10 {
			t.Errorf("outage %d s (%v)", res.Outage, res.OutageSeconds)
		}
		if n := res.Stats.Total().Commits; n < 150 {
			t.Errorf("%d commits: the VUs did not carry on after reconnecting", n)
		}
	})
}

func TestReconnectOffStopsTheVU(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := plan(1, 0, nil)
		p.Duration = 5 * time.Second
		p.Reconnect.Off = true
		p.Terminal = func(int) workload.Terminal {
			return funcTerm{run: func(context.Context) error { return workload.ErrConnLost }}
		}
		res, err := Run(t.Context(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Stopped) != 1 || res.Reconnects != 0 {
			t.Errorf("stopped %v, reconnects %d", res.Stopped, res.Reconnects)
		}
	})
}

func TestTxTimeoutCancelsLongTransactions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := plan(2, 0, nil)
		p.Iterations = 5 // no duration: only the timeout bounds a hung transaction
		p.TxTimeout = time.Second
		var n atomic.Int64
		p.Terminal = func(vu int) workload.Terminal {
			return funcTerm{run: func(ctx context.Context) error {
				if vu == 0 && n.Add(1) == 3 {
					<-ctx.Done() // the third transaction of VU 1 hangs until cancelled
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
		if total.Commits != 9 || total.Errors != 1 {
			t.Errorf("commits %d errors %d, want 9 and 1", total.Commits, total.Errors)
		}
		if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, "longer than --tx-timeout 1s") {
			t.Errorf("errors %+v", res.Errors)
		}
	})
}
