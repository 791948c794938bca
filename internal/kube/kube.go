// Package kube writes the Kubernetes objects of a scale-out run (issue 17,
// docs/scale-out.md): a headless Service in front of the coordinator, the
// coordinator as a one-pod Job, and the workers as an Indexed Job whose
// pods read their index from JOB_COMPLETION_INDEX; and sledge agent as a
// DaemonSet on the database's nodes (issue 25, agent.go). The objects are the
// Kubernetes API's own Go types, rendered as YAML.
//
// It is the only package that imports k8s.io: `sledge kube manifest`
// (internal/cli) is its only user, and TestK8sImportsStayInKube keeps it so.
package kube

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/sledge-bench/sledge/internal/cluster"
	"github.com/sledge-bench/sledge/internal/db"
)

const (
	// DefaultPort is the coordinator's port: the one --listen and
	// --coordinator take when given a host alone.
	DefaultPort = cluster.DefaultPort
	// DefaultName names the objects: <name>-coordinator, <name>-workers.
	DefaultName = "sledge"
	// DefaultSecretKey is the key of the password in the Secret.
	DefaultSecretKey = "password"

	// DataDir is the pods' writable directory (an emptyDir): the root
	// file system is read-only, and sledge keeps its job store under
	// $XDG_DATA_HOME and writes -l logs and profiles to the working
	// directory.
	DataDir = "/data"
	// uid is distroless's nonroot user: numeric, so that the kubelet can
	// check runAsNonRoot.
	uid = 65532
)

// Options are what the manifest is made of. The cli checks the run
// options with `sledge run`'s own parsing before it calls Manifest.
type Options struct {
	Name      string // object names' prefix and app.kubernetes.io/instance
	Namespace string // "": kubectl's current namespace
	Image     string // an image whose entrypoint is the sledge binary
	Workers   int    // worker pods, each running a share of the virtual users
	Port      int    // the coordinator's port; 0: DefaultPort

	Workload string   // run's workload: tpcc, tpcb
	RunArgs  []string // run's options after the workload, as sledge run takes them
	DB       string   // the database URL, without a password

	// PasswordEnv is the variable the driver reads a URL's missing
	// password from (PGPASSWORD, MYSQL_PWD); Secret and SecretKey name
	// where Kubernetes takes its value from. Secret "" means the database
	// needs no password.
	PasswordEnv string
	Secret      string
	SecretKey   string // "": DefaultSecretKey

	CPU, Memory string // each pod's requests and limits (equal); "": none

	// Agent is the sledge agent (HOST:PORT) that measures the database
	// server's side (issue 25): given to the coordinator alone, which
	// reads it at the edges of the measured interval; the workers never
	// talk to it. AgentTokenSecret and AgentTokenKey name the Secret the
	// coordinator's SLEDGE_AGENT_TOKEN comes from ("": the agent has no
	// token).
	Agent            string
	AgentTokenSecret string
	AgentTokenKey    string // "": DefaultAgentTokenKey
	// CoordinatorArgs are run options only the coordinator takes (those
	// about the agent, such as --stacks), as written.
	CoordinatorArgs []string
}

// DefaultAgentTokenKey is the key of the agent's token in its Secret.
const DefaultAgentTokenKey = "token"

// Labels of every object and pod; the component label tells the
// coordinator's pod from the workers'.
const (
	labelName      = "app.kubernetes.io/name"
	labelInstance  = "app.kubernetes.io/instance"
	labelComponent = "app.kubernetes.io/component"
	labelManagedBy = "app.kubernetes.io/managed-by"
)

// ServiceName is the coordinator's headless Service, the host part of the
// workers' --coordinator.
func ServiceName(name string) string { return name + "-coordinator" }

// CoordinatorJobName and WorkersJobName name the two Jobs.
func CoordinatorJobName(name string) string { return name + "-coordinator" }
func WorkersJobName(name string) string     { return name + "-workers" }

// Labels are the labels of the objects of component ("coordinator",
// "workers", "" for the Service) of the run called name.
func Labels(name, component string) map[string]string {
	l := map[string]string{labelName: "sledge", labelInstance: name, labelManagedBy: "sledge"}
	if component != "" {
		l[labelComponent] = component
	}
	return l
}

