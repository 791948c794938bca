package agente2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/agent"
	"github.com/sledge-bench/sledge/internal/sysprobe"
	"github.com/sledge-bench/sledge/internal/testbin"
	"github.com/sledge-bench/sledge/internal/testdb"
)

var (
	binOnce    sync.Once
	binPath    string
	binCleanup = func() {}
	binErr     error
)

func TestMain(m *testing.M) {
	code := m.Run()
	binCleanup()
	os.Exit(code)
}

// sledgeBinary gives the tests the sledge command (make unit's, or one
// built once): the agent, the runs and the service are each a process of it.
func sledgeBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binPath, binCleanup, binErr = testbin.Sledge(context.Background(), "")
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// site is where the servers and the agents run: a network namespace of the
// test's own, or loopback where none can be made.
type site struct {
	ns        *testdb.Netns // nil: loopback
	bin, home string
	servers   map[string]*testdb.Server
	// secrets are what must never show: the servers' passwords and every
	// agent token the test made (right and wrong).
	secrets []string
	outputs []string // every stdout and stderr of the test's commands
	mu      sync.Mutex
}

func newSite(t *testing.T) *site {
	t.Helper()
	s := &site{bin: sledgeBinary(t), home: t.TempDir(), servers: map[string]*testdb.Server{}}
	ns, err := testdb.NewNetns(t)
	switch {
	case errors.Is(err, testdb.ErrNoNetns):
		t.Logf("no network namespace (%v): the servers and the agent on loopback", err)
	case err != nil:
		t.Fatal(err)
	default:
		s.ns = ns
		t.Logf("network namespace %s: servers and agent on %s, sledge on %s over a veth pair", ns.Name, ns.Addr, ns.HostAddr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, kind := range []string{"postgres", "mariadb"} {
		var srv *testdb.Server
		switch {
		case s.ns != nil && kind == "postgres":
			srv, err = s.ns.StartPostgres(ctx)
		case s.ns != nil:
			srv, err = s.ns.StartMariaDB(ctx)
		case kind == "postgres":
			// Servers of the test's own, not the run's shared ones: the
			// figures here are the whole server's.
			srv, err = testdb.StartPostgres(ctx)
		default:
			srv, err = testdb.StartMariaDB(ctx)
		}
		srv = testdb.Need(t, srv, err)
		if s.ns == nil {
			t.Cleanup(func() {
				if err := srv.Stop(); err != nil {
					t.Error(err)
				}
			})
		}
		s.servers[kind] = srv
		s.secrets = append(s.secrets, srv.Password)
	}
	return s
}

// agent starts a sledge agent beside the servers.
func (s *site) agent(t *testing.T) *testdb.Agent {
	t.Helper()
	a, err := testdb.StartAgent(t, s.bin, s.ns)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.secrets = append(s.secrets, a.Token)
	s.mu.Unlock()
	return a
}

func (s *site) url(kind, db string) string {
	srv := s.servers[kind]
	scheme := map[string]string{"postgres": "postgres", "mariadb": "mysql"}[kind]
	return fmt.Sprintf("%s://%s:%s@%s/%s", scheme, srv.User, srv.Password, net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port)), db)
}

func (s *site) env() []string {
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		switch k {
		case "SLEDGE_DB", "SLEDGE_JOBS_DB", "SLEDGE_AGENT_TOKEN", "XDG_DATA_HOME":
			continue
		}
		env = append(env, e)
	}
	return append(env, "XDG_DATA_HOME="+s.home)
}

// sledge runs the binary to its end.
func (s *site) sledge(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(s.bin, args...)
	cmd.Env = s.env()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("sledge %s: %v", args[0], err)
	}
	s.record(o.String(), e.String())
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

func (s *site) record(out ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outputs = append(s.outputs, out...)
}

// runJSON is `sledge run … --json` that must succeed.
func (s *site) runJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	stdout, stderr, code := s.sledge(t, append([]string{"run"}, append(args, "--json")...)...)
	if code != 0 {
		t.Fatalf("run %s: exit %d: %s", s.redact(strings.Join(args, " ")), code, s.redact(stderr))
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("run --json: %v: %.500s", err, s.redact(stdout))
	}
	return res
}

// redact hides the secrets in text the test prints.
func (s *site) redact(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sec := range s.secrets {
		text = strings.ReplaceAll(text, sec, "REDACTED")
	}
	return text
}

