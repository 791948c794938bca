package sysprobe

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// waitKind is what a system call a thread sleeps in says about the wait.
type waitKind uint8

const (
	kindIdle  waitKind = iota // anything else
	kindLock                  // futex
	kindIO                    // fsync, io_getevents, …: disk
	kindNet                   // recv/send: always a socket
	kindFdRW                  // read/write family: by the kind of fd (arg 1)
	kindPoll                  // poll/ppoll: by the first pollfd's fd
	kindEpoll                 // epoll_wait: by what the epoll set holds
)

// syscallKinds maps the system calls both amd64 and arm64 have.
var syscallKinds = func() [512]waitKind {
	var t [512]waitKind
	for nr, k := range map[int]waitKind{
		unix.SYS_FUTEX: kindLock, unix.SYS_FUTEX_WAITV: kindLock,
		unix.SYS_READ: kindFdRW, unix.SYS_WRITE: kindFdRW, unix.SYS_PREAD64: kindFdRW, unix.SYS_PWRITE64: kindFdRW,
		unix.SYS_READV: kindFdRW, unix.SYS_WRITEV: kindFdRW, unix.SYS_PREADV: kindFdRW, unix.SYS_PWRITEV: kindFdRW,
		unix.SYS_PREADV2: kindFdRW, unix.SYS_PWRITEV2: kindFdRW,
		unix.SYS_RECVFROM: kindNet, unix.SYS_RECVMSG: kindNet, unix.SYS_RECVMMSG: kindNet,
		unix.SYS_SENDTO: kindNet, unix.SYS_SENDMSG: kindNet, unix.SYS_SENDMMSG: kindNet,
		unix.SYS_PPOLL: kindPoll, unix.SYS_PSELECT6: kindIdle,
		unix.SYS_EPOLL_PWAIT: kindEpoll, unix.SYS_EPOLL_PWAIT2: kindEpoll,
		unix.SYS_FSYNC: kindIO, unix.SYS_FDATASYNC: kindIO, unix.SYS_SYNC_FILE_RANGE: kindIO,
		unix.SYS_IO_GETEVENTS: kindIO, unix.SYS_IO_PGETEVENTS: kindIO, unix.SYS_IO_URING_ENTER: kindIO,
	} {
		t[nr] = k
	}
	for nr, k := range archSyscalls {
		t[nr] = k
	}
	return t
}()

// fdClass is what a file descriptor is, for a read or a wait on it.
type fdClass uint8

const (
	fdOther  fdClass = iota // pipe, eventfd, timerfd, …: idle
	fdSocket                // network
	fdFile                  // regular file or block device: io
	fdEpollNet
	fdEpollOther
	// fdListen is a listening socket (TCP LISTEN, a unix socket accepting
	// connections): a thread waiting on one waits for a new client, not for
	// a transaction's traffic: idle. PostgreSQL's postmaster sleeps in
	// epoll on its listening sockets, MariaDB's main thread in poll on them.
	fdListen
)

type fdKey struct{ pid, fd int32 }

type fdEntry struct {
	class fdClass
	at    int64 // tick of the reading
}

// fdRefresh is how many ticks a cached fd class stands: a descriptor
// closed and reused within it can be misread for that long.
const fdRefreshSeconds = 5

// thrFiles are a sampled thread's open files, re-read with pread at
// offset 0 (the kernel regenerates /proc files on every read at 0).
type thrFiles struct {
	id      threadID
	syscall *os.File
	stat    *os.File
}

// stateSampler classifies the target's threads at hz.
type stateSampler struct {
	proc    procFS
	hz      int
	perTick int // threads read per tick at most
	lastK   int // threads read per tick, last tick

	mu      sync.Mutex // guards counts, pending
	total   States
	pending []threadID // the thread list the 1 Hz loop handed over, nil when taken
	changed bool

	// Sampler goroutine only:
	threads []*thrFiles
	byID    map[threadID]*thrFiles
	next    int
	tick    int64
	fds     map[fdKey]fdEntry
	mem     map[int32]*os.File   // /proc/PID/mem for poll's pollfd, nil: unreadable
	listen  map[string]listenSet // listening sockets' inodes, by network namespace
	buf     [512]byte
	memWhy  string
	lastN   int
}

