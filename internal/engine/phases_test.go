package engine

import (
	"slices"
	"testing"
	"time"
)

// collect, the run's last phase, merges what each session and VU
// recorded: counts summed, errors by message, stopped VUs numbered from
// 1, and an outage second only where no session completed anything or
// had any answer from the server.
func TestCollect(t *testing.T) {
	for _, c := range []struct {
		name     string
		measured bool
		ok       [][]uint32 // per session, per second
		answered [][]uint32
		outage   []int
	}{
		{"answers are no outage", true, [][]uint32{{1, 0, 0, 2}, {0, 0, 0, 0}}, [][]uint32{{0, 0, 1}, nil}, []int{1}},
		{"another session's second", true, [][]uint32{{1, 0}, {0, 3}}, nil, []int{2, 3}},
		{"beyond what was recorded", true, [][]uint32{{1}}, nil, []int{1, 2, 3}},
		{"not measured", false, [][]uint32{{0}}, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := plan(len(c.ok), 0, nil)
			start := time.Unix(1000, 0)
			x := &execution{p: p, live: NewLive(p), measured: c.measured,
				res: &Result{MeasureStart: start, MeasureEnd: start.Add(4*time.Second + 500*time.Millisecond)}}
			for i := range c.ok {
				s := newSession(i, p, x.live, false)
				s.okSec = c.ok[i]
				if i < len(c.answered) {
					s.ansSec = c.answered[i]
				}
				s.errs = map[string]int64{"boom": int64(i + 1)}
				s.stats[0].Commits = 2
				s.late = 1
				x.sessions = append(x.sessions, s)
				x.terms = append(x.terms, &terminal{id: i, stopped: i == 0, skipped: 2})
			}
			x.collect()
			res, n := x.res, int64(len(c.ok))
			if !slices.Equal(res.OutageSeconds, c.outage) || res.Outage != len(c.outage) {
				t.Errorf("outage %d %v, want %v", res.Outage, res.OutageSeconds, c.outage)
			}
			if got := res.Stats.Total().Completed(); got != 2*n {
				t.Errorf("completed %d, want %d", got, 2*n)
			}
			if res.Late != n || res.Skipped != 2*n || !slices.Equal(res.Stopped, []int{1}) {
				t.Errorf("late %d, skipped %d, stopped %v", res.Late, res.Skipped, res.Stopped)
			}
			if len(res.Errors) != 1 || res.Errors[0].Count != n*(n+1)/2 {
				t.Errorf("errors %+v, want boom %d times", res.Errors, n*(n+1)/2)
			}
			for _, s := range x.sessions {
				if !s.abandoned {
					t.Errorf("session %d not abandoned: a VU returning late would still record", s.id)
				}
			}
		})
	}
}
