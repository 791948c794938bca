package testdb

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// A network namespace of a test's own, reached from the host over a veth
// pair, so that a database and `sledge agent` inside it are on "another
// host" as far as sledge's network path goes: their address is not
// loopback, their traffic crosses a real (virtual) link. Only the veth pair
// and loopback carry traffic; nothing leaves the machine. The processes
// inside are still this machine's (same PID namespace), so /proc here sees
// them too.
//
// Making one needs root and `ip netns`; where either is missing NewNetns
// says why (ErrNoNetns) and tests use loopback instead.

// ErrNoNetns means network namespaces cannot be made here.
var ErrNoNetns = errors.New("no network namespaces here")

// NoNetnsEnv, set to anything, makes NewNetns refuse: to run the tests'
// loopback path on a machine where namespaces work.
const NoNetnsEnv = "SLEDGE_TEST_NO_NETNS"

// Netns is a namespace with a veth pair: HostAddr is the host's end,
// Addr the namespace's, both in one /30 of 10.213.0.0/16.
type Netns struct {
	Name     string // "sledge-PID-N"
	Link     string // the host's end of the veth pair
	HostAddr string
	Addr     string
	t        testing.TB
}

var netnsSeq atomic.Int64

// netnsMu serialises the address choice between the tests of one process.
var netnsMu sync.Mutex

// NewNetns makes a namespace for t, with its loopback up and a veth pair
// to the host; t.Cleanup deletes both (after whatever the test started in
// it, which its own cleanups stop first). The error wraps ErrNoNetns when
// namespaces cannot be made here (not root, no ip, no kernel support).
func NewNetns(t testing.TB) (*Netns, error) {
	t.Helper()
	if os.Getenv(NoNetnsEnv) != "" {
		return nil, fmt.Errorf("%w: %s is set", ErrNoNetns, NoNetnsEnv)
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: not root", ErrNoNetns)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("%w: no ip command", ErrNoNetns)
	}
	removeStaleNetns()
	pid := os.Getpid()
	n := netnsSeq.Add(1)
	ns := &Netns{
		Name: fmt.Sprintf("sledge-%d-%d", pid, n),
		// Interface names have at most 15 characters.
		Link: fmt.Sprintf("sl%dh%d", pid, n%100),
		t:    t,
	}
	peer := fmt.Sprintf("sl%dn%d", pid, n%100)
	if _, err := ipCmd("netns", "add", ns.Name); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoNetns, err)
	}
	// Should this process end before its cleanups run, the guard deletes
	// both (removeStaleNetns, on the next run, is the fallback).
	g := startGuard(fmt.Sprintf("ip link del %s 2>/dev/null\nip netns del %s 2>/dev/null",
		shellQuote(ns.Link), shellQuote(ns.Name)), nil)
	t.Cleanup(func() {
		defer g.disarm()
		// Deleting the host's end deletes the pair; the namespace goes
		// when the last process in it has exited.
		_, _ = ipCmd("link", "del", ns.Link)
		if _, err := ipCmd("netns", "del", ns.Name); err != nil {
			t.Logf("netns: %v", err)
		}
	})
	netnsMu.Lock()
	defer netnsMu.Unlock()
	host, addr, err := freeSubnet(pid, int(n))
	if err != nil {
		return nil, err
	}
	ns.HostAddr, ns.Addr = host, addr
	for _, c := range [][]string{
		{"link", "add", ns.Link, "type", "veth", "peer", "name", peer},
		{"link", "set", peer, "netns", ns.Name},
		{"addr", "add", host + "/30", "dev", ns.Link},
		{"link", "set", ns.Link, "up"},
		{"netns", "exec", ns.Name, "ip", "addr", "add", addr + "/30", "dev", peer},
		{"netns", "exec", ns.Name, "ip", "link", "set", peer, "up"},
		{"netns", "exec", ns.Name, "ip", "link", "set", "lo", "up"},
	} {
		if _, err := ipCmd(c...); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNoNetns, err)
		}
	}
	return ns, nil
}

// freeSubnet picks a /30 of 10.213.0.0/16 by pid and n, so that test
// processes running side by side rarely try the same one, and skips one
// whose addresses a host interface already has.
func freeSubnet(pid, n int) (host, addr string, err error) {
	out, err := ipCmd("-o", "-4", "addr", "show")
	if err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrNoNetns, err)
	}
	for try := range 64 {
		i := ((pid%4096)*4 + n + try) % 16384 // 16384 /30s in a /16
		base := i * 4
		host = fmt.Sprintf("10.213.%d.%d", base/256, base%256+1)
		addr = fmt.Sprintf("10.213.%d.%d", base/256, base%256+2)
		if !strings.Contains(out, " "+host+"/") && !strings.Contains(out, " "+addr+"/") {
			return host, addr, nil
		}
	}
	return "", "", fmt.Errorf("%w: no free /30 in 10.213.0.0/16", ErrNoNetns)
}

// removeStaleNetns deletes namespaces of test processes that are gone (a
// test binary killed before its cleanups ran).
func removeStaleNetns() {
	out, err := ipCmd("netns", "list")
	if err != nil {
		return
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		parts := strings.Split(f[0], "-")
		if len(parts) != 3 || parts[0] != "sledge" {
			continue
		}
		pid, err := strconv.Atoi(parts[1])
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		_, _ = ipCmd("link", "del", fmt.Sprintf("sl%dh%s", pid, parts[2]))
		_, _ = ipCmd("netns", "del", f[0])
	}
}

