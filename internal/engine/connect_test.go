package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

// countedConn counts its closes.
type countedConn struct {
	workload.Conn
	closed *atomic.Int64
}

func (c countedConn) Close(context.Context) error { c.closed.Add(1); return nil }

// pgbench -C: every transaction opens a connection of its own, and the
// time to open it is part of its latency; without it, the VUs keep theirs.
func TestConnectPerTx(t *testing.T) {
	for _, perTx := range []bool{false, true} {
		t.Run(fmt.Sprint("ConnectPerTx=", perTx), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var opened, closed atomic.Int64
				p := plan(2, 100*time.Millisecond, nil)
				p.Iterations = 5
				p.ConnectPerTx = perTx
				p.Connect = func(context.Context, int) (workload.Conn, error) {
					opened.Add(1)
					time.Sleep(10 * time.Millisecond)
					return countedConn{closed: &closed}, nil
				}
				res, err := Run(t.Context(), p, nil)
				if err != nil {
					t.Fatal(err)
				}
				total := res.Stats.Total()
				if total.Commits != 10 || total.Errors != 0 {
					t.Fatalf("commits %d, errors %d, want 10 and 0", total.Commits, total.Errors)
				}
				wantOpened, wantLat, wantConnects := int64(2), 100*time.Millisecond, int64(0)
				if perTx {
					// The first connections, then one per transaction.
					wantOpened, wantLat, wantConnects = 12, 110*time.Millisecond, 10
				}
				if opened.Load() != wantOpened || closed.Load() != wantOpened {
					t.Errorf("opened %d, closed %d connections, want %d each", opened.Load(), closed.Load(), wantOpened)
				}
				// The histogram's mean, to its precision.
				if mean := total.Summarize("").Mean; mean < wantLat-time.Millisecond || mean > wantLat+time.Millisecond {
					t.Errorf("mean latency %v, want %v", mean, wantLat)
				}
				if res.Connects.Count != wantConnects || (perTx && res.Connects.Mean() != 10*time.Millisecond) {
					t.Errorf("connects %+v, want %d of 10ms", res.Connects, wantConnects)
				}
				if res.ConnWait.Count != 0 {
					t.Errorf("connection wait %+v: no VU waited for a shared session", res.ConnWait)
				}
			})
		})
	}
}

// A failed connection under ConnectPerTx fails its transaction, as a lost
// connection does, and the VU reconnects and goes on.
func TestConnectPerTxFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var opened atomic.Int64
		p := plan(1, 100*time.Millisecond, nil)
		p.Iterations = 4
		p.ConnectPerTx = true
		var calls []string
		var mu sync.Mutex
		p.OnError = func(e TryError) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, fmt.Sprintf("%d %d %v %v", e.VU, e.Try, e.Retry, e.Err))
		}
		p.Connect = func(context.Context, int) (workload.Conn, error) {
			if opened.Add(1) == 3 { // the second transaction's
				return nil, errors.New("too many clients")
			}
			return fakeConn{}, nil
		}
		res, err := Run(t.Context(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		total := res.Stats.Total()
		if total.Commits != 3 || total.Errors != 1 || res.ConnLost != 1 || res.Reconnects != 1 {
			t.Errorf("commits %d, errors %d, lost %d, reconnects %d; want 3, 1, 1, 1", total.Commits, total.Errors, res.ConnLost, res.Reconnects)
		}
		if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, "connect: too many clients") {
			t.Errorf("errors %+v", res.Errors)
		}
		if len(calls) != 1 || calls[0] != "0 1 false connect: too many clients" {
			t.Errorf("OnError calls %q", calls)
		}
	})
}