// check refuses options that would make objects Kubernetes refuses, or a
// manifest that holds a password.
func (o *Options) check() error {
	if o.Port == 0 {
		o.Port = DefaultPort
	}
	if o.SecretKey == "" {
		o.SecretKey = DefaultSecretKey
	}
	// The longest name derived from it, as a DNS label (a Service's
	// name is one, and so is the job-name label of the pods).
	if errs := validation.IsDNS1035Label(ServiceName(o.Name)); len(errs) > 0 || o.Name == "" {
		return fmt.Errorf("--name %q: want lower-case letters, digits and '-', starting with a letter, at most %d characters", o.Name, validation.DNS1035LabelMaxLength-len("-coordinator"))
	}
	if o.Namespace != "" {
		if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
			return fmt.Errorf("--namespace %q: %s", o.Namespace, errs[0])
		}
	}
	if strings.TrimSpace(o.Image) == "" {
		return errors.New("--image is required: an image whose entrypoint is sledge (the repository's Dockerfile builds one)")
	}
	if o.Workers < 1 {
		return fmt.Errorf("--workers %d: want at least 1", o.Workers)
	}
	if o.Port < 1 || o.Port > 65535 {
		return fmt.Errorf("port %d: want 1 to 65535", o.Port)
	}
	if o.Workload == "" || o.DB == "" {
		return errors.New("a workload and a database URL are required")
	}
	if hasPassword(o.DB) {
		return errors.New("the database URL has a password: put the password in a Secret: --secret NAME")
	}
	if o.Secret != "" {
		if errs := validation.IsDNS1123Subdomain(o.Secret); len(errs) > 0 {
			return fmt.Errorf("--secret %q: %s", o.Secret, errs[0])
		}
		if errs := validation.IsConfigMapKey(o.SecretKey); len(errs) > 0 {
			return fmt.Errorf("--secret-key %q: %s", o.SecretKey, errs[0])
		}
		if o.PasswordEnv == "" {
			return errors.New("--secret: this database takes no password from the environment")
		}
	}
	if err := o.checkAgent(); err != nil {
		return err
	}
	return checkQuantities(o.CPU, o.Memory)
}

// checkQuantities checks --cpu and --memory.
func checkQuantities(cpu, memory string) error {
	for _, q := range []struct{ flag, v string }{{"--cpu", cpu}, {"--memory", memory}} {
		if q.v == "" {
			continue
		}
		n, err := resource.ParseQuantity(q.v)
		if err != nil || n.Sign() <= 0 {
			return fmt.Errorf("%s %q: want a positive Kubernetes quantity such as 2, 500m, 1Gi", q.flag, q.v)
		}
	}
	return nil
}

// resources are checked --cpu and --memory as a resource list, nil when
// neither is given.
func resources(cpu, memory string) corev1.ResourceList {
	if cpu == "" && memory == "" {
		return nil
	}
	rl := corev1.ResourceList{}
	if cpu != "" {
		rl[corev1.ResourceCPU] = resource.MustParse(cpu) // checked
	}
	if memory != "" {
		rl[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return rl
}

// hasPassword tells whether a URL carries a password, in its user
// information or as a password= parameter.
func hasPassword(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		// Unparsable: it may hide anything, so it is refused as one.
		return true
	}
	return db.StripPassword(u)
}

// coordinatorArgs are the coordinator's command line after the
// entrypoint, of checked options (o.Port set): the agent is its alone.
func coordinatorArgs(o Options) []string {
	a := append(runArgs(o), o.CoordinatorArgs...)
	if o.Agent != "" {
		a = append(a, "--agent="+o.Agent)
	}
	return append(a, "--workers="+strconv.Itoa(o.Workers), "--listen=:"+strconv.Itoa(o.Port))
}

// workerArgs are a worker's: its index comes from JOB_COMPLETION_INDEX,
// which Kubernetes sets in an Indexed Job's pods.
func workerArgs(o Options) []string {
	return append(runArgs(o), "--workers="+strconv.Itoa(o.Workers),
		"--coordinator="+ServiceName(o.Name)+":"+strconv.Itoa(o.Port))
}

func runArgs(o Options) []string {
	a := []string{"run", o.Workload}
	a = append(a, o.RunArgs...)
	return append(a, "--db="+o.DB)
}

// Manifest returns the objects of the run, in the order to apply them:
// the coordinator's Service, the coordinator's Job, the workers' Job.
func Manifest(o Options) ([]runtime.Object, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(o, ServiceName(o.Name), ""),
		Spec: corev1.ServiceSpec{
			// Headless: the name resolves to the coordinator pod itself.
			ClusterIP: corev1.ClusterIPNone,
			Selector:  Labels(o.Name, "coordinator"),
			// Workers may look the name up before the coordinator's pod
			// is ready; it has no readiness probe to wait for anyway.
			PublishNotReadyAddresses: true,
			Ports: []corev1.ServicePort{{
				Name: "coordinator", Protocol: corev1.ProtocolTCP,
				Port: int32(o.Port), TargetPort: intstr.FromString("coordinator"),
			}},
		},
	}
	coord := job(o, CoordinatorJobName(o.Name), "coordinator", 1, coordinatorArgs(o))
	c := &coord.Spec.Template.Spec.Containers[0]
	c.Ports = []corev1.ContainerPort{{Name: "coordinator", ContainerPort: int32(o.Port), Protocol: corev1.ProtocolTCP}}
	if o.AgentTokenSecret != "" {
		// A reference, never the token: kubectl shows the manifest.
		c.Env = append(c.Env, secretEnv(AgentTokenEnv, o.AgentTokenSecret, o.AgentTokenKey))
	}
	workers := job(o, WorkersJobName(o.Name), "workers", int32(o.Workers), workerArgs(o))
	indexed := batchv1.IndexedCompletion
	workers.Spec.CompletionMode = &indexed
	return []runtime.Object{svc, coord, workers}, nil
}