// num is the number at a dotted path of decoded JSON.
func num(m map[string]any, path string) (float64, bool) {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		o, ok := v.(map[string]any)
		if !ok {
			return 0, false
		}
		v = o[k]
	}
	f, ok := v.(float64)
	return f, ok
}

func str(m map[string]any, path string) string {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		o, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = o[k]
	}
	s, _ := v.(string)
	return s
}

func must(t *testing.T, m map[string]any, path string) float64 {
	t.Helper()
	v, ok := num(m, path)
	if !ok {
		t.Fatalf("no %s in the run's --json", path)
	}
	return v
}

// The run's length: a few thousand transactions. The agent and the
// in-process reading take the interval's edges at the same instants (they
// agreed to 0.000% on 6-s and on 3-s runs), and the thread samples stay
// in the thousands (modes wants 100); each second more kept both cores
// busy for 6 runs (issue 24: the suite's CPU). 4 VUs, as in issue 25 §3: the more of the server's
// threads are the VUs' connections, the less its idle threads dilute the
// network share (see modes).
var runArgs = []string{"--vus", "4", "--rampup", "1s", "-T", "3s"}

// TestAgentEndToEnd: a real sledge agent beside private PostgreSQL and
// MariaDB servers, in a network namespace where one can be made (the path
// a real other host's), else on loopback. For each database: runs with
// --agent in procedure and client mode, the server's figures from the
// agent, the agent's version in --json and in the job, the agent's server
// CPU per transaction within 5% of the same run's in-process cross-check,
// and client mode with more server context switches per transaction and a
// larger network share of the server's threads than procedure mode. Then
// on PostgreSQL: an agent killed mid-run, a wrong token, an agent that
// cannot find the server. Passwords and tokens never show in any output,
// in the job store or in the service's API.
func TestAgentEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers and agents, builds schemas")
	}
	s := newSite(t)
	t.Run("watch", s.watch)
	for _, kind := range []string{"postgres", "mariadb"} {
		t.Run(kind, func(t *testing.T) { s.modes(t, kind) })
	}
	// These use the postgres subtest's schema.
	t.Run("agent killed mid-run", s.killedAgent)
	t.Run("refused before the run", s.refused)
	t.Run("secrets", s.noSecrets)
}

