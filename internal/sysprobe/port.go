package sysprobe

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Port traffic from the sockets' own counters: an inet_diag dump
// (NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY) of the TCP sockets of both
// families with the INET_DIAG_INFO extension, whose struct tcp_info holds
// tcpi_bytes_received and tcpi_bytes_acked. Written on golang.org/x/sys/unix
// (already a dependency) rather than vishvananda/netlink: one request and
// one reply format, about 100 lines, no new module.
//
// The dump sees the sockets of the watching process's network namespace
// (the agent must run in the server's, as a host-network DaemonSet does).

const (
	inetDiagInfo  = 2  // INET_DIAG_INFO
	tcpListen     = 10 // TCP_LISTEN
	sizeofReqV2   = 56 // struct inet_diag_req_v2
	sizeofDiagMsg = 72 // struct inet_diag_msg
)

var (
	offBytesAcked    = int(unsafe.Offsetof(unix.TCPInfo{}.Bytes_acked))
	offBytesReceived = int(unsafe.Offsetof(unix.TCPInfo{}.Bytes_received))
)

// connRec is one connection's counters at its last reading.
type connRec struct {
	in, out uint64
	seen    uint64
}

// portTracker sums the traffic of the connections on a set of local
// ports across readings.
type portTracker struct {
	fd    int
	ports map[uint16]bool
	first int
	conns map[uint64]*connRec // by socket cookie
	gen   uint64
	total Port
	buf   []byte
}

func newPortTracker(ports []int) (*portTracker, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_INET_DIAG)
	if err != nil {
		return nil, fmt.Errorf("inet_diag: open a netlink socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("inet_diag: bind: %w", err)
	}
	t := &portTracker{fd: fd, ports: map[uint16]bool{}, first: ports[0], conns: map[uint64]*connRec{}, buf: make([]byte, 1<<16)}
	for _, p := range ports {
		t.ports[uint16(p)] = true
	}
	// The first reading is the base: connections open now count from
	// here, later ones from zero.
	if _, err := t.dump(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	t.total = Port{Port: t.first}
	if len(ports) > 1 {
		t.total.Ports = append([]int(nil), ports...)
	}
	return t, nil
}

func (t *portTracker) close() { unix.Close(t.fd) }

// read takes a reading and returns the totals since the tracker began.
// A failed dump returns the last totals.
func (t *portTracker) read() Port {
	n, err := t.dump()
	if err == nil {
		t.total.Connections = n
	}
	return t.total
}

// dump reads every TCP socket on the ports, adds what each carried since
// its last reading, and drops (counting them in ClosedLost) those gone.
func (t *portTracker) dump() (int, error) {
	t.gen++
	first := t.gen == 1
	n := 0
	for _, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
		c, err := t.dumpFamily(fam, first)
		if err != nil {
			return 0, err
		}
		n += c
	}
	for k, c := range t.conns {
		if c.seen != t.gen {
			t.total.ClosedLost++
			delete(t.conns, k)
		}
	}
	return n, nil
}

func (t *portTracker) dumpFamily(fam uint8, first bool) (int, error) {
	req := make([]byte, unix.NLMSG_HDRLEN+sizeofReqV2)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(req[8:], uint32(t.gen))
	r := req[unix.NLMSG_HDRLEN:]
	r[0] = fam
	r[1] = unix.IPPROTO_TCP
	r[2] = 1 << (inetDiagInfo - 1)
	ne.PutUint32(r[4:], ^uint32(1<<tcpListen)) // every state but LISTEN
	if err := unix.Sendto(t.fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, fmt.Errorf("inet_diag: send: %w", err)
	}
	count := 0
	for {
		nr, _, err := unix.Recvfrom(t.fd, t.buf, 0)
		if err != nil {
			return 0, fmt.Errorf("inet_diag: receive: %w", err)
		}
		b := t.buf[:nr]
		for len(b) >= unix.NLMSG_HDRLEN {
			l := int(ne.Uint32(b[0:]))
			typ := ne.Uint16(b[4:])
			if l < unix.NLMSG_HDRLEN || l > len(b) {
				return 0, fmt.Errorf("inet_diag: malformed reply")
			}
			msg := b[unix.NLMSG_HDRLEN:l]
			switch typ {
			case unix.NLMSG_DONE:
				return count, nil
			case unix.NLMSG_ERROR:
				if len(msg) >= 4 {
					if e := int32(ne.Uint32(msg)); e != 0 {
						return 0, fmt.Errorf("inet_diag: %w", unix.Errno(-e))
					}
				}
				return count, nil
			case unix.SOCK_DIAG_BY_FAMILY:
				if t.conn(msg, first) {
					count++
				}
			}
			b = b[min(nlmAlign(l), len(b)):]
		}
	}
}

// conn accounts one inet_diag_msg; it says whether the socket is one of
// the ports'.
func (t *portTracker) conn(m []byte, first bool) bool {
	if len(m) < sizeofDiagMsg {
		return false
	}
	sport := binary.BigEndian.Uint16(m[4:])
	if !t.ports[sport] || m[1] == tcpListen {
		return false
	}
	cookie := binary.NativeEndian.Uint64(m[44:])
	var in, out uint64
	found := false
	for a := m[sizeofDiagMsg:]; len(a) >= 4; {
		al := int(binary.NativeEndian.Uint16(a[0:]))
		at := binary.NativeEndian.Uint16(a[2:])
		if al < 4 || al > len(a) {
			break
		}
		if at == inetDiagInfo {
			info := a[4:al]
			if len(info) >= offBytesReceived+8 {
				out = binary.NativeEndian.Uint64(info[offBytesAcked:])
				in = binary.NativeEndian.Uint64(info[offBytesReceived:])
				found = true
			}
		}
		a = a[min(nlmAlign(al), len(a)):]
	}
	if !found {
		// A socket in TIME_WAIT or without tcp_info: nothing to add; the
		// connection's earlier record, if any, is dropped as closed.
		return true
	}
	c := t.conns[cookie]
	if c == nil {
		c = &connRec{}
		if first {
			c.in, c.out = in, out
		}
		t.conns[cookie] = c
	}
	if in >= c.in && out >= c.out {
		t.total.BytesIn += int64(in - c.in)
		t.total.BytesOut += int64(out - c.out)
	}
	c.in, c.out, c.seen = in, out, t.gen
	return true
}

func nlmAlign(n int) int { return (n + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1) }
