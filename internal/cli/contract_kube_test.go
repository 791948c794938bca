package cli

import (
	"os"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The contract of `sledge kube manifest` (docs/contracts.md): its flags,
// the order, kinds, names and labels of its documents, the pods' args,
// the Secret reference, and exit 2 for a URL with a password.
func TestContractKube(t *testing.T) {
	root := newRoot(t.Context(), &Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: func(string) string { return "" }})
	c, rest, err := root.Find([]string{"kube", "manifest"})
	if err != nil || len(rest) > 0 || c.Name() != "manifest" {
		t.Fatal("no command kube manifest")
	}
	for _, f := range []string{"workers", "image", "name", "namespace", "secret", "secret-key", "cpu", "memory",
		"db", "vus", "duration", "iterations", "mode", "seed", "threshold", "builtin"} {
		if c.Flag(f) == nil {
			t.Errorf("kube manifest has no --%s", f)
		}
	}

	stdout, stderr, code := runCLIEnv(t, t.Context(), t.TempDir(), map[string]string{"PGPASSWORD": "contract-pw"},
		"kube", "manifest", "tpcc", "--db", "postgres://u@db/tpcc", "--workers", "2", "--image", "img", "--name", "nm",
		"--namespace", "ns", "--secret", "sec", "--vus", "2", "--seed", "5")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	svc, coord, workers := kubeObjects(t, stdout)
	if svc.APIVersion != "v1" || svc.Kind != "Service" || svc.Name != "nm-coordinator" || svc.Namespace != "ns" ||
		svc.Spec.ClusterIP != "None" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 7077 {
		t.Errorf("first document: %s %s %s/%s clusterIP %q ports %+v", svc.APIVersion, svc.Kind, svc.Namespace, svc.Name, svc.Spec.ClusterIP, svc.Spec.Ports)
	}
	for _, j := range []struct {
		name, component string
		n               int32
		args            []string
		labels          map[string]string
		pod             map[string]string
		apiVersion      string
	}{
		{"nm-coordinator", "coordinator", 1, coord.Spec.Template.Spec.Containers[0].Args, coord.Labels, coord.Spec.Template.Labels, coord.APIVersion + " " + coord.Kind + " " + coord.Name},
		{"nm-workers", "workers", 2, workers.Spec.Template.Spec.Containers[0].Args, workers.Labels, workers.Spec.Template.Labels, workers.APIVersion + " " + workers.Kind + " " + workers.Name},
	} {
		if j.apiVersion != "batch/v1 Job "+j.name {
			t.Errorf("got %s, want batch/v1 Job %s", j.apiVersion, j.name)
		}
		for _, l := range []map[string]string{j.labels, j.pod} {
			if l["app.kubernetes.io/name"] != "sledge" || l["app.kubernetes.io/instance"] != "nm" {
				t.Errorf("%s: labels %v", j.name, l)
			}
		}
		if j.pod["app.kubernetes.io/component"] != j.component {
			t.Errorf("%s: pod labels %v, want component %s", j.name, j.pod, j.component)
		}
		want := []string{"run", "tpcc", "--vus=2", "--worker-timeout=5m0s", "--seed=5", "--db=postgres://u@db/tpcc", "--workers=2"}
		if !slices.Equal(j.args[:len(want)], want) {
			t.Errorf("%s: args %q, want them to start %q", j.name, j.args, want)
		}
	}
	for k, v := range svc.Spec.Selector {
		if coord.Spec.Template.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, which the coordinator's pod lacks", k, v)
		}
	}
	if w := workers.Spec; w.CompletionMode == nil || *w.CompletionMode != "Indexed" || *w.Completions != 2 || *w.Parallelism != 2 {
		t.Errorf("workers: completionMode %v completions %d parallelism %d", w.CompletionMode, *w.Completions, *w.Parallelism)
	}
	if !slices.Contains(coord.Spec.Template.Spec.Containers[0].Args, "--listen=:7077") ||
		!slices.Contains(workers.Spec.Template.Spec.Containers[0].Args, "--coordinator=nm-coordinator:7077") {
		t.Error("the coordinator's --listen=:7077 or the workers' --coordinator=nm-coordinator:7077 is missing")
	}
	env := workers.Spec.Template.Spec.Containers[0].Env
	if i := slices.IndexFunc(env, func(e corev1.EnvVar) bool { return e.Name == "PGPASSWORD" }); i < 0 || env[i].ValueFrom == nil ||
		env[i].ValueFrom.SecretKeyRef == nil || env[i].ValueFrom.SecretKeyRef.Name != "sec" || env[i].ValueFrom.SecretKeyRef.Key != "password" {
		t.Errorf("workers' env %+v: want PGPASSWORD from Secret sec, key password", env)
	}
	if strings.Contains(stdout, "contract-pw") {
		t.Error("the password from the environment is in the manifest")
	}

	_, stderr, code = runCLI(t, t.TempDir(), "kube", "manifest", "--db", "postgres://u:pw@db/tpcc", "--workers", "1", "--image", "img")
	if code != ExitUsage || !strings.Contains(stderr, "put the password in a Secret: --secret NAME") {
		t.Errorf("a URL with a password: exit %d %q, want 2 and the Secret's hint", code, stderr)
	}
}

