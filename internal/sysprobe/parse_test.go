package sysprobe

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseTaskStat(t *testing.T) {
	tail := " S 1 2 3 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 4 0 12345 100 10 18446744073709551615"
	for _, tc := range []struct {
		in   string
		comm string
		ok   bool
	}{
		{"42 (postgres)" + tail, "postgres", true},
		{"42 (my server)" + tail, "my server", true},
		{"42 (a) (b) c)" + tail, "a) (b) c", true},
		{"42 ((()" + tail, "((", true},
		{"42 ()" + tail, "", true},
		{"42 (x) S 1", "x", false},     // fields missing
		{"42 postgres S 1", "", false}, // no parentheses
		{"", "", false},
		{"42 )x(" + tail, "", false},
	} {
		st := parseTaskStat([]byte(tc.in))
		if st.ok != tc.ok || st.Comm != tc.comm {
			t.Errorf("%q: %+v", tc.in, st)
			continue
		}
		if tc.ok && (st.State != 'S' || st.PPID != 1 || st.Utime != 250 || st.Stime != 75 || st.Threads != 4 || st.Starttime != 12345) {
			t.Errorf("%q: %+v", tc.in, st)
		}
	}
}

func TestParseSyscall(t *testing.T) {
	for _, tc := range []struct {
		in      string
		nr, a1  int64
		running bool
		ok      bool
	}{
		{"running\n", 0, 0, true, true},
		{"-1 0x7ffd4e262da8 0x7f0d4fc0e2ad\n", -1, 0, false, true},
		{"0 0x3 0x7f0d4fa92000 0x20000 0x0 0x0 0x0 0x7ffd 0x7f0d\n", 0, 3, false, true},
		{"202 0xc000080148 0x80 0x0 0x0 0x0 0x0 0x7ffd 0x46\n", 202, 0xc000080148, false, true},
		{"232 0x4", 232, 4, false, true},
		{"7", 7, 0, false, true},
		{"", 0, 0, false, false},
		{"45 zz", 45, 0, false, true},
	} {
		nr, a1, running, ok := parseSyscall([]byte(tc.in))
		if nr != tc.nr || a1 != tc.a1 || running != tc.running || ok != tc.ok {
			t.Errorf("%q: %d %#x %v %v", tc.in, nr, a1, running, ok)
		}
	}
}

