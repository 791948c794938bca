package engine

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/workload"
)

// Ready is called once every session is open, and the VUs start at the
// time it gives: the measured interval counts from there.
func TestReadyStartsTheRunAtItsTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := plan(3, 100*time.Millisecond, nil)
		p.Rampup, p.Duration = time.Second, 2*time.Second
		p.Probe = nil // a worker's: the coordinator reads the counters
		var opened atomic.Int64
		p.Connect = func(context.Context, int) (workload.Conn, error) { opened.Add(1); return fakeConn{}, nil }
		var calls int
		var at time.Time
		p.Ready = func(context.Context) (time.Time, error) {
			calls++
			if n := opened.Load(); n != 3 {
				t.Errorf("Ready with %d sessions open, want 3", n)
			}
			at = time.Now().Add(5 * time.Second)
			return at, nil
		}
		res, err := Run(context.Background(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if calls != 1 {
			t.Errorf("Ready called %d times", calls)
		}
		if want := at.Add(p.Rampup); !res.MeasureStart.Equal(want) {
			t.Errorf("measured from %v, want %v (start + ramp-up)", res.MeasureStart.Sub(at), p.Rampup)
		}
		// 20 per VU in 2 s; without a probe nothing holds the VUs at the
		// edges, so one more per VU may end at each (the fake clock's
		// same instant).
		if got := res.Stats.Total().Completed(); got < 3*20 || got > 3*22 {
			t.Errorf("%d transactions measured, want 60 to 66", got)
		}
	})
}

func TestReadyErrorEndsTheRun(t *testing.T) {
	p := plan(2, time.Millisecond, nil)
	p.Duration = time.Second
	p.Ready = func(context.Context) (time.Time, error) {
		return time.Time{}, errors.New("the coordinator aborted the run")
	}
	if _, err := Run(context.Background(), p, nil); err == nil || err.Error() != "the coordinator aborted the run" {
		t.Fatalf("got %v", err)
	}
}

// The intervals taken every second add up to the measured result: the
// same counts and the same histogram.
func TestIntervalsAddUpToTheResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := plan(4, 70*time.Millisecond, func(n int) []error {
			if n%5 == 0 {
				return []error{errors.New("boom")}
			}
			return nil
		})
		p.Rampup, p.Duration, p.Intervals = 1500*time.Millisecond, 3*time.Second, true
		live := NewLive(p)
		sum := metrics.NewSet(len(p.Mix))
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				if err := live.TakeInterval(sum); err != nil {
					t.Error(err)
				}
			}
		}()
		res, err := Run(context.Background(), p, live)
		close(stop)
		<-done
		if err != nil {
			t.Fatal(err)
		}
		if err := live.TakeInterval(sum); err != nil { // the rest
			t.Fatal(err)
		}
		for i := range p.Mix {
			got, want := sum[i].Summarize("x"), res.Stats[i].Summarize("x")
			if got != want || want.Count == 0 || want.Errors == 0 {
				t.Errorf("type %d: intervals %+v, result %+v", i, got, want)
			}
		}
	})
}

// A coordinator's live counters, fed the workers' counts tick by tick,
// hold their sum bucket by bucket, as a scrape of each would add up.
func TestLiveAddsWorkersBucketByBucket(t *testing.T) {
	p := &Plan{Mix: twoTypes}
	workers := []*Live{NewLive(p), NewLive(p)}
	coord := NewLive(p)
	last := make([][]Counts, len(workers))
	for k := range last {
		last[k] = make([]Counts, len(p.Mix))
	}
	lat := []time.Duration{300 * time.Microsecond, 3 * time.Millisecond, 40 * time.Millisecond, 2 * time.Minute}
	for tick := range 3 {
		for k, w := range workers {
			for j := range 5 + tick + k {
				w.complete(j%2, lat[(j+k)%len(lat)], j%3 == 0)
			}
			w.fail(1)
			for i := range p.Mix {
				c := w.KindCounts(i)
				coord.Add(i, c.Sub(last[k][i]), tick > 0)
				last[k][i] = c
			}
		}
	}
	for i := range p.Mix {
		got, n, sum := coord.Buckets(i, nil)
		var want []uint64
		var wn uint64
		var wsum time.Duration
		for _, w := range workers {
			b, c, s := w.Buckets(i, nil)
			if want == nil {
				want = make([]uint64, len(b))
			}
			for j := range b {
				want[j] += b[j]
			}
			wn, wsum = wn+c, wsum+s
		}
		for j := range want {
			if got[j] != want[j] {
				t.Errorf("type %d bucket %d: %d, want %d", i, j, got[j], want[j])
			}
		}
		if n != wn || sum != wsum || coord.Rollbacks(i) != workers[0].Rollbacks(i)+workers[1].Rollbacks(i) ||
			coord.KindErrors(i) != workers[0].KindErrors(i)+workers[1].KindErrors(i) {
			t.Errorf("type %d: count %d sum %s, want %d %s", i, n, sum, wn, wsum)
		}
	}
	if coord.Measured() == 0 || coord.Measured() >= int64(coord.Completed()) {
		t.Errorf("measured %d of %d: want the ticks after the first", coord.Measured(), coord.Completed())
	}
}

// okTxn is a transaction that succeeds at once, allocating nothing.
type okTxn struct{}

func (okTxn) Kind() int                                { return 1 }
func (okTxn) Run(context.Context, workload.Conn) error { return nil }

// Recording into the interval set costs the VU's hot path no allocation
// once its histogram exists.
func TestIntervalsAllocateNothing(t *testing.T) {
	p := &Plan{VUs: 1, Mix: twoTypes}
	p.Intervals = true
	live := NewLive(p)
	s := newSession(0, p, live, false)
	s.conn = fakeConn{}
	s.newTxCtx(context.Background())
	live.setPhase(PhaseMeasure, time.Now())
	var tx workload.Txn = okTxn{}
	s.execute(s.txCtx, 0, tx, 1, txTimes{}) // the histograms' first use
	if n := testing.AllocsPerRun(1000, func() {
		s.execute(s.txCtx, 0, tx, 1, txTimes{})
	}); n != 0 {
		t.Errorf("%.1f allocations per transaction", n)
	}
	live.attach([]*session{s})
	into := metrics.NewSet(len(p.Mix))
	if err := live.TakeInterval(into); err != nil {
		t.Fatal(err)
	}
	// The first, the warm-up and the 1000 runs; the set is reset after.
	if got := into[1].Commits; got != 1002 || into[1].Latencies() != 1002 || s.ival[1].Commits != 0 {
		t.Errorf("interval: %d commits, %d latencies; left in the session: %d", got, into[1].Latencies(), s.ival[1].Commits)
	}
}
