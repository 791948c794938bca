package sysprobe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Options tune a local watch.
type Options struct {
	// ProcRoot is where /proc is mounted ("/proc" when empty); /sys is
	// read beside it only for block devices.
	ProcRoot string
	// StateHz is the thread-state sampler's rate (StateHz when 0; <0
	// turns the sampler off).
	StateHz int
	// Exclude lists pids whose CPU is not "other" (sledge itself): with
	// the target's, it is subtracted from the host's busy time.
	Exclude []int
	// AllowStacks permits StartStacks (sledge agent --allow-stacks).
	AllowStacks bool
	// StatesPerTick is how many threads the state sampler reads per tick
	// at most (statesPerTick when 0): with StateHz, the reads a second.
	StatesPerTick int
	// ThreadsOnSnapshot: the once-a-second loop reads the target's
	// processes only (CPU, I/O); their threads' switches and run delay
	// are read by Snapshot (the measured interval's edges). For a target
	// whose per-second thread figures nobody shows (sledge's own
	// process): its seconds' switches and run delay stand still between
	// snapshots, and a thread that ends between two loses what it did
	// since the last.
	ThreadsOnSnapshot bool
}

// ringSize bounds the seconds a watch keeps: one hour.
const ringSize = 3600

// counters are one thread's (or a folded total's) cumulative counters.
type counters struct {
	utime, stime int64 // ticks
	vol, invol   int64
	delay        int64 // run_delay ns
}

func (c counters) add(o counters) counters {
	return counters{c.utime + o.utime, c.stime + o.stime, c.vol + o.vol, c.invol + o.invol, c.delay + o.delay}
}

func (c counters) sub(o counters) counters {
	return counters{c.utime - o.utime, c.stime - o.stime, c.vol - o.vol, c.invol - o.invol, c.delay - o.delay}
}

// thrRec is one live thread: its reading when first seen (zero if it
// started after the watch began) and its last; status and schedstat stay
// open and are re-read with pread (nil: open failed, read by path).
type thrRec struct {
	base, last      counters
	seen            uint64
	status, schedRd *os.File
	slices          int64 // schedstat's third field at the last reading
	read            bool  // last holds a reading
}

// procRec is one live process of the target. CPU comes from the
// process's own /proc/PID/stat, which includes the threads that ended;
// switches and run delay exist only per thread.
type procRec struct {
	pid              int
	comm             string
	threads          map[int]*thrRec
	dead             counters // threads that ended, as last read
	cpuBase, cpuLast counters // utime, stime of the whole process
	ioBase, ioLast   procIO
	seen             uint64
	nThreads         int
	startTicks       int64
	stat, io         *os.File
}

// Local watches this machine's /proc: a host, and a target's processes
// when it has one. It implements Source.
type Local struct {
	opt     Options
	proc    procFS
	target  Target
	found   []Process
	roots   []int
	ports   []int
	started time.Time
	// startTicks is the watch's start in USER_HZ ticks since boot, to
	// tell processes and threads born after it (counted from zero).
	startTicks int64

	mu        sync.Mutex // guards everything below; held while a snapshot is taken
	gen       uint64
	procs     map[int]*procRec
	ended     counters // processes that ended, as last read
	endedIO   procIO
	hostBase  Host
	last      Snapshot // the last snapshot taken (ring or on demand)
	otherAcc  int64
	exclBase  map[int]int64 // excluded pids' CPU ticks when first read
	exclLast  map[int]int64
	ring      [ringSize]Second
	seq       int64
	prevSec   Snapshot // the last once-a-second snapshot
	sysBlock  map[string]bool
	threadSet []threadID // the target's threads, for the state sampler
	port      *portTracker
	states    *stateSampler
	stacks    *stackRecorder
	portWhy   string
	buf       []byte // reused by the once-a-second reading
	oneTid    [1]int // the thread list of a single-threaded process
	// The thread-state counts as sampled (rawStates) and as reported
	// (states: with run-queue time moved out of the sleeping classes),
	// and the run delay at the last snapshot.
	rawStates, repStates States
	lastDelay            int64
	lastAt               time.Time
	// exclAtLast is the excluded pids' CPU (ns) at the last snapshot.
	exclAtLast int64

	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed bool
}

