package kube

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sledge-bench/sledge/internal/agent"
)

// Issue 25: sledge agent in Kubernetes (docs/scale-out.md, "The agent").
// A run's coordinator is given the agent's address (Options.Agent) and its
// token from a Secret; AgentManifest writes the agent itself as a DaemonSet
// on the nodes that run databases.

const (
	// AgentTokenEnv is the variable sledge run reads the agent's token
	// from when no --agent-token-file is given.
	AgentTokenEnv = agent.TokenEnv
	// DefaultAgentPort is sledge agent's port.
	DefaultAgentPort = agent.DefaultPort
	// DefaultAgentName names the DaemonSet.
	DefaultAgentName = "sledge-agent"
	// AgentTokenDir is where the agent's pod mounts the token's Secret;
	// the token is the file AgentTokenDir/token.
	AgentTokenDir = "/etc/sledge-agent"
)

// checkAgent checks the agent's options of a run's manifest.
func (o *Options) checkAgent() error {
	if o.AgentTokenKey == "" {
		o.AgentTokenKey = DefaultAgentTokenKey
	}
	if o.Agent == "" {
		if o.AgentTokenSecret != "" {
			return errors.New("--agent-token-secret is the token of --agent: give --agent HOST:PORT")
		}
		if len(o.CoordinatorArgs) > 0 {
			return fmt.Errorf("%s needs --agent HOST:PORT", strings.SplitN(o.CoordinatorArgs[0], "=", 2)[0])
		}
		return nil
	}
	// sledge run's own parsing checked the address (HOST[:PORT] or an
	// http(s) URL); a pod's argument has no room for blanks.
	if strings.ContainsAny(o.Agent, " \t\n") {
		return fmt.Errorf("--agent %q: want HOST:PORT, such as db-node-1:7078", o.Agent)
	}
	if o.AgentTokenSecret != "" {
		if errs := validation.IsDNS1123Subdomain(o.AgentTokenSecret); len(errs) > 0 {
			return fmt.Errorf("--agent-token-secret %q: %s", o.AgentTokenSecret, errs[0])
		}
		if errs := validation.IsConfigMapKey(o.AgentTokenKey); len(errs) > 0 {
			return fmt.Errorf("--agent-token-key %q: %s", o.AgentTokenKey, errs[0])
		}
	}
	return nil
}

// AgentOptions are what the agent's DaemonSet is made of.
type AgentOptions struct {
	Name      string // the DaemonSet's name and app.kubernetes.io/instance; "": DefaultAgentName
	Namespace string
	Image     string // an image whose entrypoint is the sledge binary
	Port      int    // the agent's port on each node; 0: DefaultAgentPort
	// TokenSecret is the Secret holding the agent's token (required: the
	// agent listens on every interface, which it refuses without one);
	// TokenKey its key ("": DefaultAgentTokenKey).
	TokenSecret string
	TokenKey    string
	// AllowStacks runs the agent with --allow-stacks and the capability
	// perf needs (CAP_PERFMON); the image must hold perf.
	AllowStacks bool
	// NodeSelector restricts the agent to the nodes that run databases;
	// nil: every node.
	NodeSelector map[string]string
	CPU, Memory  string // the agent's requests and limits (equal); "": none
}

