//go:build linux

package evloop

import (
	"context"
	"fmt"
	"iter"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

const (
	// rawSlice bounds one raw epoll_wait (New's raw): a raw system call
	// does not tell the scheduler the thread is blocked, so a garbage
	// collection's stop of the world waits for it; longer waits continue
	// as ordinary system calls.
	rawSlice = 2 * time.Millisecond
	// maxWatched bounds the contexts a loop watches for good; waits under
	// others watch their context for the wait only.
	maxWatched = 64

	epollET           = 1 << 31
	sysEpollPwait2    = 441 // the same number on amd64 and arm64
	waitEvents        = 128
	eventfdFlags      = syscall.O_CLOEXEC | syscall.O_NONBLOCK
	epollRegistration = syscall.EPOLLIN | syscall.EPOLLOUT | syscall.EPOLLRDHUP | epollET
)

// why a coroutine was resumed.
type why uint8

const (
	whyNone   why = iota
	whyIO         // its descriptor had an event
	whyTimer      // its timer (a sleep's end, a deadline) ran out
	whyCancel     // its context was cancelled
	whyCond       // its condition came true (WaitFor)
)

// co is one coroutine of a loop: a virtual user.
type co struct {
	next  func() (struct{}, bool)
	yield func(struct{}) bool
	fd    int   // the descriptor it waits for, or -1
	timer int   // its index in the loop's timer heap, or -1
	when  int64 // its timer's due time, nanoseconds since the loop's epoch
	ctx   context.Context
	cond  func() bool
	// unwatch ends a watch of ctx for this wait only (maxWatched).
	unwatch func() bool
	why     why
}

// Loop is one thread's event loop: the coroutines it drives, the
// descriptors they wait for (one epoll set, edge-triggered, or one
// io_uring: WaitKind) and their timers. Everything but Poke and the cancellation of a watched context
// happens on the loop's own thread.
type Loop struct {
	epfd, evfd int
	ring       *uring // the io_uring wait, nil: epoll's
	fallback   string // why the loop waits on epoll when io_uring was asked
	raw        bool
	tid        atomic.Int32 // the loop's thread while Run runs, else 0
	closed     atomic.Bool
	epoch      time.Time

	cur     *co      // the coroutine running now
	pending []func() // Go's, not started yet
	ready   []*co
	running []*co
	live    int
	waiters []*co  // by descriptor
	edges   []bool // by descriptor: an event came while nobody waited
	timers  []*co  // a heap by when
	polled  []*co  // WaitFor's
	// npolled is len(polled) for Poke, which other goroutines call: a
	// loop with no condition to try is not woken.
	npolled atomic.Int32
	events  [waitEvents]syscall.EpollEvent
	pwait2  bool // epoll_pwait2 (nanosecond timeouts) works here

	// Wake-ups from other goroutines: the loop sets sleeping before it
	// waits and then looks at the flags; the others set a flag and write
	// the eventfd when it sleeps.
	sleeping, poked, cancelled atomic.Bool
	watched                    map[<-chan struct{}]func() bool
	onCancel                   func()
}

// New makes a loop that waits as kind says: on io_uring when asked and
// the kernel (and a container's seccomp filter) allow it, else on epoll
// (Loop.WaitKind says which, Loop.Fallback why). raw: its waits begin with
// raw system calls of at most rawSlice (cheaper, but the thread keeps its
// processor meanwhile: only right when GOMAXPROCS leaves a processor to
// the rest of the program).
func New(raw bool, kind WaitKind) (*Loop, error) {
	r, _, e := syscall.RawSyscall(syscall.SYS_EVENTFD2, 0, eventfdFlags, 0)
	if e != 0 {
		return nil, fmt.Errorf("event loop: eventfd: %w", e)
	}
	evfd := int(r)
	l := &Loop{epfd: -1, evfd: evfd, raw: raw, epoch: time.Now(), pwait2: true,
		watched: map[<-chan struct{}]func() bool{}}
	if kind.resolve() == WaitIOUring {
		ring, err := newUring()
		if err == nil {
			l.ring = ring
			ring.poll(evfd, syscall.EPOLLIN, udWake)
		} else {
			l.fallback = err.Error()
		}
	}
	if l.ring == nil {
		epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			syscall.Close(evfd)
			return nil, fmt.Errorf("event loop: epoll_create1: %w", err)
		}
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(evfd)}
		if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, evfd, &ev); err != nil {
			syscall.Close(epfd)
			syscall.Close(evfd)
			return nil, fmt.Errorf("event loop: epoll_ctl: %w", err)
		}
		l.epfd = epfd
	}
	l.onCancel = func() {
		l.cancelled.Store(true)
		if l.sleeping.Load() {
			l.kick()
		}
	}
	return l, nil
}

