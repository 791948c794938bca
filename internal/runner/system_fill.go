package runner

import (
	"fmt"
	"math"
	"sort"

	"github.com/sledge-bench/sledge/internal/sysprobe"
)

// busyShare is the share of the cores other processes may take on
// sledge's host before the summary warns that the machine was busy.
const busyShare = 0.10

// LocalCheckJSON is the in-process reading of a local server's CPU over the
// same interval as the agent's ("server_per_txn.local_check"): a
// cross-check of the agent, not a headline figure.
type LocalCheckJSON struct {
	CPUUserUs       float64 `json:"cpu_user_us"`
	CPUSysUs        float64 `json:"cpu_sys_us"`
	ContextSwitches float64 `json:"context_switches"`
	Source          string  `json:"source"`
}

// fillSystem adds what the sysprobe watches measured over the measured
// interval: the server's processes per transaction, its threads and host,
// the agent, the stacks, sledge's own host and process. n: the completed
// transactions of the interval.
func (sc *ServerCost) fillSystem(sum *RunSummary, c *ServerCostJSON, n float64) {
	missing := func(why string, figures ...string) {
		for _, f := range figures {
			c.Missing[f] = why
		}
	}
	serverFigures := []string{"cpu", "context_switches", "run_queue_delay", "syscall_bytes", "port_bytes", "threads"}
	measured := sc.fol.edge2.Sub(sc.fol.edge1).Seconds()
	var localServerCPU int64 = -1 // the local server's CPU (ns) over the interval; -1: not known
	if w := sc.server; w != nil {
		iv, partial, tx, ok := w.interval()
		name := w.src.Name()
		div := n
		if partial {
			div = tx
		}
		if sc.agent != nil {
			a := &AgentJSON{Address: sc.agent.name, Version: sc.agent.info.Version, API: sc.agent.info.API}
			if partial {
				a.Partial = true
				a.SecondsMissed = int(math.Round(max(measured-iv.Seconds, 0)))
				a.Note = fmt.Sprintf("a reading at an edge of the measured interval failed (%s): the server's figures cover the %.0f s of %.0f it answered for, per transaction completed in those seconds",
					w.edgeErr(), iv.Seconds, measured)
			}
			sum.Agent = a
		}
		switch {
		case !ok || iv.Server == nil:
			why := "no reading of the server's processes in the measured interval"
			if e := w.edgeErr(); e != "" {
				why += ": " + e
			}
			missing(why, serverFigures...)
		case div <= 0:
			missing("no transaction completed in the seconds the source answered for", serverFigures...)
		default:
			sc.fillServer(c, w, iv, div, partial, measured)
			sum.ServerThreads = threadsJSON(iv.Server, name)
			if sum.ServerThreads == nil {
				c.Missing["threads"] = w.missing("states", "the thread-state sampler took no sample")
			}
			sum.ServerHost = hostJSON(iv.Host, iv.Seconds, name, w.runnableAvg())
			if sc.agent == nil {
				localServerCPU = iv.Server.UserNs + iv.Server.SysNs
			}
		}
	} else {
		missing(sc.cpuWhy, serverFigures...)
	}
	if w := sc.check; w != nil {
		if iv, partial, _, ok := w.interval(); ok && !partial && iv.Server != nil {
			c.LocalCheck = &LocalCheckJSON{CPUUserUs: float64(iv.Server.UserNs) / 1e3 / n, CPUSysUs: float64(iv.Server.SysNs) / 1e3 / n,
				ContextSwitches: float64(iv.Server.Voluntary+iv.Server.Involuntary) / n,
				Source:          w.src.Name() + ": the same server read in-process at the same edges, a cross-check of the agent"}
			localServerCPU = iv.Server.UserNs + iv.Server.SysNs
		}
	}
	if sc.stacksAsked {
		st := &StacksJSON{Why: sc.stacksWhy}
		if sc.server != nil {
			st.Source = sc.server.src.Name()
		}
		if f := sc.folded; f != nil {
			st.Hz, st.Samples, st.Folded = f.Hz, f.Samples, f.Text
			if f.Text == "" && st.Why == "" {
				st.Why = f.Why
				if st.Why == "" {
					st.Why = "no on-CPU sample of the server in the measured interval"
				}
			}
		}
		sum.ServerStacks = st
	}
	sc.fillClient(sum, n, localServerCPU)
}

