//go:build linux

package evloop

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// The loop's io_uring wait (WaitIOUring): readiness through the ring, as
// the epoll wait has it. Each socket has one multishot IORING_OP_POLL_ADD
// (both directions and the peer's shutdown, like the epoll registration);
// a wait is one io_uring_enter that submits what was queued and waits for
// one completion or the timeout (IORING_ENTER_EXT_ARG). A wait that finds
// completions already in the ring makes no system call at all.
//
// A hand-written ring rather than a library: the wait must begin with a
// raw system call (as epoll's does, rawSlice) and the loop needs only
// setup, enter and one register call; the Go libraries on the module
// proxy make every enter an ordinary system call.

const (
	sysIOUringSetup    = 425 // the same number on every architecture
	sysIOUringEnter    = 426
	sysIOUringRegister = 427

	ringEntries   = 256  // submission queue: one entry per socket registered, rarely more than a few per wait
	ringCQEntries = 4096 // completions: a wake-up per socket per event until the loop reaps them

	setupCQSize        = 1 << 3
	setupCoopTaskrun   = 1 << 8 // completions wait for the loop's next enter instead of interrupting its thread
	setupTaskrunFlag   = 1 << 9 // ...and say so in the SQ ring's flags
	featSingleMmap     = 1 << 0
	featNoDrop         = 1 << 1
	featExtArg         = 1 << 8
	offSQRing          = 0
	offCQRing          = 0x8000000
	offSQEs            = 0x10000000
	opPollAdd          = 6
	pollAddMulti       = 1 // sqe.len: IORING_POLL_ADD_MULTI
	cqeFMore           = 1 << 1
	enterGetEvents     = 1 << 0
	enterExtArg        = 1 << 3
	sqNeedEnter        = 1<<1 | 1<<2 // IORING_SQ_CQ_OVERFLOW, IORING_SQ_TASKRUN
	registerSyncCancel = 24

	// poll(2) events of a registration: in, out, the peer's shutdown
	// (errors and hang-ups come always).
	ringPollEvents = 0x1 | 0x4 | 0x2000

	udWake = 1 << 63 // the eventfd's poll; a socket's is gen<<32 | fd
)

type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  struct {
		head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
		userAddr                                                        uint64
	}
	cqOff struct {
		head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
		userAddr                                                        uint64
	}
}

type uringSQE struct {
	opcode, flags uint8
	ioprio        uint16
	fd            int32
	off, addr     uint64
	len, opFlags  uint32
	userData      uint64
	pad           [3]uint64
}

type uringCQE struct {
	userData uint64
	res      int32
	flags    uint32
}

type getEventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	minWait   uint32
	ts        uint64
}

type syncCancelReg struct {
	addr    uint64
	fd      int32
	flags   uint32
	timeout syscall.Timespec
	opcode  uint8
	pad     [7]uint8
	pad2    [3]uint64
}

// uring is one loop's ring. Everything but cancel runs on the loop's
// thread.
type uring struct {
	fd             int
	sqMem, cqMem   []byte
	sqeMem         []byte
	sqHead, sqTail *uint32
	sqMask         uint32
	sqFlags        *uint32
	sqArray        []uint32
	sqes           []uringSQE
	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []uringCQE
	queued         uint32 // SQEs written since the last enter

	// The wait's argument and timeout, here so that the kernel reads
	// memory that stays put (no Go pointer is handed over as an integer).
	arg getEventsArg
	ts  syscall.Timespec

	// regs[fd]: the user data of fd's live poll in this ring, 0: none.
	regs []uint64
	gen  uint32

	// mu guards fd against cancel (other threads) racing close.
	mu     sync.RWMutex
	closed bool
}

// refuseIOUring, when set, makes io_uring_setup fail as a seccomp filter
// would (tests: the fallback to epoll).
var refuseIOUring atomic.Bool

// RefuseIOUring makes the loops made from now on find io_uring_setup
// refused (EPERM, as a seccomp filter refuses it) when on: for tests of
// the fallback to epoll in the packages that run loops.
func RefuseIOUring(on bool) { refuseIOUring.Store(on) }

