package db

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The server's side of the cost per transaction (docs/cost.md, "Server
// side"): the CPU time and context switches of the server's processes,
// read from /proc when the server runs on this machine, and what the
// database itself counts (statements, plans, where sessions wait).

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

// serverComms are the names a server process goes by in /proc/<pid>/comm.
var serverComms = []string{"postgres", "postmaster", "mariadbd", "mysqld"}

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

// ServerLocal decides whether the server process pid can be measured from
// this process: the server is reached on this machine (host), pid is in
// this machine's /proc (procRoot, "/proc" outside tests), and its name
// there is a server's. A server in a container reached through a port on
// loopback has pids of another namespace: the name check keeps a
// stranger's process out. why says what failed, for the summary.
func ServerLocal(procRoot, host string, pid int) (ok bool, why string) {
	if !IsLoopbackHost(host) {
		return false, "server is remote"
	}
	if pid <= 0 {
		return false, "server process not known"
	}
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "comm"))
	if err != nil {
		return false, fmt.Sprintf("server process %d not visible from this process", pid)
	}
	comm := strings.TrimSpace(string(b))
	for _, c := range serverComms {
		if comm == c {
			return true, ""
		}
	}
	return false, fmt.Sprintf("process %d here is %q, not the server (another PID namespace?)", pid, comm)
}

// ProcUsage is what /proc tells of one process: CPU time in clock ticks
// and context switches.
type ProcUsage struct {
	UserTicks, SysTicks int64
	Voluntary, Involun  int64
	Start               int64 // start time, clock ticks after boot
}

// ClockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on
// every Linux architecture sledge builds for (sysconf(_SC_CLK_TCK)).
const ClockTicks = 100

// ReadProc reads /proc/<pid>/stat and status (summed over its threads
// when threads). The process's CPU time includes its threads that have
// exited; context switches of exited threads are lost.
func ReadProc(procRoot string, pid int, threads bool) (ProcUsage, error) {
	dir := filepath.Join(procRoot, strconv.Itoa(pid))
	var u ProcUsage
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return u, fmt.Errorf("read /proc/%d/stat: %w", pid, err)
	}
	// The name in parentheses may hold spaces: fields start after the
	// last ')'. utime is field 14, stime 15, starttime 22 (1-based).
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return u, fmt.Errorf("read /proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return u, fmt.Errorf("read /proc/%d/stat: %d fields", pid, len(f))
	}
	// f[0] is field 3 (state).
	u.UserTicks, _ = strconv.ParseInt(f[11], 10, 64)
	u.SysTicks, _ = strconv.ParseInt(f[12], 10, 64)
	u.Start, _ = strconv.ParseInt(f[19], 10, 64)
	if !threads {
		u.Voluntary, u.Involun, err = readSwitches(filepath.Join(dir, "status"))
		if err != nil {
			return u, fmt.Errorf("read /proc/%d/status: %w", pid, err)
		}
		return u, nil
	}
	tasks, err := os.ReadDir(filepath.Join(dir, "task"))
	if err != nil {
		return u, fmt.Errorf("read /proc/%d/task: %w", pid, err)
	}
	for _, t := range tasks {
		v, n, err := readSwitches(filepath.Join(dir, "task", t.Name(), "status"))
		if err != nil {
			continue // the thread ended since the listing
		}
		u.Voluntary += v
		u.Involun += n
	}
	return u, nil
}

func readSwitches(path string) (vol, invol int64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch k {
		case "voluntary_ctxt_switches":
			vol, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			found++
		case "nonvoluntary_ctxt_switches":
			invol, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			found++
		}
	}
	if found < 2 {
		return 0, 0, errors.New("no context switch counts")
	}
	return vol, invol, nil
}

// Uptime is the time since boot in clock ticks (/proc/uptime), to tell a
// process started inside a window from one started before it.
func Uptime(procRoot string) (int64, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, "uptime"))
	if err != nil {
		return 0, fmt.Errorf("read /proc/uptime: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, errors.New("read /proc/uptime: empty")
	}
	secs, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0, fmt.Errorf("read /proc/uptime: %w", err)
	}
	return int64(secs * ClockTicks), nil
}

// ParentPID is the parent of pid (/proc/<pid>/stat field 4).
func ParentPID(procRoot string, pid int) (int, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	if i < 0 || len(f) < 2 {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	return strconv.Atoi(f[1])
}