// fillServer sets the server's per-transaction figures from iv, divided
// by div transactions.
func (sc *ServerCost) fillServer(c *ServerCostJSON, w *watched, iv sysprobe.Interval, div float64, partial bool, measured float64) {
	s := iv.Server
	per := func(v int64, scale float64) *float64 { x := float64(v) / scale / div; return &x }
	c.CPUUserUs, c.CPUSysUs = per(s.UserNs, 1e3), per(s.SysNs, 1e3)
	c.ContextSwitches = per(s.Voluntary+s.Involuntary, 1)
	c.VoluntarySwitches, c.InvoluntarySwitches = per(s.Voluntary, 1), per(s.Involuntary, 1)
	c.RunQueueDelayUs = per(s.RunDelayNs, 1e3)
	c.SyscallReadBytes, c.SyscallWriteBytes = per(s.ReadBytes, 1), per(s.WriteBytes, 1)
	name := w.src.Name()
	src := name + ": /proc of " + sc.processesText(w) + " (utime, stime; voluntary and involuntary context switches)"
	if partial {
		src += fmt.Sprintf("; partial: %.0f s of the %.0f s measured interval, per transaction completed in them", iv.Seconds, measured)
	}
	c.Source["cpu"], c.Source["context_switches"] = src, src
	c.Source["run_queue_delay"] = name + ": /proc/PID/task/TID/schedstat run_delay of the same threads"
	c.Source["syscall_bytes"] = name + ": /proc/PID/io rchar, wchar of the same processes (every read and write system call: sockets, pipes, files)"
	if p := s.Port; p != nil {
		c.PortBytesIn, c.PortBytesOut = per(p.BytesIn, 1), per(p.BytesOut, 1)
		c.Source["port_bytes"] = fmt.Sprintf("%s: inet_diag tcp_info of the sockets on port %d (bytes_received, bytes_acked)", name, p.Port)
		if p.ClosedLost > 0 {
			c.Source["port_bytes"] += fmt.Sprintf("; %d connections closed between readings are not counted", p.ClosedLost)
		}
	} else {
		c.Missing["port_bytes"] = w.missing("port", "the server's port was not watched")
	}
}

// processesText names the server's processes: by role as the database
// listed them ("4 virtual users' backends, 6 background processes and the
// postmaster"), else as the watch found them.
func (sc *ServerCost) processesText(w *watched) string {
	sc.mu.Lock()
	roles := map[string]int{}
	for _, r := range sc.roles {
		roles[r]++
	}
	sc.mu.Unlock()
	if len(roles) > 0 {
		return rolesText(roles)
	}
	comms := map[string]int{}
	for _, p := range w.src.Found() {
		comms[p.Comm]++
	}
	names := make([]string, 0, len(comms))
	for k := range comms {
		names = append(names, k)
	}
	sort.Strings(names)
	text := ""
	for i, k := range names {
		if i > 0 {
			text += ", "
		}
		text += fmt.Sprintf("%d %s", comms[k], k)
	}
	if text == "" {
		return "the server's processes"
	}
	return "the server's processes (" + text + " when the watch began, and their children)"
}

