package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/sysprobe"
	"github.com/sledge-bench/sledge/internal/testdb"
	"github.com/sledge-bench/sledge/internal/workload"
)

// Issue 25: the job commands' system samples (docs/contracts.md, "The job
// store"): system_samples in jobs show --json and export, the CSV of
// --table system, and jobs diff's new figures.
func TestContractJobsSystem(t *testing.T) {
	home := t.TempDir()
	store := filepath.Join(home, "jobs.db")
	a := strconv.FormatInt(recordSystemJob(t, store, 0.3, 2), 10)
	b := strconv.FormatInt(recordSystemJob(t, store, 0.5, 4), 10)
	sample := map[string]kind{"system_samples": jArray, "system_samples[].seq": jNumber, "system_samples[].source": jString,
		"system_samples[].elapsed_ms": jNumber, "system_samples[].phase": jString, "system_samples[].interval": jObject,
		"system_samples[].interval.seconds": jNumber, "system_samples[].interval.host": jObject}
	for _, args := range [][]string{{"jobs", "show", a, "--json"}, {"jobs", "export", a, "--format", "json"}} {
		stdout, stderr, code := runCLI(t, home, append(args, "--jobs-db", store)...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		pinKeys(t, strings.Join(args[:2], " "), stdout, sample)
	}
	stdout, stderr, code := runCLI(t, home, "jobs", "export", a, "--format", "csv", "--table", "system", "--jobs-db", store)
	const header = "seq,elapsed_s,source,phase,seconds,host_usr,host_sys,host_iowait,host_idle,other_cpu_s," +
		"server_cpu_user_s,server_cpu_sys_s,voluntary_switches,involuntary_switches,run_delay_s," +
		"state_cpu,state_runnable,state_network,state_lock,state_io,state_idle,port_bytes_in,port_bytes_out"
	if code != ExitOK || strings.SplitN(stdout, "\n", 2)[0] != header {
		t.Errorf("export --table system: exit %d (%s), header %q", code, stderr, strings.SplitN(stdout, "\n", 2)[0])
	}
	stdout, stderr, code = runCLI(t, home, "jobs", "diff", a, b, "--json", "--jobs-db", store)
	if code != ExitOK {
		t.Fatalf("jobs diff: exit %d: %s", code, stderr)
	}
	for _, name := range []string{"server_per_txn.run_queue_delay_us", "server_per_txn.voluntary_switches",
		"server_per_txn.involuntary_switches", "server_per_txn.syscall_read_bytes", "server_per_txn.syscall_write_bytes",
		"server_per_txn.port_bytes_in", "server_per_txn.port_bytes_out", "server_threads.cpu", "server_threads.runnable",
		"server_threads.network", "server_threads.lock", "server_threads.io", "server_threads.idle",
		"client_host.other_cpu_cores"} {
		if !strings.Contains(stdout, `"name": "`+name+`"`) && !strings.Contains(stdout, `"name":"`+name+`"`) {
			t.Errorf("jobs diff --json: no figure %s", name)
		}
	}
}

// Issue 25: the series of the server's side that `run --metrics` and the
// service's /metrics serve while a run's sampler hands over its seconds
// (docs/metrics.md), with their types and extra labels.
var systemMetricNames = map[string]struct {
	typ   dto.MetricType
	label string // the label beside job_id and workload, "" none
}{
	"sledge_server_cpu_seconds_total":             {dto.MetricType_COUNTER, "mode"},
	"sledge_server_context_switches_total":        {dto.MetricType_COUNTER, "kind"},
	"sledge_server_run_queue_delay_seconds_total": {dto.MetricType_COUNTER, ""},
	"sledge_server_port_bytes_total":              {dto.MetricType_COUNTER, "direction"},
	"sledge_server_thread_state_share":            {dto.MetricType_GAUGE, "state"},
	"sledge_server_host_cpu_share":                {dto.MetricType_GAUGE, "mode"},
	"sledge_client_host_other_cpu_cores":          {dto.MetricType_GAUGE, ""},
}

func TestContractSystemMetrics(t *testing.T) {
	port, err := testdb.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	m, err := startMetrics(addr, 0, io.Discard, true)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop(context.Background())
	w, err := workload.Lookup("tpcb")
	if err != nil {
		t.Fatal(err)
	}
	wl, err := w.Flags("run", pflag.NewFlagSet("", pflag.ContinueOnError))(1)
	if err != nil {
		t.Fatal(err)
	}
	m.Follow(3, wl, "sqlite:///x", engine.NewLive(&engine.Plan{Mix: wl.Mix(), VUs: 1}))
	m.System(runner.SystemSecond{Source: "server", Phase: "measure", Second: sysprobe.Second{Seq: 1, Interval: sysprobe.Interval{
		Seconds: 1, Host: sysprobe.Host{CPUs: 2, CPU: sysprobe.CPUTimes{User: 1e9, Idle: 1e9}},
		Server: &sysprobe.Server{UserNs: 1e8, States: sysprobe.States{Network: 5}, Port: &sysprobe.Port{BytesIn: 1}}}}})
	m.System(runner.SystemSecond{Source: "client_host", Second: sysprobe.Second{Seq: 1, Interval: sysprobe.Interval{Seconds: 1}}})
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range systemMetricNames {
		f := fams[name]
		if f == nil || f.GetType() != want.typ || len(f.GetMetric()) == 0 {
			t.Errorf("/metrics: %s is %v, want a %s", name, f, want.typ)
			continue
		}
		for _, mt := range f.GetMetric() {
			if label(mt, "job_id") != "3" || label(mt, "workload") != "tpcb" || (want.label != "" && label(mt, want.label) == "") {
				t.Errorf("%s: labels %v, want job_id 3, workload tpcb and %q", name, mt.GetLabel(), want.label)
			}
		}
	}
}
