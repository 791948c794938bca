package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/sysprobe"
)

// childEnv makes the test binary a "server": a process listening on a
// loopback port, printing the port, until its stdin closes.
const childEnv = "SLEDGE_AGENT_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() { _, _ = io.Copy(c, c); c.Close() }()
			}
		}()
		fmt.Println(ln.Addr().(*net.TCPAddr).Port)
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// server is a real process listening on a loopback port.
type server struct {
	pid, port int
	comm      string
}

func startServer(t *testing.T) server {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	port, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("the server process printed %q: %v", line, err)
	}
	comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", cmd.Process.Pid))
	return server{pid: cmd.Process.Pid, port: port, comm: strings.TrimSpace(string(comm))}
}

// agentUnder is an agent over real sysprobe, served on a loopback port.
type agentUnder struct {
	*Server
	url string
}

func startAgent(t *testing.T, cfg Config) agentUnder {
	t.Helper()
	if cfg.Version == "" {
		cfg.Version = "test"
	}
	cfg.Logf = t.Logf
	s := New(cfg)
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		hs.Close()
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return agentUnder{Server: s, url: hs.URL}
}

// do makes one request and returns the status and body.
func (a agentUnder) do(t *testing.T, method, path, token, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, a.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// openWatch opens a watch and returns its id.
func (a agentUnder) openWatch(t *testing.T, token, body string) string {
	t.Helper()
	code, b := a.do(t, "POST", "/v1/watches", token, body)
	if code != http.StatusCreated {
		t.Fatalf("POST /v1/watches %s: %d %s", body, code, b)
	}
	var ans WatchAnswer
	if err := json.Unmarshal(b, &ans); err != nil || ans.ID == "" {
		t.Fatalf("watch answer %s: %v", b, err)
	}
	return ans.ID
}

// decodeStrict decodes b into v, refusing keys v does not have: the wire
// is exactly the sysprobe types.
func decodeStrict(t *testing.T, what string, b []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s does not decode into %T: %v\n%s", what, v, err, b)
	}
}

// A watch of a real process by port, pid and name: the answer finds it,
// and its snapshot and seconds decode into the sysprobe types.
func TestWatchServesSysprobe(t *testing.T) {
	srv := startServer(t)
	a := startAgent(t, Config{})
	for _, target := range []string{
		fmt.Sprintf(`{"port":%d}`, srv.port),
		fmt.Sprintf(`{"pid":%d}`, srv.pid),
		fmt.Sprintf(`{"process":%q}`, srv.comm),
	} {
		t.Run(target, func(t *testing.T) {
			code, b := a.do(t, "POST", "/v1/watches", "", `{"target":`+target+`}`)
			if code != http.StatusCreated {
				t.Fatalf("%d %s", code, b)
			}
			var ans WatchAnswer
			decodeStrict(t, "the watch's answer", b, &ans)
			if !foundPID(ans.Found, srv.pid) || ans.StateHz != sysprobe.StateHz {
				t.Errorf("found %+v at %d Hz, want pid %d at %d Hz", ans.Found, ans.StateHz, srv.pid, sysprobe.StateHz)
			}
			code, b = a.do(t, "GET", "/v1/watches/"+ans.ID+"/snapshot", "", "")
			if code != http.StatusOK {
				t.Fatalf("snapshot: %d %s", code, b)
			}
			var snap sysprobe.Snapshot
			decodeStrict(t, "a snapshot", b, &snap)
			if snap.Server == nil || snap.Server.Threads < 1 || snap.Host.CPUs < 1 || snap.At.IsZero() {
				t.Errorf("snapshot without the server or the host: %s", b)
			}
			if strings.Contains(target, "port") && (snap.Server == nil || snap.Server.Port == nil || snap.Server.Port.Port != srv.port) {
				if snap.Missing["port"] == "" {
					t.Errorf("a watch by port has neither the port's traffic nor why not: %s", b)
				}
			}
			secs := waitSeconds(t, a, ans.ID)
			if secs[0].Seq < 1 || secs[0].Interval.Seconds <= 0 || secs[0].Interval.Server == nil {
				t.Errorf("first second %+v", secs[0])
			}
			// after=N: only later seconds.
			code, b = a.do(t, "GET", "/v1/watches/"+ans.ID+"/seconds?after="+strconv.FormatInt(secs[len(secs)-1].Seq, 10), "", "")
			var later []sysprobe.Second
			decodeStrict(t, "seconds after the last", b, &later)
			for _, s := range later {
				if s.Seq <= secs[len(secs)-1].Seq {
					t.Errorf("after=%d returned second %d", secs[len(secs)-1].Seq, s.Seq)
				}
			}
			if code, b := a.do(t, "DELETE", "/v1/watches/"+ans.ID, "", ""); code != http.StatusNoContent {
				t.Errorf("DELETE: %d %s", code, b)
			}
			if code, _ := a.do(t, "GET", "/v1/watches/"+ans.ID+"/snapshot", "", ""); code != http.StatusNotFound {
				t.Errorf("a deleted watch's snapshot: %d, want 404", code)
			}
		})
	}
	if n := a.Watches(); n != 0 {
		t.Errorf("%d watches open after all were deleted", n)
	}
}

