package sysprobe

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// waitFor polls cond every 100 ms until it holds or 15 s pass: what a
// test waits for (a second's sample, a new backend) has no deadline of
// its own on a loaded machine.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func snap(t *testing.T, l *Local) Snapshot {
	t.Helper()
	s, err := l.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func hasPID(ps []Process, pid int) bool {
	for _, p := range ps {
		if p.PID == pid {
			return true
		}
	}
	return false
}

func TestOpenFinds(t *testing.T) {
	c := startChild(t, "echo", "")
	port, _ := strconv.Atoi(c.ready[0])
	self := os.Getpid()
	for _, tc := range []struct {
		name   string
		target Target
		want   []int // pids that must be found
	}{
		{"port", Target{Port: port}, []int{c.pid()}},
		{"pid", Target{PID: c.pid()}, []int{c.pid()}},
		// The test binary and its child share a name: the child is found
		// as the test's child.
		{"process", Target{Process: "sysprobe.test"}, []int{self, c.pid()}},
		{"pid with children", Target{PID: self}, []int{self, c.pid()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Open(context.Background(), tc.target, Options{StateHz: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			for _, pid := range tc.want {
				if !hasPID(l.Found(), pid) {
					t.Errorf("%+v: pid %d not in %+v", tc.target, pid, l.Found())
				}
			}
			s := snap(t, l)
			if s.Server == nil || s.Server.Processes < len(tc.want) || s.Server.Threads < s.Server.Processes {
				t.Errorf("server %+v", s.Server)
			}
			// The child listens on port: a watch by pid counts its traffic too.
			if s.Server.Port == nil || s.Server.Port.Port != port && !containsInt(s.Server.Port.Ports, port) {
				t.Errorf("port %+v, missing %v", s.Server.Port, s.Missing)
			}
		})
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestOpenNotFound(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	for _, tc := range []struct {
		target Target
		says   string
	}{
		{Target{Port: free}, "port " + strconv.Itoa(free)},
		{Target{PID: 1 << 30}, "pid 1073741824"},
		{Target{Process: "no-such-server"}, `"no-such-server"`},
		{Target{Port: 70000}, "70000"},
	} {
		_, err := Open(context.Background(), tc.target, Options{})
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v", tc.target, err)
		}
	}
}

func TestHostOnly(t *testing.T) {
	l, err := Open(context.Background(), Target{}, Options{Exclude: []int{os.Getpid()}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// A busy child is neither the target nor excluded: its CPU is "other".
	c := startChild(t, "spin", "1")
	a := snap(t, l)
	waitFor(t, "other CPU", func() bool { return snap(t, l).Host.OtherCPU-a.Host.OtherCPU >= 200e6 })
	c.stop()
	b := snap(t, l)
	if b.Server != nil || b.Host.CPUs < 1 || len(b.Host.PerCPU) != b.Host.CPUs || b.Host.MemTotal <= 0 {
		t.Errorf("host %+v server %+v", b.Host, b.Server)
	}
	if _, ok := b.Host.Net["lo"]; !ok {
		t.Errorf("no lo in %v", b.Host.Net)
	}
	for name := range b.Host.Disk {
		if strings.HasPrefix(name, "loop") || strings.HasPrefix(name, "ram") {
			t.Errorf("disk %s listed", name)
		}
	}
	waitFor(t, "a second in the ring", func() bool {
		s, _ := l.Seconds(context.Background(), 0)
		return len(s) > 0
	})
	secs, _ := l.Seconds(context.Background(), 0)
	if secs[0].Seq != 1 || secs[0].Interval.Seconds <= 0 || secs[0].Interval.Server != nil {
		t.Errorf("first second %+v", secs[0])
	}
}

func TestPortBytes(t *testing.T) {
	c := startChild(t, "echo", "")
	port, _ := strconv.Atoi(c.ready[0])
	l, err := Open(context.Background(), Target{Port: port}, Options{StateHz: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a := snap(t, l)
	conn, err := net.Dial("tcp", "127.0.0.1:"+c.ready[0])
	if err != nil {
		t.Fatal(err)
	}
	const chunk, n = 10000, 300
	buf := make([]byte, chunk)
	for i := 0; i < n; i++ {
		if _, err := conn.Write(buf); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(conn, buf); err != nil {
			t.Fatal(err)
		}
	}
	b := snap(t, l)
	d := Diff(a, b)
	sent := float64(chunk * n)
	p := d.Server.Port
	if p == nil || float64(p.BytesIn) < sent*0.98 || float64(p.BytesIn) > sent*1.02 ||
		float64(p.BytesOut) < sent*0.98 || float64(p.BytesOut) > sent*1.02 || p.Connections != 1 {
		t.Fatalf("port %+v, want %v bytes each way on one connection", p, sent)
	}
	// A connection seen by a reading and gone at the next is counted lost.
	conn.Close()
	waitFor(t, "the closed connection", func() bool { return snap(t, l).Server.Port.ClosedLost >= 1 })
	if s := snap(t, l); s.Server.Port.BytesIn < b.Server.Port.BytesIn {
		t.Errorf("bytes went back: %+v then %+v", b.Server.Port, s.Server.Port)
	}
}

func TestThreadStates(t *testing.T) {
	c := startChild(t, "states", "")
	names := []string{"cpu", "network", "lock", "idle"}
	want := []state{stCPU, stNetwork, stLock, stIdle}
	s := newStateSampler(procFS{"/proc"}, 100)
	defer s.close()
	var ids []threadID
	for _, w := range c.ready {
		tid, _ := strconv.Atoi(w)
		ids = append(ids, threadID{c.pid(), tid})
	}
	s.reopen(ids)
	counts := make([]map[state]int, len(ids))
	for i := range counts {
		counts[i] = map[state]int{}
	}
	for n := 0; n < 200; n++ {
		for i, tf := range s.threads {
			counts[i][s.classify(tf)]++
		}
		time.Sleep(2 * time.Millisecond)
	}
	for i, m := range counts {
		best, bestN := stGone, -1
		for st, n := range m {
			if n > bestN {
				best, bestN = st, n
			}
		}
		got := best
		// A spinning thread on a shared machine is runnable whenever it
		// is preempted: both are "it wants a CPU".
		if want[i] == stCPU && got == stRunnable && m[stCPU] > 0 {
			got = stCPU
		}
		if got != want[i] {
			t.Errorf("%s thread: counts %v", names[i], m)
		}
	}

	// The same through a watch: the counts grow at about the sampler's rate.
	l, err := Open(context.Background(), Target{PID: c.pid()}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	waitFor(t, "state samples", func() bool { return snap(t, l).Server.States.Total() >= 100 })
	sn := snap(t, l)
	if sn.Server.StateHz != 100 || sn.Server.States.Lock == 0 || sn.Sources["states"] == "" {
		t.Errorf("states %+v hz %d source %q", sn.Server.States, sn.Server.StateHz, sn.Sources["states"])
	}
}

// monotonic fails when a counter of b is below a's.
func monotonic(t *testing.T, a, b *Server) {
	t.Helper()
	for _, f := range []struct {
		name string
		a, b int64
	}{
		{"user", a.UserNs, b.UserNs}, {"sys", a.SysNs, b.SysNs}, {"voluntary", a.Voluntary, b.Voluntary},
		{"involuntary", a.Involuntary, b.Involuntary}, {"run delay", a.RunDelayNs, b.RunDelayNs},
		{"read bytes", a.ReadBytes, b.ReadBytes}, {"write bytes", a.WriteBytes, b.WriteBytes},
		{"read calls", a.ReadCalls, b.ReadCalls}, {"write calls", a.WriteCalls, b.WriteCalls},
	} {
		if f.b < f.a {
			t.Errorf("%s went from %d to %d", f.name, f.a, f.b)
		}
	}
}

func TestCountersAcrossExits(t *testing.T) {
	c := startChild(t, "forker", "")
	l, err := Open(context.Background(), Target{PID: c.pid()}, Options{StateHz: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	prev := snap(t, l)
	first := prev
	// Children that burn 300 ms and exit, one after another: the
	// readings see many of them come and go.
	for i := 0; i < 30; i++ {
		time.Sleep(100 * time.Millisecond)
		s := snap(t, l)
		monotonic(t, prev.Server, s.Server)
		prev = s
	}
	d := Diff(first, prev)
	if d.Server.UserNs+d.Server.SysNs < 100e6 {
		t.Errorf("the burning children's CPU is missing: %+v", d.Server)
	}
	l.mu.Lock()
	n := len(l.procs)
	l.mu.Unlock()
	if n > 5 {
		t.Errorf("%d process records for a forker with one child at a time", n)
	}
}

func TestBounded(t *testing.T) {
	c := startChild(t, "churn", "")
	l, err := Open(context.Background(), Target{PID: c.pid()}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	prev := snap(t, l)
	maxThreads := 0
	for i := 0; i < 25; i++ {
		time.Sleep(100 * time.Millisecond)
		s := snap(t, l)
		monotonic(t, prev.Server, s.Server)
		prev = s
		l.mu.Lock()
		n := 0
		for _, pr := range l.procs {
			n += len(pr.threads)
		}
		l.mu.Unlock()
		maxThreads = max(maxThreads, n)
	}
	// Threads start and end by the hundred; the records are those alive
	// at the last reading (a churning batch is 20 and Go keeps a few).
	if maxThreads > 60 {
		t.Errorf("%d thread records", maxThreads)
	}
	if prev.Server.Voluntary+prev.Server.Involuntary == 0 {
		t.Errorf("no switches counted: %+v", prev.Server)
	}

	// The ring keeps the last hour.
	for i := 0; i < ringSize+500; i++ {
		l.record(prev)
	}
	secs, _ := l.Seconds(context.Background(), 0)
	if len(secs) != ringSize || secs[len(secs)-1].Seq-secs[0].Seq != ringSize-1 {
		t.Errorf("%d seconds, %d..%d", len(secs), secs[0].Seq, secs[len(secs)-1].Seq)
	}
	last := secs[len(secs)-1].Seq
	if more, _ := l.Seconds(context.Background(), last-2); len(more) != 2 || more[0].Seq != last-1 {
		t.Errorf("after %d: %+v", last-2, more)
	}
}

// spinSource is a busy program built with its symbols (go test links its
// binaries with -s -w, where perf finds no symbol to name a frame).
const spinSource = `package main

//go:noinline
func spinWork(x int) int {
	for i := 0; i < 1000; i++ {
		x = x*31 + i
	}
	return x
}

func main() {
	x := 0
	for {
		x = spinWork(x)
	}
}
`

// startSpinner builds and starts spinSource; it skips without a Go
// toolchain.
func startSpinner(t *testing.T) *exec.Cmd {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain to build the busy helper")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(spinSource), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module spinner\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command(goBin, "build", "-o", "spinner", ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the busy helper: %v\n%s", err, out)
	}
	cmd := exec.Command(filepath.Join(dir, "spinner"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func TestStacks(t *testing.T) {
	c := startChild(t, "spin", "1")
	l, err := Open(context.Background(), Target{PID: c.pid()}, Options{StateHz: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.StartStacks(context.Background()); err == nil || !strings.Contains(err.Error(), "--allow-stacks") {
		t.Errorf("not allowed: %v", err)
	}
	if _, err := l.StopStacks(context.Background()); err == nil || !strings.Contains(err.Error(), "--allow-stacks") {
		t.Errorf("not allowed: %v", err)
	}
	t.Run("no perf", func(t *testing.T) {
		la, err := Open(context.Background(), Target{PID: c.pid()}, Options{StateHz: -1, AllowStacks: true})
		if err != nil {
			t.Fatal(err)
		}
		defer la.Close()
		t.Setenv("PATH", t.TempDir())
		if err := la.StartStacks(context.Background()); err == nil || !strings.Contains(err.Error(), "perf is not installed") {
			t.Errorf("no perf: %v", err)
		}
	})
	if ok, why := StacksAvailable(true); !ok {
		t.Skip(why)
	}
	spin := startSpinner(t)
	la, err := Open(context.Background(), Target{PID: spin.Process.Pid}, Options{StateHz: -1, AllowStacks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer la.Close()
	if err := la.StartStacks(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := la.StartStacks(context.Background()); err == nil {
		t.Error("a second recording started")
	}
	// perf samples the spinner at 99 Hz while it is on a CPU: record until
	// it has had half a second of CPU (on a loaded machine that takes
	// longer than half a second), at most 30 s.
	cpu := func() int64 {
		st, err := procStat("/proc", spin.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		return st.Utime + st.Stime
	}
	for start, t0 := cpu(), time.Now(); cpu()-start < 50 && time.Since(t0) < 30*time.Second; {
		time.Sleep(100 * time.Millisecond)
	}
	f, err := la.StopStacks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if f.Hz != StacksHz || f.Samples < 1 || f.Why != "" { // on-CPU samples: few on a loaded machine
		t.Fatalf("folded %d samples at %d Hz: %q", f.Samples, f.Hz, f.Text)
	}
	var sum int64
	for _, line := range strings.Split(strings.TrimSpace(f.Text), "\n") {
		i := strings.LastIndexByte(line, ' ')
		n, err := strconv.ParseInt(line[i+1:], 10, 64)
		if i < 0 || err != nil || !strings.HasPrefix(line, "spinner;") {
			t.Fatalf("folded line %q", line)
		}
		sum += n
	}
	if sum != f.Samples || !strings.Contains(f.Text, "runtime.main;main.spinWork") {
		t.Errorf("sum %d of %d samples; runtime.main;main.spinWork missing from\n%s", sum, f.Samples, f.Text)
	}
}

// TestRunnable: twice as many spinning threads as CPUs wait for a CPU at
// least half of the time; the watch reports it as runnable.
func TestRunnable(t *testing.T) {
	n := 2 * runtime.NumCPU()
	c := startChild(t, "spin", strconv.Itoa(n))
	l, err := Open(context.Background(), Target{PID: c.pid()}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a := snap(t, l)
	waitFor(t, "state samples", func() bool { return snap(t, l).Server.States.Total()-a.Server.States.Total() >= 500 })
	d := Diff(a, snap(t, l)).Server
	busy := d.States.CPU + d.States.Runnable
	// Spinners are "running" (TASK_RUNNING) at every sample, n of the
	// process's threads (the others are the Go runtime's, mostly asleep);
	// the run delay says which share of that waited.
	if float64(busy)*float64(d.Threads) < 0.8*float64(d.States.Total())*float64(n) || d.States.Runnable*10 < busy*4 || d.RunDelayNs <= 0 {
		t.Errorf("%d spinners on %d CPUs among %d threads: states %+v, run delay %d ns", n, runtime.NumCPU(), d.Threads, d.States, d.RunDelayNs)
	}
}

// A watch with ThreadsOnSnapshot reads the target's threads when a
// snapshot is asked for (the measured interval's edges), not in its
// once-a-second loop: the process's CPU moves every reading, the threads'
// switches only at snapshots, and no thread that ended is lost from them.
func TestThreadsOnSnapshot(t *testing.T) {
	c := startChild(t, "churn", "")
	l, err := Open(context.Background(), Target{PID: c.pid()}, Options{StateHz: -1, ThreadsOnSnapshot: true})
	if err != nil {
		t.Fatal(err)
	}
	l.cancel() // the loop's readings are taken here, by hand
	l.wg.Wait()
	defer l.Close()
	first := snap(t, l)
	loopRead := func() Snapshot {
		time.Sleep(300 * time.Millisecond)
		s, err := l.take(!l.opt.ThreadsOnSnapshot)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := loopRead()
	b := loopRead()
	if b.Server.UserNs+b.Server.SysNs <= first.Server.UserNs+first.Server.SysNs {
		t.Errorf("the process's CPU did not move between loop readings: %+v, then %+v", first.Server, b.Server)
	}
	if a.Server.Voluntary != first.Server.Voluntary || b.Server.Voluntary != first.Server.Voluntary ||
		b.Server.RunDelayNs != first.Server.RunDelayNs || b.Server.Threads != first.Server.Threads {
		t.Errorf("the loop read the threads: %+v, then %+v, then %+v", first.Server, a.Server, b.Server)
	}
	last := snap(t, l)
	monotonic(t, first.Server, last.Server)
	if last.Server.Voluntary+last.Server.Involuntary <= first.Server.Voluntary+first.Server.Involuntary {
		t.Errorf("a snapshot did not read the threads' switches: %+v, then %+v", first.Server, last.Server)
	}
}

// A single-threaded process (most server processes: a PostgreSQL backend)
// is read without listing its task directory: its one thread is the main
// one, and its figures are those of the listing.
func TestSingleThreadedProcess(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep here:", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	l, err := Open(context.Background(), Target{PID: pid}, Options{StateHz: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s := snap(t, l)
	l.mu.Lock()
	set := append([]threadID(nil), l.threadSet...)
	l.mu.Unlock()
	if s.Server.Processes != 1 || s.Server.Threads != 1 || len(set) != 1 || set[0] != (threadID{pid, pid}) {
		t.Errorf("processes %d, threads %d, thread set %v; want 1, 1, [{%d %d}]", s.Server.Processes, s.Server.Threads, set, pid, pid)
	}
	tids, err := l.proc.tids(pid)
	if err != nil || len(tids) != 1 || tids[0] != pid {
		t.Errorf("the task directory lists %v (%v)", tids, err)
	}
}
