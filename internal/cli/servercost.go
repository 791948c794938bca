package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
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
	line("context switches", num(c.ContextSwitches, "%.2f"), "context_switches")
	line("statements", num(c.Statements, "%.2f"), "statements")
	line("parses", num(c.Parses, "%.2f"), "parses")
	line("plans", num(c.Plans, "%.2f"), "plans")
	tw.Flush()
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
