package mysql

import (
	"net/url"
	"strconv"

	"github.com/sledge-bench/sledge/internal/db"
)

// Transport: socket= names a unix socket file; anything else is TCP.
func (driver) Transport(u *url.URL) string {
	if u.Query().Get("socket") != "" {
		return "unix"
	}
	return "tcp"
}

// UnixURL puts the socket file in socket=.
func (driver) UnixURL(u *url.URL, socket string) *url.URL {
	v := *u
	q := v.Query()
	q.Set("socket", socket)
	v.Host = ""
	v.RawQuery = q.Encode()
	return &v
}

// TCPURL is u to host:port, 3306 by default.
func (driver) TCPURL(u *url.URL, host string, port int) *url.URL {
	p := strconv.Itoa(port)
	if port == 0 {
		p = "3306"
	}
	return db.OverTCP(u, host, p)
}

var _ db.Transporter = driver{}