func foundPID(ps []sysprobe.Process, pid int) bool {
	for _, p := range ps {
		if p.PID == pid {
			return true
		}
	}
	return false
}

// waitSeconds polls a watch's seconds until it has one (the sampler
// takes one a second); bounded so that a broken sampler fails the test.
func waitSeconds(t *testing.T, a agentUnder, id string) []sysprobe.Second {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		code, b := a.do(t, "GET", "/v1/watches/"+id+"/seconds?after=0", "", "")
		if code != http.StatusOK {
			t.Fatalf("seconds: %d %s", code, b)
		}
		var secs []sysprobe.Second
		decodeStrict(t, "seconds", b, &secs)
		if len(secs) > 0 {
			return secs
		}
		if time.Now().After(end) {
			t.Fatal("no second within 20 s")
		}
	}
}

// Every request needs the token when the agent has one: 401 without it,
// with another, or in another scheme; the answer never holds the token.
func TestToken(t *testing.T) {
	const token = "s3cret-agent-token"
	a := startAgent(t, Config{Token: token})
	for _, c := range []struct{ name, header string }{
		{"missing", ""},
		{"wrong", "Bearer not-the-token"},
		{"prefix", "Bearer " + token[:5]},
		{"longer", "Bearer " + token + "x"},
		{"basic", "Basic " + token},
		{"no scheme", token},
	} {
		for _, path := range []string{"/v1/info", "/v1/watches/x/snapshot", "/v2/info", "/nothing"} {
			req, _ := http.NewRequest("GET", a.url+path, nil)
			if c.header != "" {
				req.Header.Set("Authorization", c.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || !isErrorLine(b) || strings.Contains(string(b), token) {
				t.Errorf("%s token, %s: %d %s, want 401 and an error line without the token", c.name, path, resp.StatusCode, b)
			}
		}
	}
	if code, b := a.do(t, "GET", "/v1/info", token, ""); code != http.StatusOK {
		t.Errorf("the right token: %d %s", code, b)
	}

	// The client: a wrong token and none are ErrToken, in one line
	// without the token.
	for _, tok := range []string{"", "wrong-" + token} {
		_, err := Dial(t.Context(), a.url, ClientOptions{Token: tok})
		if !errors.Is(err, ErrToken) || !strings.Contains(err.Error(), "(401)") || strings.Contains(err.Error(), token) {
			t.Errorf("Dial with token %q: %v, want ErrToken naming 401 and not the token", tok, err)
		}
	}
	c, err := Dial(t.Context(), a.url, ClientOptions{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	if in := c.Info(); in.Agent != Name || in.Version != "test" || in.API != 1 || len(in.APIs) != 1 || in.MaxWatches != MaxWatches {
		t.Errorf("info %+v", in)
	}
}

// isErrorLine: the body is {"error":"one line"}.
func isErrorLine(b []byte) bool {
	var e struct {
		Error string `json:"error"`
	}
	return json.Unmarshal(b, &e) == nil && e.Error != "" && !strings.ContainsAny(e.Error, "\r\n")
}

// Bad watch requests: 400 (413 over 64 KiB) with one line, and no watch.
func TestBadWatchRequests(t *testing.T) {
	a := startAgent(t, Config{})
	for _, c := range []struct{ name, body, want string }{
		{"empty", "", "empty body"},
		{"spaces", "  \n", "empty body"},
		{"not JSON", "port=5432", "bad JSON"},
		{"array", `[{"target":{"port":5432}}]`, "bad JSON"},
		{"null", `null`, "no target"},
		{"no target", `{}`, "no target"},
		{"empty target", `{"target":{}}`, "no target"},
		{"null target", `{"target":null}`, "no target"},
		{"unknown field", `{"target":{"port":5432},"stack":true}`, "unknown field"},
		{"unknown target field", `{"target":{"port":5432,"host":"db1"}}`, "unknown field"},
		{"two values", `{"target":{"port":5432}}{"target":{"port":5433}}`, "more than one value"},
		{"trailing garbage", `{"target":{"port":5432}} x`, "more than one value"},
		{"truncated", `{"target":{"port":5432}`, "bad JSON"},
		{"port and pid", `{"target":{"port":5432,"pid":7}}`, "exactly one"},
		{"all three", `{"target":{"port":5432,"pid":7,"process":"postgres"}}`, "exactly one"},
		{"port 0 only", `{"target":{"port":0}}`, "no target"},
		{"port negative", `{"target":{"port":-1}}`, "1-65535"},
		{"port too big", `{"target":{"port":65536}}`, "1-65535"},
		{"port huge", `{"target":{"port":1e30}}`, "bad JSON"},
		{"port fraction", `{"target":{"port":5432.5}}`, "bad JSON"},
		{"port string", `{"target":{"port":"5432"}}`, "bad JSON"},
		{"pid negative", `{"target":{"pid":-5}}`, "above 0"},
		{"process path", `{"target":{"process":"/usr/bin/postgres"}}`, "plain process name"},
		{"process too long", `{"target":{"process":"postgres-server-x"}}`, "at most 15"},
		{"process newline", `{"target":{"process":"pg\nx"}}`, "plain process name"},
		{"process padded", `{"target":{"process":" postgres"}}`, "plain process name"},
		{"process bad UTF-8", "{\"target\":{\"process\":\"pg\xff\"}}", "plain process name"},
		{"stacks string", `{"target":{"port":5432},"stacks":"yes"}`, "bad JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, b := a.do(t, "POST", "/v1/watches", "", c.body)
			if code != http.StatusBadRequest || !isErrorLine(b) || !strings.Contains(string(b), c.want) {
				t.Errorf("%q: %d %s, want 400 with %q", c.body, code, b, c.want)
			}
		})
	}
	big := `{"target":{"process":"postgres"},"stacks":false` + strings.Repeat(" ", MaxBody) + `}`
	if code, b := a.do(t, "POST", "/v1/watches", "", big); code != http.StatusRequestEntityTooLarge || !isErrorLine(b) {
		t.Errorf("a body over 64 KiB: %d %s, want 413", code, b)
	}
	for _, q := range []string{"-1", "x", "1.5", "99999999999999999999"} {
		if code, b := a.do(t, "GET", "/v1/watches/x/seconds?after="+q, "", ""); code != http.StatusBadRequest || !isErrorLine(b) {
			t.Errorf("seconds?after=%s: %d %s, want 400", q, code, b)
		}
	}
	for _, mp := range [][2]string{{"GET", "/v1/watches"}, {"POST", "/v1/info"}, {"GET", "/v1/watches/x/stacks/start"}, {"PUT", "/v1/watches/x"}} {
		if code, b := a.do(t, mp[0], mp[1], "", ""); code != http.StatusMethodNotAllowed || !isErrorLine(b) {
			t.Errorf("%s %s: %d %s, want 405 with an error line", mp[0], mp[1], code, b)
		}
	}
	if n := a.Watches(); n != 0 {
		t.Errorf("%d watches after bad requests", n)
	}
}

// A target that matches nothing: 404 with sysprobe's line; the client's
// error wraps sysprobe.ErrNotFound. An unknown watch and path: 404.
func TestNotFound(t *testing.T) {
	a := startAgent(t, Config{})
	port := closedPort(t)
	code, b := a.do(t, "POST", "/v1/watches", "", fmt.Sprintf(`{"target":{"port":%d}}`, port))
	if code != http.StatusNotFound || !isErrorLine(b) || !strings.Contains(string(b), "server process not found") {
		t.Errorf("a port nobody listens on: %d %s, want 404 server process not found", code, b)
	}
	c, err := Dial(t.Context(), a.url, ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []sysprobe.Target{{Port: port}, {Process: "no-such-proc"}} {
		_, err = c.Watch(t.Context(), target, false)
		if !errors.Is(err, sysprobe.ErrNotFound) || !strings.HasPrefix(err.Error(), "agent "+c.Addr()+": server process not found") {
			t.Errorf("Watch %+v: %v, want sysprobe.ErrNotFound with the agent's line", target, err)
		}
	}
	for _, p := range []string{"/v1/watches/nope/snapshot", "/v1/watches/nope/seconds", "/v1/nothing", "/"} {
		if code, b := a.do(t, "GET", p, "", ""); code != http.StatusNotFound || !isErrorLine(b) {
			t.Errorf("GET %s: %d %s, want 404", p, code, b)
		}
	}
	if code, b := a.do(t, "DELETE", "/v1/watches/nope", "", ""); code != http.StatusNotFound || !isErrorLine(b) {
		t.Errorf("DELETE an unknown watch: %d %s, want 404", code, b)
	}
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// The fifth watch is refused with 429; closing one makes room.
func TestMaxWatches(t *testing.T) {
	srv := startServer(t)
	a := startAgent(t, Config{})
	body := fmt.Sprintf(`{"target":{"pid":%d}}`, srv.pid)
	var ids []string
	for range MaxWatches {
		ids = append(ids, a.openWatch(t, "", body))
	}
	code, b := a.do(t, "POST", "/v1/watches", "", body)
	if code != http.StatusTooManyRequests || !isErrorLine(b) {
		t.Fatalf("the fifth watch: %d %s, want 429", code, b)
	}
	_, b = a.do(t, "GET", "/v1/info", "", "")
	var in Info
	decodeStrict(t, "info", b, &in)
	if in.Watches != MaxWatches {
		t.Errorf("info says %d watches, want %d", in.Watches, MaxWatches)
	}
	if code, _ := a.do(t, "DELETE", "/v1/watches/"+ids[0], "", ""); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d", code)
	}
	a.openWatch(t, "", body)
}

// A watch no request touches is closed after idleTimeout (shortened
// here); one that is read keeps going.
func TestIdleWatchCloses(t *testing.T) {
	old := idleTimeout
	idleTimeout = 300 * time.Millisecond
	t.Cleanup(func() { idleTimeout = old })
	srv := startServer(t)
	a := startAgent(t, Config{})
	id := a.openWatch(t, "", fmt.Sprintf(`{"target":{"pid":%d}}`, srv.pid))
	for end := time.Now().Add(30 * time.Second); a.Watches() > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("an idle watch was not closed")
		}
	}
	code, b := a.do(t, "GET", "/v1/watches/"+id+"/snapshot", "", "")
	if code != http.StatusNotFound || !strings.Contains(string(b), "without a request") {
		t.Errorf("an expired watch: %d %s, want 404 saying why", code, b)
	}
}

// Closing the agent closes its watches, and refuses new ones.
func TestCloseClosesWatches(t *testing.T) {
	srv := startServer(t)
	a := startAgent(t, Config{})
	body := fmt.Sprintf(`{"target":{"pid":%d}}`, srv.pid)
	a.openWatch(t, "", body)
	a.openWatch(t, "", body)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if n := a.Watches(); n != 0 {
		t.Errorf("%d watches after Close", n)
	}
	if code, b := a.do(t, "POST", "/v1/watches", "", body); code != http.StatusServiceUnavailable || !isErrorLine(b) {
		t.Errorf("a watch after Close: %d %s, want 503", code, b)
	}
}

// A path of another API version says which this agent serves; a client
// that meets an agent of another version says so in one line.
func TestOtherAPIVersion(t *testing.T) {
	a := startAgent(t, Config{})
	for _, p := range []string{"/v2/info", "/v2/watches", "/v10/", "/v0/info"} {
		code, b := a.do(t, "GET", p, "", "")
		if code != http.StatusNotFound || strings.TrimSpace(string(b)) != `{"error":"this agent serves API v1","apis":[1]}` {
			t.Errorf("GET %s: %d %s", p, code, b)
		}
	}
	// A future agent that serves only v2 answers /v1/ as this one answers /v2/.
	v2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":"this agent serves API v2","apis":[2]}`)
	}))
	t.Cleanup(v2.Close)
	_, err := Dial(t.Context(), v2.URL, ClientOptions{})
	addr := strings.TrimPrefix(v2.URL, "http://")
	if !errors.Is(err, ErrAPIVersion) || err.Error() != "agent "+addr+" serves API v2; this sledge speaks v1" {
		t.Errorf("Dial a v2 agent: %v", err)
	}
	// Not an agent at all.
	other := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(other.Close)
	if _, err := Dial(t.Context(), other.URL, ClientOptions{}); err == nil || errors.Is(err, ErrAPIVersion) || !strings.Contains(err.Error(), "not as a sledge agent does") {
		t.Errorf("Dial a web server: %v", err)
	}
}