// statesPerTick bounds the threads read per tick; the sampler reads them
// round-robin, so that every thread is sampled at the same mean rate (hz ×
// statesPerTick / threads when there are more threads than that). A read
// costs about 2 µs of CPU here; the tick's wakeup itself costs more on a
// busy virtual machine. docs/cost.md ("Where the server's threads are")
// has the measurements behind the figure.
const statesPerTick = 16

func newStateSampler(p procFS, hz int) *stateSampler {
	return &stateSampler{proc: p, hz: hz, perTick: statesPerTick, byID: map[threadID]*thrFiles{},
		fds: map[fdKey]fdEntry{}, mem: map[int32]*os.File{}, listen: map[string]listenSet{}}
}

// setThreads hands over the current thread list (from the 1 Hz loop).
func (s *stateSampler) setThreads(ids []threadID) {
	s.mu.Lock()
	s.pending, s.changed = ids, true
	s.mu.Unlock()
}

// counts returns the counts so far and the rate.
func (s *stateSampler) counts() (States, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total, s.hz
}

func (s *stateSampler) source() string {
	s.mu.Lock()
	n, k, why := s.lastN, s.lastK, s.memWhy
	s.mu.Unlock()
	src := fmt.Sprintf("/proc/PID/task/TID/syscall at %d Hz, %d of %d threads per tick (round-robin)", s.hz, k, n)
	if why != "" {
		src += "; " + why
	}
	return src
}

func (s *stateSampler) run(ctx context.Context) {
	t := time.NewTicker(time.Second / time.Duration(s.hz))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.sampleTick()
	}
}

// sampleTick reads up to perTick threads, round-robin, and counts their
// classes. Allocation-free unless the thread list changed or an fd is
// met for the first time.
func (s *stateSampler) sampleTick() {
	s.mu.Lock()
	if s.changed {
		ids := s.pending
		s.pending, s.changed = nil, false
		s.mu.Unlock()
		s.reopen(ids)
		s.mu.Lock()
		s.lastN = len(s.threads)
	}
	s.mu.Unlock()
	s.tick++
	var c States
	n := len(s.threads)
	k := min(n, s.perTick)
	for i := 0; i < k; i++ {
		if s.next >= n {
			s.next = 0
		}
		tf := s.threads[s.next]
		s.next++
		switch s.classify(tf) {
		case stCPU:
			c.CPU++
		case stRunnable:
			c.Runnable++
		case stNetwork:
			c.Network++
		case stLock:
			c.Lock++
		case stIO:
			c.IO++
		case stIdle:
			c.Idle++
		}
	}
	s.mu.Lock()
	s.lastK = k
	s.total.CPU += c.CPU
	s.total.Runnable += c.Runnable
	s.total.Network += c.Network
	s.total.Lock += c.Lock
	s.total.IO += c.IO
	s.total.Idle += c.Idle
	s.mu.Unlock()
}

type state uint8

const (
	stGone state = iota
	stCPU
	stRunnable
	stNetwork
	stLock
	stIO
	stIdle
)