func meta(o Options, name, component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: Labels(o.Name, component)}
}

// job is a Job of n pods running sledge with args: all of them at once,
// none retried (a pod that restarted would measure another interval than
// the others).
func job(o Options, name, component string, n int32, args []string) *batchv1.Job {
	zero := int32(0)
	env := []corev1.EnvVar{
		// The job store and temporary files: the root is read-only.
		{Name: "XDG_DATA_HOME", Value: DataDir},
		{Name: "TMPDIR", Value: DataDir},
	}
	if o.Secret != "" {
		env = append(env, secretEnv(o.PasswordEnv, o.Secret, o.SecretKey))
	}
	yes, no := true, false
	nonroot := int64(uid)
	c := corev1.Container{
		Name:       "sledge",
		Image:      o.Image,
		Args:       args,
		Env:        env,
		WorkingDir: DataDir,
		VolumeMounts: []corev1.VolumeMount{{
			Name: "data", MountPath: DataDir,
		}},
		SecurityContext: &corev1.SecurityContext{
			ReadOnlyRootFilesystem:   &yes,
			AllowPrivilegeEscalation: &no,
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
	if rl := resources(o.CPU, o.Memory); rl != nil {
		// Requests equal to limits: the Guaranteed class, so that the load
		// generator is not the one squeezed when the node is busy.
		c.Resources = corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}
	}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta(o, name, component),
		Spec: batchv1.JobSpec{
			Completions:  &n,
			Parallelism:  &n,
			BackoffLimit: &zero,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: Labels(o.Name, component)},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					AutomountServiceAccountToken: &no, // sledge never calls the API
					EnableServiceLinks:           &no,
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   &yes,
						RunAsUser:      &nonroot,
						RunAsGroup:     &nonroot,
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{c},
					Volumes: []corev1.Volume{{
						Name:         "data",
						VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}},
					}},
				},
			},
		},
	}
}

// secretEnv is the variable name whose value Kubernetes takes from key of
// Secret secret.
func secretEnv(name, secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: secret},
			Key:                  key,
		},
	}}
}

// Render writes objs as YAML documents separated by "---", without the
// status the API types marshal (an empty one, the cluster's to fill).
func Render(w io.Writer, objs []runtime.Object) error {
	var b bytes.Buffer
	for i, obj := range objs {
		j, err := json.Marshal(obj)
		if err != nil {
			return fmt.Errorf("render %T: %w", obj, err)
		}
		var m map[string]any
		if err := json.Unmarshal(j, &m); err != nil {
			return fmt.Errorf("render %T: %w", obj, err)
		}
		delete(m, "status") // the cluster's to write

		y, err := yaml.Marshal(m)
		if err != nil {
			return fmt.Errorf("render %T: %w", obj, err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	_, err := w.Write(b.Bytes())
	return err
}