type threadID struct{ pid, tid int }

// Open starts a watch of t on this machine (a zero Target: the host
// only). It samples once a second and, with a target, the thread states
// at opt.StateHz until Close. A target that matches nothing returns
// ErrNotFound wrapped with what was looked for.
func Open(ctx context.Context, t Target, opt Options) (*Local, error) {
	if opt.ProcRoot == "" {
		opt.ProcRoot = "/proc"
	}
	if opt.StateHz == 0 {
		opt.StateHz = StateHz
	}
	l := &Local{opt: opt, proc: procFS{opt.ProcRoot}, target: t, started: time.Now(),
		procs: map[int]*procRec{}, exclBase: map[int]int64{}, exclLast: map[int]int64{}, sysBlock: map[string]bool{}}
	roots, ports, err := l.proc.findRoots(t)
	if err != nil {
		return nil, err
	}
	l.roots, l.ports = roots, ports
	l.startTicks = l.uptimeTicks()
	if l.hasTarget() {
		for _, pid := range l.proc.tree(roots, true) {
			tids, _ := l.proc.tids(pid)
			if len(tids) == 0 {
				continue
			}
			l.found = append(l.found, Process{PID: pid, Comm: l.proc.comm(pid), Threads: len(tids)})
		}
		if len(l.found) == 0 {
			return nil, fmt.Errorf("%w: the processes of %s ended", ErrNotFound, t.describe())
		}
		if len(ports) > 0 {
			pt, err := newPortTracker(ports)
			if err != nil {
				l.portWhy = err.Error()
			} else {
				l.port = pt
			}
		} else {
			l.portWhy = "the server listens on no TCP port (a unix socket has no per-connection byte counters)"
		}
	}
	first, err := l.take(true)
	if err != nil {
		l.closePort()
		return nil, err
	}
	l.prevSec = first
	bg, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	l.wg.Add(1)
	go l.loop(bg)
	if l.hasTarget() && opt.StateHz > 0 {
		l.states = newStateSampler(l.proc, opt.StateHz)
		if opt.StatesPerTick > 0 {
			l.states.perTick = opt.StatesPerTick
		}
		l.lastAt = time.Now() // the run delay's split starts here
		l.states.setThreads(l.currentThreads())
		l.wg.Add(1)
		go func() { defer l.wg.Done(); l.states.run(bg) }()
	}
	return l, nil
}

func (t Target) describe() string {
	switch {
	case t.Port != 0:
		return fmt.Sprintf("port %d", t.Port)
	case t.PID != 0:
		return fmt.Sprintf("pid %d", t.PID)
	case t.Process != "":
		return fmt.Sprintf("process %q", t.Process)
	}
	return "the host"
}

func (l *Local) hasTarget() bool { return len(l.roots) > 0 }

// uptimeTicks reads /proc/uptime in USER_HZ ticks.
func (l *Local) uptimeTicks() int64 {
	b, err := l.proc.read("uptime")
	if err != nil {
		return 0
	}
	fs := fields(b)
	if len(fs) == 0 {
		return 0
	}
	f, _ := strconv.ParseFloat(string(fs[0]), 64)
	return int64(f * userHZ)
}

// loop takes a snapshot once a second and keeps its difference with the
// previous one in the ring.
func (l *Local) loop(ctx context.Context) {
	defer l.wg.Done()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s, err := l.take(!l.opt.ThreadsOnSnapshot)
		if err != nil {
			continue
		}
		if l.states != nil {
			l.states.setThreads(l.currentThreads())
		}
		l.record(s)
	}
}

// record keeps the second that ends with s in the ring, overwriting the
// oldest once it holds ringSize.
func (l *Local) record(s Snapshot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	l.ring[(l.seq-1)%ringSize] = Second{Seq: l.seq, At: s.At, Interval: Diff(l.prevSec, s)}
	l.prevSec = s
}

func (l *Local) currentThreads() []threadID {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]threadID(nil), l.threadSet...)
}

// Name says where the figures come from.
func (l *Local) Name() string { return "this host (/proc)" }

// Version is "" in-process.
func (l *Local) Version() string { return "" }

// Found lists the processes the target matched when the watch began.
func (l *Local) Found() []Process { return append([]Process(nil), l.found...) }

