package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

// fakeConn is a session whose transactions take a fixed (fake-clock) time.
type fakeConn struct{ workload.Conn }

func (fakeConn) Close(context.Context) error { return nil }

// fakeTxn sleeps, then fails with the errors queued in fail, one per attempt.
type fakeTxn struct {
	kind int
	cost time.Duration
	fail []error
}

func (t *fakeTxn) Kind() int { return t.kind }
func (t *fakeTxn) Run(ctx context.Context, _ workload.Conn) error {
	time.Sleep(t.cost)
	if len(t.fail) > 0 {
		err := t.fail[0]
		t.fail = t.fail[1:]
		return err
	}
	return nil
}

type fakeTerm struct {
	n    int
	cost time.Duration
	mk   func(n int) []error
}

func (f *fakeTerm) Next() workload.Txn {
	f.n++
	var fail []error
	if f.mk != nil {
		fail = f.mk(f.n)
	}
	return &fakeTxn{kind: f.n % 2, cost: f.cost, fail: fail}
}

var twoTypes = []workload.TxType{
	{Name: "a", Weight: 1, Keying: 2 * time.Second, Think: 4 * time.Second},
	{Name: "b", Weight: 1, Keying: 2 * time.Second, Think: 4 * time.Second},
}

func plan(vus int, cost time.Duration, mk func(int) []error) *Plan {
	var counter atomic.Int64
	return &Plan{
		VUs: vus, Mix: twoTypes, Seed: 1,
		Connect:  func(context.Context, int) (workload.Conn, error) { return fakeConn{}, nil },
		Terminal: func(int) workload.Terminal { return &fakeTerm{cost: cost, mk: mk} },
		Probe: func(context.Context) (map[string]int64, error) {
			return map[string]int64{"probes": counter.Add(1)}, nil
		},
	}
}

func TestTimedRunCountsOnlyTheMeasuredInterval(t *testing.T) {
	cases := []struct {
		vus            int
		rampup, dur    time.Duration
		cost           time.Duration
		wantPerVU      int64 // transactions completing inside the interval
		wantMeasuredUs time.Duration
	}{
		{vus: 1, rampup: 0, dur: 10 * time.Second, cost: 100 * time.Millisecond, wantPerVU: 100},
		{vus: 3, rampup: 5 * time.Second, dur: 10 * time.Second, cost: 100 * time.Millisecond, wantPerVU: 100},
		{vus: 2, rampup: 1500 * time.Millisecond, dur: 2 * time.Second, cost: time.Second, wantPerVU: 2},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("vus=%d/rampup=%s/duration=%s", c.vus, c.rampup, c.dur), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := plan(c.vus, c.cost, nil)
				p.Rampup, p.Duration = c.rampup, c.dur
				res, err := Run(t.Context(), p, nil)
				if err != nil {
					t.Fatal(err)
				}
				// The interval ends when the transactions in flight at its
				// end have: at most one transaction later.
				got := res.Measured()
				if got < c.dur || got > c.dur+c.cost {
					t.Errorf("measured %s, want %s to %s", got, c.dur, c.dur+c.cost)
				}
				total := res.Stats.Total()
				// A transaction finishing exactly on the start or the end of
				// the interval may fall on either side, by goroutine order.
				want, slack := c.wantPerVU*int64(c.vus), int64(c.vus)
				if got > c.dur {
					want += int64(c.vus) // the ones in flight at the end
				}
				if got := total.Commits; got < want-slack || got > want+slack {
					t.Errorf("commits %d, want %d ±%d", got, want, slack)
				}
				if d, ok := res.Delta("probes"); !ok || d != 1 {
					t.Errorf("probe delta %d %v, want 1 true", d, ok)
				}
				if res.Interrupted {
					t.Error("interrupted")
				}
			})
		})
	}
}

func TestIterationsRunExactlyN(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := plan(3, 10*time.Millisecond, nil)
		p.Iterations = 50
		p.Rampup = time.Hour // ignored: iterations runs have no ramp-up
		res, err := Run(t.Context(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Stats.Total().Commits; got != 150 {
			t.Errorf("commits %d, want 150", got)
		}
		if res.Stats[0].Commits != 75 || res.Stats[1].Commits != 75 {
			t.Errorf("per type %d/%d, want 75/75", res.Stats[0].Commits, res.Stats[1].Commits)
		}
		if got := res.Measured(); got != 500*time.Millisecond {
			t.Errorf("measured %s, want 500ms", got)
		}
	})
}

