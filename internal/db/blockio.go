package db

import (
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/sledge-bench/sledge/internal/evloop"
)

// BlockingConn turns a dialed TCP or unix connection into one that reads
// and writes with blocking system calls on its own descriptor, the way
// libpq and libmysqlclient do, instead of through Go's network poller.
//
// Why: a virtual user does one request and waits for one answer. Through
// the poller each wait is a failed read, a park of the goroutine, an
// epoll wake-up, a hand-over to a thread and a second read; the runtime's
// scheduler work around it costs about as much client CPU as the system
// calls themselves (docs/benchmarks.md, "pgbench"). A blocking read lets
// the kernel wake the waiting thread directly. Each VU then holds a thread
// while it waits, which is what the benchmark wants anyway.
//
// Deadlines: a deadline in the past (how drivers interrupt a call when its
// context is cancelled) shuts the socket down, which ends a blocked call
// at once; the connection is unusable afterwards, which the drivers
// expect after an interrupted call. A future deadline becomes the socket's
// SO_RCVTIMEO/SO_SNDTIMEO.
func BlockingConn(nc net.Conn) (net.Conn, error) { return newBlockingConn(nc, rawIO.Load()) }

func newBlockingConn(nc net.Conn, raw bool) (net.Conn, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nc, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("blocking io: %w", err)
	}
	fd := -1
	var dupErr error
	if err := rc.Control(func(s uintptr) {
		fd, dupErr = syscall.Dup(int(s))
	}); err != nil {
		return nil, fmt.Errorf("blocking io: %w", err)
	}
	if dupErr != nil {
		return nil, fmt.Errorf("blocking io: dup: %w", dupErr)
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("blocking io: %w", err)
	}
	b := &blockingConn{fd: fd, local: nc.LocalAddr(), remote: nc.RemoteAddr(), raw: raw}
	b.g.fd = fd
	if b.raw {
		if err := b.setTimeouts(rawSlice, rawSlice); err != nil {
			syscall.Close(fd)
			return nil, fmt.Errorf("blocking io: %w", err)
		}
	}
	_ = nc.Close() // the duplicate keeps the socket open
	return b, nil
}

// rawIO makes new connections wait in raw system calls (SetRawIO).
var rawIO atomic.Bool

// SetRawIO makes the connections BlockingConn makes from now on read and
// write with raw system calls, which do not tell Go's scheduler that the
// thread is blocked: no hand-off of the processor, no wake-up of the
// runtime's monitor thread. Only right when every thread that waits this
// way has a processor of its own (GOMAXPROCS above the number of
// connections waiting at once), or the others would wait for a time slice.
// A raw wait lasts at most rawSlice; a longer one continues as an ordinary
// system call, so a garbage collection's stop of the world, which cannot
// interrupt a raw call, waits at most that long.
func SetRawIO(on bool) { rawIO.Store(on) }

// rawSlice bounds one raw wait (SO_RCVTIMEO/SO_SNDTIMEO while raw).
const rawSlice = 2 * time.Millisecond

func (c *blockingConn) setTimeouts(rd, wr time.Duration) error {
	tv := syscall.NsecToTimeval(rd.Nanoseconds())
	if err := syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		return err
	}
	tv = syscall.NsecToTimeval(wr.Nanoseconds())
	return syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv)
}

func rawRead(fd int, p []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), e
}

func rawWrite(fd int, p []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), e
}

// slow waits in an ordinary system call, for as long as the deadline
// allows (none: without limit), after a raw wait ran out of its slice.
func (c *blockingConn) slow(p []byte, opt int, call func(int, []byte) (int, error)) (int, error) {
	c.mu.Lock()
	dl := c.rdl
	if opt == syscall.SO_SNDTIMEO {
		dl = c.wdl
	}
	c.mu.Unlock()
	var d time.Duration
	if !dl.IsZero() {
		if d = time.Until(dl); d <= 0 {
			return 0, syscall.EAGAIN
		}
	}
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	_ = syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, opt, &tv)
	n, err := call(c.fd, p)
	tv = syscall.NsecToTimeval(rawSlice.Nanoseconds())
	_ = syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, opt, &tv)
	return n, err
}