// Ports are the TCP ports whose traffic is counted.
func (l *Local) Ports() []int { return append([]int(nil), l.ports...) }

// Snapshot reads everything now.
func (l *Local) Snapshot(ctx context.Context) (Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return Snapshot{}, err
	}
	return l.take(true)
}

// Seconds returns the seconds after seq that the ring still holds.
func (l *Local) Seconds(ctx context.Context, after int64) ([]Second, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	first := l.seq - ringSize + 1
	if first < 1 {
		first = 1
	}
	if after+1 > first {
		first = after + 1
	}
	out := []Second{}
	for s := first; s <= l.seq; s++ {
		out = append(out, l.ring[(s-1)%ringSize])
	}
	return out, nil
}

// Close stops the watch (and a stack recording still running).
func (l *Local) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	rec := l.stacks
	l.stacks = nil
	l.mu.Unlock()
	if rec != nil {
		rec.abort()
	}
	if l.cancel != nil {
		l.cancel()
	}
	l.wg.Wait()
	l.mu.Lock()
	l.closeAll()
	l.mu.Unlock()
	if l.states != nil {
		l.states.close()
	}
	l.closePort()
	return nil
}

func (l *Local) closePort() {
	if l.port != nil {
		l.port.close()
	}
}

// take reads a snapshot and updates the watch's running totals.
// take reads a snapshot; threads: the target's threads too (else their
// last readings stand, Options.ThreadsOnSnapshot).
func (l *Local) take(threads bool) (Snapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return Snapshot{}, errors.New("sysprobe: the watch is closed")
	}
	s := Snapshot{At: time.Now(), Missing: map[string]string{}, Sources: map[string]string{
		"host": "/proc/stat, /proc/net/dev, /proc/diskstats, /proc/meminfo",
	}}
	h, err := l.readHost()
	if err != nil {
		return Snapshot{}, err
	}
	if l.gen == 0 {
		l.hostBase = h
		for _, pid := range l.opt.Exclude {
			l.exclBase[pid] = l.procTicks(pid)
		}
	}
	l.gen++
	s.Host = subHost(h, l.hostBase)

	var serverCPU int64
	if l.hasTarget() {
		srv := l.readServer(threads)
		serverCPU = (srv.UserNs + srv.SysNs)
		if l.port != nil {
			p := l.port.read()
			srv.Port = &p
			s.Sources["port"] = "inet_diag tcp_info (bytes_received, bytes_acked) of the sockets on the port"
		} else {
			s.Missing["port"] = l.portWhy
		}
		if l.states != nil {
			var raw States
			raw, srv.StateHz = l.states.counts()
			srv.States = l.splitRunnable(raw, srv, time.Now())
			s.Sources["states"] = l.states.source()
		} else {
			s.Missing["states"] = "thread-state sampler off"
		}
		s.Server = &srv
		s.Sources["server"] = "/proc/PID/task/TID/{stat,status,schedstat}, /proc/PID/io"
	}
	// OtherCPU: the host's busy time minus the target's and the excluded
	// pids' CPU over the same interval. Reading every process of the
	// machine would cost more than the rest of the watch; this costs one
	// /proc/PID/stat per excluded pid. The three are read a few hundred
	// microseconds apart and tick at different moments, so a small
	// interval can come out negative: it is clamped at 0 and added to
	// the running total, which therefore never decreases.
	var excl int64
	for _, pid := range l.opt.Exclude {
		if t := l.procTicks(pid); t > 0 {
			l.exclLast[pid] = t
		}
		excl += l.exclLast[pid] - l.exclBase[pid]
	}
	excl *= tickNs
	if l.gen > 1 {
		prevBusy := l.last.Host.CPU.Busy()
		var prevServer int64
		if l.last.Server != nil {
			prevServer = l.last.Server.UserNs + l.last.Server.SysNs
		}
		d := (s.Host.CPU.Busy() - prevBusy) - (serverCPU - prevServer) - (excl - l.exclAtLast)
		if d > 0 {
			l.otherAcc += d
		}
	}
	l.exclAtLast = excl
	s.Host.OtherCPU = l.otherAcc
	if len(s.Missing) == 0 {
		s.Missing = nil
	}
	l.last = s
	return s, nil
}