// watch: the agent, through its Go client, finds each server by its port
// (in the namespace: the namespace's sockets) and reads its processes.
func (s *site) watch(t *testing.T) {
	a := s.agent(t)
	ctx := context.Background()
	c, err := agent.Dial(ctx, a.Addr, agent.ClientOptions{Token: a.Token, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("dial the agent: %v", err)
	}
	defer c.Close()
	for kind, srv := range s.servers {
		w, err := c.Watch(ctx, sysprobe.Target{Port: srv.Port}, false)
		if err != nil {
			t.Fatalf("%s: watch port %d: %v", kind, srv.Port, err)
		}
		found := w.Found()
		if len(found) == 0 || !strings.HasPrefix(found[0].Comm, map[string]string{"postgres": "postgres", "mariadb": "mariadbd"}[kind]) {
			t.Errorf("%s: found %+v", kind, found)
		}
		snap, err := w.Snapshot(ctx)
		if err != nil {
			t.Fatalf("%s: snapshot: %v", kind, err)
		}
		// Counters start at the watch: only the gauges say anything yet.
		if snap.Server == nil || snap.Server.Threads == 0 || snap.Server.Processes == 0 {
			t.Errorf("%s: snapshot's server %+v", kind, snap.Server)
		}
		if snap.Server != nil && (snap.Server.Port == nil || snap.Server.Port.Port != srv.Port) {
			t.Errorf("%s: port %+v, want %d (missing: %v)", kind, snap.Server.Port, srv.Port, snap.Missing)
		}
		if err := w.Close(); err != nil {
			t.Errorf("%s: close the watch: %v", kind, err)
		}
	}
}

// modes: procedure and client mode through the agent on one database.
func (s *site) modes(t *testing.T, kind string) {
	u := s.url(kind, "e2e_agent")
	if _, stderr, code := s.sledge(t, "build", "tpcc", "--db", u, "--warehouses", "2"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, s.redact(stderr))
	}
	a := s.agent(t)
	c, err := agent.Dial(context.Background(), a.Addr, agent.ClientOptions{Token: a.Token, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("dial the agent: %v", err)
	}
	version := c.Info().Version
	c.Close()
	if version == "" {
		t.Fatal("the agent's /v1/info has no version")
	}
	got := map[string]map[string]any{}
	for _, mode := range []string{"procedure", "client"} {
		res := s.runJSON(t, append([]string{"tpcc", "--db", u, "--mode", mode, "--agent", a.Addr, "--agent-token-file", a.TokenFile}, runArgs...)...)
		got[mode] = res
		must(t, res, "nopm") // the run measured
		if v := str(res, "agent.version"); v != version {
			t.Errorf("%s: agent.version %q, want the agent's %q", mode, v, version)
		}
		if res["agent"].(map[string]any)["partial"] != false {
			t.Errorf("%s: agent.partial %v with the agent up all along", mode, res["agent"].(map[string]any)["partial"])
		}
		for _, k := range []string{"cpu_user_us", "cpu_sys_us", "context_switches", "run_queue_delay_us", "port_bytes_in", "port_bytes_out"} {
			if v, ok := num(res, "server_per_txn."+k); !ok || v < 0 {
				t.Errorf("%s: server_per_txn.%s = %v, want a figure", mode, k, res["server_per_txn"].(map[string]any)[k])
			}
		}
		if src := str(res, "server_per_txn.source.cpu"); !strings.HasPrefix(src, "agent ") || !strings.Contains(src, a.Addr) {
			t.Errorf("%s: server CPU's source %q, want agent %s", mode, src, a.Addr)
		}
		if src := str(res, "server_threads.source"); !strings.HasPrefix(src, "agent ") {
			t.Errorf("%s: server_threads.source %q, want the agent", mode, src)
		}
		if n := must(t, res, "server_threads.samples"); n < 100 {
			t.Errorf("%s: %v thread samples over the measured interval", mode, n)
		}

		// The same run's server CPU read in-process, where sledge counts
		// the server local (loopback): the agent must agree with it. A
		// server in the namespace is "remote" to sledge, though its
		// processes are this machine's: agreement is checked on loopback
		// then (agrees).
		agentCPU := must(t, res, "server_per_txn.cpu_user_us") + must(t, res, "server_per_txn.cpu_sys_us")
		if s.ns == nil {
			checkAgreement(t, kind+" "+mode, res)
		} else if _, ok := res["server_per_txn"].(map[string]any)["local_check"]; ok {
			t.Errorf("%s: a local_check for a server on %s, which sledge cannot know is this machine's", mode, s.ns.Addr)
		}
		t.Logf("%s %s: NOPM %.0f; server CPU/txn %.1f µs; server switches/txn %.2f; network share %.3f of %.0f thread samples",
			kind, mode, must(t, res, "nopm"), agentCPU, must(t, res, "server_per_txn.context_switches"), must(t, res, "server_threads.network"), must(t, res, "server_threads.samples"))

		// The job keeps the agent and its version.
		id := must(t, res, "job_id")
		shown, stderr, code := s.sledge(t, "jobs", "show", "--json", strconv.FormatInt(int64(id), 10))
		if code != 0 {
			t.Fatalf("jobs show: exit %d: %s", code, stderr)
		}
		if !strings.Contains(shown, `"agent"`) || !strings.Contains(shown, strconv.Quote(version)) {
			t.Errorf("jobs show --json %v lacks the agent's version %q:\n%.1500s", id, version, s.redact(shown))
		}
	}
	if s.ns != nil {
		t.Run("agrees on loopback", func(t *testing.T) { s.agrees(t, kind) })
	}
	// Client mode makes the server wait for the client between each of
	// ~30 statements, procedure mode once: more switches per transaction
	// and more of the server's thread time in a network wait per
	// transaction. Not a larger share of all its time: the share also
	// depends on how fast the client answers (a cheaper client leaves the
	// server less to wait for), and on one 2-core machine the server waits
	// on its socket while the client waits for a CPU, in both modes; the
	// shares were 2-4 points apart and crossed on a loaded machine
	// (docs/cost.md, "Why: procedure against client, on both sides").
	p, c2 := got["procedure"], got["client"]
	if ps, cs := must(t, p, "server_per_txn.context_switches"), must(t, c2, "server_per_txn.context_switches"); cs <= ps {
		t.Errorf("server context switches per transaction: client %.2f, procedure %.2f; want more in client mode", cs, ps)
	}
	netPerTxn := func(res map[string]any) float64 {
		return must(t, res, "server_threads.network") * must(t, res, "server_threads.samples") / must(t, res, "total.count")
	}
	if pn, cn := netPerTxn(p), netPerTxn(c2); cn <= pn {
		t.Errorf("server threads' network-wait samples per transaction: client %.3f, procedure %.3f; want more in client mode", cn, pn)
	}
}

// checkAgreement: the agent's server CPU per transaction within 5% of the
// same run's in-process reading (server_per_txn.local_check).
func checkAgreement(t *testing.T, what string, res map[string]any) {
	t.Helper()
	agentCPU := must(t, res, "server_per_txn.cpu_user_us") + must(t, res, "server_per_txn.cpu_sys_us")
	localCPU := must(t, res, "server_per_txn.local_check.cpu_user_us") + must(t, res, "server_per_txn.local_check.cpu_sys_us")
	d := math.Abs(agentCPU-localCPU) / localCPU
	if d > 0.05 {
		t.Errorf("%s: server CPU per transaction from the agent %.1f µs, in-process %.1f µs: %.1f%% apart, want within 5%%",
			what, agentCPU, localCPU, 100*d)
	}
	t.Logf("%s: server CPU per transaction from the agent %.1f µs, in-process %.1f µs (%.3f%% apart)", what, agentCPU, localCPU, 100*d)
}

// agrees: with the site in a namespace, the 5% agreement on a server and
// an agent of the test's own on loopback, where sledge reads the server
// in-process too.
func (s *site) agrees(t *testing.T, kind string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var srv *testdb.Server
	var err error
	if kind == "postgres" {
		srv, err = testdb.StartPostgres(ctx)
	} else {
		srv, err = testdb.StartMariaDB(ctx)
	}
	srv = testdb.Need(t, srv, err)
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
	})
	s.mu.Lock()
	s.secrets = append(s.secrets, srv.Password)
	s.mu.Unlock()
	a, err := testdb.StartAgent(t, s.bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.secrets = append(s.secrets, a.Token)
	s.mu.Unlock()
	scheme := map[string]string{"postgres": "postgres", "mariadb": "mysql"}[kind]
	u := fmt.Sprintf("%s://%s:%s@%s/e2e_agent", scheme, srv.User, srv.Password, net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port)))
	if _, stderr, code := s.sledge(t, "build", "tpcc", "--db", u, "--warehouses", "2"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, s.redact(stderr))
	}
	res := s.runJSON(t, append([]string{"tpcc", "--db", u, "--mode", "procedure", "--agent", a.Addr, "--agent-token-file", a.TokenFile}, runArgs...)...)
	checkAgreement(t, kind+" on loopback", res)
}

