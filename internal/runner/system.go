package runner

import (
	"time"

	"github.com/sledge-bench/sledge/internal/sysprobe"
)

// Issue 25's additions to the summary: the server's threads and hosts as
// internal/sysprobe measures them, in-process or through sledge agent.
// Shares are fractions (0–1) of the measured interval.

// ThreadStatesJSON is where the server's threads were during the measured
// interval ("server_threads"): shares of thread samples, summing to 1.
type ThreadStatesJSON struct {
	CPU      float64 `json:"cpu"`      // on a CPU
	Runnable float64 `json:"runnable"` // waiting for a CPU
	Network  float64 `json:"network"`  // socket read/write, poll on a socket
	Lock     float64 `json:"lock"`     // futex
	IO       float64 `json:"io"`       // disk
	Idle     float64 `json:"idle"`     // anything else
	Samples  int64   `json:"samples"`  // thread samples, the shares' denominator
	Hz       int     `json:"hz"`       // the sampler's rate
	Threads  int     `json:"threads"`  // the server's threads at the end
	Source   string  `json:"source"`   // "agent db1:7078" or "this host (/proc)"
	Note     string  `json:"note,omitempty"`
}

// HostJSON is one machine over the measured interval ("server_host",
// "client_host"): CPU shares as mpstat shows them (of all CPUs' time), and
// rates per second.
type HostJSON struct {
	Source  string  `json:"source"`
	CPUs    int     `json:"cpus"`
	User    float64 `json:"usr"`
	Nice    float64 `json:"nice"`
	System  float64 `json:"sys"`
	IOWait  float64 `json:"iowait"`
	IRQ     float64 `json:"irq"`
	SoftIRQ float64 `json:"softirq"`
	Steal   float64 `json:"steal"`
	Idle    float64 `json:"idle"`
	// RunnableAvg is the mean of /proc/stat procs_running over the
	// interval's seconds.
	RunnableAvg        float64 `json:"runnable_avg"`
	ContextSwitchesPS  float64 `json:"context_switches_per_s"`
	InterruptsPS       float64 `json:"interrupts_per_s"`
	NetRxBytesPS       float64 `json:"net_rx_bytes_per_s"`
	NetTxBytesPS       float64 `json:"net_tx_bytes_per_s"`
	DiskReadBytesPS    float64 `json:"disk_read_bytes_per_s"`
	DiskWrittenBytesPS float64 `json:"disk_written_bytes_per_s"`
	MemAvailableBytes  int64   `json:"mem_available_bytes"`
	// OtherCPUCores is the CPU that processes other than sledge and a
	// local server took, in cores (client_host; on server_host, other
	// than the server); OtherCPUShare is it over CPUs.
	OtherCPUCores float64 `json:"other_cpu_cores"`
	OtherCPUShare float64 `json:"other_cpu_share"`
	// Warning: other processes took more than 10% of the cores.
	Warning string `json:"warning,omitempty"`
}

// AgentJSON is the agent that measured the server ("agent"), absent
// without --agent.
type AgentJSON struct {
	Address string `json:"address"`
	Version string `json:"version"`
	API     int    `json:"api"`
	// Partial: the agent did not answer for part of the interval; the
	// server's figures cover what it did answer for.
	Partial       bool   `json:"partial"`
	SecondsMissed int    `json:"seconds_missed"`
	Note          string `json:"note,omitempty"`
}

// StacksJSON is the server's on-CPU stacks over the measured interval
// (--stacks), folded; absent without --stacks.
type StacksJSON struct {
	Source  string `json:"source"`
	Hz      int    `json:"hz"`
	Samples int64  `json:"samples"`
	Folded  string `json:"folded,omitempty"`
	Why     string `json:"why,omitempty"` // why there are none
}

// SystemSecond is one second of a sampler during a run, for the job's time
// series, the live page and /metrics: the server's (through the agent or
// in-process) or sledge's own host's. The run side (ServerCost) calls the
// function given to ServerCost.Follow with each, in order, from one
// goroutine; the consumers (job recorder, metrics server) must not block.
type SystemSecond struct {
	Source  string        // "server" or "client_host"
	Elapsed time.Duration // since the run started, at the end of the second
	Phase   string        // the engine's phase then: "ramp-up", "measure", …
	Second  sysprobe.Second
}