// Close releases the loop's descriptors once Run has returned.
func (l *Loop) Close() {
	if l.closed.Swap(true) {
		return
	}
	for _, stop := range l.watched {
		stop()
	}
	clear(l.watched)
	if l.ring != nil {
		l.ring.close()
	} else {
		syscall.Close(l.epfd)
	}
	syscall.Close(l.evfd)
}

// WaitKind is how the loop waits: WaitEpoll or WaitIOUring.
func (l *Loop) WaitKind() WaitKind {
	if l.ring != nil {
		return WaitIOUring
	}
	return WaitEpoll
}

// Fallback is why the loop waits on epoll although io_uring was asked
// (io_uring_setup refused: an old kernel, a seccomp filter,
// kernel.io_uring_disabled); "" otherwise.
func (l *Loop) Fallback() string { return l.fallback }

// Go adds fn as a coroutine of the loop: before Run, from any goroutine
// (Run must follow it), or from one of the loop's coroutines.
func (l *Loop) Go(fn func()) { l.pending = append(l.pending, fn) }

// Run locks the calling goroutine to its thread and runs the coroutines
// until every one has returned. The coroutines are made here, on the
// locked thread: a coroutine runs on the thread it was made on, and may
// not lock or unlock a thread itself.
func (l *Loop) Run() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	l.tid.Store(int32(syscall.Gettid()))
	defer l.tid.Store(0)
	for {
		l.start()
		for len(l.ready) > 0 {
			l.running, l.ready = l.ready, l.running[:0]
			for i, c := range l.running {
				l.running[i] = nil
				l.resume(c)
			}
			l.start()
		}
		if l.live == 0 {
			return
		}
		l.wait()
	}
}

func (l *Loop) start() {
	for i, fn := range l.pending {
		l.pending[i] = nil
		c := &co{fd: -1, timer: -1}
		c.next, _ = iter.Pull(func(yield func(struct{}) bool) {
			c.yield = yield
			fn()
		})
		l.live++
		l.ready = append(l.ready, c)
	}
	l.pending = l.pending[:0]
}

func (l *Loop) resume(c *co) {
	l.cur = c
	_, more := c.next()
	l.cur = nil
	if !more {
		l.live--
	}
}

// suspend yields the loop's thread until the loop resumes c.
func (l *Loop) suspend(c *co) {
	c.why = whyNone
	c.yield(struct{}{})
}

// current is the coroutine calling, nil when the caller is not one of the
// loop's (another thread: the loop's thread runs nothing else).
func (l *Loop) current() *co {
	if l == nil {
		return nil
	}
	t := l.tid.Load()
	if t == 0 || int32(syscall.Gettid()) != t {
		return nil
	}
	return l.cur
}

func (l *Loop) now() int64 { return int64(time.Since(l.epoch)) }

