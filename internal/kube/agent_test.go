package kube

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// A run's manifest with --agent gives the agent and its token's Secret to
// the coordinator alone, with the agent's other options (--stacks); the
// workers' pods know nothing of it.
func TestManifestAgentIsTheCoordinators(t *testing.T) {
	o := Options{Name: "bench", Image: "sledge", Workers: 2, Workload: "tpcc", RunArgs: []string{"--vus=4", "--seed=1"},
		DB: "postgres://u@db/tpcc", PasswordEnv: "PGPASSWORD", Secret: "pg", Agent: "db-node-1:7078",
		AgentTokenSecret: "agent-token", CoordinatorArgs: []string{"--stacks=true"}}
	out := render(t, o)
	p := Parse(t, out)
	coord := p.Coordinator.Spec.Template.Spec.Containers[0]
	workers := p.Workers.Spec.Template.Spec.Containers[0]
	if !slices.Contains(coord.Args, "--agent=db-node-1:7078") || !slices.Contains(coord.Args, "--stacks=true") {
		t.Errorf("coordinator args %q: want --agent=db-node-1:7078 and --stacks=true", coord.Args)
	}
	for _, a := range workers.Args {
		if strings.HasPrefix(a, "--agent") || strings.HasPrefix(a, "--stacks") {
			t.Errorf("workers' args %q have %s: the workers do not talk to the agent", workers.Args, a)
		}
	}
	i := slices.IndexFunc(coord.Env, func(e corev1.EnvVar) bool { return e.Name == AgentTokenEnv })
	if i < 0 || coord.Env[i].Value != "" || coord.Env[i].ValueFrom == nil || coord.Env[i].ValueFrom.SecretKeyRef == nil ||
		coord.Env[i].ValueFrom.SecretKeyRef.Name != "agent-token" || coord.Env[i].ValueFrom.SecretKeyRef.Key != "token" {
		t.Errorf("coordinator env %+v: want SLEDGE_AGENT_TOKEN from Secret agent-token, key token", coord.Env)
	}
	if slices.ContainsFunc(workers.Env, func(e corev1.EnvVar) bool { return e.Name == AgentTokenEnv }) {
		t.Errorf("workers' env %+v has the agent's token", workers.Env)
	}
	// Without a token Secret there is no variable; without --agent, no
	// agent at all.
	o.AgentTokenSecret = ""
	if p := Parse(t, render(t, o)); slices.ContainsFunc(p.Coordinator.Spec.Template.Spec.Containers[0].Env,
		func(e corev1.EnvVar) bool { return e.Name == AgentTokenEnv }) {
		t.Error("SLEDGE_AGENT_TOKEN without --agent-token-secret")
	}
	o.Agent, o.CoordinatorArgs = "", nil
	if out := render(t, o); strings.Contains(out, "agent") {
		t.Errorf("a manifest without --agent mentions an agent:\n%s", out)
	}
}

func TestManifestAgentRefuses(t *testing.T) {
	good := Options{Name: "sledge", Image: "sledge", Workers: 2, Workload: "tpcc", DB: "postgres://u@db/tpcc", Agent: "db:7078"}
	for _, c := range []struct {
		name   string
		change func(*Options)
		want   string
	}{
		{"blank", func(o *Options) { o.Agent = "db 7078" }, "want HOST:PORT"},
		{"token without agent", func(o *Options) { o.Agent, o.AgentTokenSecret = "", "tok" }, "give --agent HOST:PORT"},
		{"stacks without agent", func(o *Options) { o.Agent, o.CoordinatorArgs = "", []string{"--stacks=true"} }, "--stacks needs --agent"},
		{"bad token secret", func(o *Options) { o.AgentTokenSecret = "Tok En" }, "--agent-token-secret"},
		{"bad token key", func(o *Options) { o.AgentTokenSecret, o.AgentTokenKey = "tok", "a/b" }, "--agent-token-key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := good
			c.change(&o)
			if _, err := Manifest(o); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Manifest: %v, want an error with %q", err, c.want)
			}
		})
	}
}

func renderAgent(t *testing.T, o AgentOptions) appsv1.DaemonSet {
	t.Helper()
	objs, err := AgentManifest(o)
	if err != nil {
		t.Fatalf("AgentManifest: %v", err)
	}
	var b bytes.Buffer
	if err := Render(&b, objs); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "\n---\n") {
		t.Fatalf("more than one document:\n%s", b.String())
	}
	var ds appsv1.DaemonSet
	if err := yaml.UnmarshalStrict(b.Bytes(), &ds); err != nil {
		t.Fatalf("the DaemonSet read back: %v\n%s", err, b.String())
	}
	return ds
}