func TestParseProcFiles(t *testing.T) {
	var h Host
	parseStat([]byte("cpu  10 1 20 300 4 0 5 0 0 0\ncpu0 5 1 10 150 2 0 3 0 0 0\ncpu1 5 0 10 150 2 0 2 0\n"+
		"intr 999 1 2\nctxt 1234\nbtime 1\nprocs_running 3\nprocs_blocked 1\ncpu9\n"), &h)
	if h.CPUs != 2 || h.CPU.User != 10*tickNs || h.CPU.Idle != 300*tickNs || h.CPU.SoftIRQ != 5*tickNs ||
		h.PerCPU[1].Steal != 0 || h.ContextSwitch != 1234 || h.Interrupts != 999 || h.ProcsRunning != 3 || h.ProcsBlocked != 1 {
		t.Errorf("stat: %+v", h)
	}
	if h.CPU.Busy() != (10+1+20+5)*tickNs {
		t.Errorf("busy %d", h.CPU.Busy())
	}

	net := parseNetDev([]byte("Inter-|   Receive |  Transmit\n face |bytes packets\n" +
		"    lo: 100 2 0 0 0 0 0 0 100 2 0 0 0 0 0 0\n" +
		"eth0:5000 10 0 0 0 0 0 0 7000 14 0 0 0 0 0 0\nbad: 1 2\n"))
	if len(net) != 2 || net["lo"].RxBytes != 100 || net["eth0"].RxBytes != 5000 || net["eth0"].TxPackets != 14 {
		t.Errorf("net/dev: %+v", net)
	}

	noSys := func(string) (bool, bool) { return false, false }
	disks := parseDiskstats([]byte(
		" 253 0 vda 10 0 80 5 20 0 160 9 0 12 14 0 0 0 0\n"+
			" 253 1 vda1 10 0 80 5 20 0 160 9 0 12 14 0 0 0 0\n"+
			" 259 0 nvme0n1 1 0 8 0 2 0 16 0 0 3 3\n"+
			" 259 1 nvme0n1p1 1 0 8 0 2 0 16 0 0 3 3\n"+
			" 7 0 loop0 1 0 8 0 0 0 0 0 0 1 1\n"+
			" 1 0 ram0 1 0 8 0 0 0 0 0 0 1 1\n"+
			" 253 2 dm-0 1 0 8 0 0 0 0 0 0 1 1\n"+
			" 8 0 sda 1 2\n"), noSys)
	if len(disks) != 3 || disks["vda"].ReadBytes != 80*512 || disks["vda"].WrittenBytes != 160*512 ||
		disks["vda"].IOTimeMs != 12 || disks["nvme0n1"].Writes != 2 {
		t.Errorf("diskstats: %+v", disks)
	}

	total, avail := parseMeminfo([]byte("MemTotal:       1000 kB\nMemFree: 5 kB\nMemAvailable:    600 kB\n"))
	if total != 1000*1024 || avail != 600*1024 {
		t.Errorf("meminfo %d %d", total, avail)
	}

	vol, invol := parseStatusSwitches([]byte("Name:\tx\nState:\tS\nvoluntary_ctxt_switches:\t17\nnonvoluntary_ctxt_switches:\t4\n"))
	if vol != 17 || invol != 4 {
		t.Errorf("status %d %d", vol, invol)
	}
	if vol, invol := parseStatusSwitches([]byte("Name:\tx\n")); vol != 0 || invol != 0 {
		t.Errorf("status without switches %d %d", vol, invol)
	}

	io := parseIO([]byte("rchar: 10\nwchar: 20\nsyscr: 3\nsyscw: 4\nread_bytes: 0\n"))
	if io != (procIO{10, 20, 3, 4}) {
		t.Errorf("io %+v", io)
	}

	run, delay, slices := parseSchedstat([]byte("19142479 3931221 57\n"))
	if run != 19142479 || delay != 3931221 || slices != 57 {
		t.Errorf("schedstat %d %d %d", run, delay, slices)
	}

	tcp := parseListenInodes([]byte(
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"+
			"   0: 0100007F:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   999        0 4242 1 0\n"+
			"   1: 0100007F:1538 0100007F:D000 01 00000000:00000000 00:00000000 00000000   999        0 4243 1 0\n"+
			"   2: 00000000:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000   999        0 77 1 0\n"+
			"   3: garbage\n"), 0x1538)
	if len(tcp) != 1 || tcp[4242] != 0x1538 {
		t.Errorf("net/tcp: %v", tcp)
	}
	if ino, ok := socketInode("socket:[4242]"); !ok || ino != 4242 {
		t.Errorf("socket inode %d %v", ino, ok)
	}
	if _, ok := socketInode("pipe:[1]"); ok {
		t.Error("pipe read as a socket")
	}
}

func TestFoldPerfScript(t *testing.T) {
	out := "postgres 1234/1234 100.5:   10101010 cpu-clock:\n" +
		"\t  7a74b ExecScan+0x1b (/usr/lib/postgresql/bin/postgres)\n" +
		"\t  43ef5 PostgresMain+0x2d5 (/usr/lib/postgresql/bin/postgres)\n" +
		"\t  77541 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\n" +
		"postgres 1234/1234 100.6:   10101010 cpu-clock:\n" +
		"\t  7a74b ExecScan+0x1b (/usr/lib/postgresql/bin/postgres)\n" +
		"\t  43ef5 PostgresMain+0x2d5 (/usr/lib/postgresql/bin/postgres)\n" +
		"\t  77541 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\n" +
		"my worker 99/100 100.7:   10101010 cpu-clock:\n" +
		"\t  1 a;b+0x1 ([unknown])\n\n"
	text, n := foldPerfScript([]byte(out))
	want := "my worker;a:b 1\npostgres;[libc.so.6];PostgresMain;ExecScan 2\n"
	if text != want || n != 3 {
		t.Errorf("folded %d:\n%s\nwant:\n%s", n, text, want)
	}
}