// wait waits for the coroutines' descriptors, timers and conditions, and
// makes the ones that can go on ready.
func (l *Loop) wait() {
	l.checkPolled()
	timeout := int64(-1) // nanoseconds; -1: none
	if len(l.ready) > 0 {
		timeout = 0
	} else {
		if len(l.timers) > 0 {
			timeout = max(l.timers[0].when-l.now(), 0)
		}
		if len(l.polled) > 0 && (timeout < 0 || timeout > int64(pollEvery)) {
			timeout = int64(pollEvery)
		}
	}
	n := l.waitEvents(timeout)
	for i := range n {
		fd := int(l.events[i].Fd)
		if fd == l.evfd {
			var b [8]byte
			_, _ = syscall.Read(l.evfd, b[:])
			continue
		}
		if fd < len(l.waiters) {
			if c := l.waiters[fd]; c != nil {
				l.waiters[fd] = nil
				c.fd = -1
				l.delTimer(c)
				l.wake(c, whyIO)
				continue
			}
		}
		// Kept for a Wait that comes before its read has seen EAGAIN
		// (edge-triggered: this event will not come again).
		if fd >= len(l.edges) {
			l.edges = append(l.edges, make([]bool, fd+1-len(l.edges))...)
		}
		l.edges[fd] = true
	}
	if l.cancelled.Swap(false) {
		l.cancelWaits()
	}
	if l.poked.Swap(false) {
		l.checkPolled()
	}
	now := l.now()
	for len(l.timers) > 0 && l.timers[0].when <= now {
		c := l.timers[0]
		l.delTimer(c)
		if c.fd >= 0 {
			l.waiters[c.fd] = nil
			c.fd = -1
		}
		l.wake(c, whyTimer)
	}
}

func (l *Loop) wake(c *co, w why) {
	c.why = w
	l.ready = append(l.ready, c)
}

// waitEvents waits up to timeout nanoseconds (-1: without limit) for
// events; it returns how many it got (in l.events, by descriptor).
func (l *Loop) waitEvents(timeout int64) int {
	if timeout != 0 {
		l.sleeping.Store(true)
		defer l.sleeping.Store(false)
		if l.poked.Load() || l.cancelled.Load() {
			timeout = 0
		}
	}
	if timeout != 0 && l.raw {
		slice := int64(rawSlice)
		if timeout >= 0 && timeout < slice {
			slice = timeout
		}
		if n := l.waitCall(true, slice); n != 0 || timeout == slice {
			return n
		}
		if timeout > 0 {
			timeout -= slice
		}
	}
	return l.waitCall(timeout == 0, timeout)
}

// waitCall is one wait of the loop's kind, raw or ordinary.
func (l *Loop) waitCall(raw bool, timeout int64) int {
	if l.ring != nil {
		return l.ringWait(raw, timeout)
	}
	return l.epollCall(raw, timeout)
}

// epollCall is one epoll_pwait2 (epoll_pwait, in milliseconds, where the
// kernel has none), raw or ordinary.
func (l *Loop) epollCall(raw bool, timeout int64) int {
	call := syscall.Syscall6
	if raw {
		call = syscall.RawSyscall6
	}
	evs := uintptr(unsafe.Pointer(&l.events[0]))
	for {
		var r uintptr
		var e syscall.Errno
		if l.pwait2 {
			var tsp uintptr
			ts := syscall.NsecToTimespec(timeout)
			if timeout >= 0 {
				tsp = uintptr(unsafe.Pointer(&ts))
			}
			r, _, e = call(sysEpollPwait2, uintptr(l.epfd), evs, waitEvents, tsp, 0, 8)
			if e == syscall.ENOSYS || e == syscall.EPERM { // old kernel, or a seccomp filter that does not know it
				l.pwait2 = false
				continue
			}
		} else {
			ms := timeout
			if ms > 0 {
				ms = (ms + int64(time.Millisecond) - 1) / int64(time.Millisecond)
			}
			r, _, e = call(syscall.SYS_EPOLL_PWAIT, uintptr(l.epfd), evs, waitEvents, uintptr(ms), 0, 8)
		}
		if e != 0 {
			return 0 // EINTR: the caller looks again
		}
		return int(r)
	}
}

// kick wakes the loop from its wait.
func (l *Loop) kick() {
	if l.closed.Load() {
		return // a cancellation or poke that came after the end
	}
	one := [8]byte{1}
	_, _ = syscall.Write(l.evfd, one[:])
}