// killedAgent: SIGKILL to the agent in the measured interval; the run ends
// as it would have, its agent figures partial. Throttled: what it reads is
// the agent's silence, not the database's speed.
func (s *site) killedAgent(t *testing.T) {
	u := s.url("postgres", "e2e_agent")
	a := s.agent(t)
	cmd := exec.Command(s.bin, "run", "tpcc", "--db", u, "--mode", "procedure", "--agent", a.Addr,
		"--agent-token-file", a.TokenFile, "--json", "-P", "1", "--vus", "2", "--rampup", "1s", "-T", "8s", "-R", "200")
	cmd.Env = s.env()
	var o, e bytes.Buffer
	cmd.Stdout = &o
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Killed at the second progress line of the measured interval (not
	// at a time: a busy machine may take seconds to start the run).
	sc := bufio.NewScanner(pipe)
	measured := 0
	for sc.Scan() {
		e.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "progress: ") && !strings.Contains(sc.Text(), "(ramp-up") {
			if measured++; measured == 2 {
				a.Kill()
				break
			}
		}
	}
	for sc.Scan() {
		e.WriteString(sc.Text() + "\n")
	}
	err = cmd.Wait()
	s.record(o.String(), e.String())
	if measured < 2 {
		t.Fatalf("the run ended before its measured interval's second progress line: %s", s.redact(e.String()))
	}
	if err != nil {
		t.Fatalf("run with its agent killed: %v (exit %d, want 0 as without it): %s", err, cmd.ProcessState.ExitCode(), s.redact(e.String()))
	}
	var res map[string]any
	if err := json.Unmarshal(o.Bytes(), &res); err != nil {
		t.Fatalf("--json: %v: %.500s", err, s.redact(o.String()))
	}
	if p, _ := res["agent"].(map[string]any)["partial"].(bool); !p {
		t.Errorf("agent.partial %v, want true", res["agent"])
	}
	if m, ok := num(res, "agent.seconds_missed"); !ok || m <= 0 {
		t.Errorf("agent.seconds_missed %v, want > 0", m)
	}
	if _, ok := num(res, "nopm"); !ok {
		t.Error("no nopm: the run did not measure")
	}
	if !strings.Contains(e.String(), a.Addr) {
		t.Errorf("stderr does not say the agent %s went silent:\n%s", a.Addr, s.redact(e.String()))
	}
}