// splitRunnable turns the sampler's cumulative counts into the reported
// ones. /proc/…/syscall reads "running" for every thread in TASK_RUNNING:
// on a CPU, or runnable and waiting for one (preempted, or woken from a
// wait and not yet scheduled). The run delay (schedstat) is the time the
// threads spent waiting for a CPU, so for each interval between snapshots
// delay / (threads × interval) of all samples were runnable: that many
// (at most all of them) move from cpu to runnable. now is the snapshot's
// time, passed in so that a test can fix the interval.
func (l *Local) splitRunnable(raw States, srv Server, now time.Time) States {
	d := States{raw.CPU - l.rawStates.CPU, raw.Runnable - l.rawStates.Runnable, raw.Network - l.rawStates.Network,
		raw.Lock - l.rawStates.Lock, raw.IO - l.rawStates.IO, raw.Idle - l.rawStates.Idle}
	delay := srv.RunDelayNs - l.lastDelay
	secs := 0.0
	if !l.lastAt.IsZero() {
		secs = now.Sub(l.lastAt).Seconds()
	}
	l.rawStates, l.lastDelay, l.lastAt = raw, srv.RunDelayNs, now
	if secs > 0 && srv.Threads > 0 && delay > 0 {
		share := float64(delay) / 1e9 / (secs * float64(srv.Threads))
		move := min(int64(share*float64(d.Total())+0.5)-d.Runnable, d.CPU)
		if move > 0 {
			d.CPU -= move
			d.Runnable += move
		}
	}
	r := &l.repStates
	*r = States{r.CPU + d.CPU, r.Runnable + d.Runnable, r.Network + d.Network, r.Lock + d.Lock, r.IO + d.IO, r.Idle + d.Idle}
	return *r
}

// procTicks reads a process's utime+stime (ticks), 0 when it is gone.
func (l *Local) procTicks(pid int) int64 {
	b, err := l.proc.read(strconv.Itoa(pid), "stat")
	if err != nil {
		return 0
	}
	st := parseTaskStat(b)
	return st.Utime + st.Stime
}

// readHost reads the host's counters as they are (not since the watch).
func (l *Local) readHost() (Host, error) {
	var h Host
	b, err := l.proc.read("stat")
	if err != nil {
		return h, fmt.Errorf("read %s/stat: %w", l.proc.root, err)
	}
	parseStat(b, &h)
	if b, err := l.proc.read("net", "dev"); err == nil {
		h.Net = parseNetDev(b)
	}
	if b, err := l.proc.read("diskstats"); err == nil {
		h.Disk = parseDiskstats(b, l.isPartition)
	}
	if b, err := l.proc.read("meminfo"); err == nil {
		h.MemTotal, h.MemAvailable = parseMeminfo(b)
	}
	return h, nil
}

// isPartition asks /sys/class/block/NAME/partition (cached); ok false
// when /sys does not know the device.
func (l *Local) isPartition(name string) (bool, bool) {
	if v, ok := l.sysBlock[name]; ok {
		return v, true
	}
	sys := l.proc.root[:len(l.proc.root)-len("proc")] + "sys"
	dir := sys + "/class/block/" + name
	if _, err := os.Stat(dir); err != nil {
		return false, false
	}
	_, err := os.Stat(dir + "/partition")
	l.sysBlock[name] = err == nil
	return err == nil, true
}

// subHost is h's counters since base; gauges stay as they are.
func subHost(h, base Host) Host {
	out := h
	out.CPU = h.CPU.sub(base.CPU)
	out.PerCPU = make([]CPUTimes, len(h.PerCPU))
	for i, c := range h.PerCPU {
		if i < len(base.PerCPU) {
			c = c.sub(base.PerCPU[i])
		}
		out.PerCPU[i] = c
	}
	out.ContextSwitch -= base.ContextSwitch
	out.Interrupts -= base.Interrupts
	out.Net = map[string]NetCounters{}
	for k, v := range h.Net {
		b := base.Net[k]
		out.Net[k] = NetCounters{v.RxBytes - b.RxBytes, v.TxBytes - b.TxBytes, v.RxPackets - b.RxPackets, v.TxPackets - b.TxPackets}
	}
	out.Disk = map[string]DiskCounters{}
	for k, v := range h.Disk {
		b := base.Disk[k]
		out.Disk[k] = DiskCounters{v.Reads - b.Reads, v.Writes - b.Writes, v.ReadBytes - b.ReadBytes, v.WrittenBytes - b.WrittenBytes, v.IOTimeMs - b.IOTimeMs}
	}
	return out
}

