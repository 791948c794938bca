package cli

import (
	"io"
	"net"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/kube"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
)

func newKube(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kube",
		Short: "Run one benchmark from many pods on Kubernetes",
		Long: `Commands for running one benchmark from many worker pods on Kubernetes
(docs/scale-out.md).`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newKubeManifest(env), newKubeAgentManifest(env)) // kube_agent.go
	return cmd
}

// kubeOpts are kube manifest's flags: run's (the pods' run options) and
// the manifest's own.
type kubeOpts struct {
	runOpts
	kube kube.Options
	// given records run's options as the parser sets them, in order:
	// the pods get them back as written.
	given []givenFlag
}

type givenFlag struct{ name, value string }

// recorder is a run flag's value that also records what it was set to.
type recorder struct {
	pflag.Value
	name string
	log  *[]givenFlag
}

func (r recorder) Set(s string) error {
	if err := r.Value.Set(s); err != nil {
		return err
	}
	*r.log = append(*r.log, givenFlag{r.name, s})
	return nil
}

// kubeOwned are the run options the manifest writes itself: the database
// (with no password), the seed every pod must share, and the scale-out
// flags of the design (docs/scale-out.md).
var kubeOwned = map[string]bool{"db": true, "seed": true, "random-seed": true, "workers": true}

// kubeRefused are run's scale-out options that the manifest sets for each
// pod itself: given on its command line, they are refused.
var kubeRefused = []string{"listen", "coordinator", "worker-index"}

func newKubeManifest(env *Env) *cobra.Command {
	o := &kubeOpts{}
	cmd := &cobra.Command{
		Use:   "manifest [workload] [URL] --workers N --image IMAGE [run options]",
		Short: "Print the Kubernetes objects of a run from N worker pods, as YAML",
		Long: `Print, as YAML for "kubectl apply -f -", the objects of one run driven
from N worker pods (docs/scale-out.md):

  Service <name>-coordinator  headless, port 7077: the coordinator's address
  Job <name>-coordinator      one pod: sledge run [run options] --workers N --listen :7077
  Job <name>-workers          Indexed, N pods at once: sledge run [run options] --workers N
                              --coordinator <name>-coordinator:7077; each pod's share comes
                              from its index (JOB_COMPLETION_INDEX)

The run options are sledge run's, checked as sledge run checks them (bad
ones exit 2), and go to every pod as written, --jobs-db and --no-job
included; the database URL goes to every pod as --db. Every worker runs
at least one virtual user: --workers is at most --vus. The URL must
not hold a password: the pods read it from PGPASSWORD or MYSQL_PWD, which
the manifest fills from the Secret --secret (key --secret-key); the
password is never in the output. An embedded SQLite file cannot be shared
by pods: the URL must name a server the pods reach. Script files (-f) are
not in the image: use builtins (-b). tpch runs its own tests and is not
split.

Every pod uses the same seed: --seed N, else one drawn now and written
into the manifest (applying the same manifest again repeats the run's
inputs). Pods run as a non-root user on a read-only root file system,
with an emptyDir at /data for the job store ($XDG_DATA_HOME) and as the
working directory. No pod is retried (backoffLimit 0): a
restarted worker would measure another interval than the others. Pods
wait 5m for each other (--worker-timeout=5m) unless --worker-timeout is
given: images are pulled and nodes found before a pod starts.

--agent HOST:PORT gives the coordinator alone a sledge agent on the
database's node (issue 25; "sledge kube agent-manifest" writes one as a
DaemonSet): the coordinator reads it at the edges of the measured
interval, as sledge run --agent does; the workers never talk to it, and
the agent's other run options (--agent-target, --stacks) go to the
coordinator only. --agent-token-secret NAME gives the coordinator the
agent's token as SLEDGE_AGENT_TOKEN from that Secret (key
--agent-token-key): the token is never in the output. --agent-token-file
and --agent-ca, files of this machine, are refused.

The result is the coordinator's: kubectl logs job/<name>-coordinator.`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.kube.Workers = o.Cluster.Workers // sledge run's own --workers
			return runKubeManifest(cmd, env, o, args)
		},
	}
	addCommon(cmd, &o.common, "run", 0)
	runner.RunFlags(cmd.Flags(), &o.RunOptions)
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		f.Value = recorder{f.Value, f.Name, &o.given}
		// --help leaves out a zero default by the value's type, which the
		// wrapper hides: give it as the zero pflag knows without the type.
		if f.DefValue == "[]" || f.DefValue == "0s" {
			f.DefValue = ""
		}
	})
	fs := cmd.Flags()
	fs.StringVar(&o.kube.Image, "image", "", "image whose entrypoint is sledge, such as the repository's Dockerfile builds (required)")
	fs.StringVar(&o.kube.Name, "name", kube.DefaultName, "the objects' names: <name>-coordinator (Service and Job), <name>-workers (Job)")
	fs.StringVar(&o.kube.Namespace, "namespace", "", "namespace of the objects (default: kubectl's current one)")
	fs.StringVar(&o.kube.Secret, "secret", "", "Secret holding the database password, given to every pod as PGPASSWORD or MYSQL_PWD (by the URL's scheme)")
	fs.StringVar(&o.kube.SecretKey, "secret-key", kube.DefaultSecretKey, "the password's key in the Secret")
	fs.StringVar(&o.kube.CPU, "cpu", "", "CPU of each pod, requested and limit alike, such as 2 or 500m (default: none set)")
	fs.StringVar(&o.kube.Memory, "memory", "", "memory of each pod, requested and limit alike, such as 1Gi (default: none set)")
	addKubeAgentFlags(fs, &o.kube) // kube_agent.go
	return cmd
}

