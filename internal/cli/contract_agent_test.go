package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/testdb"
)

// Issue 25 §2: a run that reads the server's side through sledge agent, a
// real agent process beside a private PostgreSQL (the run's own behaviour;
// the end-to-end figures are internal/e2e's).

// runAgentProc is a running `sledge agent`.
type runAgentProc struct {
	cmd  *exec.Cmd
	addr string // HOST:PORT it listens on
}

// startAgent starts `sledge agent --listen 127.0.0.1:0 ARGS` and waits
// for its listening line.
func startAgent(t *testing.T, args ...string) *runAgentProc {
	t.Helper()
	bin := sledgeBinary(t)
	cmd := exec.Command(bin, append([]string{"agent", "--listen", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &runAgentProc{cmd: cmd}
	t.Cleanup(func() { a.kill() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		first := true
		for sc.Scan() {
			if first {
				lines <- sc.Text()
				first = false
			}
		}
		if first {
			close(lines)
		}
	}()
	select {
	case line, ok := <-lines:
		m := regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`).FindStringSubmatch(line)
		if !ok || m == nil {
			t.Fatalf("sledge agent: %q", line)
		}
		a.addr = m[1]
	case <-time.After(30 * time.Second):
		t.Fatal("sledge agent did not say where it listens")
	}
	return a
}

func (a *runAgentProc) kill() {
	if a.cmd.Process != nil && a.cmd.ProcessState == nil {
		_ = a.cmd.Process.Signal(syscall.SIGKILL)
		_ = a.cmd.Wait()
	}
}

// agentRunJSON is what these tests read of a run's --json.
type agentRunJSON struct {
	JobID  int64 `json:"job_id"`
	PerTxn struct {
		ClientCPUUserUs *float64 `json:"client_cpu_user_us"`
	} `json:"per_txn"`
	Server struct {
		CPUUserUs  *float64          `json:"cpu_user_us"`
		CPUSysUs   *float64          `json:"cpu_sys_us"`
		PortIn     *float64          `json:"port_bytes_in"`
		Source     map[string]string `json:"source"`
		Missing    map[string]string `json:"missing"`
		LocalCheck *struct {
			CPUUserUs float64 `json:"cpu_user_us"`
		} `json:"local_check"`
	} `json:"server_per_txn"`
	Agent *struct {
		Address       string `json:"address"`
		Version       string `json:"version"`
		API           int    `json:"api"`
		Partial       bool   `json:"partial"`
		SecondsMissed int    `json:"seconds_missed"`
	} `json:"agent"`
	Threads *struct {
		Samples int64 `json:"samples"`
	} `json:"server_threads"`
	ClientHost *struct {
		CPUs int `json:"cpus"`
	} `json:"client_host"`
}

func agentTokenFile(t *testing.T, token string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The run's new flags and keys (docs/contracts.md): a run through a real
// agent has the server's figures from it, the agent in the JSON and the
// job, and (the server being local too) the in-process cross-check; a
// run without --agent reads the same figures in-process.
func TestContractRunAgent(t *testing.T) {
	root := newRoot(t.Context(), &Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }})
	for _, cmd := range []string{"run", "compare"} {
		c, _, err := root.Find([]string{cmd})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"agent", "agent-token-file", "agent-target", "agent-ca", "stacks"} {
			if c.Flag(f) == nil {
				t.Errorf("%s has no --%s", cmd, f)
			}
		}
	}
	srv := pgLazy.Get(t)
	home := t.TempDir()
	url := pgNoPassword(t, srv)
	sledgeBuild(t, srv, home, "tpcb", "--db", url, "-s", "1")
	const token = "s3cret-agent-token"
	a := startAgent(t, "--token-file", agentTokenFile(t, token))
	keys := map[string]kind{
		"server_per_txn.cpu_user_us": jNumber, "server_per_txn.cpu_sys_us": jNumber, "server_per_txn.context_switches": jNumber,
		"server_per_txn.voluntary_switches": jNumber, "server_per_txn.involuntary_switches": jNumber,
		"server_per_txn.run_queue_delay_us": jNumber, "server_per_txn.syscall_read_bytes": jNumber,
		"server_per_txn.syscall_write_bytes": jNumber, "server_per_txn.port_bytes_in": jNumber, "server_per_txn.port_bytes_out": jNumber,
		"server_threads.cpu": jNumber, "server_threads.runnable": jNumber, "server_threads.network": jNumber,
		"server_threads.lock": jNumber, "server_threads.io": jNumber, "server_threads.idle": jNumber,
		"server_threads.samples": jNumber, "server_threads.hz": jNumber, "server_threads.threads": jNumber, "server_threads.source": jString,
		"per_txn.client_cpu_user_us": jNumber, "per_txn.client_cpu_sys_us": jNumber, "per_txn.client_run_queue_delay_us": jNumber,
	}
	for _, h := range []string{"server_host", "client_host"} {
		for _, k := range []string{"cpus", "usr", "nice", "sys", "iowait", "irq", "softirq", "steal", "idle", "runnable_avg",
			"context_switches_per_s", "interrupts_per_s", "net_rx_bytes_per_s", "net_tx_bytes_per_s",
			"disk_read_bytes_per_s", "disk_written_bytes_per_s", "mem_available_bytes", "other_cpu_cores", "other_cpu_share"} {
			keys[h+"."+k] = jNumber
		}
		keys[h+".source"] = jString
	}
	withAgent := map[string]kind{"agent.address": jString, "agent.version": jString, "agent.api": jNumber,
		"agent.partial": jBool, "agent.seconds_missed": jNumber,
		"server_per_txn.local_check.cpu_user_us": jNumber, "server_per_txn.local_check.cpu_sys_us": jNumber,
		"server_per_txn.local_check.context_switches": jNumber, "server_per_txn.local_check.source": jString}
	for _, c := range []struct {
		name   string
		args   []string
		source string
	}{
		{"agent", []string{"--agent", a.addr, "--agent-token-file", agentTokenFile(t, token)}, "agent " + a.addr},
		{"in-process", nil, "this host (/proc)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := sledgeProc(t, srv, home, append([]string{"run", "tpcb", "--db", url, "-c", "2", "--rampup", "1", "-T", "3", "--json"}, c.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			want := map[string]kind{}
			for k, v := range keys {
				want[k] = v
			}
			if c.args != nil {
				for k, v := range withAgent {
					want[k] = v
				}
			}
			pinKeys(t, "run --json ("+c.name+")", r.stdout, want)
			var s agentRunJSON
			if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(s.Server.Source["cpu"], c.source+": ") {
				t.Errorf("server cpu source %q, want %q first", s.Server.Source["cpu"], c.source)
			}
			if s.Server.CPUUserUs == nil || *s.Server.CPUUserUs+*s.Server.CPUSysUs <= 0 || s.Threads == nil || s.Threads.Samples <= 0 {
				t.Errorf("server figures: %s", r.stdout)
			}
			if c.args != nil {
				if s.Agent == nil || s.Agent.Address != a.addr || s.Agent.Version == "" || s.Agent.API != 1 || s.Agent.Partial {
					t.Errorf("agent %+v", s.Agent)
				}
				// The job keeps the agent and its version.
				show := sledgeProc(t, nil, home, "jobs", "show", fmt.Sprint(s.JobID), "--json")
				kept := regexp.MustCompile(`"agent":\s*\{\s*"address":\s*"` + regexp.QuoteMeta(a.addr) + `",\s*"version":\s*"` + regexp.QuoteMeta(s.Agent.Version) + `"`)
				if show.code != 0 || !kept.MatchString(show.stdout) {
					t.Errorf("jobs show %d: exit %d: %.2000s %s", s.JobID, show.code, show.stdout, show.stderr)
				}
			} else if s.Agent != nil || s.Server.LocalCheck != nil {
				t.Errorf("without --agent: agent %+v, local_check %+v", s.Agent, s.Server.LocalCheck)
			}
			if strings.Contains(r.stdout+r.stderr, token) {
				t.Error("the token is in the output")
			}
		})
	}
	// The text summary's new lines.
	r := sledgeProc(t, srv, home, "run", "tpcb", "--db", url, "-c", "2", "--rampup", "1", "-T", "2", "--no-job",
		"--agent", "http://"+a.addr, "--agent-token-file", agentTokenFile(t, token))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"run-queue delay µs", "port bytes", "threads: cpu ", "server host: usr ", "agent: " + a.addr + ", sledge agent ", "client host: usr ", "cross-check: CPU µs"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("summary has no %q:\n%s", want, r.stdout)
		}
	}
}

// Before the run: an agent that refuses the token, does not answer or
// does not find the server stops it with one line naming the agent (never
// the token) and exit 1, nothing run; bad agent flags are bad input (2).
func TestRunAgentRefused(t *testing.T) {
	srv := pgLazy.Get(t)
	home := t.TempDir()
	url := pgNoPassword(t, srv)
	sledgeBuild(t, srv, home, "tpcb", "--db", url, "-s", "1")
	const token = "right-token-1234"
	a := startAgent(t, "--token-file", agentTokenFile(t, token))
	free, err := testdb.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	nowhere := fmt.Sprintf("127.0.0.1:%d", free)
	for _, c := range []struct {
		name string
		args []string
		code int
		line string
	}{
		{"wrong token", []string{"--agent", a.addr, "--agent-token-file", agentTokenFile(t, "wrong-token-5678")}, 1, "agent " + a.addr},
		{"no token", []string{"--agent", a.addr}, 1, "agent " + a.addr},
		{"unreachable", []string{"--agent", nowhere, "--agent-token-file", agentTokenFile(t, token)}, 1, "agent " + nowhere},
		{"server not found", []string{"--agent", a.addr, "--agent-token-file", agentTokenFile(t, token), "--agent-target", "process=no-such-server"}, 1, "agent " + a.addr},
		{"bad target", []string{"--agent", a.addr, "--agent-target", "socket=3"}, 2, "--agent-target"},
		{"bad address", []string{"--agent", "ftp://db1:7078"}, 2, "--agent"},
		{"target without agent", []string{"--agent-target", "port=5432"}, 2, "--agent-target applies to --agent"},
		{"empty token file", []string{"--agent", a.addr, "--agent-token-file", agentTokenFile(t, "")}, 2, "--agent-token-file"},
		{"with --no-cost", []string{"--agent", a.addr, "--no-cost"}, 2, "--no-cost"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := sledgeProc(t, srv, home, append([]string{"run", "tpcb", "--db", url, "-c", "1", "-T", "1", "--rampup", "0", "--json"}, c.args...)...)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != c.code || len(lines) != 1 || !strings.Contains(lines[0], c.line) || r.stdout != "" {
				t.Errorf("exit %d (want %d), stdout %q, stderr:\n%s", r.code, c.code, r.stdout, r.stderr)
			}
			if strings.Contains(r.stderr, token) || strings.Contains(r.stderr, "wrong-token") {
				t.Errorf("a token in: %s", r.stderr)
			}
		})
	}
	// Nothing ran: no job has a run in it but failed ones.
	list := sledgeProc(t, nil, home, "jobs", "list", "--json")
	if strings.Contains(list.stdout, `"status":"done"`) {
		t.Errorf("a refused run was recorded as done: %s", list.stdout)
	}
}

// progressAt reads the whole seconds of a pgbench-style progress line.
var progressAt = regexp.MustCompile(`^progress: (\d+)\.\d s`)

func progressSeconds(s string) int { n, _ := strconv.Atoi(s); return n }

// The agent killed mid-run: the run goes on to its end and exits 0, its
// server figures partial with the seconds missed; one line said so.
func TestRunAgentKilledMidRun(t *testing.T) {
	srv := pgLazy.Get(t)
	home := t.TempDir()
	url := pgNoPassword(t, srv)
	sledgeBuild(t, srv, home, "tpcb", "--db", url, "-s", "1")
	a := startAgent(t)
	bin := sledgeBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Throttled: what the test reads is the agent's silence, not the
	// database's speed.
	cmd := exec.CommandContext(ctx, bin, "run", "tpcb", "--db", url, "-c", "2", "--rampup", "0", "-T", "6", "-R", "200", "--json", "--no-job",
		"-P", "1", "--stop-timeout", "2s", "--agent", a.addr)
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+home, "SLEDGE_DB=", "PGPASSWORD="+srv.Password)
	var out strings.Builder
	cmd.Stdout = &out
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill the agent once the run has measured for two seconds (its
	// progress lines say so).
	var stderr strings.Builder
	sc := bufio.NewScanner(errPipe)
	killed := false
	for sc.Scan() {
		line := sc.Text()
		stderr.WriteString(line + "\n")
		if m := progressAt.FindStringSubmatch(line); !killed && m != nil && progressSeconds(m[1]) >= 2 {
			a.kill()
			killed = true
		}
	}
	err = cmd.Wait()
	if err != nil || !killed {
		t.Fatalf("run: %v (agent killed: %v)\n%s", err, killed, stderr.String())
	}
	var s agentRunJSON
	if err := json.Unmarshal([]byte(out.String()), &s); err != nil {
		t.Fatal(err, out.String())
	}
	if s.Agent == nil || !s.Agent.Partial || s.Agent.SecondsMissed <= 0 {
		t.Errorf("agent %+v", s.Agent)
	}
	if s.Server.CPUUserUs == nil {
		t.Errorf("no server figures from the seconds it answered: missing %v", s.Server.Missing)
	}
	if !strings.Contains(stderr.String(), "agent "+a.addr+" stopped answering") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// A slow agent (here a small HTTP server that answers the run's opening
// calls and then takes a minute over every reading: a slow network) does
// not hold the run: each edge waits at most --stop-timeout.
func TestRunAgentSlow(t *testing.T) {
	srv := pgLazy.Get(t)
	home := t.TempDir()
	url := pgNoPassword(t, srv)
	sledgeBuild(t, srv, home, "tpcb", "--db", url, "-s", "1")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/info":
			io.WriteString(w, `{"agent":"sledge agent","version":"slow","api":1,"apis":[1],"hostname":"slow","cpus":1,"stacks":{"allowed":false,"perf":false}}`)
		case r.URL.Path == "/v1/watches" && r.Method == "POST":
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"id":"w1","found":[{"pid":1,"comm":"postgres","threads":1}],"state_hz":100}`)
		default:
			select {
			case <-time.After(time.Minute):
			case <-r.Context().Done():
			case <-stop:
			}
			http.Error(w, `{"error":"too late"}`, http.StatusServiceUnavailable)
		}
	})}
	go hs.Serve(ln)
	t.Cleanup(func() { close(stop); hs.Close() })
	start := time.Now()
	r := sledgeProc(t, srv, home, "run", "tpcb", "--db", url, "-c", "1", "--rampup", "0", "-T", "2", "--json", "--no-job",
		"--stop-timeout", "1s", "--agent", ln.Addr().String())
	took := time.Since(start)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// Two edges, the per-second reads and closing the watch, each at most
	// a second: well under the agent's minute.
	if took > 40*time.Second {
		t.Errorf("the run took %s with a slow agent", took)
	}
	var s agentRunJSON
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatal(err)
	}
	if s.Server.CPUUserUs != nil || !strings.Contains(s.Server.Missing["cpu"], "--stop-timeout") || s.Agent == nil || !s.Agent.Partial {
		t.Errorf("server cpu %v, missing %q, agent %+v", s.Server.CPUUserUs, s.Server.Missing["cpu"], s.Agent)
	}
}

