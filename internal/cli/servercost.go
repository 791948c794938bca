package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/sledge-bench/sledge/internal/runner"
)

// printServerCost prints the server's side below the client's, each
// figure with its source or the reason it is absent.
func printServerCost(out io.Writer, s *runSummary) {
	c := s.ServerPerTxn
	if c == nil || (c.Source == nil && c.Missing == nil) {
		return // an older job's summary: only the bytes line above
	}
	fmt.Fprintln(out, "\ncost per transaction (server)")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	line := func(name, value, key string) {
		from := c.Source[key]
		if key == "context_switches" && from != "" && from == c.Source["cpu"] {
			from = "the same processes"
		}
		if value == "-" {
			from = c.Missing[key]
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", name, value, from)
	}
	num := func(v *float64, format string) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf(format, *v)
	}
	cpu := "-"
	if c.CPUUserUs != nil && c.CPUSysUs != nil {
		cpu = fmt.Sprintf("%.1f (user %.1f, system %.1f)", *c.CPUUserUs+*c.CPUSysUs, *c.CPUUserUs, *c.CPUSysUs)
	}
	line("CPU µs", cpu, "cpu")
	sw := num(c.ContextSwitches, "%.2f")
	if sw != "-" && c.VoluntarySwitches != nil && c.InvoluntarySwitches != nil {
		sw += fmt.Sprintf(" (voluntary %.2f, involuntary %.2f)", *c.VoluntarySwitches, *c.InvoluntarySwitches)
	}
	line("context switches", sw, "context_switches")
	if c.RunQueueDelayUs != nil || c.Missing["run_queue_delay"] != "" {
		line("run-queue delay µs", num(c.RunQueueDelayUs, "%.1f"), "run_queue_delay")
	}
	if c.PortBytesIn != nil || c.Missing["port_bytes"] != "" {
		port := "-"
		if c.PortBytesIn != nil && c.PortBytesOut != nil {
			port = fmt.Sprintf("in %.0f, out %.0f", *c.PortBytesIn, *c.PortBytesOut)
		}
		line("port bytes", port, "port_bytes")
	}
	if c.SyscallReadBytes != nil && c.SyscallWriteBytes != nil {
		line("syscall bytes", fmt.Sprintf("read %.0f, write %.0f", *c.SyscallReadBytes, *c.SyscallWriteBytes), "syscall_bytes")
	}
	line("statements", num(c.Statements, "%.2f"), "statements")
	line("parses", num(c.Parses, "%.2f"), "parses")
	line("plans", num(c.Plans, "%.2f"), "plans")
	tw.Flush()
	if l := c.LocalCheck; l != nil {
		fmt.Fprintf(out, "cross-check: CPU µs %.1f (user %.1f, system %.1f), context switches %.2f (%s)\n",
			l.CPUUserUs+l.CPUSysUs, l.CPUUserUs, l.CPUSysUs, l.ContextSwitches, l.Source)
	}
	printSystem(out, s)
	if w := s.ServerWaits; w != nil {
		if w.Sessions == 0 {
			fmt.Fprintf(out, "where sessions wait: %s\n", w.Note)
			return
		}
		io := "I/O -"
		if w.IO != nil {
			io = fmt.Sprintf("I/O %.0f%%", 100**w.IO)
		}
		fmt.Fprintf(out, "where sessions wait: CPU %.0f%%, client %.0f%%, lock %.0f%%, %s, other %.0f%% of %d samples every %.0f ms (%s)\n",
			100*w.CPU, 100*w.Client, 100*w.Lock, io, 100*w.Other, w.Sessions, w.IntervalMs, w.Source)
		if w.Note != "" {
			fmt.Fprintf(out, "  %s\n", w.Note)
		}
	} else if why := c.Missing["waits"]; why != "" {
		fmt.Fprintf(out, "where sessions wait: - %s\n", why)
	}
}

