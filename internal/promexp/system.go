package promexp

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/sysprobe"
)

// Issue 25: the server's side while a run goes on, from the seconds the
// run's sampler hands its outputs (runner.SystemOutput): the server's
// processes through sledge agent or read in-process, and sledge's own host.
// Counters add up the seconds received since the run's watch began (a
// second the agent missed is missing from them); gauges are the last
// second's.

var (
	sysCPULabels    = append(jobLabels[:2:2], "mode")
	descServerCPU   = prometheus.NewDesc("sledge_server_cpu_seconds_total", "CPU time of the database server's processes, by mode (user, system), since the run's watch began.", sysCPULabels, nil)
	descServerCtx   = prometheus.NewDesc("sledge_server_context_switches_total", "Context switches of the database server's threads, by kind (voluntary, involuntary).", append(jobLabels[:2:2], "kind"), nil)
	descServerRunQ  = prometheus.NewDesc("sledge_server_run_queue_delay_seconds_total", "Time the database server's threads spent runnable, waiting for a CPU (schedstat run_delay).", jobLabels, nil)
	descServerPort  = prometheus.NewDesc("sledge_server_port_bytes_total", "Bytes on the database server's port, by direction (in: received by the server, out: sent by it), from the sockets' own counters.", append(jobLabels[:2:2], "direction"), nil)
	descServerState = prometheus.NewDesc("sledge_server_thread_state_share", "Share (0-1) of the database server's thread samples of the last second in each state (cpu, runnable, network, lock, io, idle).", append(jobLabels[:2:2], "state"), nil)
	descServerHost  = prometheus.NewDesc("sledge_server_host_cpu_share", "Share (0-1) of all CPUs' time of the database server's host in each mode over the last second, as mpstat shows it (usr, nice, sys, iowait, irq, softirq, steal, idle).", sysCPULabels, nil)
	descClientOther = prometheus.NewDesc("sledge_client_host_other_cpu_cores", "CPU that processes other than sledge and a local server took on sledge's host over the last second, in cores.", jobLabels, nil)
)

// sysState is what a job's seconds have added up to.
type sysState struct {
	server, client bool // a second of each source arrived

	userNs, sysNs, vol, invol, runDelayNs int64
	port                                  bool
	portIn, portOut                       int64
	states                                *sysprobe.States // the last second's; nil without thread samples
	host                                  sysprobe.CPUTimes
	otherCores                            float64
}

// System adds one second of a running job's sampler; a job the exporter
// does not follow is ignored.
func (e *Exporter) System(id int64, s runner.SystemSecond) {
	e.mu.Lock()
	defer e.mu.Unlock()
	j, ok := e.jobs[id]
	if !ok || !j.ended.IsZero() {
		return
	}
	iv := s.Second.Interval
	st := &j.sys
	switch s.Source {
	case "server":
		st.server = true
		st.host = iv.Host.CPU
		if sv := iv.Server; sv != nil {
			st.userNs += sv.UserNs
			st.sysNs += sv.SysNs
			st.vol += sv.Voluntary
			st.invol += sv.Involuntary
			st.runDelayNs += sv.RunDelayNs
			if sv.Port != nil {
				st.port = true
				st.portIn += sv.Port.BytesIn
				st.portOut += sv.Port.BytesOut
			}
			st.states = nil
			if sv.States.Total() > 0 {
				x := sv.States
				st.states = &x
			}
		}
	case "client_host":
		st.client = true
		if iv.Seconds > 0 {
			st.otherCores = float64(iv.Host.OtherCPU) / 1e9 / iv.Seconds
		}
	}
}

// collectSystem sends a job's system series, those it has had seconds for.
func collectSystem(ch chan<- prometheus.Metric, j *job) {
	st := &j.sys
	if st.server {
		counter := func(d *prometheus.Desc, v float64, l ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, append([]string{j.id, j.workload}, l...)...)
		}
		gauge := func(d *prometheus.Desc, v float64, l ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{j.id, j.workload}, l...)...)
		}
		counter(descServerCPU, float64(st.userNs)/1e9, "user")
		counter(descServerCPU, float64(st.sysNs)/1e9, "system")
		counter(descServerCtx, float64(st.vol), "voluntary")
		counter(descServerCtx, float64(st.invol), "involuntary")
		counter(descServerRunQ, float64(st.runDelayNs)/1e9)
		if st.port {
			counter(descServerPort, float64(st.portIn), "in")
			counter(descServerPort, float64(st.portOut), "out")
		}
		if x := st.states; x != nil {
			n := float64(x.Total())
			for _, s := range []struct {
				name string
				v    int64
			}{{"cpu", x.CPU}, {"runnable", x.Runnable}, {"network", x.Network}, {"lock", x.Lock}, {"io", x.IO}, {"idle", x.Idle}} {
				gauge(descServerState, float64(s.v)/n, s.name)
			}
		}
		c := st.host
		if total := c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal; total > 0 {
			for _, m := range []struct {
				name string
				v    int64
			}{{"usr", c.User}, {"nice", c.Nice}, {"sys", c.System}, {"iowait", c.IOWait}, {"irq", c.IRQ},
				{"softirq", c.SoftIRQ}, {"steal", c.Steal}, {"idle", c.Idle}} {
				gauge(descServerHost, float64(m.v)/float64(total), m.name)
			}
		}
	}
	if st.client {
		ch <- prometheus.MustNewConstMetric(descClientOther, prometheus.GaugeValue, st.otherCores, j.id, j.workload)
	}
}

var _ runner.SystemOutput = (*Exporter)(nil)