// readServer re-lists the target's processes and threads and returns
// their counters since the watch began. Threads and processes that ended
// keep their last reading (folded into a total, their records dropped):
// what they did after it, at most one second's worth, is lost (CPU of a
// thread that ended is not: the process's own counters hold it).
func (l *Local) readServer(threads bool) Server {
	var srv Server
	pids := l.listProcs()
	buf := l.buf[:0]
	if threads {
		l.threadSet = l.threadSet[:0]
	}
	for _, pid := range pids {
		ps := strconv.Itoa(pid)
		pr := l.procs[pid]
		var st taskStat
		if pr != nil {
			if b, err := preadInto(&buf, pr.stat); err == nil {
				st = parseTaskStat(b)
			}
			if !st.ok || st.Starttime != pr.startTicks {
				// Ended, or the pid was reused by another process.
				l.foldProc(pr)
				delete(l.procs, pid)
				pr = nil
			}
		}
		if pr == nil {
			f, err := os.Open(l.proc.path(ps, "stat"))
			if err != nil {
				continue
			}
			b, err := preadInto(&buf, f)
			if st = parseTaskStat(b); err != nil || !st.ok {
				f.Close()
				continue
			}
			pr = &procRec{pid: pid, comm: st.Comm, threads: map[int]*thrRec{}, startTicks: st.Starttime, stat: f}
			pr.io, _ = os.Open(l.proc.path(ps, "io"))
			if !l.bornAfter(st.Starttime) {
				pr.cpuBase = counters{utime: st.Utime, stime: st.Stime}
				if b, err := preadInto(&buf, pr.io); err == nil {
					pr.ioBase = parseIO(b)
				}
			}
			l.procs[pid] = pr
		}
		pr.seen = l.gen
		pr.cpuLast = counters{utime: st.Utime, stime: st.Stime}
		if b, err := preadInto(&buf, pr.io); err == nil {
			pr.ioLast = parseIO(b)
		}
		if !threads {
			continue // the last readings of its threads stand
		}
		pr.nThreads = 0
		if !l.readThreads(&buf, ps, pid, pr, st.Threads == 1) {
			// The one thread was not the main one (it ended, the
			// process lives on in another): list them.
			l.readThreads(&buf, ps, pid, pr, false)
		}
		for tid, tr := range pr.threads {
			if tr.seen != l.gen {
				pr.dead = pr.dead.add(tr.last.sub(tr.base))
				tr.close()
				delete(pr.threads, tid)
			}
		}
	}
	l.buf = buf
	for pid, pr := range l.procs {
		if pr.seen != l.gen {
			l.foldProc(pr)
			delete(l.procs, pid)
		}
	}
	total := l.ended
	io := l.endedIO
	for _, pr := range l.procs {
		srv.Processes++
		srv.Threads += pr.nThreads
		total = total.add(pr.dead).add(pr.cpuLast.sub(pr.cpuBase))
		for _, tr := range pr.threads {
			total = total.add(tr.last.sub(tr.base))
		}
		io = addIO(io, subIO(pr.ioLast, pr.ioBase))
	}
	srv.UserNs = total.utime * tickNs
	srv.SysNs = total.stime * tickNs
	srv.Voluntary, srv.Involuntary = total.vol, total.invol
	srv.RunDelayNs = total.delay
	srv.ReadBytes, srv.WriteBytes = io.rchar, io.wchar
	srv.ReadCalls, srv.WriteCalls = io.syscr, io.syscw
	return srv
}

