package cli

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/sledge-bench/sledge/internal/jobs"
	"github.com/sledge-bench/sledge/internal/sysprobe"
)

// Issue 25 in the job commands: the per-second system samples as tables
// (jobs show; the summary's server threads, hosts and agent are the run's
// own text summary, printSummary) and a CSV (jobs export --table system),
// and the new per-transaction figures and thread-state shares in jobs diff.

func pct(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }

// cpuTotal is all the CPU time of a host's interval, the denominator of
// its shares (as mpstat's).
func cpuTotal(c sysprobe.CPUTimes) int64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
}

func share(v, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return float64(v) / float64(total)
}

// stateShares are a second's thread-state shares in the order cpu,
// runnable, network, lock, io, idle; nil without thread samples.
func stateShares(st sysprobe.States) []float64 {
	n := st.Total()
	if n == 0 {
		return nil
	}
	return []float64{share(st.CPU, n), share(st.Runnable, n), share(st.Network, n), share(st.Lock, n), share(st.IO, n), share(st.Idle, n)}
}

var stateNames = []string{"cpu", "runnable", "network", "lock", "io", "idle"}

// printSystemSeries prints the server's seconds and sledge's own host's as
// tables, at most 40 rows each (seconds averaged in groups beyond that), as
// the transaction counter is.
func printSystemSeries(out io.Writer, r *jobs.Record) {
	var server, client []jobs.SystemSample
	for _, x := range r.System {
		switch x.Source {
		case "server":
			server = append(server, x)
		case "client_host":
			client = append(client, x)
		}
	}
	if len(server) > 0 {
		rows := seriesRows(out, "the server", "CPU in cores, states as shares of thread samples", server)
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "s\tphase\tuser\tsys\tswitches/s\trun delay ms/s\t")
		for _, n := range stateNames {
			fmt.Fprintf(tw, "%s\t", n)
		}
		fmt.Fprintln(tw, "port in KB/s\tout KB/s\thost usr\tsys\tidle\t")
		for _, row := range rows {
			secs, cpu, srv, last := row.secs, row.sum.Host.CPU, row.sum.Server, row.last
			port := srv != nil && srv.Port != nil
			if srv == nil {
				srv = &sysprobe.Server{}
			}
			fmt.Fprintf(tw, "%.0f\t%s\t%.2f\t%.2f\t%s\t%.1f\t", float64(last.ElapsedMs)/1000, last.Phase,
				float64(srv.UserNs)/1e9/secs, float64(srv.SysNs)/1e9/secs,
				thousands(int64(float64(srv.Voluntary+srv.Involuntary)/secs+0.5)), float64(srv.RunDelayNs)/1e6/secs)
			if sh := stateShares(srv.States); sh != nil {
				for _, v := range sh {
					fmt.Fprintf(tw, "%s\t", pct(v))
				}
			} else {
				fmt.Fprint(tw, strings.Repeat("-\t", len(stateNames)))
			}
			if port {
				fmt.Fprintf(tw, "%.1f\t%.1f\t", float64(srv.Port.BytesIn)/1e3/secs, float64(srv.Port.BytesOut)/1e3/secs)
			} else {
				fmt.Fprint(tw, "-\t-\t")
			}
			t := cpuTotal(cpu)
			fmt.Fprintf(tw, "%s\t%s\t%s\t\n", pct(share(cpu.User, t)), pct(share(cpu.System, t)), pct(share(cpu.Idle, t)))
		}
		tw.Flush()
	}
	if len(client) > 0 {
		rows := seriesRows(out, "sledge's host", "other: processes other than sledge and a local server, in cores", client)
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "s\tphase\tusr\tsys\tiowait\tidle\tother\t")
		for _, row := range rows {
			secs, cpu, other, last := row.secs, row.sum.Host.CPU, row.sum.Host.OtherCPU, row.last
			t := cpuTotal(cpu)
			fmt.Fprintf(tw, "%.0f\t%s\t%s\t%s\t%s\t%s\t%.2f\t\n", float64(last.ElapsedMs)/1000, last.Phase,
				pct(share(cpu.User, t)), pct(share(cpu.System, t)), pct(share(cpu.IOWait, t)), pct(share(cpu.Idle, t)),
				float64(other)/1e9/secs)
		}
		tw.Flush()
	}
}

// seriesRow is one row of a per-second table: consecutive samples summed.
type seriesRow struct {
	sum  sysprobe.Interval
	secs float64           // the seconds they cover (their count if unknown)
	last jobs.SystemSample // the group's last sample: its time and phase
}

// seriesRows prints a per-second table's title and returns its rows: at
// most 40, the samples summed in groups beyond that.
func seriesRows(out io.Writer, what, units string, xs []jobs.SystemSample) []seriesRow {
	n := len(xs)
	group := (n + 39) / 40
	fmt.Fprintf(out, "\n%s per second (%d samples", what, n)
	if group > 1 {
		fmt.Fprintf(out, ", averaged over %d at a time", group)
	}
	fmt.Fprintf(out, "; %s):\n", units)
	var rows []seriesRow
	for i := 0; i < n; i += group {
		g := xs[i:min(i+group, n)]
		var r seriesRow
		for _, x := range g {
			r.sum.Add(x.Interval)
		}
		if r.secs = r.sum.Seconds; r.secs <= 0 {
			r.secs = float64(len(g))
		}
		r.last = g[len(g)-1]
		rows = append(rows, r)
	}
	return rows
}

