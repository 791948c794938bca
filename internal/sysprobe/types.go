// Package sysprobe reads a host and a database server's processes from
// /proc and /sys: the server's side of the cost (docs/cost.md, "Server
// side"), for a server on this machine (in-process) and, through sledge
// agent (internal/agent), for one on any host. One implementation for both:
// the agent serves what this package measures, as JSON of these types.
//
// Every counter in a Snapshot is cumulative since the watch began; the
// difference of two snapshots (Diff) is what happened between them. A
// Second is the difference of two consecutive once-a-second snapshots.
// Types here are the agent's wire format (API version APIVersion): fields
// are only ever added.
//
// Open starts a watch on this machine (Local). Thread states come from
// /proc/PID/task/TID/syscall, verified on Linux 6.18: "running" for any
// thread in TASK_RUNNING, on a CPU or waiting for one (the kernel answers
// so whenever the state is 0), hence cpu and runnable are split with the
// threads' run delay (schedstat); "-1 sp pc" for a thread asleep outside a
// system call; else the call's number and arguments, the first being the
// descriptor of read, write, recv, epoll_wait and the like. pread at
// offset 0 regenerates these files (syscall, stat, status, schedstat, io),
// so they are opened once and re-read without allocating. docs/cost.md
// ("Where the server's threads are") describes every figure, its limits
// and the sampler's measured cost.
package sysprobe

import (
	"context"
	"errors"
	"time"
)

// APIVersion is the version of the agent's HTTP API and of these types'
// JSON. An agent answers requests of its own version; a client that meets
// a newer agent reads what it knows (fields are only added); a major change
// gets a new version and path (/v2/…), and an agent says which it serves.
const APIVersion = 1

// StateHz is the default rate of the thread-state sampler (issue 25: 100 Hz
// or more).
const StateHz = 100

// Target names the server's processes to watch: by the TCP port they listen
// on, by pid, or by process name (/proc/PID/comm). At least one is set.
type Target struct {
	Port    int    `json:"port,omitempty"`
	PID     int    `json:"pid,omitempty"`
	Process string `json:"process,omitempty"`
}

// ErrNotFound: no process matched the target.
var ErrNotFound = errors.New("server process not found")

// Process is one process found for a target.
type Process struct {
	PID     int    `json:"pid"`
	Comm    string `json:"comm"`
	Threads int    `json:"threads"`
}

// CPUTimes are the columns of a /proc/stat cpu line, in nanoseconds
// (USER_HZ ticks × 10 ms).
type CPUTimes struct {
	User    int64 `json:"user_ns"`
	Nice    int64 `json:"nice_ns"`
	System  int64 `json:"system_ns"`
	Idle    int64 `json:"idle_ns"`
	IOWait  int64 `json:"iowait_ns"`
	IRQ     int64 `json:"irq_ns"`
	SoftIRQ int64 `json:"softirq_ns"`
	Steal   int64 `json:"steal_ns"`
}

// NetCounters are one interface's counters (/proc/net/dev).
type NetCounters struct {
	RxBytes   int64 `json:"rx_bytes"`
	TxBytes   int64 `json:"tx_bytes"`
	RxPackets int64 `json:"rx_packets"`
	TxPackets int64 `json:"tx_packets"`
}

// DiskCounters are one block device's counters (/proc/diskstats).
type DiskCounters struct {
	Reads        int64 `json:"reads"`
	Writes       int64 `json:"writes"`
	ReadBytes    int64 `json:"read_bytes"`
	WrittenBytes int64 `json:"written_bytes"`
	IOTimeMs     int64 `json:"io_time_ms"`
}

// Host is the machine's cumulative counters.
type Host struct {
	CPUs          int                     `json:"cpus"`
	CPU           CPUTimes                `json:"cpu"`     // all CPUs
	PerCPU        []CPUTimes              `json:"per_cpu"` // cpu0, cpu1, …
	ContextSwitch int64                   `json:"context_switches"`
	Interrupts    int64                   `json:"interrupts"`
	ProcsRunning  int                     `json:"procs_running"` // a gauge: runnable now
	ProcsBlocked  int                     `json:"procs_blocked"` // a gauge
	Net           map[string]NetCounters  `json:"net"`           // by interface
	Disk          map[string]DiskCounters `json:"disk"`          // whole disks, not partitions
	MemTotal      int64                   `json:"mem_total_bytes"`
	MemAvailable  int64                   `json:"mem_available_bytes"` // a gauge
	// OtherCPU is the CPU time of every process other than those the
	// watch excludes (Options.Exclude: sledge itself, a local server): what
	// else was busy on the machine.
	OtherCPU int64 `json:"other_cpu_ns"`
}

