//go:build linux

package db

import (
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/sledge-bench/sledge/internal/evloop"
)

// LoopConn turns a dialed TCP or unix connection into one on a
// non-blocking descriptor of its own whose reads and writes, when they
// would block, wait on the event loop bound to it (evloop.Bind: the loop
// of the virtual user making the call), and without one block the thread
// in poll(2). Reads and writes themselves are raw system calls: on a
// non-blocking descriptor they never block.
//
// Deadlines work as BlockingConn's: one in the past shuts the socket down,
// which wakes a wait at once (on a loop: the shutdown is an event);
// a future one bounds each wait.
func LoopConn(nc net.Conn) (net.Conn, error) {
	fd, err := dupFD(nc)
	if err != nil {
		return nil, fmt.Errorf("loop io: %w", err)
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("loop io: %w", err)
	}
	c := &loopConn{fd: evloop.FD{Sysfd: fd}, local: nc.LocalAddr(), remote: nc.RemoteAddr()}
	c.g.fd = fd
	c.g.forget = c.fd.Forget
	_ = nc.Close() // the duplicate keeps the socket open
	return c, nil
}

// dupFD duplicates nc's descriptor.
func dupFD(nc net.Conn) (int, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1, fmt.Errorf("%T has no descriptor", nc)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var dupErr error
	if err := rc.Control(func(s uintptr) { fd, dupErr = syscall.Dup(int(s)) }); err != nil {
		return -1, err
	}
	if dupErr != nil {
		return -1, fmt.Errorf("dup: %w", dupErr)
	}
	syscall.CloseOnExec(fd)
	return fd, nil
}

type loopConn struct {
	fd       evloop.FD // its loop registration belongs to the caller of the moment
	loop     atomic.Pointer[evloop.Loop]
	rdl, wdl atomic.Int64 // deadlines, UnixNano; 0: none
	shut     atomic.Bool  // shut down by a deadline in the past
	// drained: the last read left the socket empty (it returned less than
	// asked); waitFirst: a request was written since, so the next read
	// waits on the loop before trying (it would only see EAGAIN).
	drained, waitFirst atomic.Bool
	local, remote      net.Addr
	mu                 sync.Mutex
	closed             bool
	g                  fdGuard
}

// BindLoop makes the connection's waits go to l (nil: block the thread).
func (c *loopConn) BindLoop(l *evloop.Loop) {
	if c.loop.Load() != l {
		c.loop.Store(l)
	}
}

func (c *loopConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if !c.g.acquire() {
		return 0, net.ErrClosed
	}
	defer c.g.release()
	if c.waitFirst.Load() {
		c.waitFirst.Store(false)
		if l := c.loop.Load(); l != nil {
			if err := c.waitLoop(l, &c.rdl); err != nil {
				return 0, err
			}
		}
	}
	for {
		n, e := rawRead(c.fd.Sysfd, p)
		switch {
		case e == 0 && n > 0:
			c.drained.Store(n < len(p))
			return n, nil
		case e == 0:
			if c.shut.Load() {
				return 0, errDeadline
			}
			return 0, io.EOF
		case e == syscall.EINTR:
			continue
		case e != syscall.EAGAIN:
			return 0, c.mapErr("read", e)
		}
		c.drained.Store(true)
		if err := c.wait(&c.rdl, pollIn); err != nil {
			return 0, err
		}
	}
}

func (c *loopConn) Write(p []byte) (int, error) {
	if !c.g.acquire() {
		return 0, net.ErrClosed
	}
	defer c.g.release()
	done := 0
	for done < len(p) {
		n, e := rawWrite(c.fd.Sysfd, p[done:])
		switch {
		case e == 0:
			done += n
			continue
		case e == syscall.EINTR:
			continue
		case e != syscall.EAGAIN:
			return done, c.mapErr("write", e)
		}
		if err := c.wait(&c.wdl, pollOut); err != nil {
			return done, err
		}
	}
	if c.drained.Load() {
		c.waitFirst.Store(true)
	}
	return done, nil
}

// waitLoop waits on l before a read that would find nothing yet; off the
// loop it returns at once (the read then polls as usual).
func (c *loopConn) waitLoop(l *evloop.Loop, deadline *atomic.Int64) error {
	if c.shut.Load() {
		return errDeadline
	}
	var dl time.Time
	if ns := deadline.Load(); ns != 0 {
		dl = time.Unix(0, ns)
	}
	if err := l.Wait(&c.fd, dl); err != evloop.ErrNotOnLoop {
		return err
	}
	return nil
}

// wait waits until the descriptor may be ready: on the bound loop when
// the caller is one of its coroutines, else in poll(2).
func (c *loopConn) wait(deadline *atomic.Int64, events int16) error {
	if c.shut.Load() {
		return errDeadline
	}
	var dl time.Time
	if ns := deadline.Load(); ns != 0 {
		dl = time.Unix(0, ns)
	}
	if l := c.loop.Load(); l != nil {
		if err := l.Wait(&c.fd, dl); err != evloop.ErrNotOnLoop {
			return err
		}
	}
	return pollFD(c.fd.Sysfd, events, dl)
}

// pollFD blocks the thread in ppoll(2) until fd has one of events, or dl
// (zero: none) passed.
func pollFD(fd int, events int16, dl time.Time) error {
	type pollFd struct {
		fd             int32
		events, revent int16
	}
	for {
		pfd := pollFd{fd: int32(fd), events: events}
		var tsp uintptr
		var ts syscall.Timespec
		if !dl.IsZero() {
			d := time.Until(dl)
			if d <= 0 {
				return errDeadline
			}
			ts = syscall.NsecToTimespec(int64(d))
			tsp = uintptr(unsafe.Pointer(&ts))
		}
		n, _, e := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, tsp, 0, 0, 0)
		switch {
		case e == syscall.EINTR:
			continue
		case e != 0:
			return fmt.Errorf("poll: %w", e)
		case n == 0:
			return errDeadline
		}
		return nil
	}
}

func (c *loopConn) mapErr(op string, err error) error {
	if c.shut.Load() {
		return errDeadline
	}
	return netOpError(op, c.local, c.remote, err)
}

func (c *loopConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	// The last call out takes the descriptor out of its loop (epoll's
	// set lets go at the close by itself, an io_uring's poll does not)
	// and closes it.
	c.g.close()
	return nil
}

func (c *loopConn) LocalAddr() net.Addr  { return c.local }
func (c *loopConn) RemoteAddr() net.Addr { return c.remote }

func (c *loopConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

func (c *loopConn) SetReadDeadline(t time.Time) error  { return c.setDeadline(t, &c.rdl) }
func (c *loopConn) SetWriteDeadline(t time.Time) error { return c.setDeadline(t, &c.wdl) }

func (c *loopConn) setDeadline(t time.Time, dl *atomic.Int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return net.ErrClosed
	}
	if t.IsZero() {
		dl.Store(0)
		return nil
	}
	if time.Until(t) <= 0 {
		// Interrupt: end any wait now.
		c.shut.Store(true)
		return syscall.Shutdown(c.fd.Sysfd, syscall.SHUT_RDWR)
	}
	dl.Store(t.UnixNano())
	return nil
}

// poll(2)'s events (the syscall package has no names for them).
const (
	pollIn  = 0x1
	pollOut = 0x4
)