func ipCmd(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, lastLines(out, 2))
	}
	return string(out), nil
}

// Wrap returns argv run inside the namespace (ip netns exec, which execs
// it: the process keeps its pid).
func (ns *Netns) Wrap(argv ...string) []string {
	return append([]string{"ip", "netns", "exec", ns.Name}, argv...)
}

// StartPostgres starts a private PostgreSQL inside the namespace, as
// StartPostgresWith does on loopback: listening on Addr at port 5432 (and
// a unix socket in its directory), accepting the superuser's password
// from HostAddr. The test's cleanup stops it.
func (ns *Netns) StartPostgres(ctx context.Context, settings ...string) (*Server, error) {
	bin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	// Not under t.TempDir: the postgres user must reach it.
	dir, err := os.MkdirTemp("", "sledge-pg-ns-*")
	if err != nil {
		return nil, fmt.Errorf("postgres: temp dir: %w", err)
	}
	srv, err := startPostgres(ctx, bin, dir, append(slices.Clip(postgresSettings), settings...), ns)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	ns.stopAtEnd(srv)
	return srv, nil
}

// StartMariaDB starts a private MariaDB inside the namespace, as
// StartMariaDB does on loopback: listening on Addr at port 3306, root
// with its password from HostAddr. The test's cleanup stops it.
func (ns *Netns) StartMariaDB(ctx context.Context) (*Server, error) {
	srv, err := startMariaDB(ctx, ns)
	if err != nil {
		return nil, err
	}
	ns.stopAtEnd(srv)
	return srv, nil
}

func (ns *Netns) stopAtEnd(srv *Server) {
	ns.t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			ns.t.Errorf("stop %s in %s: %v", srv.Kind, ns.Name, err)
		}
	})
}

// Agent is a running `sledge agent` process with a token of its own.
type Agent struct {
	Addr      string // HOST:PORT it listens on
	Token     string
	TokenFile string
	cmd       *exec.Cmd
	guard     *guard // ends the agent if the test process ends first
	exited    chan struct{}
	stderr    *bytes.Buffer
	mu        sync.Mutex
}

var agentSeq atomic.Int64

// StartAgent starts `BIN agent --listen ADDR:PORT --token-file F` with a
// new random token: inside ns on its address when ns is not nil, else on
// 127.0.0.1 at a free port. It returns once the agent accepts connections;
// the test's cleanup stops it (SIGTERM, then SIGKILL) if it still runs.
func StartAgent(t testing.TB, bin string, ns *Netns, extra ...string) (*Agent, error) {
	t.Helper()
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("agent token: %w", err)
	}
	a := &Agent{Token: hex.EncodeToString(raw), TokenFile: filepath.Join(t.TempDir(), "agent-token"),
		exited: make(chan struct{}), stderr: &bytes.Buffer{}}
	if err := os.WriteFile(a.TokenFile, []byte(a.Token+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("agent token: %w", err)
	}
	if ns != nil {
		// Each agent of the namespace a port of its own.
		a.Addr = net.JoinHostPort(ns.Addr, strconv.Itoa(7078+int(agentSeq.Add(1))))
	} else {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		a.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	}
	argv := append([]string{bin, "agent", "--listen", a.Addr, "--token-file", a.TokenFile}, extra...)
	if ns != nil {
		argv = ns.Wrap(argv...)
	}
	a.cmd = exec.Command(argv[0], argv[1:]...)
	a.cmd.Stdout, a.cmd.Stderr = &lockedWriter{a}, &lockedWriter{a}
	// Its own process group: a Ctrl-C meant for the test does not reach it.
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := a.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start agent: %w", err)
	}
	go func() { _ = a.cmd.Wait(); close(a.exited) }()
	a.guard = startGuard(killScript(strconv.Itoa(a.cmd.Process.Pid)), nil)
	t.Cleanup(func() { a.stop() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", a.Addr, time.Second)
		if err == nil {
			c.Close()
			return a, nil
		}
		select {
		case <-a.exited:
			return nil, fmt.Errorf("agent on %s exited: %s", a.Addr, lastLines([]byte(a.Output()), 3))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			a.stop()
			return nil, fmt.Errorf("agent on %s did not accept connections within 30s: %s", a.Addr, lastLines([]byte(a.Output()), 3))
		}
	}
}

type lockedWriter struct{ a *Agent }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.a.mu.Lock()
	defer w.a.mu.Unlock()
	return w.a.stderr.Write(p)
}

// Output is what the agent has written so far (stdout and stderr).
func (a *Agent) Output() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stderr.String()
}

// PID is the agent's process id.
func (a *Agent) PID() int { return a.cmd.Process.Pid }

// Kill sends SIGKILL and waits for the agent to be gone.
func (a *Agent) Kill() {
	_ = a.cmd.Process.Signal(syscall.SIGKILL)
	<-a.exited
}

// stop ends the agent as an operator would (SIGTERM), killing it after 10 s.
func (a *Agent) stop() {
	defer a.guard.disarm()
	select {
	case <-a.exited:
		return
	default:
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.exited:
	case <-time.After(10 * time.Second):
		a.Kill()
	}
}