// States counts thread samples by where the thread was (issue 25 §1): on
// a CPU, runnable (waiting for one), or sleeping in a network wait (socket
// read/write, poll on a socket), a lock (futex), disk I/O, or idle
// (anything else: a timer, a latch with no socket, a signal wait).
type States struct {
	CPU      int64 `json:"cpu"`
	Runnable int64 `json:"runnable"`
	Network  int64 `json:"network"`
	Lock     int64 `json:"lock"`
	IO       int64 `json:"io"`
	Idle     int64 `json:"idle"`
}

// Total is the number of thread samples.
func (s States) Total() int64 { return s.CPU + s.Runnable + s.Network + s.Lock + s.IO + s.Idle }

// Port is the traffic on the server's port, from the sockets' own counters
// (inet_diag tcp_info: bytes_received, bytes_acked).
type Port struct {
	Port int `json:"port"`
	// Ports are every port counted, when there are several (a target
	// found by pid or name listening on more than one).
	Ports       []int `json:"ports,omitempty"`
	BytesIn     int64 `json:"bytes_in"`  // received by the server
	BytesOut    int64 `json:"bytes_out"` // sent by the server
	Connections int   `json:"connections"`
	// ClosedLost counts connections that closed between readings: what
	// they carried since the last reading is not in the totals.
	ClosedLost int64 `json:"closed_lost"`
}

// Server is the watched processes' cumulative counters.
type Server struct {
	Processes   int   `json:"processes"` // a gauge
	Threads     int   `json:"threads"`   // a gauge
	UserNs      int64 `json:"cpu_user_ns"`
	SysNs       int64 `json:"cpu_sys_ns"`
	Voluntary   int64 `json:"voluntary_switches"`
	Involuntary int64 `json:"involuntary_switches"`
	// RunDelayNs: time the threads spent runnable, waiting for a CPU
	// (/proc/PID/task/TID/schedstat, second field).
	RunDelayNs int64 `json:"run_delay_ns"`
	// /proc/PID/io: bytes passed to read and write system calls, and
	// their counts.
	ReadBytes  int64 `json:"syscall_read_bytes"`
	WriteBytes int64 `json:"syscall_write_bytes"`
	ReadCalls  int64 `json:"syscalls_read"`
	WriteCalls int64 `json:"syscalls_write"`
	// States are the thread-state sampler's counts; StateHz its rate.
	States  States `json:"states"`
	StateHz int    `json:"state_hz"`
	Port    *Port  `json:"port,omitempty"` // nil: not watched by port, or not readable
}

// Snapshot is everything at one instant, cumulative since the watch began.
type Snapshot struct {
	At     time.Time `json:"at"`
	Host   Host      `json:"host"`
	Server *Server   `json:"server,omitempty"` // nil: the watch has no target
	// Missing says why a figure is absent ("port": "inet_diag: permission
	// denied"); Sources names where each comes from.
	Missing map[string]string `json:"missing,omitempty"`
	Sources map[string]string `json:"sources,omitempty"`
}

// Second is one second of a watch: the difference of two consecutive
// snapshots, numbered from 1.
type Second struct {
	Seq      int64     `json:"seq"`
	At       time.Time `json:"at"`
	Interval Interval  `json:"interval"`
}

// Interval is what happened between two snapshots: counters as deltas,
// gauges as at the end.
type Interval struct {
	Seconds float64  `json:"seconds"`
	Host    Host     `json:"host"`
	Server  *Server  `json:"server,omitempty"`
	Missing []string `json:"missing,omitempty"`
}

// Folded is on-CPU stacks in the folded format (one line per stack,
// frames root first separated by ';', a space and the sample count), the
// format flamegraph.pl and speedscope read.
type Folded struct {
	Hz      int    `json:"hz"`
	Samples int64  `json:"samples"`
	Text    string `json:"folded"`
	// Why says why there are no stacks (no perf, --allow-stacks not
	// given); empty when Text holds them.
	Why string `json:"why,omitempty"`
}

// Source is where a run reads the server's side: an in-process watch
// (Local) or an agent (internal/agent's client). The run reads it at the
// edges of its measured interval and once a second in between.
type Source interface {
	// Name is where the figures come from, for the summary: "this host
	// (/proc)" or "agent db1:7078".
	Name() string
	// Version is the agent's version, "" in-process.
	Version() string
	// Found lists the processes the target matched when the watch began.
	Found() []Process
	// Snapshot reads everything now.
	Snapshot(ctx context.Context) (Snapshot, error)
	// Seconds returns the seconds after seq (0: all it still holds).
	Seconds(ctx context.Context, after int64) ([]Second, error)
	// StartStacks begins recording on-CPU stacks of the server's processes;
	// StopStacks ends it and returns them folded. An error says in one line
	// why there are none (no perf, not allowed).
	StartStacks(ctx context.Context) error
	StopStacks(ctx context.Context) (Folded, error)
	Close() error
}