// newUring sets a ring up; an error says why the loop waits on epoll.
func newUring() (*uring, error) {
	if refuseIOUring.Load() {
		return nil, fmt.Errorf("io_uring_setup: %w", syscall.EPERM)
	}
	var p uringParams
	p.flags = setupCQSize | setupCoopTaskrun | setupTaskrunFlag
	p.cqEntries = ringCQEntries
	r, _, e := syscall.Syscall(sysIOUringSetup, ringEntries, uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		return nil, fmt.Errorf("io_uring_setup: %w", e)
	}
	u := &uring{fd: int(r)}
	if err := u.mapRings(&p); err != nil {
		u.close()
		return nil, err
	}
	// The sockets' registrations leave a ring by IORING_REGISTER_SYNC_CANCEL
	// (kernel 6.0), from whichever thread closes or moves them: a probe
	// for nothing finds nothing where it exists.
	if err := u.cancel(1); err != nil && !errors.Is(err, syscall.ENOENT) {
		u.close()
		return nil, fmt.Errorf("io_uring sync cancel: %w", err)
	}
	return u, nil
}

func (u *uring) mapRings(p *uringParams) error {
	const need = featSingleMmap | featNoDrop | featExtArg
	if p.features&need != need {
		return fmt.Errorf("io_uring: kernel lacks features %#x", need&^p.features)
	}
	sqSize := int(p.sqOff.array + p.sqEntries*4)
	cqSize := int(p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(uringCQE{})))
	size := max(sqSize, cqSize)
	mem, err := syscall.Mmap(u.fd, offSQRing, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("io_uring: mmap rings: %w", err)
	}
	u.sqMem, u.cqMem = mem, mem // one mapping (IORING_FEAT_SINGLE_MMAP)
	sqes, err := syscall.Mmap(u.fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(uringSQE{})),
		syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("io_uring: mmap entries: %w", err)
	}
	u.sqeMem = sqes
	at := func(off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }
	u.sqHead, u.sqTail, u.sqFlags = at(p.sqOff.head), at(p.sqOff.tail), at(p.sqOff.flags)
	u.sqMask = *at(p.sqOff.ringMask)
	u.sqArray = unsafe.Slice(at(p.sqOff.array), p.sqEntries)
	u.sqes = unsafe.Slice((*uringSQE)(unsafe.Pointer(&sqes[0])), p.sqEntries)
	u.cqHead, u.cqTail = at(p.cqOff.head), at(p.cqOff.tail)
	u.cqMask = *at(p.cqOff.ringMask)
	u.cqes = unsafe.Slice((*uringCQE)(unsafe.Pointer(&mem[p.cqOff.cqes])), p.cqEntries)
	return nil
}

func (u *uring) close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return
	}
	u.closed = true
	if u.sqeMem != nil {
		_ = syscall.Munmap(u.sqeMem)
	}
	if u.sqMem != nil {
		_ = syscall.Munmap(u.sqMem)
	}
	syscall.Close(u.fd) // ends the ring's polls and lets go of their sockets
}

// poll queues a multishot poll of fd with user data ud; it is submitted
// by the next enter.
func (u *uring) poll(fd int, events uint32, ud uint64) {
	tail := *u.sqTail // only this thread writes it
	if tail-atomic.LoadUint32(u.sqHead) >= uint32(len(u.sqes)) {
		// Full (more sockets registered in one turn than entries): submit
		// what is there first; the kernel (6.0 and later, which newUring
		// requires) takes every entry submitted.
		u.enter(false, 0, false)
	}
	i := tail & u.sqMask
	u.sqes[i] = uringSQE{opcode: opPollAdd, fd: int32(fd), len: pollAddMulti, opFlags: events, userData: ud}
	u.sqArray[i] = i
	atomic.StoreUint32(u.sqTail, tail+1)
	u.queued++
}

// register queues fd's poll under a new user data, which it returns.
func (u *uring) register(fd int) uint64 {
	u.gen = (u.gen + 1) & 0x7fffffff
	if u.gen == 0 {
		u.gen = 1
	}
	ud := uint64(u.gen)<<32 | uint64(uint32(fd))
	if fd >= len(u.regs) {
		u.regs = append(u.regs, make([]uint64, fd+1-len(u.regs))...)
	}
	u.regs[fd] = ud
	u.poll(fd, ringPollEvents, ud)
	return ud
}