type blockingConn struct {
	fd            int
	raw           bool      // raw waits of at most rawSlice (SetRawIO)
	rdl, wdl      time.Time // deadlines, kept here when raw
	local, remote net.Addr
	mu            sync.Mutex // guards closed against Close racing a deadline
	closed        bool
	shut          bool // shut down by a deadline in the past
	g             fdGuard
}

// fdGuard closes a connection's descriptor only when no read or write is
// using it, so that a call racing Close can never touch a descriptor the
// process has reused for something else (blockingConn, loopConn).
type fdGuard struct {
	fd        int
	inflight  atomic.Int32
	closing   atomic.Bool
	closeOnce sync.Once
	// forget, when set, runs just before the descriptor is closed
	// (loopConn: an io_uring poll would hold the socket open).
	forget func()
}

// acquire marks an I/O call in flight; false when the connection is closed.
func (g *fdGuard) acquire() bool {
	g.inflight.Add(1)
	if g.closing.Load() {
		g.release()
		return false
	}
	return true
}

func (g *fdGuard) release() {
	if g.inflight.Add(-1) == 0 && g.closing.Load() {
		g.closeFD()
	}
}

// close shuts the socket down first, so that a call blocked on it (on
// another thread, on a loop or in poll) returns; the last call out
// closes the descriptor.
func (g *fdGuard) close() {
	g.closing.Store(true)
	_ = syscall.Shutdown(g.fd, syscall.SHUT_RDWR)
	if g.inflight.Load() == 0 {
		g.closeFD()
	}
}

func (g *fdGuard) closeFD() {
	g.closeOnce.Do(func() {
		if g.forget != nil {
			g.forget()
		}
		_ = syscall.Close(g.fd)
	})
}

var errDeadline = os.ErrDeadlineExceeded

func (c *blockingConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if !c.g.acquire() {
		return 0, net.ErrClosed
	}
	defer c.g.release()
	for {
		var n int
		var err error
		if c.raw {
			var e syscall.Errno
			if n, e = rawRead(c.fd, p); e == syscall.EAGAIN || e == syscall.EINTR {
				n, err = c.slow(p, syscall.SO_RCVTIMEO, syscall.Read)
			} else if e != 0 {
				n, err = 0, e
			}
		} else {
			n, err = syscall.Read(c.fd, p)
		}
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
			return 0, errDeadline // SO_RCVTIMEO ran out
		case err != nil:
			return 0, c.mapErr("read", err)
		case n == 0:
			if c.isShut() {
				return 0, errDeadline
			}
			return 0, io.EOF
		}
		return n, nil
	}
}

func (c *blockingConn) Write(p []byte) (int, error) {
	if !c.g.acquire() {
		return 0, net.ErrClosed
	}
	defer c.g.release()
	done := 0
	for done < len(p) {
		var n int
		var err error
		if c.raw {
			var e syscall.Errno
			if n, e = rawWrite(c.fd, p[done:]); e == syscall.EAGAIN || e == syscall.EINTR {
				n, err = c.slow(p[done:], syscall.SO_SNDTIMEO, syscall.Write)
			} else if e != 0 {
				n, err = 0, e
			}
		} else {
			n, err = syscall.Write(c.fd, p[done:])
		}
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
			return done, errDeadline
		case err != nil:
			return done, c.mapErr("write", err)
		}
		done += n
	}
	return done, nil
}

func (c *blockingConn) mapErr(op string, err error) error {
	if c.isShut() {
		return errDeadline
	}
	return netOpError(op, c.local, c.remote, err)
}

// netOpError is a failed system call on a connection as the net package
// reports one (blockingConn, loopConn).
func netOpError(op string, local, remote net.Addr, err error) error {
	return &net.OpError{Op: op, Net: remote.Network(), Source: local, Addr: remote, Err: os.NewSyscallError(op, err)}
}

func (c *blockingConn) isShut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.shut
}

func (c *blockingConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.g.close()
	return nil
}