// --stacks: an agent without --allow-stacks records none (one line, the
// run goes on, server_stacks.why); a local server's in-process watch
// records them with perf where perf works here, else says why.
func TestRunAgentStacks(t *testing.T) {
	srv := pgLazy.Get(t)
	home := t.TempDir()
	url := pgNoPassword(t, srv)
	sledgeBuild(t, srv, home, "tpcb", "--db", url, "-s", "1")
	a := startAgent(t)
	type stacksJSON struct {
		Stacks *struct {
			Source  string `json:"source"`
			Hz      int    `json:"hz"`
			Samples int64  `json:"samples"`
			Folded  string `json:"folded"`
			Why     string `json:"why"`
		} `json:"server_stacks"`
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"agent without --allow-stacks", []string{"--agent", a.addr}},
		{"in-process", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := sledgeProc(t, srv, home, append([]string{"run", "tpcb", "--db", url, "-c", "2", "--rampup", "0", "-T", "2", "--json", "--no-job", "--stacks"}, c.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var s stacksJSON
			if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
				t.Fatal(err)
			}
			st := s.Stacks
			if st == nil || (st.Folded == "") == (st.Why == "") {
				t.Fatalf("server_stacks %+v", st)
			}
			if c.args != nil {
				if st.Folded != "" || !strings.Contains(r.stderr, "--stacks: agent "+a.addr+" records no stacks") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
					t.Errorf("stacks %+v, stderr:\n%s", st, r.stderr)
				}
				return
			}
			if st.Folded != "" && (st.Samples <= 0 || st.Hz <= 0 || !strings.Contains(st.Folded, ";")) {
				t.Errorf("stacks %+v", st)
			}
			t.Logf("in-process: %d samples at %d Hz, why %q", st.Samples, st.Hz, st.Why)
		})
	}
}