// readThreads reads the threads of process pid. single: the process has
// one thread (its stat's num_threads), the main one, so the task
// directory is not listed: a single-threaded server process (a
// PostgreSQL backend) costs its three or four preads a second. false:
// single and that thread could not be read.
func (l *Local) readThreads(buf *[]byte, ps string, pid int, pr *procRec, single bool) bool {
	var tids []int
	if single {
		l.oneTid[0] = pid
		tids = l.oneTid[:]
	} else {
		tids, _ = l.proc.tids(pid)
	}
	for _, tid := range tids {
		tr := pr.threads[tid]
		if tr == nil {
			tr = l.newThread(buf, ps, tid)
			if tr == nil {
				if single {
					return false
				}
				continue
			}
			pr.threads[tid] = tr
		}
		c, ok := l.readThread(buf, ps, tid, tr)
		if !ok {
			if single {
				return false
			}
			continue // ended: folded below
		}
		tr.last, tr.seen = c, l.gen
		pr.nThreads++
		l.threadSet = append(l.threadSet, threadID{pid, tid})
	}
	return true
}

// treeEvery is how often (in snapshots) the whole process tree is
// re-listed: every thread's children of every process.
const treeEvery = 10

// listProcs lists the target's processes for a snapshot. The roots'
// children are re-listed every snapshot (a PostgreSQL backend is the
// postmaster's child: new connections are seen within a second); deeper
// descendants, and children forked by other threads than the main one of
// a root with many threads, every treeEvery-th, the processes already
// known carried in between (reading every process's children file each
// second cost more than the rest of the snapshot). A grandchild born
// between two full listings is counted from its birth once found; one
// that also ends before is missed.
func (l *Local) listProcs() []int {
	if l.gen%treeEvery == 1 {
		return l.proc.tree(l.roots, true)
	}
	seen := make(map[int]bool, len(l.procs)+len(l.roots))
	out := make([]int, 0, len(l.procs)+len(l.roots))
	add := func(pid int) {
		if !seen[pid] {
			seen[pid] = true
			out = append(out, pid)
		}
	}
	for _, r := range l.roots {
		add(r)
		kids, ok := l.proc.children(r, false)
		if !ok {
			return l.proc.tree(l.roots, true) // no children files: the scan
		}
		for _, k := range kids {
			add(k)
		}
	}
	for pid := range l.procs {
		add(pid)
	}
	sort.Ints(out)
	return out
}

// newThread opens a thread's files and reads its start; nil: it ended.
func (l *Local) newThread(buf *[]byte, ps string, tid int) *thrRec {
	dir := l.proc.path(ps, "task", strconv.Itoa(tid))
	b, err := readInto(buf, dir+"/stat")
	if err != nil {
		return nil
	}
	st := parseTaskStat(b)
	if !st.ok {
		return nil
	}
	tr := &thrRec{}
	tr.status, _ = os.Open(dir + "/status")
	tr.schedRd, _ = os.Open(dir + "/schedstat")
	if !l.bornAfter(st.Starttime) {
		c, ok := l.readThread(buf, ps, tid, tr)
		if !ok {
			tr.close()
			return nil
		}
		tr.base, tr.last = c, c
	}
	return tr
}

func (t *thrRec) close() {
	if t.status != nil {
		t.status.Close()
	}
	if t.schedRd != nil {
		t.schedRd.Close()
	}
}

// foldProc adds an ended process's last counters to the watch's total
// and closes its files.
func (l *Local) foldProc(pr *procRec) {
	t := pr.dead.add(pr.cpuLast.sub(pr.cpuBase))
	for _, tr := range pr.threads {
		t = t.add(tr.last.sub(tr.base))
		tr.close()
	}
	l.ended = l.ended.add(t)
	l.endedIO = addIO(l.endedIO, subIO(pr.ioLast, pr.ioBase))
	pr.closeFiles()
}

func (pr *procRec) closeFiles() {
	if pr.stat != nil {
		pr.stat.Close()
	}
	if pr.io != nil {
		pr.io.Close()
	}
}

// closeAll closes every file the watch holds (Close).
func (l *Local) closeAll() {
	for pid, pr := range l.procs {
		for _, tr := range pr.threads {
			tr.close()
		}
		pr.closeFiles()
		delete(l.procs, pid)
	}
}

func addIO(a, b procIO) procIO {
	return procIO{a.rchar + b.rchar, a.wchar + b.wchar, a.syscr + b.syscr, a.syscw + b.syscw}
}