func TestOutcomesAreClassified(t *testing.T) {
	boom := errors.New("boom")
	retry := fmt.Errorf("deadlock: %w", workload.ErrRetry)
	abort := fmt.Errorf("item not found: %w", workload.ErrUserAbort)
	cases := []struct {
		name                              string
		maxRetries                        int
		fail                              func(n int) []error
		commits, rollbacks, errs, retries int64
	}{
		{"ok", 3, nil, 10, 0, 0, 0},
		{"user abort", 3, func(n int) []error { return []error{abort} }, 0, 10, 0, 0},
		{"retried then ok", 3, func(n int) []error { return []error{retry, retry} }, 10, 0, 0, 20},
		{"retries exhausted", 1, func(n int) []error { return []error{retry, retry} }, 0, 0, 10, 10},
		{"error, VU goes on", 3, func(n int) []error {
			if n%2 == 0 {
				return []error{boom}
			}
			return nil
		}, 5, 0, 5, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := plan(1, time.Millisecond, c.fail)
				p.Iterations, p.MaxRetries = 10, c.maxRetries
				live := NewLive(p)
				res, err := Run(t.Context(), p, live)
				if err != nil {
					t.Fatal(err)
				}
				tot := res.Stats.Total()
				if tot.Commits != c.commits || tot.Rollbacks != c.rollbacks || tot.Errors != c.errs || tot.Retries != c.retries {
					t.Errorf("got commits=%d rollbacks=%d errors=%d retries=%d, want %d %d %d %d",
						tot.Commits, tot.Rollbacks, tot.Errors, tot.Retries, c.commits, c.rollbacks, c.errs, c.retries)
				}
				// An iterations run is all measured: the live counters
				// (what /metrics exports) agree with the result.
				var done, rb, errs, retries int64
				for i := range live.Types() {
					done += live.Kind(i)
					rb += live.Rollbacks(i)
					errs += live.KindErrors(i)
					retries += live.Retries(i)
					if _, n, _ := live.Buckets(i, nil); int64(n) != live.Kind(i) {
						t.Errorf("type %d: histogram count %d, Kind %d", i, n, live.Kind(i))
					}
				}
				if done != c.commits+c.rollbacks || rb != c.rollbacks || errs != c.errs || errs != live.Errors() || retries != c.retries {
					t.Errorf("live: completed=%d rollbacks=%d errors=%d (Errors %d) retries=%d, want %d %d %d %d",
						done, rb, errs, live.Errors(), retries, c.commits+c.rollbacks, c.rollbacks, c.errs, c.retries)
				}
				if c.errs > 0 && (len(res.Errors) == 0 || res.Errors[0].Count != c.errs) {
					t.Errorf("error messages %+v", res.Errors)
				}
			})
		})
	}
}

func TestInterruptKeepsWhatWasMeasured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		p := plan(2, 100*time.Millisecond, nil)
		// Boundaries off the 100 ms grid on which transactions finish, so
		// the count is exact: 300 per VU in 30 s.
		p.Rampup, p.Duration = 2050*time.Millisecond, time.Minute
		go func() {
			time.Sleep(p.Rampup + 30*time.Second)
			cancel()
		}()
		res, err := Run(ctx, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Interrupted {
			t.Error("not marked interrupted")
		}
		if got := res.Measured(); got != 30*time.Second {
			t.Errorf("measured %s", got)
		}
		if got := res.Stats.Total().Commits; got != 600 {
			t.Errorf("commits %d, want 600", got)
		}
		if _, ok := res.Delta("probes"); !ok {
			t.Error("end of the interval was not probed")
		}
	})
}

func TestInterruptDuringRampupMeasuresNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		p := plan(2, 100*time.Millisecond, nil)
		p.Rampup, p.Duration = 10*time.Second, time.Minute
		time.AfterFunc(3*time.Second, cancel)
		res, err := Run(ctx, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Interrupted || res.Measured() != 0 || res.Stats.Total().Completed() != 0 {
			t.Errorf("interrupted=%v measured=%s completed=%d", res.Interrupted, res.Measured(), res.Stats.Total().Completed())
		}
	})
}

func TestKeyingAndThinkingPaceTheVU(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := plan(1, 0, nil)
		p.Duration = time.Hour
		p.KeyingThinking = true
		res, err := Run(t.Context(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Each cycle is 2 s keying + a mean 4 s think: about 600 an hour.
		got := res.Stats.Total().Commits
		if got < 520 || got > 680 {
			t.Errorf("%d transactions in an hour, want about 600", got)
		}
	})
}

func TestConnectFailureEndsTheRun(t *testing.T) {
	p := plan(3, 0, nil)
	p.Duration = time.Second
	p.Connect = func(_ context.Context, vu int) (workload.Conn, error) {
		if vu == 2 {
			return nil, errors.New("password authentication failed")
		}
		return fakeConn{}, nil
	}
	_, err := Run(t.Context(), p, nil)
	if err == nil || err.Error() != "connect virtual user 3: password authentication failed" {
		t.Fatalf("err = %v", err)
	}
}

func TestPlanValidate(t *testing.T) {
	cases := []struct {
		mut  func(*Plan)
		want string
	}{
		{func(p *Plan) { p.VUs = 0 }, "--vus must be at least 1"},
		{func(p *Plan) { p.Duration = 0 }, "--duration must be positive"},
		{func(p *Plan) { p.Iterations = -1 }, "--iterations must not be negative"},
		{func(p *Plan) { p.Rampup = -time.Second }, "--rampup must not be negative"},
		{func(p *Plan) { p.MaxRetries = -1 }, "--max-retries must not be negative"},
		{func(p *Plan) { p.Connections = -1 }, "--connections must not be negative"},
		{func(p *Plan) { p.Connections = 2 }, "--connections 2 is more than --vus 1: a virtual user uses one connection at a time, so at most --vus are ever used"},
		{func(p *Plan) { p.Connections = 1 }, ""},
		{func(p *Plan) {}, ""},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			p := plan(1, 0, nil)
			p.Duration = time.Second
			c.mut(p)
			err := p.Validate()
			if (err == nil) != (c.want == "") || (err != nil && err.Error() != c.want) {
				t.Errorf("Validate() = %v, want %q", err, c.want)
			}
		})
	}
}

func TestRaiseErrorStopsOnlyTheFailingVU(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("constraint violated")
		p := plan(2, time.Millisecond, nil)
		p.Iterations, p.RaiseError = 20, true
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
		tot := res.Stats.Total()
		// VU 1 runs all 20; VU 2 completes 4 and stops at its 5th.
		if tot.Commits != 24 || tot.Errors != 1 {
			t.Errorf("commits %d errors %d, want 24 and 1", tot.Commits, tot.Errors)
		}
		if len(res.Stopped) != 1 || res.Stopped[0] != 2 {
			t.Errorf("stopped %v, want [2]", res.Stopped)
		}
		if len(res.Errors) != 1 || res.Errors[0].Message != "constraint violated" {
			t.Errorf("errors %+v", res.Errors)
		}
	})
}