// kubeWorkerTimeout is the pods' --worker-timeout unless one is given.
const kubeWorkerTimeout = 5 * time.Minute

func runKubeManifest(cmd *cobra.Command, env *Env, o *kubeOpts, args []string) error {
	fs := cmd.Flags()
	for _, name := range kubeRefused {
		if fs.Changed(name) {
			return usageErr("--%s: the manifest sets it for each pod", name)
		}
	}
	if !fs.Changed("workers") {
		return usageErr("--workers N is required: how many worker pods")
	}
	if o.kube.Image == "" { // before the run options' checks: what is missing comes first
		return usageErr("--image is required: an image whose entrypoint is sledge (the repository's Dockerfile builds one)")
	}
	if fs.Changed("file") {
		return usageErr("-f/--file: the pods cannot read this machine's files; run builtins (-b) or build an image that holds the scripts")
	}
	if err := kubeAgentFiles(fs); err != nil { // kube_agent.go
		return err
	}
	w, rawURL, err := o.resolve(cmd, args, env)
	if err != nil {
		return err
	}
	if _, ok := w.(workload.Analytic); ok {
		return usageErr("%s runs its own tests and is not split across workers: run it from one sledge", w.Name())
	}
	u, err := db.ParseURL(rawURL)
	if err != nil {
		return err
	}
	if u.Scheme == "sqlite" || u.Scheme == "file" {
		how := "give --db with the URL of a PostgreSQL or MySQL server the pods reach"
		if !o.common.Explicit {
			return usageErr("no database: the embedded SQLite default cannot be shared by pods; %s", how)
		}
		return usageErr("%s is an embedded SQLite file, which pods cannot share; %s", db.Redact(rawURL), how)
	}
	if u.Scheme == "duckdb" {
		return usageErr("%s is an embedded DuckDB database, which pods cannot share; give --db with the URL of a PostgreSQL or MySQL server the pods reach", db.Redact(rawURL))
	}
	if _, env := db.Pasteable(rawURL); env != "" {
		return usageErr("the database URL has a password, which the manifest would show: put the password in a Secret: --secret NAME (docs/scale-out.md)")
	}
	o.Seed, o.SeedSet, o.Explicit, o.JSON = o.common.Seed, o.common.SeedSet, o.common.Explicit, o.common.JSON
	if err := o.FlagsSet(fs, w); err != nil {
		return err
	}
	// Everything sledge run checks before it opens the database; it also
	// draws the seed when none was given.
	if _, err := runner.Run(cmd.Context(), runner.RunEnv{Stderr: io.Discard, Getenv: env.Getenv, DryRun: true}, &o.RunOptions, w, rawURL); err != nil {
		return err
	}
	k := o.kube
	k.Workload, k.DB, k.PasswordEnv = w.Name(), rawURL, db.PasswordEnv(u.Scheme)
	if k.Secret == "" && fs.Changed("secret-key") {
		return usageErr("--secret-key names a key in --secret: give --secret NAME")
	}
	if err := kubeAgent(fs, &k); err != nil { // kube_agent.go
		return err
	}
	for _, g := range o.given {
		switch {
		case kubeOwned[g.name], kubeAgentOwned[g.name]:
		case kubeCoordinatorOnly[g.name]:
			k.CoordinatorArgs = append(k.CoordinatorArgs, "--"+g.name+"="+g.value)
		default:
			k.RunArgs = append(k.RunArgs, "--"+g.name+"="+g.value)
		}
	}
	// The job store's flags are the root's, and the pods': this command
	// records no job.
	for _, name := range []string{"jobs-db", "no-job"} {
		if f := fs.Lookup(name); f != nil && f.Changed {
			k.RunArgs = append(k.RunArgs, "--"+name+"="+f.Value.String())
		}
	}
	if !fs.Changed("worker-timeout") {
		// Pods start when their images are pulled and nodes found, which
		// takes longer than local processes: wait longer than run's 1m.
		k.RunArgs = append(k.RunArgs, "--worker-timeout="+kubeWorkerTimeout.String())
	}
	k.RunArgs = append(k.RunArgs, "--seed="+strconv.FormatUint(o.Seed, 10))
	objs, err := kube.Manifest(k)
	if err != nil {
		return usageErr("%v", err)
	}
	if k.Workers > o.VUs {
		return usageErr("--workers %d is more than --vus %d: every worker runs at least one virtual user", k.Workers, o.VUs)
	}
	if h := u.Hostname(); h == "" || h == "localhost" || net.ParseIP(h).IsLoopback() {
		what := h
		if what == "" {
			what = "a URL without a host (a local socket)"
		}
		cmd.PrintErrf("note: %s, in a pod, is the pod itself: give the database's address as the pods reach it\n", what)
	}
	if h, _, _ := net.SplitHostPort(k.Agent); h == "localhost" || net.ParseIP(h).IsLoopback() {
		cmd.PrintErrf("note: --agent %s, in a pod, is the pod itself: give the agent's address as the coordinator reaches it (its node's, for the DaemonSet of kube agent-manifest)\n", k.Agent)
	}
	return kube.Render(env.Stdout, objs)
}