// The agent's DaemonSet: host PID namespace and network, the token from a
// Secret mounted where --token-file reads it, the capabilities /proc
// needs and no more, a selector that selects its own pods.
func TestAgentManifest(t *testing.T) {
	for _, c := range []struct {
		name   string
		o      AgentOptions
		port   int32
		stacks bool
	}{
		{"defaults", AgentOptions{Image: "reg.example/sledge:1", TokenSecret: "agent-token"}, 7078, false},
		{"stacks, port, nodes, namespace", AgentOptions{Name: "probe", Namespace: "db", Image: "sledge-perf", Port: 9078,
			TokenSecret: "tok", TokenKey: "agent", AllowStacks: true, NodeSelector: map[string]string{"sledge.dev/database": "true"},
			CPU: "100m", Memory: "64Mi"}, 9078, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds := renderAgent(t, c.o)
			name := c.o.Name
			if name == "" {
				name = DefaultAgentName
			}
			if ds.APIVersion != "apps/v1" || ds.Kind != "DaemonSet" || ds.Name != name || ds.Namespace != c.o.Namespace {
				t.Errorf("%s %s %s/%s", ds.APIVersion, ds.Kind, ds.Namespace, ds.Name)
			}
			sel, err := metav1LabelSelector(ds)
			if err != nil || !sel.Matches(labels.Set(ds.Spec.Template.Labels)) {
				t.Errorf("selector %v does not select the pods' labels %v (%v)", ds.Spec.Selector, ds.Spec.Template.Labels, err)
			}
			pod := ds.Spec.Template.Spec
			if !pod.HostPID || !pod.HostNetwork || pod.DNSPolicy != corev1.DNSClusterFirstWithHostNet || derefB(pod.AutomountServiceAccountToken) {
				t.Errorf("pod: hostPID %v hostNetwork %v dns %s automount %v", pod.HostPID, pod.HostNetwork, pod.DNSPolicy, pod.AutomountServiceAccountToken)
			}
			if len(c.o.NodeSelector) > 0 && pod.NodeSelector["sledge.dev/database"] != "true" {
				t.Errorf("node selector %v", pod.NodeSelector)
			}
			ctr := pod.Containers[0]
			want := []string{"agent", "--listen=0.0.0.0:" + itoa(c.port), "--token-file=/etc/sledge-agent/token"}
			if c.stacks {
				want = append(want, "--allow-stacks")
			}
			if !slices.Equal(ctr.Args, want) {
				t.Errorf("args %q, want %q", ctr.Args, want)
			}
			if len(ctr.Ports) != 1 || ctr.Ports[0].ContainerPort != c.port || ctr.Ports[0].HostPort != c.port {
				t.Errorf("ports %+v, want %d on the host", ctr.Ports, c.port)
			}
			if rp := ctr.ReadinessProbe; rp == nil || rp.TCPSocket == nil || rp.TCPSocket.Port.String() != "agent" {
				t.Errorf("readiness probe %+v, want the agent's port", rp)
			}
			if len(ctr.VolumeMounts) != 1 || ctr.VolumeMounts[0].MountPath != AgentTokenDir || !ctr.VolumeMounts[0].ReadOnly {
				t.Errorf("mounts %+v", ctr.VolumeMounts)
			}
			key := c.o.TokenKey
			if key == "" {
				key = "token"
			}
			v := pod.Volumes[0]
			if v.Secret == nil || v.Secret.SecretName != c.o.TokenSecret || len(v.Secret.Items) != 1 ||
				v.Secret.Items[0].Key != key || v.Secret.Items[0].Path != "token" || deref(v.Secret.DefaultMode) != 0o400 {
				t.Errorf("token volume %+v", v.VolumeSource)
			}
			sc := ctr.SecurityContext
			caps := []corev1.Capability{"SYS_PTRACE", "DAC_READ_SEARCH"}
			if c.stacks {
				caps = append(caps, "PERFMON")
			}
			if sc == nil || !derefB(sc.ReadOnlyRootFilesystem) || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
				!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || !slices.Equal(sc.Capabilities.Add, caps) || sc.Privileged != nil {
				t.Errorf("security context %+v, want read-only, no escalation, ALL dropped and %v added", sc, caps)
			}
			if c.o.CPU != "" && ctr.Resources.Limits.Cpu().String() != c.o.CPU {
				t.Errorf("resources %+v", ctr.Resources)
			}
		})
	}
}

func TestAgentManifestRefuses(t *testing.T) {
	good := AgentOptions{Image: "sledge", TokenSecret: "tok"}
	for _, c := range []struct {
		name   string
		change func(*AgentOptions)
		want   string
	}{
		{"no token", func(o *AgentOptions) { o.TokenSecret = "" }, "--token-secret NAME is required"},
		{"no image", func(o *AgentOptions) { o.Image = "" }, "--image is required"},
		{"bad name", func(o *AgentOptions) { o.Name = "Agent" }, "--name"},
		{"bad port", func(o *AgentOptions) { o.Port = -1 }, "--port"},
		{"bad secret", func(o *AgentOptions) { o.TokenSecret = "a b" }, "--token-secret"},
		{"bad key", func(o *AgentOptions) { o.TokenKey = "a/b" }, "--token-key"},
		{"bad selector", func(o *AgentOptions) { o.NodeSelector = map[string]string{"a b": "x"} }, "--node-selector"},
		{"bad memory", func(o *AgentOptions) { o.Memory = "lots" }, "--memory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := good
			c.change(&o)
			if _, err := AgentManifest(o); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("AgentManifest: %v, want an error with %q", err, c.want)
			}
		})
	}
	if _, err := ParseNodeSelector([]string{"novalue"}); err == nil || !strings.Contains(err.Error(), "KEY=VALUE") {
		t.Errorf("ParseNodeSelector(novalue): %v", err)
	}
}

func itoa(v int32) string { return strconv.Itoa(int(v)) }

func metav1LabelSelector(ds appsv1.DaemonSet) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(ds.Spec.Selector)
}
