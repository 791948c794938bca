package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sledge-bench/sledge/internal/agent"
	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/sysprobe"
)

// AgentOptions are the flags that say where the server's side of the cost
// is read (AgentFlags): run's and compare's.
type AgentOptions struct {
	Addr      string // --agent: HOST[:PORT] or http(s)://HOST[:PORT]
	TokenFile string // --agent-token-file; else $SLEDGE_AGENT_TOKEN
	Target    string // --agent-target: port=N, pid=N or process=NAME
	CAFile    string // --agent-ca: for an https agent
	Stacks    bool   // --stacks
}

// DefaultAgentTimeout bounds each call to the agent outside a run's edges
// (compare's check before its first cell).
const DefaultAgentTimeout = 10 * time.Second

// DefaultAgentPort is sledge agent's default port (127.0.0.1:7078).
const DefaultAgentPort = agent.DefaultPort

// agentSpec is --agent resolved before anything is opened.
type agentSpec struct {
	url    string          // --agent as given, what the client dials
	name   string          // HOST:PORT, for messages and the summary
	token  string          // never printed
	target sysprobe.Target // zero: the database URL's port (agentTarget)
	ca     string
}

// resolve checks the agent flags (bad input: one line, exit 2) and reads
// the token. nil: no --agent.
func (o AgentOptions) resolve(getenv func(string) string, noCost bool) (*agentSpec, error) {
	if o.Addr == "" {
		for _, n := range []struct{ name, v string }{{"agent-token-file", o.TokenFile}, {"agent-target", o.Target}, {"agent-ca", o.CAFile}} {
			if n.v != "" {
				return nil, Usagef("--%s applies to --agent", n.name)
			}
		}
		if o.Stacks && noCost {
			return nil, Usagef("--stacks measures the server's side of the cost: not with --no-cost")
		}
		return nil, nil
	}
	if noCost {
		return nil, Usagef("--agent measures the server's side of the cost: not with --no-cost")
	}
	a := &agentSpec{ca: o.CAFile}
	var err error
	if a.url, a.name, err = ParseAgentAddr(o.Addr); err != nil {
		return nil, Usagef("%v", err)
	}
	if o.CAFile != "" && strings.HasPrefix(strings.ToLower(o.Addr), "http://") {
		return nil, Usagef("--agent-ca means TLS, but --agent %s says http://", o.Addr)
	}
	// The client reads the address as given: a CA file with a plain
	// HOST:PORT means https.
	a.url = o.Addr
	if o.Target != "" {
		if a.target, err = ParseAgentTarget(o.Target); err != nil {
			return nil, Usagef("%v", err)
		}
	}
	if o.TokenFile != "" {
		// The agent's own reader: the run accepts the token files the
		// agent does.
		if a.token, err = agent.ReadToken(o.TokenFile); err != nil {
			return nil, Usagef("--agent-token-file: %v", err)
		}
	} else if getenv != nil {
		a.token = strings.TrimSpace(getenv(agent.TokenEnv))
	}
	return a, nil
}

// ParseAgentAddr reads --agent: HOST[:PORT] (plain HTTP) or a URL,
// http:// or https://, with nothing after the host and port. It returns
// the URL the client dials and HOST:PORT.
func ParseAgentAddr(s string) (dial, name string, err error) {
	bad := func(why string) (string, string, error) {
		return "", "", fmt.Errorf("--agent %q: %s: want HOST:PORT, such as db1:%d, or https://HOST:PORT", s, why, DefaultAgentPort)
	}
	scheme, rest := "http", s
	if i := strings.Index(s, "://"); i >= 0 {
		u, err := url.Parse(s)
		if err != nil {
			return bad("not a URL")
		}
		scheme = strings.ToLower(u.Scheme)
		if scheme != "http" && scheme != "https" {
			return bad("the scheme is " + u.Scheme)
		}
		if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return bad("a URL with nothing but the host and port")
		}
		rest = u.Host
	}
	host, port := strings.Trim(rest, "[]"), ""
	if h, p, err := net.SplitHostPort(rest); err == nil {
		host, port = h, p
	}
	if host == "" || strings.ContainsAny(host, "/ @?#") {
		return bad("no host")
	}
	if port == "" {
		port = strconv.Itoa(DefaultAgentPort)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return bad("the port is not a number from 1 to 65535")
	}
	hp := net.JoinHostPort(host, port)
	return scheme + "://" + hp, hp, nil
}

