package promexp

import (
	"math"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/sysprobe"
)

// serverSecond is one second of a server: 0.3 s user, 0.1 s system CPU,
// its thread samples split 20/10/60/10 between cpu, runnable, network and
// lock, on a 4-CPU host a quarter busy.
func serverSecond(seq int64) runner.SystemSecond {
	return runner.SystemSecond{Source: "server", Elapsed: time.Duration(seq) * time.Second, Phase: "measure",
		Second: sysprobe.Second{Seq: seq, Interval: sysprobe.Interval{Seconds: 1,
			Host: sysprobe.Host{CPUs: 4, CPU: sysprobe.CPUTimes{User: 6e8, System: 4e8, Idle: 3e9}},
			Server: &sysprobe.Server{UserNs: 3e8, SysNs: 1e8, Voluntary: 500, Involuntary: 20, RunDelayNs: 2e6,
				States: sysprobe.States{CPU: 20, Runnable: 10, Network: 60, Lock: 10}, StateHz: 100,
				Port: &sysprobe.Port{Port: 5432, BytesIn: 1000, BytesOut: 3000}}}}}
}

// The server's seconds a run hands its outputs become counters that add
// them up and gauges of the last one, under the job's labels; a job that
// has had none has none of these series.
func TestExporterSystem(t *testing.T) {
	live := run(t, 1, 1)
	e := New()
	e.Start(runner.Job{ID: 7, Workload: "w", TxTypes: []string{"fast", "slow", "bad"}, Live: live})
	e.Start(runner.Job{ID: 8, Workload: "w", TxTypes: []string{"fast", "slow", "bad"}, Live: live})
	fams := scrape(t, e.Handler())
	for _, name := range []string{"sledge_server_cpu_seconds_total", "sledge_server_context_switches_total",
		"sledge_server_run_queue_delay_seconds_total", "sledge_server_port_bytes_total",
		"sledge_server_thread_state_share", "sledge_server_host_cpu_share", "sledge_client_host_other_cpu_cores"} {
		if fams[name] != nil {
			t.Errorf("%s exported before any second", name)
		}
	}
	for i := int64(1); i <= 3; i++ {
		e.System(7, serverSecond(i))
	}
	e.System(7, runner.SystemSecond{Source: "client_host", Second: sysprobe.Second{Seq: 1, Interval: sysprobe.Interval{
		Seconds: 2, Host: sysprobe.Host{CPUs: 2, OtherCPU: 5e8}}}})
	e.System(99, serverSecond(1)) // a job the exporter does not follow
	fams = scrape(t, e.Handler())
	job := map[string]string{"job_id": "7", "workload": "w"}
	with := func(k, v string) map[string]string {
		m := map[string]string{k: v}
		for a, b := range job {
			m[a] = b
		}
		return m
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"sledge_server_cpu_seconds_total", with("mode", "user"), 0.9},
		{"sledge_server_cpu_seconds_total", with("mode", "system"), 0.3},
		{"sledge_server_context_switches_total", with("kind", "voluntary"), 1500},
		{"sledge_server_context_switches_total", with("kind", "involuntary"), 60},
		{"sledge_server_run_queue_delay_seconds_total", job, 0.006},
		{"sledge_server_port_bytes_total", with("direction", "in"), 3000},
		{"sledge_server_port_bytes_total", with("direction", "out"), 9000},
		{"sledge_server_thread_state_share", with("state", "cpu"), 0.2},
		{"sledge_server_thread_state_share", with("state", "runnable"), 0.1},
		{"sledge_server_thread_state_share", with("state", "network"), 0.6},
		{"sledge_server_thread_state_share", with("state", "lock"), 0.1},
		{"sledge_server_thread_state_share", with("state", "io"), 0},
		{"sledge_server_thread_state_share", with("state", "idle"), 0},
		{"sledge_server_host_cpu_share", with("mode", "usr"), 0.15},
		{"sledge_server_host_cpu_share", with("mode", "sys"), 0.1},
		{"sledge_server_host_cpu_share", with("mode", "idle"), 0.75},
		{"sledge_client_host_other_cpu_cores", job, 0.25},
	} {
		m := series(fams, c.name, c.labels)
		if m == nil {
			t.Errorf("no %s%v", c.name, c.labels)
			continue
		}
		v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
		if math.Abs(v-c.want) > 1e-9 {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, v, c.want)
		}
	}
	if m := series(fams, "sledge_server_cpu_seconds_total", map[string]string{"job_id": "8"}); m != nil {
		t.Errorf("job 8 has server series without seconds: %v", m)
	}
	for name, ty := range map[string]string{"sledge_server_cpu_seconds_total": "COUNTER", "sledge_server_thread_state_share": "GAUGE",
		"sledge_client_host_other_cpu_cores": "GAUGE", "sledge_server_port_bytes_total": "COUNTER"} {
		if got := fams[name].GetType().String(); got != ty {
			t.Errorf("%s is a %s, want %s", name, got, ty)
		}
	}
}
