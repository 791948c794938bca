package cli

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