// Stacks without --allow-stacks: refused with the reason, the watch goes on.
func TestStacksNotAllowed(t *testing.T) {
	srv := startServer(t)
	a := startAgent(t, Config{})
	c, err := Dial(t.Context(), a.url, ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Info().Stacks; st.Allowed || st.Why == "" {
		t.Errorf("info's stacks %+v, want not allowed and why", st)
	}
	w, err := c.Watch(t.Context(), sysprobe.Target{PID: srv.pid}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	err = w.StartStacks(t.Context())
	if err == nil || !strings.Contains(err.Error(), "--allow-stacks") || strings.Contains(err.Error(), "\n") {
		t.Errorf("StartStacks: %v, want one line naming --allow-stacks", err)
	}
	if _, err := w.StopStacks(t.Context()); err == nil {
		t.Error("StopStacks without stacks: no error")
	}
	if _, err := w.Snapshot(t.Context()); err != nil {
		t.Errorf("the watch after stacks were refused: %v", err)
	}
}

// The client end to end: a watch is a sysprobe.Source over HTTP; Close
// ends it on the agent, twice is harmless.
func TestClientWatch(t *testing.T) {
	srv := startServer(t)
	a := startAgent(t, Config{Version: "1.2.3"})
	c, err := Dial(t.Context(), strings.TrimPrefix(a.url, "http://"), ClientOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(t.Context(), sysprobe.Target{Port: srv.port}, false)
	if err != nil {
		t.Fatal(err)
	}
	if w.Name() != "agent "+c.Addr() || w.Version() != "1.2.3" || !foundPID(w.Found(), srv.pid) {
		t.Errorf("name %q version %q found %+v", w.Name(), w.Version(), w.Found())
	}
	snap, err := w.Snapshot(t.Context())
	if err != nil || snap.Server == nil || snap.Host.CPUs < 1 {
		t.Fatalf("snapshot %+v: %v", snap, err)
	}
	var secs []sysprobe.Second
	for end := time.Now().Add(20 * time.Second); len(secs) == 0; time.Sleep(200 * time.Millisecond) {
		if secs, err = w.Seconds(t.Context(), 0); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(end) {
			t.Fatal("no second within 20 s")
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if a.Watches() != 0 {
		t.Error("Close left the watch on the agent")
	}
	if _, err := w.Snapshot(t.Context()); err == nil || !strings.Contains(err.Error(), "(404)") {
		t.Errorf("a closed watch's snapshot: %v, want the agent's 404", err)
	}
}

// Unreachable agents and bad addresses: one line naming the agent.
func TestDialErrors(t *testing.T) {
	port := closedPort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	_, err := Dial(t.Context(), addr, ClientOptions{})
	if !errors.Is(err, ErrUnreachable) || err.Error() != "agent "+addr+" unreachable: connection refused" {
		t.Errorf("Dial a closed port: %v", err)
	}
	// A listener that never answers: the call's timeout.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = Dial(t.Context(), ln.Addr().String(), ClientOptions{Timeout: 200 * time.Millisecond})
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "no answer within 200ms") {
		t.Errorf("Dial a silent listener: %v", err)
	}
	for _, bad := range []string{"", "db1:", "db1:0", "db1:70000", "ftp://db1:7078", "http://u:pw@db1:7078", "::1", "http://db1:7078/?x=1"} {
		_, err := Dial(t.Context(), bad, ClientOptions{})
		if err == nil || errors.Is(err, ErrUnreachable) || strings.Contains(err.Error(), "pw") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Dial %q: %v, want one line refusing the address", bad, err)
		}
	}
}

func TestParseAddr(t *testing.T) {
	for _, c := range []struct {
		in       string
		ca       bool
		base, hp string
		tls      bool
	}{
		{"db1:7078", false, "http://db1:7078", "db1:7078", false},
		{"db1", false, "http://db1:7078", "db1:7078", false},
		{"10.0.0.5:9000", true, "https://10.0.0.5:9000", "10.0.0.5:9000", true},
		{"[::1]:7078", false, "http://[::1]:7078", "[::1]:7078", false},
		{"https://db1", false, "https://db1:7078", "db1:7078", true},
		{"HTTPS://db1:7443/agent/", false, "https://db1:7443/agent", "db1:7443", true},
		{"http://[::1]:7078", false, "http://[::1]:7078", "[::1]:7078", false},
	} {
		base, hp, useTLS, err := parseAddr(c.in, c.ca)
		if err != nil || base != c.base || hp != c.hp || useTLS != c.tls {
			t.Errorf("parseAddr(%q, %v) = %q %q %v %v, want %q %q %v", c.in, c.ca, base, hp, useTLS, err, c.base, c.hp, c.tls)
		}
	}
	if _, _, _, err := parseAddr("http://db1:7078", true); err == nil {
		t.Error("http:// with a CA file: no error")
	}
}

// TLS: an https:// address or a CA file; the agent's certificate is
// verified against the CA file, else the system's roots.
func TestClientTLS(t *testing.T) {
	s := New(Config{Version: "test"})
	hs := httptest.NewTLSServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pemCert(hs), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(hs.URL, "https://")
	for _, in := range []string{hs.URL, addr} {
		c, err := Dial(t.Context(), in, ClientOptions{CAFile: ca})
		if err != nil {
			t.Errorf("Dial %s with the CA: %v", in, err)
			continue
		}
		c.Close()
	}
	_, err := Dial(t.Context(), hs.URL, ClientOptions{})
	if err == nil || !strings.Contains(err.Error(), "not trusted") {
		t.Errorf("Dial without the CA: %v, want the certificate not trusted", err)
	}
	// Plain HTTP to a TLS agent, and TLS to a plain one.
	if _, err := Dial(t.Context(), addr, ClientOptions{}); err == nil {
		t.Error("plain HTTP to a TLS agent: no error")
	}
	plain := httptest.NewServer(New(Config{}))
	t.Cleanup(plain.Close)
	_, err = Dial(t.Context(), strings.TrimPrefix(plain.URL, "http://"), ClientOptions{CAFile: ca})
	if err == nil || !strings.Contains(err.Error(), "does not speak TLS") {
		t.Errorf("TLS to a plain agent: %v", err)
	}
	if _, err := Dial(t.Context(), addr, ClientOptions{CAFile: filepath.Join(t.TempDir(), "missing.pem")}); err == nil {
		t.Error("a missing CA file: no error")
	}
}

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, content, want string }{
		{"ok", "tok-123\n", ""},
		{"empty", "", "empty"},
		{"blank", " \n\n", "empty"},
		{"two words", "a b\n", "one token"},
		{"two lines", "a\nb\n", "one token"},
		{"control", "a\x01b", "one token"},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte(c.content), 0o600); err != nil {
			t.Fatal(err)
		}
		tok, err := ReadToken(p)
		switch {
		case c.want == "" && (err != nil || tok != "tok-123"):
			t.Errorf("%s: %q %v", c.name, tok, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || (c.content != "" && strings.Contains(err.Error(), c.content))):
			t.Errorf("%s: %v, want an error with %q, not the content", c.name, err, c.want)
		}
	}
	if _, err := ReadToken(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing file: %v", err)
	}
}