func subIO(a, b procIO) procIO {
	return procIO{a.rchar - b.rchar, a.wchar - b.wchar, a.syscr - b.syscr, a.syscw - b.syscw}
}

// bornAfter says whether something that started at start (ticks since
// boot) started after the watch began: it then counts from zero.
func (l *Local) bornAfter(start int64) bool { return l.startTicks > 0 && start > l.startTicks }

// readThread reads one thread's switches and run delay; ok false: the
// thread ended (its open files read ESRCH, or its directory is gone).
func (l *Local) readThread(buf *[]byte, ps string, tid int, tr *thrRec) (c counters, ok bool) {
	dir := ""
	read := func(f *os.File, name string) ([]byte, error) {
		if f != nil {
			return preadInto(buf, f)
		}
		if dir == "" {
			dir = l.proc.path(ps, "task", strconv.Itoa(tid))
		}
		return readInto(buf, dir+"/"+name)
	}
	b, err := read(tr.schedRd, "schedstat")
	if err != nil {
		return c, false
	}
	_, delay, slices := parseSchedstat(b)
	if tr.read && slices == tr.slices {
		// Not scheduled since the last reading (schedstat's timeslice
		// count is unchanged): it cannot have switched either, so its
		// status, the costliest file here, is not read.
		c = tr.last
		c.delay = delay
		return c, true
	}
	c.delay = delay
	if b, err := read(tr.status, "status"); err == nil {
		c.vol, c.invol = parseStatusSwitches(b)
	} else {
		return c, false
	}
	tr.slices, tr.read = slices, true
	return c, true
}

// preadInto reads a /proc file from offset 0 into *buf, reusing its
// storage (the kernel regenerates the text on every read at 0).
func preadInto(buf *[]byte, f *os.File) ([]byte, error) {
	if f == nil {
		return nil, os.ErrInvalid
	}
	b := (*buf)[:cap(*buf)]
	if len(b) < 4096 {
		b = make([]byte, 4096)
	}
	for {
		n, err := f.ReadAt(b, 0)
		if n < len(b) || err != nil && n == 0 {
			*buf = b
			if n == 0 && err != nil && err != io.EOF {
				return nil, err
			}
			if n == 0 {
				return nil, io.EOF
			}
			return b[:n], nil
		}
		b = make([]byte, 2*len(b)) // did not fit: read again, larger
	}
}

// readInto reads a small file into *buf, reusing its storage.
func readInto(buf *[]byte, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := (*buf)[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil || n == 0 {
			break
		}
	}
	*buf = b
	return bytes.TrimRight(b, "\x00"), nil
}

// Diff is what happened between snapshots a and b (b later): counters as
// b − a, gauges as in b.
func Diff(a, b Snapshot) Interval {
	iv := Interval{Seconds: b.At.Sub(a.At).Seconds(), Host: subHost(b.Host, a.Host)}
	iv.Host.OtherCPU = b.Host.OtherCPU - a.Host.OtherCPU
	if b.Server != nil {
		s := *b.Server
		if a.Server != nil {
			p := a.Server
			s.UserNs -= p.UserNs
			s.SysNs -= p.SysNs
			s.Voluntary -= p.Voluntary
			s.Involuntary -= p.Involuntary
			s.RunDelayNs -= p.RunDelayNs
			s.ReadBytes -= p.ReadBytes
			s.WriteBytes -= p.WriteBytes
			s.ReadCalls -= p.ReadCalls
			s.WriteCalls -= p.WriteCalls
			s.States = States{s.States.CPU - p.States.CPU, s.States.Runnable - p.States.Runnable,
				s.States.Network - p.States.Network, s.States.Lock - p.States.Lock,
				s.States.IO - p.States.IO, s.States.Idle - p.States.Idle}
			if s.Port != nil && p.Port != nil {
				pt := *s.Port
				pt.BytesIn -= p.Port.BytesIn
				pt.BytesOut -= p.Port.BytesOut
				pt.ClosedLost -= p.Port.ClosedLost
				s.Port = &pt
			}
		}
		iv.Server = &s
	}
	for k := range b.Missing {
		iv.Missing = append(iv.Missing, k)
	}
	sort.Strings(iv.Missing)
	return iv
}