// cancel ends the poll with user data ud, from any thread, and returns
// once it has ended (ENOENT: there was none).
func (u *uring) cancel(ud uint64) error {
	u.mu.RLock()
	defer u.mu.RUnlock()
	if u.closed {
		return nil // closing the ring ended its polls
	}
	reg := syncCancelReg{addr: ud, fd: -1, timeout: syscall.Timespec{Sec: -1, Nsec: -1}}
	_, _, e := syscall.Syscall6(sysIOUringRegister, uintptr(u.fd), registerSyncCancel, uintptr(unsafe.Pointer(&reg)), 1, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// enter submits the queued entries and, with wait, waits for a completion
// up to timeout nanoseconds (-1: without limit).
func (u *uring) enter(raw bool, timeout int64, wait bool) {
	call := syscall.Syscall6
	if raw {
		call = syscall.RawSyscall6
	}
	flags := uintptr(enterGetEvents | enterExtArg)
	minComplete := uintptr(0)
	u.arg = getEventsArg{}
	if wait {
		minComplete = 1
		if timeout >= 0 {
			u.ts = syscall.NsecToTimespec(timeout)
			u.arg.ts = uint64(uintptr(unsafe.Pointer(&u.ts)))
		}
	}
	n := u.queued
	_, _, e := call(sysIOUringEnter, uintptr(u.fd), uintptr(n), minComplete, flags,
		uintptr(unsafe.Pointer(&u.arg)), unsafe.Sizeof(u.arg))
	// Any error (EINTR, ETIME: the timeout, EBUSY: completions to reap
	// first) leaves the caller to reap what is there and look again; the
	// entries the kernel did not take stay queued for the next enter.
	_ = e
	u.queued = *u.sqTail - atomic.LoadUint32(u.sqHead)
}

// ready reports whether completions wait in the ring, or work the kernel
// would turn into completions on the next enter.
func (u *uring) ready() bool {
	return atomic.LoadUint32(u.cqTail) != *u.cqHead
}

func (u *uring) needEnter() bool {
	return u.queued > 0 || atomic.LoadUint32(u.sqFlags)&sqNeedEnter != 0
}

// wait is the ring's side of Loop.waitCall: it waits up to timeout
// (0: only looks; -1: without limit) and puts the descriptors that had
// events into l.events; it returns how many.
func (l *Loop) ringWait(raw bool, timeout int64) int {
	u := l.ring
	if !u.ready() {
		if timeout != 0 {
			u.enter(raw, timeout, true)
		} else if u.needEnter() {
			u.enter(raw, 0, false)
		}
	} else if u.queued > 0 {
		u.enter(raw, 0, false)
	}
	return l.reap()
}

// reap takes completions from the ring into l.events, at most a full
// array's worth (the rest stay for the next wait).
func (l *Loop) reap() int {
	u := l.ring
	head, tail := *u.cqHead, atomic.LoadUint32(u.cqTail)
	n := 0
	for head != tail && n < waitEvents {
		c := u.cqes[head&u.cqMask]
		head++
		more := c.flags&cqeFMore != 0
		if c.userData == udWake {
			if !more { // ended (a full completion queue): poll again
				u.poll(l.evfd, 0x1, udWake)
			}
			l.events[n].Fd = int32(l.evfd)
			n++
			continue
		}
		fd := int(uint32(c.userData))
		if fd >= len(u.regs) || u.regs[fd] != c.userData {
			continue // a registration that has since ended or moved
		}
		if !more {
			if c.res == -int32(syscall.ECANCELED) {
				u.regs[fd] = 0 // cancelled from elsewhere: the socket moved or closed
				continue
			}
			u.poll(fd, ringPollEvents, c.userData) // ended by the kernel: the socket is still ours
		}
		l.events[n].Fd = int32(fd)
		n++
	}
	atomic.StoreUint32(u.cqHead, head)
	return n
}