// classify reads one thread's syscall file and says where it is.
func (s *stateSampler) classify(tf *thrFiles) state {
	if tf.syscall == nil {
		return stGone
	}
	n, err := tf.syscall.ReadAt(s.buf[:], 0)
	if n == 0 && err != nil {
		return stGone // ended since the last listing
	}
	nr, arg1, running, ok := parseSyscall(s.buf[:n])
	switch {
	case !ok:
		return stGone
	case running:
		// TASK_RUNNING: on a CPU or waiting for one; the snapshot splits
		// the two with the run delay (Local.splitRunnable).
		return stCPU
	case nr < 0:
		// Asleep outside any system call: a page fault waiting for the
		// disk (D) most often, or stopped. The stat file tells; "-1" is
		// rare, so is this read.
		return s.fromStat(tf)
	}
	kind := kindIdle
	if nr < int64(len(syscallKinds)) {
		kind = syscallKinds[nr]
	}
	pid := int32(tf.id.pid)
	switch kind {
	case kindLock:
		return stLock
	case kindIO:
		return stIO
	case kindNet:
		return stNetwork
	case kindFdRW:
		switch s.fdClassOf(pid, int32(arg1)) {
		case fdSocket:
			return stNetwork
		case fdFile:
			return stIO
		}
	case kindPoll:
		if fd, ok := s.firstPollFd(pid, arg1); ok {
			if s.fdClassOf(pid, fd) == fdSocket {
				return stNetwork
			}
		} else if s.mem[pid] == nil {
			return stNetwork // unreadable pollfd: see Sources["states"]
		}
	case kindEpoll:
		if s.fdClassOf(pid, int32(arg1)) == fdEpollNet {
			return stNetwork
		}
	}
	return stIdle
}

// fromStat classifies a thread outside system calls by its state letter.
func (s *stateSampler) fromStat(tf *thrFiles) state {
	if tf.stat == nil {
		return stRunnable
	}
	n, _ := tf.stat.ReadAt(s.buf[:], 0)
	b := s.buf[:n]
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return stRunnable
	}
	switch b[i+2] {
	case 'R':
		return stRunnable
	case 'D':
		return stIO
	case 'S', 'I':
		return stIdle
	}
	return stIdle
}

// firstPollFd reads the first struct pollfd {int fd; short events;
// short revents} at addr in the process's memory.
func (s *stateSampler) firstPollFd(pid int32, addr int64) (int32, bool) {
	f, ok := s.mem[pid]
	if !ok {
		var err error
		f, err = os.Open(s.proc.path(strconv.Itoa(int(pid)), "mem"))
		if err != nil {
			f = nil
			s.mu.Lock()
			s.mu.Lock()
			if s.memWhy == "" {
				s.memWhy = "poll's descriptors unreadable (" + err.Error() + "): a thread in poll counts as network"
			}
			s.mu.Unlock()
			s.mu.Unlock()
		}
		s.mem[pid] = f
	}
	if f == nil || addr <= 0 {
		return 0, false
	}
	var b [4]byte
	if n, _ := f.ReadAt(b[:], addr); n != 4 {
		return 0, false
	}
	return int32(binary.NativeEndian.Uint32(b[:])), true
}

// fdClassOf says what fd of pid is, from a cache refreshed every few
// seconds.
func (s *stateSampler) fdClassOf(pid, fd int32) fdClass {
	if fd < 0 {
		return fdOther
	}
	k := fdKey{pid, fd}
	if e, ok := s.fds[k]; ok && s.tick-e.at < s.fdRefreshTicks() {
		return e.class
	}
	c := s.readFdClass(pid, fd, 0)
	s.fds[k] = fdEntry{c, s.tick}
	return c
}

// fdRefreshVisits: a cached descriptor class also stands for this many
// visits of its thread, when they take longer than fdRefreshSeconds (a
// few threads a tick over hundreds of threads: a thread is visited every
// few seconds, and a 5 s cache would be read again every other visit).
const fdRefreshVisits = 5

// fdRefreshTicks is how many ticks a cached descriptor class stands.
func (s *stateSampler) fdRefreshTicks() int64 {
	visit := (len(s.threads) + s.perTick - 1) / max(s.perTick, 1) // ticks between two visits of a thread
	return int64(max(fdRefreshSeconds*s.hz, fdRefreshVisits*visit))
}