// pemCert is a TLS test server's certificate in PEM: the CA file that
// trusts it.
func pemCert(hs *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hs.Certificate().Raw})
}

// With AllowStacks, a watch that asked for stacks records them (perf) or
// is told in one line why not; either way the watch goes on.
func TestStacksAllowed(t *testing.T) {
	srv := startServer(t)
	a := startAgent(t, Config{AllowStacks: true})
	c, err := Dial(t.Context(), a.url, ClientOptions{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(t.Context(), sysprobe.Target{PID: srv.pid}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if !c.Info().Stacks.Perf {
		if err := w.StartStacks(t.Context()); err == nil || !strings.Contains(err.Error(), "perf") {
			t.Errorf("StartStacks without perf: %v, want one line naming perf", err)
		}
		return
	}
	if err := w.StartStacks(t.Context()); err != nil {
		if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "no stacks") {
			t.Errorf("StartStacks: %q, want one line", err)
		}
		t.Logf("perf cannot record here: %v", err)
	} else {
		f, err := w.StopStacks(t.Context())
		if err != nil || f.Hz <= 0 {
			t.Errorf("StopStacks: %+v %v", f, err)
		}
	}
	if _, err := w.Snapshot(t.Context()); err != nil {
		t.Errorf("the watch after stacks: %v", err)
	}
	// A watch that did not ask for stacks has none.
	w2, err := c.Watch(t.Context(), sysprobe.Target{PID: srv.pid}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if err := w2.StartStacks(t.Context()); err == nil || !strings.Contains(err.Error(), "did not ask") {
		t.Errorf("StartStacks on a watch without stacks: %v", err)
	}
}

// Watches asked for at once: never more than MaxWatches open.
func TestMaxWatchesConcurrent(t *testing.T) {
	srv := startServer(t)
	a := startAgent(t, Config{})
	body := fmt.Sprintf(`{"target":{"pid":%d}}`, srv.pid)
	codes := make(chan int, 3*MaxWatches)
	for range 3 * MaxWatches {
		go func() {
			resp, err := http.Post(a.url+"/v1/watches", "application/json", strings.NewReader(body))
			if err != nil {
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	n := map[int]int{}
	for range 3 * MaxWatches {
		n[<-codes]++
	}
	if n[http.StatusCreated] != MaxWatches || n[http.StatusTooManyRequests] != 2*MaxWatches || a.Watches() != MaxWatches {
		t.Errorf("answers %v, %d open: want %d 201 and the rest 429", n, a.Watches(), MaxWatches)
	}
}
