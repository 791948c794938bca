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
func BlockingConn(nc net.Conn) (net.Conn, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nc, nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("blocking io: %w", err)
	}
	fd := -1
	var dupErr error
	if err := raw.Control(func(s uintptr) {
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
	b := &blockingConn{fd: fd, local: nc.LocalAddr(), remote: nc.RemoteAddr()}
	_ = nc.Close() // the duplicate keeps the socket open
	return b, nil
}

type blockingConn struct {
	fd            int
	local, remote net.Addr
	mu            sync.Mutex // guards closed against Close racing a deadline
	closed        bool
	shut          bool // shut down by a deadline in the past
	// The descriptor is closed only when no read or write is using it, so
	// that a call racing Close can never touch a descriptor the process
	// has reused for something else.
	inflight  atomic.Int32
	closing   atomic.Bool
	closeOnce sync.Once
}

// acquire marks an I/O call in flight; false when the connection is closed.
func (c *blockingConn) acquire() bool {
	c.inflight.Add(1)
	if c.closing.Load() {
		c.release()
		return false
	}
	return true
}

func (c *blockingConn) release() {
	if c.inflight.Add(-1) == 0 && c.closing.Load() {
		c.closeFD()
	}
}

func (c *blockingConn) closeFD() { c.closeOnce.Do(func() { _ = syscall.Close(c.fd) }) }

var errDeadline = os.ErrDeadlineExceeded

func (c *blockingConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if !c.acquire() {
		return 0, net.ErrClosed
	}
	defer c.release()
	for {
		n, err := syscall.Read(c.fd, p)
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
	if !c.acquire() {
		return 0, net.ErrClosed
	}
	defer c.release()
	done := 0
	for done < len(p) {
		n, err := syscall.Write(c.fd, p[done:])
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
	return &net.OpError{Op: op, Net: c.remote.Network(), Source: c.local, Addr: c.remote, Err: os.NewSyscallError(op, err)}
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
	c.closing.Store(true)
	// Shut down first so that a call blocked on another thread returns;
	// the last call out closes the descriptor.
	_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	if c.inflight.Load() == 0 {
		c.closeFD()
	}
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
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	return syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, opt, &tv)
}

// IOOption reads the "io" URL option shared by the server databases and
// removes it from q: "blocking" (the default: BlockingConn) or "poller"
// (Go's network poller, for comparison).
func IOOption(q map[string][]string, dbName string) (blocking bool, err error) {
	v, ok := q["io"]
	if !ok {
		return true, nil
	}
	delete(q, "io")
	switch {
	case len(v) == 1 && v[0] == "blocking":
		return true, nil
	case len(v) == 1 && v[0] == "poller":
		return false, nil
	}
	return false, fmt.Errorf("%s URL: bad value %q for io: use blocking or poller", dbName, strings.Join(v, ","))
}