// systemCSVHeader is jobs export --format csv --table system's header.
var systemCSVHeader = []string{"seq", "elapsed_s", "source", "phase", "seconds",
	"host_usr", "host_sys", "host_iowait", "host_idle", "other_cpu_s",
	"server_cpu_user_s", "server_cpu_sys_s", "voluntary_switches", "involuntary_switches", "run_delay_s",
	"state_cpu", "state_runnable", "state_network", "state_lock", "state_io", "state_idle",
	"port_bytes_in", "port_bytes_out"}

// writeSystemCSV writes one row per system sample: the host's CPU shares
// (of all CPUs' time over the second, as mpstat's), the CPU other processes
// took, and for the server its CPU seconds, switches, run-queue delay,
// thread-state shares and port bytes; a figure the sample lacks is empty.
func writeSystemCSV(w *csv.Writer, r *jobs.Record) {
	_ = w.Write(systemCSVHeader)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	sh := func(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, x := range r.System {
		iv := x.Interval
		t := cpuTotal(iv.Host.CPU)
		row := []string{strconv.Itoa(x.Seq), f(float64(x.ElapsedMs) / 1000), x.Source, x.Phase, f(iv.Seconds),
			sh(share(iv.Host.CPU.User, t)), sh(share(iv.Host.CPU.System, t)), sh(share(iv.Host.CPU.IOWait, t)),
			sh(share(iv.Host.CPU.Idle, t)), f(float64(iv.Host.OtherCPU) / 1e9)}
		// A client_host sample's processes are sledge's own: not the
		// server's columns.
		if s := iv.Server; s != nil && x.Source == "server" {
			row = append(row, f(float64(s.UserNs)/1e9), f(float64(s.SysNs)/1e9), i(s.Voluntary), i(s.Involuntary),
				f(float64(s.RunDelayNs)/1e9))
			if st := stateShares(s.States); st != nil {
				for _, v := range st {
					row = append(row, sh(v))
				}
			} else {
				row = append(row, make([]string, len(stateNames))...)
			}
			if s.Port != nil {
				row = append(row, i(s.Port.BytesIn), i(s.Port.BytesOut))
			} else {
				row = append(row, "", "")
			}
		} else {
			row = append(row, make([]string, len(systemCSVHeader)-len(row))...)
		}
		_ = w.Write(row)
	}
}

// diffSystem adds issue 25's figures to jobs diff, where both runs have
// them: the server's per-transaction run-queue delay, switches split,
// syscall and port bytes, the client's CPU split and run-queue delay, and
// the shares of the server's thread states.
func diffSystem(sa, sb *runSummary, num func(name string, x, y float64)) {
	both := func(name string, x, y *float64) {
		if x != nil && y != nil {
			num(name, *x, *y)
		}
	}
	if ca, cb := sa.PerTxn, sb.PerTxn; ca != nil && cb != nil {
		both("per_txn.client_cpu_user_us", ca.ClientCPUUserUs, cb.ClientCPUUserUs)
		both("per_txn.client_cpu_sys_us", ca.ClientCPUSysUs, cb.ClientCPUSysUs)
		both("per_txn.client_run_queue_delay_us", ca.ClientRunQueueDelayUs, cb.ClientRunQueueDelayUs)
	}
	if ca, cb := sa.ServerPerTxn, sb.ServerPerTxn; ca != nil && cb != nil {
		both("server_per_txn.run_queue_delay_us", ca.RunQueueDelayUs, cb.RunQueueDelayUs)
		both("server_per_txn.voluntary_switches", ca.VoluntarySwitches, cb.VoluntarySwitches)
		both("server_per_txn.involuntary_switches", ca.InvoluntarySwitches, cb.InvoluntarySwitches)
		both("server_per_txn.syscall_read_bytes", ca.SyscallReadBytes, cb.SyscallReadBytes)
		both("server_per_txn.syscall_write_bytes", ca.SyscallWriteBytes, cb.SyscallWriteBytes)
		both("server_per_txn.port_bytes_in", ca.PortBytesIn, cb.PortBytesIn)
		both("server_per_txn.port_bytes_out", ca.PortBytesOut, cb.PortBytesOut)
	}
	if ta, tb := sa.ServerThreads, sb.ServerThreads; ta != nil && tb != nil && ta.Samples > 0 && tb.Samples > 0 {
		va := []float64{ta.CPU, ta.Runnable, ta.Network, ta.Lock, ta.IO, ta.Idle}
		vb := []float64{tb.CPU, tb.Runnable, tb.Network, tb.Lock, tb.IO, tb.Idle}
		for k, n := range stateNames {
			num("server_threads."+n, va[k], vb[k])
		}
	}
	if ha, hb := sa.ClientHost, sb.ClientHost; ha != nil && hb != nil {
		num("client_host.other_cpu_cores", ha.OtherCPUCores, hb.OtherCPUCores)
	}
}
