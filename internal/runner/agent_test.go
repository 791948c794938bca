package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/sysprobe"
)

func TestParseAgentAddr(t *testing.T) {
	for _, c := range []struct {
		in, dial, name, bad string
	}{
		{"db1:7078", "http://db1:7078", "db1:7078", ""},
		{"db1", "http://db1:7078", "db1:7078", ""},
		{"127.0.0.1:9000", "http://127.0.0.1:9000", "127.0.0.1:9000", ""},
		{"[::1]:9000", "http://[::1]:9000", "[::1]:9000", ""},
		{"::1", "http://[::1]:7078", "[::1]:7078", ""},
		{"https://db1", "https://db1:7078", "db1:7078", ""},
		{"http://db1:80/", "http://db1:80", "db1:80", ""},
		{"ftp://db1", "", "", "the scheme is ftp"},
		{"https://db1/v1", "", "", "nothing but the host"},
		{"https://u:p@db1", "", "", "nothing but the host"},
		{"db1:0", "", "", "port"},
		{"db1:http", "", "", "port"},
		{":7078", "", "", "no host"},
		{"", "", "", "no host"},
	} {
		t.Run(c.in, func(t *testing.T) {
			dial, name, err := ParseAgentAddr(c.in)
			if c.bad != "" {
				if err == nil || !strings.Contains(err.Error(), c.bad) || strings.Contains(err.Error(), "\n") {
					t.Errorf("%q: %v, want an error with %q", c.in, err, c.bad)
				}
				return
			}
			if err != nil || dial != c.dial || name != c.name {
				t.Errorf("%q: %q %q %v, want %q %q", c.in, dial, name, err, c.dial, c.name)
			}
		})
	}
}

func TestParseAgentTarget(t *testing.T) {
	for _, c := range []struct {
		in   string
		want sysprobe.Target
		bad  bool
	}{
		{"port=5432", sysprobe.Target{Port: 5432}, false},
		{"pid=42", sysprobe.Target{PID: 42}, false},
		{"process=mariadbd", sysprobe.Target{Process: "mariadbd"}, false},
		{"port=0", sysprobe.Target{}, true},
		{"port=70000", sysprobe.Target{}, true},
		{"pid=-1", sysprobe.Target{}, true},
		{"process=", sysprobe.Target{}, true},
		{"process=a/b", sysprobe.Target{}, true},
		{"socket=/tmp", sysprobe.Target{}, true},
		{"5432", sysprobe.Target{}, true},
	} {
		got, err := ParseAgentTarget(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("%q: %+v %v", c.in, got, err)
		}
	}
}

// What the agent looks for by default: the database URL's port.
func TestAgentTarget(t *testing.T) {
	for _, c := range []struct {
		url  string
		port int
	}{
		{"postgres://u@db1:6543/x", 6543},
		{"postgres://u@db1/x", 5432},
		{"postgres://u@/x?host=/run/postgresql", 5432},
		{"postgres://u@/x?host=/tmp&port=5433", 5433},
		{"mysql://u@db1:3307/x", 3307},
		{"mysql://u@/x?socket=/run/mysqld/mysqld.sock", 3306},
	} {
		got, err := agentTarget(c.url)
		if err != nil || got != (sysprobe.Target{Port: c.port}) {
			t.Errorf("%s: %+v %v, want port %d", c.url, got, err, c.port)
		}
	}
	if _, err := agentTarget("sqlite:///tmp/x.db"); err == nil {
		t.Error("sqlite: no error")
	}
}

// The agent flags' checks before anything is opened: bad input, one line.
func TestAgentOptionsResolve(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(tok, []byte(" secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		if k == "SLEDGE_AGENT_TOKEN" {
			return "from-env"
		}
		return ""
	}
	for _, c := range []struct {
		name   string
		o      AgentOptions
		noCost bool
		token  string
		bad    string
	}{
		{"token file", AgentOptions{Addr: "db1", TokenFile: tok}, false, "secret", ""},
		{"token from the environment", AgentOptions{Addr: "db1"}, false, "from-env", ""},
		{"empty token file", AgentOptions{Addr: "db1", TokenFile: empty}, false, "", "empty"},
		{"missing token file", AgentOptions{Addr: "db1", TokenFile: filepath.Join(dir, "none")}, false, "", "no such file"},
		{"ca over http", AgentOptions{Addr: "http://db1", CAFile: tok}, false, "", "means TLS"},
		{"ca with HOST:PORT", AgentOptions{Addr: "db1:7078", CAFile: tok}, false, "from-env", ""},
		{"target without agent", AgentOptions{Target: "port=1"}, false, "", "applies to --agent"},
		{"agent with --no-cost", AgentOptions{Addr: "db1"}, true, "", "--no-cost"},
		{"stacks with --no-cost", AgentOptions{Stacks: true}, true, "", "--no-cost"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := c.o.resolve(env, c.noCost)
			if c.bad != "" {
				if err == nil || !strings.Contains(err.Error(), c.bad) || ExitCode(t.Context(), err) != ExitUsage {
					t.Errorf("%v, want exit 2 with %q", err, c.bad)
				}
				return
			}
			if err != nil || a == nil || a.token != c.token {
				t.Errorf("%+v %v", a, err)
			}
		})
	}
}