// diffServer adds the server's side to jobs diff: CPU, context switches,
// statements, and the wait shares, where both runs have them.
func diffServer(sa, sb *runSummary, num func(name string, x, y float64)) {
	if ca, cb := sa.ServerPerTxn, sb.ServerPerTxn; ca != nil && cb != nil {
		both := func(name string, x, y *float64) {
			if x != nil && y != nil {
				num("server_per_txn."+name, *x, *y)
			}
		}
		if ca.CPUUserUs != nil && cb.CPUUserUs != nil && ca.CPUSysUs != nil && cb.CPUSysUs != nil {
			num("server_per_txn.cpu_us", *ca.CPUUserUs+*ca.CPUSysUs, *cb.CPUUserUs+*cb.CPUSysUs)
		}
		both("cpu_user_us", ca.CPUUserUs, cb.CPUUserUs)
		both("cpu_sys_us", ca.CPUSysUs, cb.CPUSysUs)
		both("context_switches", ca.ContextSwitches, cb.ContextSwitches)
		both("statements", ca.Statements, cb.Statements)
		both("parses", ca.Parses, cb.Parses)
		both("plans", ca.Plans, cb.Plans)
	}
	if wa, wb := sa.ServerWaits, sb.ServerWaits; wa != nil && wb != nil && wa.Sessions > 0 && wb.Sessions > 0 {
		num("server_waits.cpu", wa.CPU, wb.CPU)
		num("server_waits.client", wa.Client, wb.Client)
		num("server_waits.lock", wa.Lock, wb.Lock)
		if wa.IO != nil && wb.IO != nil {
			num("server_waits.io", *wa.IO, *wb.IO)
		}
		num("server_waits.other", wa.Other, wb.Other)
	}
}

// printSystem prints where the server's threads were, its host, the agent
// and the stacks (issue 25), below the server's figures.
func printSystem(out io.Writer, s *runSummary) {
	if t := s.ServerThreads; t != nil {
		fmt.Fprintf(out, "threads: cpu %.0f%%, runnable %.0f%%, network %.0f%%, lock %.0f%%, io %.0f%%, idle %.0f%% of %d samples at %d Hz (%s)\n",
			100*t.CPU, 100*t.Runnable, 100*t.Network, 100*t.Lock, 100*t.IO, 100*t.Idle, t.Samples, t.Hz, t.Source)
	} else if c := s.ServerPerTxn; c != nil && c.Missing["threads"] != "" {
		fmt.Fprintf(out, "threads: - %s\n", c.Missing["threads"])
	}
	if h := s.ServerHost; h != nil {
		fmt.Fprintf(out, "server host: %s (%s)\n", hostText(h), h.Source)
	}
	if a := s.Agent; a != nil {
		line := fmt.Sprintf("agent: %s, sledge agent %s, API v%d", a.Address, a.Version, a.API)
		if a.Partial {
			line += fmt.Sprintf("; partial: %d s of the measured interval missed", a.SecondsMissed)
		}
		fmt.Fprintln(out, line)
	}
	if st := s.ServerStacks; st != nil {
		if st.Folded != "" {
			fmt.Fprintf(out, "server stacks: %d samples at %d Hz (%s), kept with the job\n", st.Samples, st.Hz, st.Source)
		} else {
			fmt.Fprintf(out, "server stacks: - %s\n", st.Why)
		}
	}
}

// printClientHost prints sledge's own host over the measured interval, and
// the warning when other processes kept it busy.
func printClientHost(out io.Writer, s *runSummary) {
	h := s.ClientHost
	if h == nil {
		return
	}
	fmt.Fprintf(out, "client host: %s; other processes %.2f of %d cores (%s)\n", hostText(h), h.OtherCPUCores, h.CPUs, h.Source)
	if h.Warning != "" {
		fmt.Fprintln(out, "warning: "+h.Warning)
	}
}

// hostText is a host's CPU shares as mpstat shows them.
func hostText(h *runner.HostJSON) string {
	return fmt.Sprintf("usr %.0f%%, sys %.0f%%, iowait %.0f%%, irq %.0f%%, softirq %.0f%%, steal %.0f%%, idle %.0f%% of %d CPUs, runnable %.1f",
		100*(h.User+h.Nice), 100*h.System, 100*h.IOWait, 100*h.IRQ, 100*h.SoftIRQ, 100*h.Steal, 100*h.Idle, h.CPUs, h.RunnableAvg)
}