// Poke makes the loop try its conditions (WaitFor) now; any goroutine
// may call it, such as one that gave back what the conditions wait for.
func (l *Loop) Poke() {
	if l == nil {
		return
	}
	if l.npolled.Load() == 0 {
		return
	}
	l.poked.Store(true)
	if l.sleeping.Load() {
		l.kick()
	}
}

// FD is a non-blocking descriptor a loop waits for. The loop it is
// registered with (its epoll set or its ring) changes when a coroutine of
// another loop waits for it (a connection shared through a pool); only one
// caller uses it at a time.
type FD struct {
	Sysfd int
	reg   *Loop
	ud    uint64 // its poll's user data in reg's ring
}

// Forget takes f out of its loop before its descriptor is closed: an
// io_uring poll holds the socket open (epoll lets go at the close by
// itself). Called when no call is using f.
func (f *FD) Forget() {
	if l := f.reg; l != nil && l.ring != nil {
		_ = l.ring.cancel(f.ud)
	}
	f.reg = nil
}

// Wait waits until f is readable or writable (or was shut down), or
// deadline (zero: none) passed: os.ErrDeadlineExceeded. The caller retries
// its read or write; a wake-up may be spurious. ErrNotOnLoop: the caller
// is not a coroutine of l and must wait by itself.
//
// A caller may wait before trying its read when it knows the socket was
// empty after its last read (a request just sent after a whole answer was
// read): readiness that came since then is either still in the epoll set's
// ready list or was recorded when it came; either ends the wait at once.
func (l *Loop) Wait(f *FD, deadline time.Time) error {
	c := l.current()
	if c == nil {
		return ErrNotOnLoop
	}
	if f.reg != l {
		if err := l.register(f); err != nil {
			return err
		}
	}
	fd := f.Sysfd
	if fd < len(l.edges) && l.edges[fd] {
		l.edges[fd] = false
		return nil
	}
	if fd >= len(l.waiters) {
		l.waiters = append(l.waiters, make([]*co, fd+1-len(l.waiters))...)
	}
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if d <= 0 {
			return os.ErrDeadlineExceeded
		}
		l.addTimer(c, l.now()+int64(d))
	}
	l.waiters[fd], c.fd = c, fd
	l.suspend(c)
	if c.why == whyTimer {
		return os.ErrDeadlineExceeded
	}
	return nil
}

// register moves f into l's epoll set (edge-triggered, both directions,
// for good: closing the descriptor takes it out) or ring (a multishot
// poll of the same events, until Forget).
func (l *Loop) register(f *FD) error {
	if old := f.reg; old != nil && !old.closed.Load() {
		if old.ring != nil {
			_ = old.ring.cancel(f.ud)
		} else {
			_ = syscall.EpollCtl(old.epfd, syscall.EPOLL_CTL_DEL, f.Sysfd, nil)
		}
	}
	f.reg = nil
	if l.ring != nil {
		f.ud = l.ring.register(f.Sysfd)
		f.reg = l
		return nil
	}
	ev := syscall.EpollEvent{Events: epollRegistration, Fd: int32(f.Sysfd)}
	err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, f.Sysfd, &ev)
	if err == syscall.EEXIST {
		err = syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_MOD, f.Sysfd, &ev)
	}
	if err != nil {
		return fmt.Errorf("event loop: epoll_ctl: %w", err)
	}
	f.reg = l
	return nil
}

// Sleep waits d on the loop, or until ctx is done; it reports whether the
// full time passed. Called by anything else than a coroutine of l (or on
// a nil loop), it sleeps on a timer of its own.
func (l *Loop) Sleep(ctx context.Context, d time.Duration) bool {
	c := l.current()
	if c == nil {
		return sleepAlone(ctx, d)
	}
	if ctx.Err() != nil {
		return false
	}
	if d <= 0 {
		return true
	}
	l.watch(ctx, c)
	l.addTimer(c, l.now()+int64(d))
	l.suspend(c)
	l.endWatch(c)
	return c.why == whyTimer
}