// ParseAgentTarget reads --agent-target: port=N, pid=N or process=NAME.
func ParseAgentTarget(s string) (sysprobe.Target, error) {
	k, v, ok := strings.Cut(s, "=")
	v = strings.TrimSpace(v)
	bad := func(why string) (sysprobe.Target, error) {
		return sysprobe.Target{}, fmt.Errorf("--agent-target %q: %s: want port=N, pid=N or process=NAME", s, why)
	}
	if !ok || v == "" {
		return bad("no value")
	}
	switch strings.TrimSpace(k) {
	case "port":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 65535 {
			return bad("the port is not a number from 1 to 65535")
		}
		return sysprobe.Target{Port: n}, nil
	case "pid":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return bad("the pid is not a positive number")
		}
		return sysprobe.Target{PID: n}, nil
	case "process":
		if len(v) > 64 || strings.ContainsAny(v, "/\n") {
			return bad("not a process name")
		}
		return sysprobe.Target{Process: v}, nil
	}
	return bad("unknown key " + k)
}

// pgSocket is PostgreSQL's socket file name, which holds its port.
var pgSocket = regexp.MustCompile(`\.s\.PGSQL\.(\d+)$`)

// agentTarget is what the agent looks for when --agent-target is not
// given: the database URL's TCP port; over a unix socket, PostgreSQL's
// port (port=, the socket file's name) or 5432, MariaDB's 3306.
func agentTarget(raw string) (sysprobe.Target, error) {
	u, err := db.ParseURL(raw)
	if err != nil {
		return sysprobe.Target{}, err
	}
	scheme := strings.ToLower(u.Scheme)
	pg := strings.HasPrefix(scheme, "postgres")
	def := 3306
	if pg {
		def = 5432
	}
	portOf := func(s string) (int, bool) {
		n, err := strconv.Atoi(s)
		return n, err == nil && n > 0 && n < 65536
	}
	if n, ok := portOf(u.Query().Get("port")); ok {
		return sysprobe.Target{Port: n}, nil
	}
	if n, ok := portOf(u.Port()); ok {
		return sysprobe.Target{Port: n}, nil
	}
	for _, k := range []string{"host", "socket"} {
		if m := pgSocket.FindStringSubmatch(filepath.Base(u.Query().Get(k))); m != nil {
			if n, ok := portOf(m[1]); ok {
				return sysprobe.Target{Port: n}, nil
			}
		}
	}
	if !pg && !strings.HasPrefix(scheme, "mysql") && !strings.HasPrefix(scheme, "mariadb") {
		return sysprobe.Target{}, Usagef("--agent: %s has no server process to watch", scheme)
	}
	return sysprobe.Target{Port: def}, nil
}

// targetText is a target as --agent-target spells it.
func targetText(t sysprobe.Target) string {
	switch {
	case t.Port > 0:
		return "port=" + strconv.Itoa(t.Port)
	case t.PID > 0:
		return "pid=" + strconv.Itoa(t.PID)
	case t.Process != "":
		return "process=" + t.Process
	}
	return "-"
}

// agentConn is the agent a run reads the server from, and its watch,
// opened before anything runs (openAgent).
type agentConn struct {
	client    *agent.Client
	watch     sysprobe.Source
	name      string // HOST:PORT
	info      agent.Info
	stacksWhy string // --stacks asked and the agent records none: why
}

// openAgent reaches the agent and starts the watch of the server at
// rawURL (or --agent-target): the run's first step, before the database
// is opened. Unreachable, a refused token, another API, a server not
// found: one line naming the agent, exit 1, nothing run.
func openAgent(ctx context.Context, stderr io.Writer, a *agentSpec, rawURL string, stacks bool, timeout time.Duration) (*agentConn, error) {
	t := a.target
	if t == (sysprobe.Target{}) {
		var err error
		if t, err = agentTarget(rawURL); err != nil {
			return nil, err
		}
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := agent.Dial(dctx, a.url, agent.ClientOptions{Token: a.token, CAFile: a.ca, Timeout: timeout})
	if err != nil {
		return nil, &ExitError{Code: ExitFailure, Err: agentErr(a, err)}
	}
	ac := &agentConn{client: c, name: a.name, info: c.Info()}
	if stacks {
		switch s := ac.info.Stacks; {
		case !s.Allowed || !s.Perf:
			ac.stacksWhy = "agent " + a.name + " records no stacks"
			if s.Why != "" {
				ac.stacksWhy += ": " + s.Why
			}
			fmt.Fprintf(stderr, "sledge: --stacks: %s (the run goes on without them)\n", ac.stacksWhy)
			stacks = false
		}
	}
	w, err := c.Watch(dctx, t, stacks)
	if err != nil {
		c.Close()
		return nil, &ExitError{Code: ExitFailure, Err: agentErr(a, fmt.Errorf("%w (looking for %s)", err, targetText(t)))}
	}
	ac.watch = w
	return ac, nil
}

// agentErr names the agent in err's line once (the client's own lines
// already start with "agent HOST:PORT").
func agentErr(a *agentSpec, err error) error {
	msg := oneLineErr(err)
	if strings.HasPrefix(msg, "agent "+a.name) {
		return errors.New(msg)
	}
	return fmt.Errorf("agent %s: %s", a.name, msg)
}

func (a *agentConn) close() {
	if a != nil && a.client != nil {
		a.client.Close()
	}
}