// Issue 25: kube manifest's agent flags (the agent and its token's Secret
// for the coordinator alone) and kube agent-manifest (the agent as a
// DaemonSet): flags, the documents' kinds and names, the pods' args and the
// Secret references, and exit 2 for a token file (docs/contracts.md).
func TestContractKubeAgent(t *testing.T) {
	root := newRoot(t.Context(), &Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: func(string) string { return "" }})
	for cmd, flags := range map[string][]string{
		"manifest":       {"agent", "agent-token-secret", "agent-token-key"},
		"agent-manifest": {"image", "name", "namespace", "port", "token-secret", "token-key", "allow-stacks", "node-selector", "cpu", "memory"},
	} {
		c, rest, err := root.Find([]string{"kube", cmd})
		if err != nil || len(rest) > 0 || c.Name() != cmd {
			t.Fatalf("no command kube %s", cmd)
		}
		for _, f := range flags {
			if c.Flag(f) == nil {
				t.Errorf("kube %s has no --%s", cmd, f)
			}
		}
	}

	stdout, stderr, code := runCLIEnv(t, t.Context(), t.TempDir(), map[string]string{"SLEDGE_AGENT_TOKEN": "contract-agent-token"},
		"kube", "manifest", "tpcc", "--db", "postgres://u@db/tpcc", "--workers", "2", "--image", "img", "--name", "nm",
		"--vus", "2", "--seed", "5", "--agent", "db-node:7078", "--agent-token-secret", "agent-sec",
		"--agent-target", "process=postgres", "--stacks")
	if code != ExitOK {
		t.Fatalf("kube manifest --agent: exit %d: %s", code, stderr)
	}
	_, coord, workers := kubeObjects(t, stdout)
	c := coord.Spec.Template.Spec.Containers[0]
	for _, a := range []string{"--agent=db-node:7078", "--agent-target=process=postgres", "--stacks=true"} {
		if !slices.Contains(c.Args, a) {
			t.Errorf("coordinator args %q: no %s", c.Args, a)
		}
	}
	// sledge run reads the coordinator's args as given.
	if got := runParsed(t, c.Args); got["agent"] != "db-node:7078" || got["agent-target"] != "process=postgres" || got["stacks"] != "true" {
		t.Errorf("the coordinator's run reads agent %q, target %q, stacks %q", got["agent"], got["agent-target"], got["stacks"])
	}
	if i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "SLEDGE_AGENT_TOKEN" }); i < 0 ||
		c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.SecretKeyRef == nil || c.Env[i].ValueFrom.SecretKeyRef.Name != "agent-sec" ||
		c.Env[i].ValueFrom.SecretKeyRef.Key != "token" {
		t.Errorf("coordinator env %+v: want SLEDGE_AGENT_TOKEN from Secret agent-sec, key token", c.Env)
	}
	w := workers.Spec.Template.Spec.Containers[0]
	if slices.ContainsFunc(w.Args, func(a string) bool { return strings.HasPrefix(a, "--agent") || strings.HasPrefix(a, "--stacks") }) ||
		slices.ContainsFunc(w.Env, func(e corev1.EnvVar) bool { return e.Name == "SLEDGE_AGENT_TOKEN" }) {
		t.Errorf("the workers have the agent: args %q env %+v", w.Args, w.Env)
	}
	if strings.Contains(stdout, "contract-agent-token") {
		t.Error("the agent's token from the environment is in the manifest")
	}
	_, stderr, code = runCLI(t, t.TempDir(), "kube", "manifest", "--db", "postgres://u@db/tpcc", "--workers", "1", "--image", "img",
		"--agent", "db:7078", "--agent-token-file", "/etc/token")
	if code != ExitUsage || !strings.Contains(stderr, "--agent-token-secret NAME") {
		t.Errorf("--agent-token-file: exit %d %q, want 2 and the Secret's hint", code, stderr)
	}

	stdout, stderr, code = runCLI(t, t.TempDir(), "kube", "agent-manifest", "--image", "img", "--token-secret", "agent-sec")
	if code != ExitOK {
		t.Fatalf("kube agent-manifest: exit %d: %s", code, stderr)
	}
	var ds appsv1.DaemonSet
	if err := yaml.UnmarshalStrict([]byte(stdout), &ds); err != nil {
		t.Fatalf("kube agent-manifest: %v\n%s", err, stdout)
	}
	pod := ds.Spec.Template.Spec
	if ds.APIVersion != "apps/v1" || ds.Kind != "DaemonSet" || ds.Name != "sledge-agent" || !pod.HostPID {
		t.Errorf("%s %s %s hostPID %v, want apps/v1 DaemonSet sledge-agent with hostPID", ds.APIVersion, ds.Kind, ds.Name, pod.HostPID)
	}
	if a := pod.Containers[0].Args; !slices.Equal(a, []string{"agent", "--listen=0.0.0.0:7078", "--token-file=/etc/sledge-agent/token"}) {
		t.Errorf("agent args %q", a)
	}
	if v := pod.Volumes; len(v) != 1 || v[0].Secret == nil || v[0].Secret.SecretName != "agent-sec" {
		t.Errorf("volumes %+v: want the token from Secret agent-sec", v)
	}
	_, stderr, code = runCLI(t, t.TempDir(), "kube", "agent-manifest", "--image", "img")
	if code != ExitUsage || !strings.Contains(stderr, "--token-secret NAME is required") {
		t.Errorf("agent-manifest without a token: exit %d %q, want 2", code, stderr)
	}
}