// Failed transactions are sorted into pgbench's classes per type, the
// log gets each one's class, and OnError hears of every failed try,
// retried or not.
func TestFailureClasses(t *testing.T) {
	serialization := fmt.Errorf("could not serialize: %w", workload.ErrRetry)
	deadlock := fmt.Errorf("deadlock detected: %w", workload.ErrRetry)
	other := errors.New("division by zero")
	p := plan(1, time.Millisecond, func(n int) []error {
		switch n { // kind is n % 2
		case 1:
			return []error{serialization, serialization} // kind 1: fails after its retry
		case 2:
			return []error{deadlock, deadlock} // kind 0
		case 3:
			return []error{deadlock} // kind 1: retried, then commits
		case 4:
			return []error{other} // kind 0: not retried
		}
		return nil
	})
	p.Iterations = 5
	p.MaxRetries = 1
	p.ClassifyFailure = func(err error) workload.FailClass {
		switch {
		case errors.Is(err, serialization):
			return workload.FailSerialization
		case errors.Is(err, deadlock):
			return workload.FailDeadlock
		}
		return workload.FailOther
	}
	var calls []string
	p.OnError = func(e TryError) {
		calls = append(calls, fmt.Sprintf("kind %d try %d retry %v: %v", e.Kind, e.Try, e.Retry, e.Err))
		if want := time.Duration(e.Try) * time.Millisecond; e.Elapsed < want {
			t.Errorf("try %d: elapsed %v, want at least %v (1ms a try)", e.Try, e.Elapsed, want)
		}
	}
	log := &recLog{}
	p.TxLog = log
	res, err := Run(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []FailCounts{{Deadlock: 1}, {Serialization: 1}}
	if fmt.Sprint(res.Failures) != fmt.Sprint(want) {
		t.Errorf("failures %+v, want %+v", res.Failures, want)
	}
	if e := res.Stats.Total().Errors; e != 3 {
		t.Errorf("errors %d, want 3 (the other error among them)", e)
	}
	wantCalls := []string{
		"kind 1 try 1 retry true: " + serialization.Error(), "kind 1 try 2 retry false: " + serialization.Error(),
		"kind 0 try 1 retry true: " + deadlock.Error(), "kind 0 try 2 retry false: " + deadlock.Error(),
		"kind 1 try 1 retry true: " + deadlock.Error(),
		"kind 0 try 1 retry false: " + other.Error(),
	}
	if strings.Join(calls, "\n") != strings.Join(wantCalls, "\n") {
		t.Errorf("OnError calls:\n%s\nwant\n%s", strings.Join(calls, "\n"), strings.Join(wantCalls, "\n"))
	}
	var classes []workload.FailClass
	for _, e := range log.ends[0] {
		if e.Status == TxFailed {
			classes = append(classes, e.Class)
		}
	}
	if fmt.Sprint(classes) != fmt.Sprint([]workload.FailClass{workload.FailSerialization, workload.FailDeadlock, workload.FailOther}) {
		t.Errorf("logged classes %v", classes)
	}
}

// A timed run under ConnectPerTx ends as any other: the connection being
// opened when it ends is no failed transaction and stops no VU.
func TestConnectPerTxTimed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := plan(3, 7*time.Millisecond, nil)
		p.Duration = 2 * time.Second
		p.ConnectPerTx = true
		p.Connect = func(ctx context.Context, _ int) (workload.Conn, error) {
			select { // a connection that takes 13ms, or the run's end
			case <-time.After(13 * time.Millisecond):
				return fakeConn{}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		res, err := Run(t.Context(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		total := res.Stats.Total()
		if total.Errors != 0 || len(res.Errors) != 0 || len(res.Stopped) != 0 || res.Reconnects != 0 {
			t.Errorf("errors %d %v, stopped %v, reconnects %d: want none", total.Errors, res.Errors, res.Stopped, res.Reconnects)
		}
		// 20ms a transaction, connection included: 100 per VU in 2 s.
		if total.Commits < 290 || total.Commits > 303 || res.Connects.Count < total.Commits {
			t.Errorf("commits %d, connects %d: want about 300, each with its connection", total.Commits, res.Connects.Count)
		}
	})
}