// refused: a wrong token and an agent that cannot find the server end the
// run before it starts, with one line and exit 1.
func (s *site) refused(t *testing.T) {
	u := s.url("postgres", "e2e_agent")
	a := s.agent(t)
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		t.Fatal(err)
	}
	wrong := hex.EncodeToString(raw)
	s.mu.Lock()
	s.secrets = append(s.secrets, wrong)
	s.mu.Unlock()
	wrongFile := filepath.Join(t.TempDir(), "wrong-token")
	if err := os.WriteFile(wrongFile, []byte(wrong+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"wrong token", []string{"--agent", a.Addr, "--agent-token-file", wrongFile}, "token"},
		{"server not found", []string{"--agent", a.Addr, "--agent-token-file", a.TokenFile, "--agent-target", "port=1"}, "not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, js := range []bool{false, true} {
				args := append([]string{"run", "tpcc", "--db", u, "--mode", "procedure", "-T", "5s"}, tc.args...)
				if js {
					args = append(args, "--json")
				}
				stdout, stderr, code := s.sledge(t, args...)
				line := strings.TrimSpace(stderr)
				if code != 1 || strings.Count(line, "\n") != 0 || line == "" {
					t.Errorf("--json %v: exit %d, stderr %q; want exit 1 and one line", js, code, s.redact(stderr))
				}
				if !strings.Contains(line, a.Addr) || !strings.Contains(strings.ToLower(line), tc.want) {
					t.Errorf("--json %v: %q does not name the agent %s and say %q", js, s.redact(line), a.Addr, tc.want)
				}
				if strings.Contains(stdout+stderr, "NOPM") || strings.Contains(stdout, "nopm") {
					t.Errorf("--json %v: the run ran:\n%s", js, s.redact(stdout))
				}
			}
		})
	}
}

// noSecrets: no password or token in any output of the test's commands, in
// the job store (every job shown), in any file under the data home, or in
// the service's API.
func (s *site) noSecrets(t *testing.T) {
	list, stderr, code := s.sledge(t, "jobs", "list", "--json", "--limit", "0")
	if code != 0 {
		t.Fatalf("jobs list: exit %d: %s", code, stderr)
	}
	var l struct {
		Jobs []struct {
			ID int64 `json:"id"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(list), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Jobs) == 0 {
		t.Fatal("no jobs recorded")
	}
	for _, j := range l.Jobs {
		id := strconv.FormatInt(j.ID, 10)
		s.sledge(t, "jobs", "show", id)
		s.sledge(t, "jobs", "show", id, "--json")
		s.sledge(t, "jobs", "export", id, "--format", "json")
	}

	// The service over the same store, its own token on loopback.
	port, err := testdb.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	serveToken := filepath.Join(t.TempDir(), "serve-token")
	if err := os.WriteFile(serveToken, []byte("e2e-serve-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	srv := exec.Command(s.bin, "serve", "--listen", addr, "--token-file", serveToken)
	srv.Env = s.env()
	var so bytes.Buffer
	srv.Stdout, srv.Stderr = &so, &so
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = srv.Process.Signal(syscall.SIGTERM)
		_ = srv.Wait()
		s.record(so.String())
	}()
	get := func(path string) string {
		for range 100 {
			req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
			req.Header.Set("Authorization", "Bearer e2e-serve-token")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("GET %s: %s", path, resp.Status)
			}
			return string(b)
		}
		t.Fatalf("the service on %s did not answer: %s", addr, so.String())
		return ""
	}
	s.record(get("/api/jobs"))
	for _, j := range l.Jobs {
		s.record(get(fmt.Sprintf("/api/jobs/%d", j.ID)))
		s.record(get(fmt.Sprintf("/api/jobs/%d/timeseries", j.ID)))
	}

	s.mu.Lock()
	secrets, outputs := append([]string(nil), s.secrets...), append([]string(nil), s.outputs...)
	s.mu.Unlock()
	for i, o := range outputs {
		for _, sec := range secrets {
			if strings.Contains(o, sec) {
				t.Errorf("output %d shows a password or token:\n%.1000s", i, s.redact(o))
			}
		}
	}
	_ = filepath.WalkDir(s.home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, sec := range secrets {
			if bytes.Contains(b, []byte(sec)) {
				t.Errorf("%s holds a password or token", p)
			}
		}
		return nil
	})
}