func FuzzParsers(f *testing.F) {
	for _, s := range []string{
		"42 (a) (b) S 1 2 3 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 4 0 12345",
		"running", "-1 0x1 0x2", "202 0xc000080148 0x80",
		"voluntary_ctxt_switches:\t17\n", "cpu 1 2 3\nctxt 5\n", "lo: 1 2 3",
		" 253 0 vda 10 0 80 5 20 0 160 9 0 12 14 0 0 0 0\n",
		"   0: 0100007F:1538 00000000:0000 0A 0:0 00:0 0 999 0 4242 1 0\n",
		"x\n\tffff sym+0x1 (dso)\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		parseTaskStat(b)
		parseSyscall(b)
		parseStatusSwitches(b)
		parseSchedstat(b)
		parseIO(b)
		parseMeminfo(b)
		parseNetDev(b)
		parseDiskstats(b, func(string) (bool, bool) { return false, false })
		parseListenInodes(b, 0)
		var h Host
		parseStat(b, &h)
		text, _ := foldPerfScript(b)
		for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			if line != "" && strings.Count(line, " ") < 1 {
				t.Fatalf("folded line without a count: %q", line)
			}
		}
	})
}

// TestPostgres finds a private PostgreSQL by its port: the postmaster and
// its children, and a backend forked after the watch began.
func TestPostgres(t *testing.T) {
	srv := pg.Get(t)
	l, err := Open(context.Background(), Target{Port: srv.Port}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	found := l.Found()
	pid, err := srv.PID()
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 2 || !hasPID(found, pid) {
		t.Fatalf("found %+v, want the postmaster %d and its children", found, pid)
	}
	before := snap(t, l).Server.Processes
	// A connection makes the postmaster fork a backend at once (before
	// any authentication): it joins the watch within a second.
	conn, err := net.Dial("tcp", net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitFor(t, "the new backend", func() bool { return snap(t, l).Server.Processes > before })
	s := snap(t, l)
	if s.Server.Port == nil || s.Server.Port.Connections < 1 {
		t.Errorf("port %+v missing %v", s.Server.Port, s.Missing)
	}
	// The new backend waits for our startup packet in epoll_wait on a
	// set that holds the client's socket: network.
	l.mu.Lock()
	var backend int
	for p := range l.procs {
		if !hasPID(found, p) {
			backend = p
		}
	}
	l.mu.Unlock()
	if backend == 0 {
		t.Fatal("no new backend among the watch's processes")
	}
	sm := newStateSampler(procFS{"/proc"}, 100)
	defer sm.close()
	sm.reopen([]threadID{{backend, backend}})
	// A backend just forked runs its start-up before it waits for the
	// client's startup packet: on a loaded machine that takes a while.
	for t0 := time.Now(); sm.classify(sm.threads[0]) != stNetwork && time.Since(t0) < 10*time.Second; {
		time.Sleep(5 * time.Millisecond)
	}
	counts := map[state]int{}
	for i := 0; i < 50; i++ {
		counts[sm.classify(sm.threads[0])]++
		time.Sleep(time.Millisecond)
	}
	if counts[stNetwork] < 45 {
		t.Errorf("backend %d waiting for the client: %v", backend, counts)
	}
	// The postmaster sleeps in epoll on its listening sockets: waiting for
	// a new client is idle, not a transaction's network wait.
	sm.reopen([]threadID{{pid, pid}})
	counts = map[state]int{}
	for i := 0; i < 50; i++ {
		counts[sm.classify(sm.threads[0])]++
		time.Sleep(time.Millisecond)
	}
	if counts[stIdle] < 45 {
		t.Errorf("the postmaster %d waiting for connections: %v, want idle", pid, counts)
	}
}

// TestSplitRunnable: run delay says how much of the threads' time was
// runnable; "running" samples (on a CPU or waiting for one) move to
// runnable to match.
func TestSplitRunnable(t *testing.T) {
	for _, tc := range []struct {
		name  string
		raw   States
		delay int64 // ns over the 1 s interval, 10 threads
		want  States
	}{
		{"none", States{CPU: 400, Network: 300, Idle: 300}, 0, States{CPU: 400, Network: 300, Idle: 300}},
		// 10% of 10 thread-seconds runnable: 100 of 1000 samples.
		{"from cpu", States{CPU: 400, Network: 300, Idle: 300}, 1e9, States{CPU: 300, Runnable: 100, Network: 300, Idle: 300}},
		{"already counted", States{CPU: 400, Runnable: 150, Network: 150, Idle: 300}, 1e9, States{CPU: 400, Runnable: 150, Network: 150, Idle: 300}},
		{"capped", States{CPU: 50, Lock: 950}, 5e9, States{Runnable: 50, Lock: 950}},
	} {
		at := time.Unix(1e9, 0)
		l := &Local{lastAt: at}
		got := l.splitRunnable(tc.raw, Server{Threads: 10, RunDelayNs: tc.delay}, at.Add(time.Second))
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// TestMariaDB finds a private MariaDB by its port (one process), and the
// thread serving a new connection waits for the client in poll on its
// socket: network.
func TestMariaDB(t *testing.T) {
	srv := my.Get(t)
	l, err := Open(context.Background(), Target{Port: srv.Port}, Options{StateHz: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if found := l.Found(); len(found) != 1 || found[0].Threads < 2 {
		t.Fatalf("found %+v, want one process with its threads", found)
	}
	pid := l.Found()[0].PID
	sm := newStateSampler(procFS{"/proc"}, 100)
	defer sm.close()
	reopen := func() {
		tids, err := procFS{"/proc"}.tids(pid)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]threadID, len(tids))
		for i, tid := range tids {
			ids[i] = threadID{pid, tid}
		}
		sm.reopen(ids)
	}
	// No client yet: the main thread polls the listening sockets, which
	// is waiting for a new client (idle), not a network wait.
	reopen()
	for _, tf := range sm.threads {
		if st := sm.classify(tf); st == stNetwork {
			t.Errorf("thread %d in a network wait with no client connected (%s)", tf.id.tid, sm.source())
		}
	}
	conn, err := net.Dial("tcp", net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The greeting is sent; the server waits for the handshake reply.
	if _, err := conn.Read(make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	reopen()
	rounds, withNet := 30, 0
	for i := 0; i < rounds; i++ {
		for _, tf := range sm.threads {
			if sm.classify(tf) == stNetwork {
				withNet++
				break
			}
		}
		time.Sleep(time.Millisecond)
	}
	if withNet < rounds*9/10 {
		t.Errorf("a thread waiting for the client in %d of %d rounds (%s)", withNet, rounds, sm.source())
	}
}

func TestParseUnixListenInodes(t *testing.T) {
	b := []byte(`Num       RefCount Protocol Flags    Type St Inode Path
000000008a18b986: 00000003 00000000 00000000 0001 03  1131
00000000e5214a3b: 00000002 00000000 00010000 0001 01 1699275 /tmp/sledge-pg-1/.s.PGSQL.34189
00000000e5214a3c: 00000002 00000000 00010000 0005 01 0
short line
00000000e5214a3d: 00000002 00000000 zz 0001 01 77
`)
	got := parseUnixListenInodes(b)
	if len(got) != 1 || got[0] != 1699275 {
		t.Errorf("got %v, want [1699275]", got)
	}
}

// A cached descriptor class stands 5 s, or five visits of its thread when
// the round-robin visits each thread less often than once a second.
func TestFdRefreshTicks(t *testing.T) {
	for _, tc := range []struct {
		hz, perTick, threads int
		want                 int64
	}{
		{100, 16, 10, 500},  // every thread each tick: 5 s
		{100, 16, 200, 500}, // a visit every 13 ticks: 5 s is longer
		{20, 5, 10, 100},    // a visit every 2 ticks
		{20, 5, 210, 210},   // a visit every 42 ticks (2.1 s): five of them
		{20, 5, 0, 100},
	} {
		s := &stateSampler{hz: tc.hz, perTick: tc.perTick, threads: make([]*thrFiles, tc.threads)}
		if got := s.fdRefreshTicks(); got != tc.want {
			t.Errorf("hz %d, %d a tick, %d threads: %d ticks, want %d", tc.hz, tc.perTick, tc.threads, got, tc.want)
		}
	}
}
