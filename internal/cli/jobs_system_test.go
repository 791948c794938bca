package cli

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/jobs"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/sysprobe"
)

func sysPtr(v float64) *float64 { return &v }

// recordSystemJob records a run job as a run does: its system seconds
// through JobRun.System (what ServerCost.Follow calls) and a summary with
// issue 25's keys. netShare is the share of the server's thread samples in
// a network wait; switches the server's switches per transaction.
func recordSystemJob(t *testing.T, path string, netShare, switches float64) int64 {
	t.Helper()
	ctx := context.Background()
	r, _, err := runner.StartJob(ctx, runner.JobStart{Kind: "run", Workload: "tpcb", RawURL: "postgres://u:CANARY-pw-77@db1/bench",
		Spec: runner.Spec{Options: map[string]any{}}, Path: path, Record: true, Stderr: io.Discard, Version: "dev"})
	if err != nil || r == nil {
		t.Fatalf("start job: %v", err)
	}
	net := int64(netShare * 1000)
	for i := 1; i <= 3; i++ {
		r.System(runner.SystemSecond{Source: "server", Elapsed: time.Duration(i) * time.Second, Phase: "measure",
			Second: sysprobe.Second{Seq: int64(i), Interval: sysprobe.Interval{Seconds: 1,
				Host: sysprobe.Host{CPUs: 4, CPU: sysprobe.CPUTimes{User: 1e9, System: 5e8, IOWait: 0, Idle: 2.5e9}},
				Server: &sysprobe.Server{Threads: 10, UserNs: 4e8, SysNs: 2e8, Voluntary: 1000, Involuntary: 50, RunDelayNs: 3e6,
					States: sysprobe.States{CPU: 200, Runnable: 0, Network: net, Lock: 0, IO: 0, Idle: 800 - net}, StateHz: 100,
					Port: &sysprobe.Port{Port: 5432, BytesIn: 40000, BytesOut: 90000, Connections: 4}}}}})
		r.System(runner.SystemSecond{Source: "client_host", Elapsed: time.Duration(i)*time.Second + 5*time.Millisecond, Phase: "measure",
			Second: sysprobe.Second{Seq: int64(i), Interval: sysprobe.Interval{Seconds: 1,
				Host: sysprobe.Host{CPUs: 2, CPU: sysprobe.CPUTimes{User: 5e8, System: 5e8, Idle: 1e9}, OtherCPU: 4e8},
				// sledge's own processes, which are not the server's.
				Server: &sysprobe.Server{UserNs: 7e8, SysNs: 1e8, Voluntary: 99}}}})
	}
	sum := &runner.RunSummary{Workload: "tpcb", Driver: "postgres", Transport: "tcp", VUs: 4, MeasuredS: 3, TPM: 60000,
		PerTxn: &runner.CostJSON{RoundTrips: 3, BytesSent: 100, BytesReceived: 200},
		ServerPerTxn: &runner.ServerCostJSON{CPUUserUs: sysPtr(400), CPUSysUs: sysPtr(200), ContextSwitches: sysPtr(switches),
			VoluntarySwitches: sysPtr(switches - 0.05), InvoluntarySwitches: sysPtr(0.05), RunQueueDelayUs: sysPtr(3),
			SyscallReadBytes: sysPtr(120), SyscallWriteBytes: sysPtr(300), PortBytesIn: sysPtr(40), PortBytesOut: sysPtr(90),
			Source: map[string]string{"cpu": "agent db1:7078"}},
		ServerThreads: &runner.ThreadStatesJSON{CPU: 0.2, Network: netShare, Idle: 0.8 - netShare, Samples: 3000, Hz: 100,
			Threads: 10, Source: "agent db1:7078"},
		ServerHost: &runner.HostJSON{Source: "agent db1:7078", CPUs: 4, User: 0.25, System: 0.125, Idle: 0.625},
		ClientHost: &runner.HostJSON{Source: "this host (/proc)", CPUs: 2, User: 0.25, System: 0.25, Idle: 0.5,
			OtherCPUCores: 0.4, OtherCPUShare: 0.2, Warning: "the machine was busy: other processes used 0.4 of 2 cores"},
		Agent: &runner.AgentJSON{Address: "db1:7078", Version: "1.2.3", API: 1, Partial: true, SecondsMissed: 2},
	}
	r.SetSummary(sum)
	if err := r.End(ctx, nil); err != nil {
		t.Fatal(err)
	}
	return r.ID()
}

