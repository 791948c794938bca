package cli

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/agent"
)

// agentProc is `sledge agent` running as a real process.
type agentProc struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr *watchBuf
	addr   string
	exited chan struct{}
}

var agentListening = regexp.MustCompile(`listening on (\S+) \(`)

// startAgentProc starts sledge agent with args and waits for its start
// line; when the process exits instead, it returns with addr "".
func startAgentProc(t *testing.T, args ...string) *agentProc {
	t.Helper()
	bin := sledgeBinary(t)
	p := &agentProc{stderr: &watchBuf{match: agentListening, seen: make(chan struct{})}}
	p.cmd = exec.Command(bin, append([]string{"agent"}, args...)...)
	p.cmd.Env = append(os.Environ(), "SLEDGE_AGENT_TOKEN=env-token-not-read")
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-exited
	})
	select {
	case <-p.stderr.seen:
		p.addr = agentListening.FindStringSubmatch(p.stderr.String())[1]
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("sledge agent printed no start line: %s", p.stderr.String())
	}
	p.exited = exited
	return p
}

// wait waits (bounded) for the exit and returns its status.
func (p *agentProc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("sledge agent did not exit; stderr:\n%s", p.stderr.String())
	}
	if strings.Contains(p.stderr.String(), "goroutine ") {
		t.Errorf("stack trace:\n%s", p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *agentProc) request(t *testing.T, method, path, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+p.addr+path, strings.NewReader(body))
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
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// sledge agent as a real process: bad input exits 2 with one line, a
// port in use 1, SIGINT and SIGTERM 0 (after closing its watches); the
// token never appears in its output, and $SLEDGE_AGENT_TOKEN is not read.
func TestAgentProcess(t *testing.T) {
	dir := t.TempDir()
	const token = "agent-process-token-XYZ"
	tokenFile := filepath.Join(dir, "token")
	empty := filepath.Join(dir, "empty")
	for f, content := range map[string]string{tokenFile: token + "\n", empty: "\n"} {
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()

	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"beyond loopback", []string{"--listen", "0.0.0.0:0"}, ExitUsage, "--token-file"},
		{"all interfaces", []string{"--listen", ":0"}, ExitUsage, "--token-file"},
		{"bad address", []string{"--listen", "localhost"}, ExitUsage, "HOST:PORT"},
		{"bad port", []string{"--listen", "127.0.0.1:http2"}, ExitUsage, "HOST:PORT"},
		{"missing token file", []string{"--token-file", filepath.Join(dir, "missing")}, ExitUsage, "no such file"},
		{"empty token file", []string{"--token-file", empty}, ExitUsage, "empty"},
		{"cert without key", []string{"--tls-cert", tokenFile}, ExitUsage, "--tls-key"},
		{"bad cert", []string{"--tls-cert", tokenFile, "--tls-key", tokenFile}, ExitUsage, "--tls-cert"},
		{"port in use", []string{"--listen", busy.Addr().String()}, ExitFailure, "in use"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := startAgentProc(t, c.args...)
			code := p.wait(t)
			out := p.stderr.String()
			if code != c.code || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, c.want) || p.stdout.Len() > 0 {
				t.Errorf("exit %d, stderr %q, stdout %q: want %d and one line with %q", code, out, p.stdout.String(), c.code, c.want)
			}
			if strings.Contains(out, token) {
				t.Errorf("the token is in the output: %q", out)
			}
		})
	}

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			p := startAgentProc(t, "--listen", "127.0.0.1:0", "--token-file", tokenFile)
			if p.addr == "" {
				t.Fatalf("exit %d: %s", p.wait(t), p.stderr.String())
			}
			if !strings.Contains(p.stderr.String(), "(API v1; token required; stacks: not allowed)") {
				t.Errorf("start line %q", p.stderr.String())
			}
			if code, _ := p.request(t, "GET", "/v1/info", "", ""); code != http.StatusUnauthorized {
				t.Errorf("no token: %d, want 401", code)
			}
			if code, _ := p.request(t, "GET", "/v1/info", "env-token-not-read", ""); code != http.StatusUnauthorized {
				t.Errorf("the token from $SLEDGE_AGENT_TOKEN: %d, want 401 (the agent reads only its file)", code)
			}
			code, body := p.request(t, "POST", "/v1/watches", token, fmt.Sprintf(`{"target":{"pid":%d}}`, os.Getpid()))
			if code != http.StatusCreated {
				t.Fatalf("a watch: %d %s", code, body)
			}
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(t); code != ExitOK {
				t.Errorf("exit %d after %s, want 0; stderr:\n%s", code, sig, p.stderr.String())
			}
			out := p.stderr.String() + p.stdout.String()
			if strings.Contains(out, token) || strings.Count(strings.TrimSpace(out), "\n") != 0 {
				t.Errorf("output %q: want the start line only, never the token", out)
			}
		})
	}
}

// --tls-cert and --tls-key: the agent serves HTTPS, which the run's client
// verifies against the certificate given as its CA file.
func TestAgentProcessTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "agent.crt"), filepath.Join(dir, "agent.key")
	writeSelfSigned(t, certFile, keyFile)
	p := startAgentProc(t, "--listen", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile)
	if p.addr == "" {
		t.Fatalf("exit %d: %s", p.wait(t), p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "(API v1; TLS; stacks: not allowed)") {
		t.Errorf("start line %q", p.stderr.String())
	}
	c, err := agent.Dial(t.Context(), p.addr, agent.ClientOptions{CAFile: certFile})
	if err != nil {
		t.Fatalf("Dial over TLS: %v", err)
	}
	c.Close()
	if _, err := agent.Dial(t.Context(), "https://"+p.addr, agent.ClientOptions{}); err == nil || !strings.Contains(err.Error(), "not trusted") {
		t.Errorf("Dial without the CA: %v, want the certificate not trusted", err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != ExitOK {
		t.Errorf("exit %d, want 0: %s", code, p.stderr.String())
	}
}

// writeSelfSigned writes a self-signed certificate for 127.0.0.1 and its key.
func writeSelfSigned(t *testing.T, certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "agent"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
}