// fillClient adds sledge's own host (client_host) and process (the
// client's CPU split and run-queue delay). serverCPU is a local server's
// CPU over the interval (ns), which is not "other"; -1: not known.
func (sc *ServerCost) fillClient(sum *RunSummary, n float64, serverCPU int64) {
	w := sc.client
	if w == nil {
		return
	}
	iv, partial, _, ok := w.interval()
	if !ok || partial {
		return
	}
	h := iv.Host
	if serverCPU > 0 {
		h.OtherCPU = max(h.OtherCPU-serverCPU, 0)
	}
	hj := hostJSON(h, iv.Seconds, w.src.Name(), w.runnableAvg())
	if hj != nil && hj.OtherCPUShare > busyShare {
		hj.Warning = fmt.Sprintf("the machine was busy: other processes used %.1f of %d cores during the measured interval; results may not be comparable",
			hj.OtherCPUCores, hj.CPUs)
	}
	sum.ClientHost = hj
	if p := sum.PerTxn; p != nil && p.ClientCPUUs != nil && !sc.workers && iv.Server != nil && n > 0 {
		us := func(ns int64) *float64 { v := float64(ns) / 1e3 / n; return &v }
		p.ClientCPUUserUs, p.ClientCPUSysUs = us(iv.Server.UserNs), us(iv.Server.SysNs)
		p.ClientRunQueueDelayUs = us(iv.Server.RunDelayNs)
	}
}

// threadsJSON is where the server's threads were; nil without samples.
func threadsJSON(s *sysprobe.Server, source string) *ThreadStatesJSON {
	st := s.States
	tot := st.Total()
	if tot <= 0 {
		return nil
	}
	f := func(v int64) float64 { return float64(v) / float64(tot) }
	return &ThreadStatesJSON{CPU: f(st.CPU), Runnable: f(st.Runnable), Network: f(st.Network), Lock: f(st.Lock),
		IO: f(st.IO), Idle: f(st.Idle), Samples: tot, Hz: s.StateHz, Threads: s.Threads, Source: source}
}

// hostJSON is a host over secs seconds of the interval: CPU shares of all
// CPUs' time, rates per second, and the CPU of other processes.
func hostJSON(h sysprobe.Host, secs float64, source string, runnable float64) *HostJSON {
	c := h.CPU
	tot := float64(c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal)
	if tot <= 0 || secs <= 0 {
		return nil
	}
	share := func(v int64) float64 { return float64(v) / tot }
	out := &HostJSON{Source: source, CPUs: h.CPUs, User: share(c.User), Nice: share(c.Nice), System: share(c.System),
		IOWait: share(c.IOWait), IRQ: share(c.IRQ), SoftIRQ: share(c.SoftIRQ), Steal: share(c.Steal), Idle: share(c.Idle),
		RunnableAvg: runnable, ContextSwitchesPS: float64(h.ContextSwitch) / secs, InterruptsPS: float64(h.Interrupts) / secs,
		MemAvailableBytes: h.MemAvailable}
	for _, n := range h.Net {
		out.NetRxBytesPS += float64(n.RxBytes) / secs
		out.NetTxBytesPS += float64(n.TxBytes) / secs
	}
	for _, d := range h.Disk {
		out.DiskReadBytesPS += float64(d.ReadBytes) / secs
		out.DiskWrittenBytesPS += float64(d.WrittenBytes) / secs
	}
	out.OtherCPUCores = float64(h.OtherCPU) / 1e9 / secs
	if h.CPUs > 0 {
		out.OtherCPUShare = out.OtherCPUCores / float64(h.CPUs)
	}
	return out
}

// missing is why the watch's last edge reading lacks figure key.
func (w *watched) missing(key, otherwise string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range []*sysprobe.Snapshot{w.after, w.before} {
		if s != nil && s.Missing[key] != "" {
			return s.Missing[key]
		}
	}
	return otherwise
}

// runnableAvg is the mean of the host's runnable tasks over the seconds
// of the interval, else the last reading's.
func (w *watched) runnableAvg() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.accN > 0 {
		return w.runnable / float64(w.accN)
	}
	if w.after != nil {
		return float64(w.after.Host.ProcsRunning)
	}
	return 0
}