// jobs show, show --json, export (json and csv --table system) and diff
// read the system seconds and the summary's issue 25 keys.
func TestJobsSystemSeries(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "jobs.db")
	a := recordSystemJob(t, path, 0.3, 2.0)
	b := recordSystemJob(t, path, 0.6, 8.0)
	ida, idb := strconv.FormatInt(a, 10), strconv.FormatInt(b, 10)

	stdout, stderr, code := runCLI(t, home, "jobs", "show", ida, "--jobs-db", path)
	if code != 0 {
		t.Fatalf("jobs show: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		// The run's own text summary's issue 25 lines (printSummary).
		"run-queue delay µs",
		"threads: cpu 20%, runnable 0%, network 30%, lock 0%, io 0%, idle 50% of 3000 samples at 100 Hz (agent db1:7078)",
		"server host: usr 25%, sys 12%, iowait 0%",
		"client host: usr 25%, sys 25%",
		"warning: the machine was busy",
		"agent: db1:7078, sledge agent 1.2.3, API v1; partial: 2 s",
		// jobs show's own tables.
		"the server per second (3 samples",
		"sledge's host per second (3 samples",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("jobs show lacks %q:\n%s", want, stdout)
		}
	}
	// The server's table: 0.40 cores user, 0.20 sys, 1,050 switches/s,
	// 3.0 ms/s run delay, the states, 40 KB/s in, 90 out.
	if !hasRow(stdout, "3", "measure", "0.40", "0.20", "1,050", "3.0", "20%", "0%", "30%", "0%", "0%", "50%", "40.0", "90.0", "25%", "12%", "62%") {
		t.Errorf("jobs show: no server row for second 3:\n%s", stdout)
	}
	if !hasRow(stdout, "3", "measure", "25%", "25%", "0%", "50%", "0.40") {
		t.Errorf("jobs show: no host row for second 3:\n%s", stdout)
	}
	if strings.Contains(stdout, "CANARY") {
		t.Errorf("the password is in jobs show")
	}

	for _, args := range [][]string{{"jobs", "show", ida, "--json"}, {"jobs", "export", ida, "--format", "json"}} {
		stdout, stderr, code := runCLI(t, home, append(args, "--jobs-db", path)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var rec jobs.Record
		if err := json.Unmarshal([]byte(stdout), &rec); err != nil {
			t.Fatal(err)
		}
		if len(rec.System) != 6 || rec.System[0].Source != "server" || rec.System[0].Interval.Server == nil ||
			rec.System[0].Interval.Server.Port.BytesOut != 90000 || rec.System[1].Source != "client_host" || rec.System[1].Interval.Host.OtherCPU != 4e8 {
			t.Errorf("%v: system_samples %+v", args, rec.System)
		}
		if !strings.Contains(stdout, `"system_samples"`) {
			t.Errorf("%v: no system_samples key", args)
		}
	}

	stdout, stderr, code = runCLI(t, home, "jobs", "export", ida, "--format", "csv", "--table", "system", "--jobs-db", path)
	if code != 0 {
		t.Fatalf("export csv system: exit %d: %s", code, stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 7 || strings.Join(rows[0], ",") != strings.Join(systemCSVHeader, ",") {
		t.Fatalf("csv: %d rows, header %v", len(rows), rows[0])
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	srv, host := rows[1], rows[2]
	for _, c := range []struct {
		row        []string
		name, want string
	}{
		{srv, "source", "server"}, {srv, "elapsed_s", "1"}, {srv, "host_usr", "0.2500"}, {srv, "host_sys", "0.1250"},
		{srv, "host_idle", "0.6250"}, {srv, "server_cpu_user_s", "0.4"}, {srv, "server_cpu_sys_s", "0.2"},
		{srv, "voluntary_switches", "1000"}, {srv, "involuntary_switches", "50"}, {srv, "run_delay_s", "0.003"},
		{srv, "state_cpu", "0.2000"}, {srv, "state_network", "0.3000"}, {srv, "state_idle", "0.5000"},
		{srv, "port_bytes_in", "40000"}, {srv, "port_bytes_out", "90000"},
		{host, "source", "client_host"}, {host, "elapsed_s", "1.005"}, {host, "other_cpu_s", "0.4"},
		{host, "host_usr", "0.2500"}, {host, "server_cpu_user_s", ""}, {host, "voluntary_switches", ""}, {host, "port_bytes_in", ""},
	} {
		if got := c.row[col[c.name]]; got != c.want {
			t.Errorf("csv %s of %s: %q, want %q", c.name, c.row[col["source"]], got, c.want)
		}
	}

	stdout, stderr, code = runCLI(t, home, "jobs", "diff", ida, idb, "--json", "--jobs-db", path)
	if code != 0 {
		t.Fatalf("jobs diff: exit %d: %s", code, stderr)
	}
	var d struct {
		Figures []struct {
			Name  string   `json:"name"`
			A     float64  `json:"a"`
			B     float64  `json:"b"`
			Ratio *float64 `json:"ratio"`
		} `json:"figures"`
	}
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatal(err)
	}
	got := map[string][2]float64{}
	for _, f := range d.Figures {
		got[f.Name] = [2]float64{f.A, f.B}
	}
	for name, want := range map[string][2]float64{
		"server_per_txn.voluntary_switches":   {1.95, 7.95},
		"server_per_txn.involuntary_switches": {0.05, 0.05},
		"server_per_txn.run_queue_delay_us":   {3, 3},
		"server_per_txn.port_bytes_out":       {90, 90},
		"server_threads.network":              {0.3, 0.6},
		"server_threads.idle":                 {0.5, 0.2},
		"client_host.other_cpu_cores":         {0.4, 0.4},
	} {
		if g, ok := got[name]; !ok || math.Abs(g[0]-want[0]) > 1e-9 || math.Abs(g[1]-want[1]) > 1e-9 {
			t.Errorf("diff %s: %v (present %v), want %v", name, g, ok, want)
		}
	}
	stdout, _, _ = runCLI(t, home, "jobs", "diff", ida, idb, "--jobs-db", path)
	if !hasRow(stdout, "server_threads.network", "30%", "60%", "2.00") || !hasRow(stdout, "server_per_txn.voluntary_switches", "1.95", "7.95", "4.08") {
		t.Errorf("jobs diff text:\n%s", stdout)
	}
}

// hasRow reports whether a line of out has exactly these fields.
func hasRow(out string, fields ...string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.Join(strings.Fields(l), " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}

// A real run against a local PostgreSQL (read in-process, as the agent
// reads it) keeps the server's and sledge's host's seconds with its job:
// jobs show draws them, and the CSV has a row per second of each, the
// server's with its CPU and thread states.
func TestRunKeepsSystemSeries(t *testing.T) {
	u := ownDB(t, pgLazy.Get(t), "sysseries")
	home := t.TempDir()
	store := filepath.Join(home, "jobs.db")
	if _, stderr, code := runCLI(t, home, "build", "tpcb", "--scale", "1", "--db", u, "--no-job"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	stdout, stderr, code := runCLI(t, home, "run", "tpcb", "--db", u, "-c", "2", "-T", "3s", "-R", "200", "--json", "--jobs-db", store)
	if code != ExitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	var sum struct {
		JobID int64 `json:"job_id"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || sum.JobID == 0 {
		t.Fatalf("run --json: %v: %s", err, stdout)
	}
	id := strconv.FormatInt(sum.JobID, 10)
	stdout, stderr, code = runCLI(t, home, "jobs", "show", id, "--json", "--jobs-db", store)
	if code != ExitOK {
		t.Fatalf("jobs show: exit %d: %s", code, stderr)
	}
	var rec jobs.Record
	if err := json.Unmarshal([]byte(stdout), &rec); err != nil {
		t.Fatal(err)
	}
	var server, client int
	var cpu, states int64
	for _, x := range rec.System {
		switch x.Source {
		case "server":
			server++
			if s := x.Interval.Server; s != nil {
				cpu += s.UserNs + s.SysNs
				states += s.States.Total()
			}
		case "client_host":
			client++
		}
	}
	if server < 2 || client < 2 || cpu == 0 || states == 0 {
		t.Fatalf("system samples: %d server (CPU %d ns, %d thread samples), %d client_host; want 2 or more of each with figures",
			server, cpu, states, client)
	}
	stdout, _, _ = runCLI(t, home, "jobs", "show", id, "--jobs-db", store)
	for _, want := range []string{"the server per second (", "sledge's host per second (", "threads: cpu "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("jobs show lacks %q:\n%s", want, stdout)
		}
	}
	stdout, _, _ = runCLI(t, home, "jobs", "export", id, "--format", "csv", "--table", "system", "--jobs-db", store)
	rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil || len(rows) != len(rec.System)+1 {
		t.Fatalf("csv: %d rows for %d samples (%v)", len(rows), len(rec.System), err)
	}
	for _, r := range rows[1:] {
		if r[2] == "server" && (r[10] == "" || r[15] == "") {
			t.Errorf("a server row without CPU or states: %v", r)
		}
	}
}