func (c *blockingConn) LocalAddr() net.Addr  { return c.local }
func (c *blockingConn) RemoteAddr() net.Addr { return c.remote }

func (c *blockingConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

func (c *blockingConn) SetReadDeadline(t time.Time) error {
	return c.setDeadline(t, syscall.SO_RCVTIMEO)
}

func (c *blockingConn) SetWriteDeadline(t time.Time) error {
	return c.setDeadline(t, syscall.SO_SNDTIMEO)
}

func (c *blockingConn) setDeadline(t time.Time, opt int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return net.ErrClosed
	}
	var d time.Duration
	if !t.IsZero() {
		d = time.Until(t)
		if d <= 0 {
			// Interrupt: end any blocked call now.
			c.shut = true
			return syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
		}
	}
	if c.raw {
		// The slice stays the socket's timeout; slow applies the rest.
		if opt == syscall.SO_RCVTIMEO {
			c.rdl = t
		} else {
			c.wdl = t
		}
		return nil
	}
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	return syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, opt, &tv)
}

// IOMode is how a server database's virtual-user connections wait for
// the server: the "io" URL option.
type IOMode int

const (
	// IOBlocking (io=blocking, the default): blocking system calls on the
	// connection's own descriptor (BlockingConn), raw ones when the run
	// allows it (SetRawIO).
	IOBlocking IOMode = iota
	// IOSyscall (io=syscall): blocking system calls, never raw.
	IOSyscall
	// IOPoller (io=poller): Go's network poller, for comparison.
	IOPoller
	// IOLoop (io=loop): non-blocking descriptors whose waits go to the
	// event loop of the virtual user calling (LoopConn, internal/evloop):
	// several connections per thread, as pgbench's threads.
	IOLoop
)

// Wrap gives a dialed connection the mode's way of waiting.
func (m IOMode) Wrap(nc net.Conn) (net.Conn, error) {
	switch m {
	case IOPoller:
		return nc, nil
	case IOSyscall:
		return newBlockingConn(nc, false)
	case IOLoop:
		return LoopConn(nc)
	}
	return BlockingConn(nc)
}

// IOOption reads the "io" URL option shared by the server databases and
// removes it from q: blocking (the default), syscall, poller or loop
// (IOMode). It checks and removes "loopwait" too (LoopWaitOption), which
// only io=loop takes.
func IOOption(q map[string][]string, dbName string) (IOMode, error) {
	m, err := ioOption(q, dbName)
	if err != nil {
		return 0, err
	}
	if _, ok := q["loopwait"]; ok && m != IOLoop {
		return 0, fmt.Errorf("%s URL: loopwait is for io=loop only", dbName)
	}
	if _, err := LoopWaitOption(q, dbName); err != nil {
		return 0, err
	}
	return m, nil
}

// LoopWaitOption reads the "loopwait" URL option (how io=loop's event
// loops wait: epoll or io_uring; none: evloop.WaitDefault) and removes
// it from q.
func LoopWaitOption(q map[string][]string, dbName string) (evloop.WaitKind, error) {
	v, ok := q["loopwait"]
	if !ok {
		return evloop.WaitDefault, nil
	}
	delete(q, "loopwait")
	if len(v) == 1 {
		if k, err := evloop.ParseWaitKind(v[0]); err == nil {
			return k, nil
		}
	}
	return 0, fmt.Errorf("%s URL: bad value %q for loopwait: use epoll or io_uring", dbName, strings.Join(v, ","))
}

func ioOption(q map[string][]string, dbName string) (IOMode, error) {
	v, ok := q["io"]
	if !ok {
		return IOBlocking, nil
	}
	delete(q, "io")
	if len(v) == 1 {
		switch v[0] {
		case "blocking":
			return IOBlocking, nil
		case "syscall":
			return IOSyscall, nil
		case "poller":
			return IOPoller, nil
		case "loop":
			return IOLoop, nil
		}
	}
	return 0, fmt.Errorf("%s URL: bad value %q for io: use blocking, syscall, poller or loop", dbName, strings.Join(v, ","))
}
