package sysprobe

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The sampler's cost for a server with 200 threads (docs/cost.md, "Where
// the server's threads are"):
//
//	go test -run '^$' -bench 'StateTick|Watch200' -benchtime 2000x ./internal/sysprobe/
//
// BenchmarkStateTick200 is one 100 Hz tick over 200 threads blocked in a
// system call (ns/op × 100 = CPU per second); BenchmarkWatch200 runs a
// whole watch (1 Hz snapshots and the 100 Hz sampler) for 5 s and reports
// this process's CPU over it as a share of one core.

func threadsChild(b *testing.B, n int) (*child, []threadID) {
	c := startChild(b, "threads", strconv.Itoa(n))
	p := procFS{"/proc"}
	tids, err := p.tids(c.pid())
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]threadID, len(tids))
	for i, tid := range tids {
		ids[i] = threadID{c.pid(), tid}
	}
	return c, ids
}

func BenchmarkStateTick200(b *testing.B) {
	_, ids := threadsChild(b, 200)
	s := newStateSampler(procFS{"/proc"}, 100)
	s.setThreads(ids)
	s.sampleTick() // opens the files
	defer s.close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.sampleTick()
	}
	b.StopTimer()
	st, _ := s.counts()
	b.ReportMetric(float64(len(s.threads)), "threads")
	b.ReportMetric(float64(st.Total())/float64(b.N+1), "samples/tick")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)*100/1e7, "%core@100Hz")
}

func BenchmarkWatch200(b *testing.B) {
	c, _ := threadsChild(b, 200)
	const window = 5 * time.Second
	for _, bc := range []struct {
		name string
		hz   int // -1: no state sampler; 0: no watch at all
	}{{"idle", 0}, {"snapshots", -1}, {"states100Hz", 100}} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var l *Local
				if bc.hz != 0 {
					var err error
					l, err = Open(context.Background(), Target{PID: c.pid()}, Options{StateHz: bc.hz})
					if err != nil {
						b.Fatal(err)
					}
				}
				time.Sleep(1500 * time.Millisecond) // the thread list is handed over
				before := cpuSelf()
				t0 := time.Now()
				time.Sleep(window)
				used := cpuSelf() - before
				wall := time.Since(t0)
				b.ReportMetric(float64(used)/float64(wall)*100, "%core")
				if l != nil {
					s, _ := l.Snapshot(context.Background())
					l.Close()
					b.ReportMetric(float64(s.Server.Threads), "threads")
					b.ReportMetric(float64(s.Server.States.Total())/s.At.Sub(l.started).Seconds(), "samples/s")
				}
			}
		})
	}
}

// cpuSelf is this process's CPU time (user + system).
func cpuSelf() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSnapshot200 is one snapshot of a 200-thread server (taken
// once a second by a watch, so ns/op / 1e7 is its share of a core).
func BenchmarkSnapshot200(b *testing.B) {
	c, _ := threadsChild(b, 200)
	l, err := Open(context.Background(), Target{PID: c.pid()}, Options{StateHz: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := l.take(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e7, "%core@1Hz")
}
