package db

import (
	"context"
	"net"
	"strings"
)

// The server's side of the cost per transaction (docs/cost.md, "Server
// side"): what the database itself counts (statements, plans, where
// sessions wait). The server's processes are read by internal/sysprobe,
// in-process or through sledge agent (internal/runner's ServerCost).

// ServerSessioner is a virtual user's connection that can name its server
// session: PostgreSQL's backend PID, MariaDB's connection id.
type ServerSessioner interface {
	ServerSession(ctx context.Context) (int64, error)
}

// ServerCoster is a database that can tell its side of the cost.
type ServerCoster interface {
	// OpenServerProbe opens a connection of its own for reading the
	// server's figures during a run. Everything it sends carries
	// ProbeMarker, so that the server's statement counts can leave it out.
	OpenServerProbe(ctx context.Context) (ServerProbe, error)
}

// ProbeMarker is in the text of every statement a ServerProbe sends.
const ProbeMarker = "sledge-server-cost"

// ServerProbe reads one server's figures.
type ServerProbe interface {
	// Host is where the server is reached, for the locality decision: a
	// host name or address, or a unix socket path.
	Host() string
	// Counters reads the server's own counters: statements, parses,
	// plans and the database's activity counters.
	Counters(ctx context.Context) (ServerCounters, error)
	// Sample says what each of the given sessions is doing now, and lists
	// the server's processes whose CPU is to be read when it is local.
	Sample(ctx context.Context, sessions []int64) (WaitSample, []ServerProcess, error)
	// Sent is how many statements the probe has sent so far, its own
	// readings included: a server count that cannot leave them out by
	// their text (MariaDB's Questions) has them subtracted.
	Sent() int64
	// WaitSource names where Sample's classification comes from, and
	// what it cannot tell apart.
	WaitSource() string
	Close() error
}

// ServerCounters are cumulative counts; Sources names where each figure
// comes from and Missing says why a figure the summary shows is not there.
// Figures are "statements", "parses", "plans" and, under their own names,
// the database's activity counters ("pg_stat_database.blks_hit").
type ServerCounters struct {
	Values  map[string]int64
	Sources map[string]string
	Missing map[string]string
	// OwnExcluded is true when the statements figure already leaves the
	// probe's own statements out (by their text); otherwise Sent() is
	// subtracted.
	OwnExcluded bool
}

// WaitSample counts sessions by what they were doing at one instant.
type WaitSample struct {
	CPU    int // running: active, no wait event
	Client int // waiting for the client: idle, ClientRead, Sleep
	Lock   int // heavyweight or lightweight locks, row locks
	IO     int // waiting for disk
	Other  int // anything else (IPC, timeouts, extensions…)
}

// Sessions is how many sessions the sample saw.
func (w WaitSample) Sessions() int { return w.CPU + w.Client + w.Lock + w.IO + w.Other }

// ServerProcess is one of the server's processes.
type ServerProcess struct {
	PID  int
	Role string // "backend", "background", "postmaster", "server"
	// Threads: context switches are summed over /proc/<pid>/task/*
	// (MariaDB: one process, a thread per connection).
	Threads bool
}

// IsLoopbackHost reports whether host names this machine: a unix socket
// path, localhost, or a loopback address.
func IsLoopbackHost(host string) bool {
	host = strings.Trim(host, "[]")
	switch {
	case host == "":
		return true // drivers use the default unix socket then
	case strings.HasPrefix(host, "/") || strings.HasPrefix(host, "@"):
		return true // a unix socket (an abstract one starts with @)
	case strings.EqualFold(host, "localhost"):
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
