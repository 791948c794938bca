package cli

import (
	"slices"
	"strings"
	"testing"
)

// Bad agent options of kube manifest and kube agent-manifest: one line,
// exit 2, nothing on stdout, never the token.
func TestKubeAgentBadInput(t *testing.T) {
	run := []string{"kube", "manifest", "--workers", "2", "--image", "sledge", "--vus", "2", "--db", "postgres://u@db/tpcc"}
	agent := []string{"kube", "agent-manifest", "--image", "sledge", "--token-secret", "tok"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"agent not an address", append(slices.Clone(run), "--agent", "ftp://db"), `--agent "ftp://db"`},
		{"agent port out of range", append(slices.Clone(run), "--agent", "db:99999"), "--agent"},
		{"agent ca", append(slices.Clone(run), "--agent", "https://db:7078", "--agent-ca", "ca.pem"), "--agent-ca: the pods cannot read"},
		{"token secret without agent", append(slices.Clone(run), "--agent-token-secret", "tok"), "give --agent HOST:PORT"},
		{"token key without secret", append(slices.Clone(run), "--agent", "db:7078", "--agent-token-key", "k"), "--agent-token-secret NAME"},
		{"token file", append(slices.Clone(run), "--agent", "db:7078", "--agent-token-file", "t"), "put the token in a Secret"},
		{"bad token secret", append(slices.Clone(run), "--agent", "db:7078", "--agent-token-secret", "A B"), "--agent-token-secret"},
		{"agent-manifest: no token", []string{"kube", "agent-manifest", "--image", "sledge"}, "--token-secret NAME is required"},
		{"agent-manifest: no image", []string{"kube", "agent-manifest", "--token-secret", "tok"}, "--image is required"},
		{"agent-manifest: selector", append(slices.Clone(agent), "--node-selector", "db"), "want KEY=VALUE"},
		{"agent-manifest: port", append(slices.Clone(agent), "--port", "70000"), "--port 70000"},
		{"agent-manifest: argument", append(slices.Clone(agent), "extra"), "extra"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runCLIEnv(t, t.Context(), t.TempDir(), map[string]string{"SLEDGE_AGENT_TOKEN": "hunter2-token"}, c.args...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d: %s%s", code, ExitUsage, stderr, stdout)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 || !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q: want one line with %q", stderr, c.want)
			}
			if strings.Contains(stderr, "hunter2") {
				t.Errorf("stderr shows the token: %s", stderr)
			}
		})
	}
	// An agent on loopback is the pod itself: a note, and the manifest.
	stdout, stderr, code := runCLI(t, t.TempDir(), append(slices.Clone(run), "--agent", "127.0.0.1:7078")...)
	if code != ExitOK || !strings.Contains(stderr, "note: --agent 127.0.0.1:7078, in a pod, is the pod itself") || !strings.Contains(stdout, "--agent=127.0.0.1:7078") {
		t.Errorf("loopback agent: exit %d, stderr %q", code, stderr)
	}
}