func (s *stateSampler) readFdClass(pid, fd int32, depth int) fdClass {
	ps := strconv.Itoa(int(pid))
	link, err := os.Readlink(s.proc.path(ps, "fd", strconv.Itoa(int(fd))))
	if err != nil {
		return fdOther
	}
	switch {
	case len(link) > 7 && link[:7] == "socket:":
		if ino, ok := socketInode(link); ok && s.listening(pid, ino) {
			return fdListen
		}
		return fdSocket
	case link == "anon_inode:[eventpoll]":
		if depth > 0 {
			return fdEpollOther
		}
		b, err := s.proc.read(ps, "fdinfo", strconv.Itoa(int(fd)))
		if err != nil {
			return fdEpollOther
		}
		for _, line := range bytes.Split(b, []byte{'\n'}) {
			fs := fields(line)
			if len(fs) >= 2 && string(fs[0]) == "tfd:" {
				t := int32(atoi(fs[1]))
				if c := s.readFdClass(pid, t, depth+1); c == fdSocket {
					return fdEpollNet
				}
			}
		}
		return fdEpollOther
	case len(link) > 0 && link[0] == '/':
		return fdFile
	}
	return fdOther
}

// listenSet is the listening sockets of one network namespace, read at
// tick at.
type listenSet struct {
	inodes map[uint64]bool
	at     int64
}

// listening reports whether socket inode ino of pid is a listening one,
// from the LISTEN sockets of pid's network namespace (/proc/PID/net/tcp,
// tcp6 and unix), read again every fdRefreshSeconds.
func (s *stateSampler) listening(pid int32, ino uint64) bool {
	ps := strconv.Itoa(int(pid))
	ns, err := os.Readlink(s.proc.path(ps, "ns", "net"))
	if err != nil {
		ns = "" // no namespaces: one set
	}
	ls, ok := s.listen[ns]
	if !ok || s.tick-ls.at >= int64(fdRefreshSeconds*s.hz) {
		ls = listenSet{inodes: map[uint64]bool{}, at: s.tick}
		for _, f := range []string{"tcp", "tcp6"} {
			if b, err := s.proc.read(ps, "net", f); err == nil {
				for i := range parseListenInodes(b, 0) {
					ls.inodes[i] = true
				}
			}
		}
		if b, err := s.proc.read(ps, "net", "unix"); err == nil {
			for _, i := range parseUnixListenInodes(b) {
				ls.inodes[i] = true
			}
		}
		s.listen[ns] = ls
	}
	return ls.inodes[ino]
}

// reopen opens the files of new threads and closes those of gone ones,
// and drops the caches of processes that ended.
func (s *stateSampler) reopen(ids []threadID) {
	keep := make(map[threadID]bool, len(ids))
	pids := map[int32]bool{}
	for _, id := range ids {
		keep[id] = true
		pids[int32(id.pid)] = true
		if _, ok := s.byID[id]; ok {
			continue
		}
		dir := s.proc.path(strconv.Itoa(id.pid), "task", strconv.Itoa(id.tid))
		tf := &thrFiles{id: id}
		tf.syscall, _ = os.Open(dir + "/syscall")
		tf.stat, _ = os.Open(dir + "/stat")
		if tf.syscall == nil {
			closeFiles(tf)
			continue
		}
		s.byID[id] = tf
	}
	for id, tf := range s.byID {
		if !keep[id] {
			closeFiles(tf)
			delete(s.byID, id)
		}
	}
	s.threads = s.threads[:0]
	for _, id := range ids {
		if tf, ok := s.byID[id]; ok {
			s.threads = append(s.threads, tf)
		}
	}
	for k := range s.fds {
		if !pids[k.pid] {
			delete(s.fds, k)
		}
	}
	for pid, f := range s.mem {
		if !pids[pid] {
			if f != nil {
				f.Close()
			}
			delete(s.mem, pid)
		}
	}
}

func closeFiles(tf *thrFiles) {
	if tf.syscall != nil {
		tf.syscall.Close()
	}
	if tf.stat != nil {
		tf.stat.Close()
	}
}

// close releases every open file (after run has returned).
func (s *stateSampler) close() {
	for id, tf := range s.byID {
		closeFiles(tf)
		delete(s.byID, id)
	}
	for pid, f := range s.mem {
		if f != nil {
			f.Close()
		}
		delete(s.mem, pid)
	}
}