func (o *AgentOptions) check() error {
	if o.Name == "" {
		o.Name = DefaultAgentName
	}
	if o.Port == 0 {
		o.Port = DefaultAgentPort
	}
	if o.TokenKey == "" {
		o.TokenKey = DefaultAgentTokenKey
	}
	if errs := validation.IsDNS1123Label(o.Name); len(errs) > 0 {
		return fmt.Errorf("--name %q: %s", o.Name, errs[0])
	}
	if o.Namespace != "" {
		if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
			return fmt.Errorf("--namespace %q: %s", o.Namespace, errs[0])
		}
	}
	if strings.TrimSpace(o.Image) == "" {
		return errors.New("--image is required: an image whose entrypoint is sledge (the repository's Dockerfile builds one)")
	}
	if o.Port < 1 || o.Port > 65535 {
		return fmt.Errorf("--port %d: want 1 to 65535", o.Port)
	}
	if o.TokenSecret == "" {
		return errors.New("--token-secret NAME is required: the agent listens on every interface of the node, which it refuses without a token")
	}
	if errs := validation.IsDNS1123Subdomain(o.TokenSecret); len(errs) > 0 {
		return fmt.Errorf("--token-secret %q: %s", o.TokenSecret, errs[0])
	}
	if errs := validation.IsConfigMapKey(o.TokenKey); len(errs) > 0 {
		return fmt.Errorf("--token-key %q: %s", o.TokenKey, errs[0])
	}
	for k, v := range o.NodeSelector {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("--node-selector %s=%s: %s", k, v, errs[0])
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("--node-selector %s=%s: %s", k, v, errs[0])
		}
	}
	return checkQuantities(o.CPU, o.Memory)
}

// AgentArgs are the agent's command line after the entrypoint.
func AgentArgs(o AgentOptions) []string {
	a := []string{"agent", "--listen=0.0.0.0:" + strconv.Itoa(o.Port), "--token-file=" + AgentTokenDir + "/token"}
	if o.AllowStacks {
		a = append(a, "--allow-stacks")
	}
	return a
}

// AgentManifest returns the agent's DaemonSet: one agent per node, in the
// host's PID namespace (it sees every process of the node, the database
// pods' included) and on the host's network (it is reached at the node's
// address, and reads the node's interfaces). It reads /proc and /sys only:
// as root for /proc/PID/io, fd and schedstat of other users' processes,
// with every capability dropped but those reads need.
func AgentManifest(o AgentOptions) ([]runtime.Object, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	labels := map[string]string{labelName: "sledge", labelInstance: o.Name, labelComponent: "agent", labelManagedBy: "sledge"}
	yes, no := true, false
	root := int64(0)
	caps := []corev1.Capability{"SYS_PTRACE", "DAC_READ_SEARCH"}
	if o.AllowStacks {
		caps = append(caps, "PERFMON")
	}
	mode := int32(0o400)
	c := corev1.Container{
		Name:  "agent",
		Image: o.Image,
		Args:  AgentArgs(o),
		Ports: []corev1.ContainerPort{{Name: "agent", ContainerPort: int32(o.Port), HostPort: int32(o.Port), Protocol: corev1.ProtocolTCP}},
		// /v1/info answers only with the token, which a probe's headers
		// would write into this manifest: ready is the port accepting.
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("agent")}},
			PeriodSeconds:    10,
			FailureThreshold: 3,
		},
		VolumeMounts: []corev1.VolumeMount{{Name: "token", MountPath: AgentTokenDir, ReadOnly: true}},
		SecurityContext: &corev1.SecurityContext{
			RunAsUser:                &root,
			RunAsNonRoot:             &no,
			ReadOnlyRootFilesystem:   &yes,
			AllowPrivilegeEscalation: &no,
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: caps},
		},
	}
	if rl := resources(o.CPU, o.Memory); rl != nil {
		c.Resources = corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}
	}
	ds := &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					HostPID:                      true,
					HostNetwork:                  true,
					DNSPolicy:                    corev1.DNSClusterFirstWithHostNet,
					AutomountServiceAccountToken: &no, // the agent never calls the API
					EnableServiceLinks:           &no,
					NodeSelector:                 o.NodeSelector,
					SecurityContext: &corev1.PodSecurityContext{
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{c},
					Volumes: []corev1.Volume{{
						Name: "token",
						VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
							SecretName:  o.TokenSecret,
							Items:       []corev1.KeyToPath{{Key: o.TokenKey, Path: "token"}},
							DefaultMode: &mode,
						}},
					}},
				},
			},
		},
	}
	return []runtime.Object{ds}, nil
}

// ParseNodeSelector reads --node-selector's KEY=VALUE pairs.
func ParseNodeSelector(pairs []string) (map[string]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--node-selector %q: want KEY=VALUE, such as sledge.dev/database=true", p)
		}
		m[k] = v
	}
	return m, nil
}
