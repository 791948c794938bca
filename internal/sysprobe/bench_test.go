package sysprobe

import (
	"context"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The sampler's cost for a server with 200 threads (docs/cost.md, "Where
// the server's threads are"):
//
//	go test -count=1 -run '^$' -bench 'StateTick200|Snapshot200' -benchtime 2000x ./internal/sysprobe/
//	go test -count=1 -run '^$' -bench 'Watch200' -benchtime 1x ./internal/sysprobe/
//
// BenchmarkStateTick200 is one 100 Hz tick over 200 threads blocked in a
// system call (ns/op × 100 = CPU per second); BenchmarkSnapshot200 one
// snapshot; BenchmarkWatch200 runs a whole watch (1 Hz snapshots and the
// 100 Hz sampler) for 5 s and reports this process's CPU over it as a
// share of one core, beside nothing at all and a bare 100 Hz Go ticker
// (the floor of waking 100 times a second on the machine at hand).

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
	runtime.LockOSThread() // the thread's CPU clock measures the ticks alone
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	cpu0 := threadCPU()
	for i := 0; i < b.N; i++ {
		s.sampleTick()
	}
	cpu := threadCPU() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/tick")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)*100/1e7, "cpu%core@100Hz")
	st, _ := s.counts()
	b.ReportMetric(float64(len(s.threads)), "threads")
	b.ReportMetric(float64(st.Total())/float64(b.N+1), "samples/tick")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)*100/1e7, "wall%core@100Hz")
}

func BenchmarkWatch200(b *testing.B) {
	c, _ := threadsChild(b, 200)
	const window = 5 * time.Second
	for _, bc := range []struct {
		name string
		hz   int // -1: no state sampler; 0: no watch at all; -100: a bare 100 Hz Go ticker
	}{{"idle", 0}, {"bareTicker100Hz", -100}, {"snapshots", -1}, {"states100Hz", 100}, {"states50Hz", 50}} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var l *Local
				stop := make(chan struct{})
				if bc.hz == -100 {
					// The floor: what waking 100 times a second costs here.
					go func() {
						t := time.NewTicker(10 * time.Millisecond)
						defer t.Stop()
						for {
							select {
							case <-t.C:
							case <-stop:
								return
							}
						}
					}()
				} else if bc.hz != 0 {
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
				close(stop)
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

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
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
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	cpu0 := threadCPU()
	for i := 0; i < b.N; i++ {
		if _, err := l.take(true); err != nil {
			b.Fatal(err)
		}
	}
	cpu := threadCPU() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/1e7, "cpu%core@1Hz")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e7, "wall%core@1Hz")
}