// WaitFor waits until cond() is true or ctx is done; it reports whether
// cond came true. cond is tried now, then by the loop before each of its
// waits, when poked (Poke) and at least every pollEvery: it must not
// block, and should take what it waits for (a free session) when it
// finds it, since other coroutines try too. Called by anything else than
// a coroutine of l, it polls by itself.
func (l *Loop) WaitFor(ctx context.Context, cond func() bool) bool {
	if cond() {
		return true
	}
	c := l.current()
	if c == nil {
		return pollAlone(ctx, cond)
	}
	if ctx.Err() != nil {
		return false
	}
	l.watch(ctx, c)
	c.cond = cond
	l.polled = append(l.polled, c)
	l.npolled.Store(int32(len(l.polled)))
	l.suspend(c)
	c.cond = nil
	l.endWatch(c)
	return c.why == whyCond
}

func (l *Loop) checkPolled() {
	k := 0
	for _, c := range l.polled {
		if c.cond() {
			l.wake(c, whyCond)
			continue
		}
		l.polled[k] = c
		k++
	}
	clear(l.polled[k:])
	l.polled = l.polled[:k]
	l.npolled.Store(int32(k))
}

// watch makes ctx's cancellation end c's wait. The loop watches the few
// contexts its coroutines share (a run's) for good, so that a wait
// allocates nothing.
func (l *Loop) watch(ctx context.Context, c *co) {
	c.ctx = ctx
	done := ctx.Done()
	if done == nil {
		return
	}
	if _, ok := l.watched[done]; ok {
		return
	}
	if len(l.watched) < maxWatched {
		l.watched[done] = context.AfterFunc(ctx, l.onCancel)
		return
	}
	c.unwatch = context.AfterFunc(ctx, l.onCancel)
}

func (l *Loop) endWatch(c *co) {
	if c.unwatch != nil {
		c.unwatch()
		c.unwatch = nil
	}
	c.ctx = nil
}

// cancelWaits ends the sleeps and condition waits whose context is done,
// and forgets the contexts that are.
func (l *Loop) cancelWaits() {
	var done []*co
	for _, c := range l.timers {
		if c.ctx != nil && c.ctx.Err() != nil {
			done = append(done, c)
		}
	}
	for _, c := range done {
		l.delTimer(c)
		l.wake(c, whyCancel)
	}
	k := 0
	for _, c := range l.polled {
		if c.ctx != nil && c.ctx.Err() != nil {
			l.wake(c, whyCancel)
			continue
		}
		l.polled[k] = c
		k++
	}
	clear(l.polled[k:])
	l.polled = l.polled[:k]
	l.npolled.Store(int32(k))
	for ch := range l.watched {
		select {
		case <-ch:
			delete(l.watched, ch)
		default:
		}
	}
}

// The timer heap, ordered by when; each coroutine knows its index.

func (l *Loop) addTimer(c *co, when int64) {
	c.when, c.timer = when, len(l.timers)
	l.timers = append(l.timers, c)
	l.up(c.timer)
}

func (l *Loop) delTimer(c *co) {
	i := c.timer
	if i < 0 {
		return
	}
	last := len(l.timers) - 1
	if i != last {
		l.swap(i, last)
	}
	l.timers[last] = nil
	l.timers = l.timers[:last]
	c.timer = -1
	if i != last {
		l.down(i)
		l.up(i)
	}
}

func (l *Loop) swap(i, j int) {
	l.timers[i], l.timers[j] = l.timers[j], l.timers[i]
	l.timers[i].timer, l.timers[j].timer = i, j
}

func (l *Loop) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if l.timers[p].when <= l.timers[i].when {
			return
		}
		l.swap(i, p)
		i = p
	}
}

func (l *Loop) down(i int) {
	n := len(l.timers)
	for {
		m := i
		if a := 2*i + 1; a < n && l.timers[a].when < l.timers[m].when {
			m = a
		}
		if b := 2*i + 2; b < n && l.timers[b].when < l.timers[m].when {
			m = b
		}
		if m == i {
			return
		}
		l.swap(i, m)
		i = m
	}
}
