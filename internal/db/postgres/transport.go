package postgres

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/sledge-bench/sledge/internal/db"
)

// Transport follows libpq: a host that starts with a slash is a socket
// directory, and no host at all means the default socket.
func (driver) Transport(u *url.URL) string {
	h := u.Query().Get("host")
	if h == "" {
		h = u.Hostname()
	}
	if h == "" || strings.HasPrefix(h, "/") {
		return "unix"
	}
	return "tcp"
}

// UnixURL puts the socket directory in host=, and the port in port=: it
// names the socket file.
func (driver) UnixURL(u *url.URL, socket string) *url.URL {
	v := *u
	q := v.Query()
	q.Set("host", socket)
	if p := v.Port(); p != "" && q.Get("port") == "" {
		q.Set("port", p)
	}
	v.Host = ""
	v.RawQuery = q.Encode()
	return &v
}

// TCPURL keeps a port= the socket URL named; else 5432.
func (driver) TCPURL(u *url.URL, host string, port int) *url.URL {
	p := strconv.Itoa(port)
	if port == 0 {
		p = "5432"
		if qp := u.Query().Get("port"); qp != "" {
			p = qp
		}
	}
	return db.OverTCP(u, host, p)
}

var _ db.Transporter = driver{}
