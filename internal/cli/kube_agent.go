package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/kube"
)

// Issue 25 in kube: the agent for a run's coordinator (kube manifest
// --agent) and the agent itself as a DaemonSet (kube agent-manifest).

// kubeCoordinatorOnly are run options about the agent that the manifest
// gives the coordinator alone: the workers do not talk to the agent.
var kubeCoordinatorOnly = map[string]bool{"stacks": true, "agent-target": true}

// kubeAgentOwned are the agent's run options the manifest writes itself
// (--agent) or refuses (files of this machine: --agent-token-file,
// --agent-ca).
var kubeAgentOwned = map[string]bool{"agent": true, "agent-token-file": true, "agent-ca": true}

// addKubeAgentFlags adds kube manifest's agent flags beside run's own
// (--agent, --agent-target, --stacks…, which run.go's flags define): a
// manifest's token comes from a Secret only.
func addKubeAgentFlags(fs *pflag.FlagSet, k *kube.Options) {
	fs.StringVar(&k.AgentTokenSecret, "agent-token-secret", "", "Secret holding the agent's token, given to the coordinator as SLEDGE_AGENT_TOKEN (never in the output)")
	fs.StringVar(&k.AgentTokenKey, "agent-token-key", kube.DefaultAgentTokenKey, "the token's key in --agent-token-secret")
}

// kubeAgentFiles refuses the agent's options that name files of this
// machine, before run's own checks read them.
func kubeAgentFiles(fs *pflag.FlagSet) error {
	if fs.Changed("agent-token-file") {
		return usageErr("--agent-token-file: the pods cannot read this machine's files; put the token in a Secret: --agent-token-secret NAME")
	}
	if fs.Changed("agent-ca") {
		return usageErr("--agent-ca: the pods cannot read this machine's files; give the coordinator's pods an agent reached over plain HTTP inside the cluster")
	}
	return nil
}

// kubeAgent reads the agent's flags into k; run's own checks have read
// --agent already.
func kubeAgent(fs *pflag.FlagSet, k *kube.Options) error {
	if fs.Changed("agent-token-key") && k.AgentTokenSecret == "" {
		return usageErr("--agent-token-key names a key in --agent-token-secret: give --agent-token-secret NAME")
	}
	k.Agent = fs.Lookup("agent").Value.String()
	return nil
}

func newKubeAgentManifest(env *Env) *cobra.Command {
	o := kube.AgentOptions{}
	var selector []string
	cmd := &cobra.Command{
		Use:   "agent-manifest --image IMAGE --token-secret NAME",
		Short: "Print sledge agent as a Kubernetes DaemonSet, as YAML",
		Long: `Print, as YAML for "kubectl apply -f -", sledge agent as a DaemonSet
(docs/scale-out.md): one agent on each node (or each node --node-selector
picks), running

  sledge agent --listen=0.0.0.0:7078 --token-file=/etc/sledge-agent/token

in the host's PID namespace (hostPID: it sees the processes of every pod
of its node, the database's included) and on the host's network (reached
at the node's address, port --port; it reads the node's interfaces). The
token comes from the Secret --token-secret (key --token-key), mounted
read-only at /etc/sledge-agent: it is never in the output. The agent runs
as root with every capability dropped but SYS_PTRACE and DAC_READ_SEARCH
(reading other users' /proc/PID/io, fd and schedstat), on a read-only
root file system; --allow-stacks adds PERFMON and passes --allow-stacks
(the image must hold perf). It is ready when its port accepts
connections: /v1/info answers only with the token, which a probe would
have to write into the manifest.

Give a run's coordinator the agent of the database's node:
sledge kube manifest … --agent NODE:7078 --agent-token-secret NAME.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ns, err := kube.ParseNodeSelector(selector)
			if err != nil {
				return usageErr("%v", err)
			}
			o.NodeSelector = ns
			objs, err := kube.AgentManifest(o)
			if err != nil {
				return usageErr("%v", err)
			}
			return kube.Render(env.Stdout, objs)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Image, "image", "", "image whose entrypoint is sledge, such as the repository's Dockerfile builds (required)")
	fs.StringVar(&o.Name, "name", kube.DefaultAgentName, "the DaemonSet's name")
	fs.StringVar(&o.Namespace, "namespace", "", "namespace of the DaemonSet (default: kubectl's current one)")
	fs.IntVar(&o.Port, "port", kube.DefaultAgentPort, "the agent's port on each node (the host's network)")
	fs.StringVar(&o.TokenSecret, "token-secret", "", "Secret holding the agent's token (required: the agent listens on every interface)")
	fs.StringVar(&o.TokenKey, "token-key", kube.DefaultAgentTokenKey, "the token's key in --token-secret")
	fs.BoolVar(&o.AllowStacks, "allow-stacks", false, "let runs record the server's on-CPU stacks (perf, in the image; adds CAP_PERFMON)")
	fs.StringArrayVar(&selector, "node-selector", nil, "KEY=VALUE: run the agent only on nodes with this label (repeatable; default: every node)")
	fs.StringVar(&o.CPU, "cpu", "", "CPU of each agent, requested and limit alike, such as 100m (default: none set)")
	fs.StringVar(&o.Memory, "memory", "", "memory of each agent, requested and limit alike, such as 64Mi (default: none set)")
	return cmd
}
