package sqlite

import (
	"net/url"

	"github.com/sledge-bench/sledge/internal/db"
)

// Transport: SQLite runs in the process; there is no other way to reach it.
func (driver) Transport(*url.URL) string { return "embedded" }

// UnixURL and TCPURL are never asked for an embedded database (compare
// refuses other transports first); they return u unchanged.
func (driver) UnixURL(u *url.URL, _ string) *url.URL { return u }

func (driver) TCPURL(u *url.URL, _ string, _ int) *url.URL { return u }

var _ db.Transporter = driver{}