// compare --agent: each cell's run reads the server through the agent; an
// agent that does not answer stops the compare before its first cell.
func TestCompareAgent(t *testing.T) {
	srv := pgLazy.Get(t)
	home := t.TempDir()
	url := pgNoPassword(t, srv)
	sledgeBuild(t, srv, home, "tpcb", "--db", url, "-s", "1")
	a := startAgent(t)
	r := sledgeProc(t, srv, home, "compare", "tpcb", "--db", url, "--vus", "1", "--modes", "client,prepared", "--rampup", "0", "-T", "1", "--json", "--agent", a.addr)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var c struct {
		Cells []struct {
			Server struct {
				Source map[string]string `json:"source"`
			} `json:"server_per_txn"`
		} `json:"cells"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Cells) != 2 {
		t.Fatalf("%d cells: %s", len(c.Cells), r.stdout)
	}
	for i, cell := range c.Cells {
		if !strings.HasPrefix(cell.Server.Source["cpu"], "agent "+a.addr+": ") {
			t.Errorf("cell %d: cpu source %q", i, cell.Server.Source["cpu"])
		}
	}
	a.kill()
	r = sledgeProc(t, srv, home, "compare", "tpcb", "--db", url, "--vus", "1", "--modes", "client", "-T", "1", "--json", "--agent", a.addr)
	if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); r.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "agent "+a.addr) {
		t.Errorf("compare with a dead agent: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// --workers: the coordinator holds the agent; its workers never reach it
// (they do not get the flags) and the server's figures are the run's.
func TestRunAgentWorkers(t *testing.T) {
	srv := pgLazy.Get(t)
	home := t.TempDir()
	url := pgNoPassword(t, srv)
	sledgeBuild(t, srv, home, "tpcb", "--db", url, "-s", "1")
	a := startAgent(t)
	r := sledgeProc(t, srv, home, "run", "tpcb", "--db", url, "-c", "2", "--workers", "2", "--rampup", "1", "-T", "2", "--json", "--no-job", "--agent", a.addr)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var s agentRunJSON
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatal(err)
	}
	if s.Agent == nil || s.Agent.Partial || !strings.HasPrefix(s.Server.Source["cpu"], "agent "+a.addr+": ") || s.Server.CPUUserUs == nil {
		t.Errorf("agent %+v, server source %q", s.Agent, s.Server.Source["cpu"])
	}
	if s.PerTxn.ClientCPUUserUs != nil || s.ClientHost == nil {
		t.Errorf("workers: client_cpu_user_us %v (the client is other processes), client_host %+v", s.PerTxn.ClientCPUUserUs, s.ClientHost)
	}
}

// An agent over TLS: --agent-ca with a plain HOST:PORT (or an https://
// URL) reaches it; without the CA the certificate is not trusted: exit 1
// before the run.
func TestRunAgentTLS(t *testing.T) {
	srv := pgLazy.Get(t)
	home := t.TempDir()
	url := pgNoPassword(t, srv)
	sledgeBuild(t, srv, home, "tpcb", "--db", url, "-s", "1")
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "agent.crt"), filepath.Join(dir, "agent.key")
	writeSelfSigned(t, certFile, keyFile)
	a := startAgent(t, "--tls-cert", certFile, "--tls-key", keyFile)
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"HOST:PORT and the CA", []string{"--agent", a.addr, "--agent-ca", certFile}, 0},
		{"https:// and the CA", []string{"--agent", "https://" + a.addr, "--agent-ca", certFile}, 0},
		{"https:// without the CA", []string{"--agent", "https://" + a.addr}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := sledgeProc(t, srv, home, append([]string{"run", "tpcb", "--db", url, "-c", "1", "--rampup", "0", "-T", "1", "--json", "--no-job"}, c.args...)...)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d: %s", r.code, c.code, r.stderr)
			}
			if c.code != 0 {
				if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "agent "+a.addr) {
					t.Errorf("stderr:\n%s", r.stderr)
				}
				return
			}
			var s agentRunJSON
			if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
				t.Fatal(err)
			}
			if s.Agent == nil || !strings.HasPrefix(s.Server.Source["cpu"], "agent "+a.addr) {
				t.Errorf("agent %+v, cpu source %q", s.Agent, s.Server.Source["cpu"])
			}
		})
	}
}
