package kube

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// Parsed is a manifest read back into the API types.
type Parsed struct {
	Service              corev1.Service
	Coordinator, Workers batchv1.Job
}

// Parse splits a rendered manifest into its documents and reads each into
// its API type, refusing fields the types do not have.
func Parse(t *testing.T, out string) Parsed {
	t.Helper()
	docs := strings.Split(out, "\n---\n")
	if len(docs) != 3 {
		t.Fatalf("%d documents, want 3 (Service, coordinator Job, workers Job):\n%s", len(docs), out)
	}
	var p Parsed
	for i, into := range []any{&p.Service, &p.Coordinator, &p.Workers} {
		if err := yaml.UnmarshalStrict([]byte(docs[i]), into); err != nil {
			t.Fatalf("document %d into %T: %v\n%s", i+1, into, err, docs[i])
		}
	}
	return p
}

func render(t *testing.T, o Options) string {
	t.Helper()
	objs, err := Manifest(o)
	if err != nil {
		t.Fatalf("Manifest: %v", err)
	}
	var b bytes.Buffer
	if err := Render(&b, objs); err != nil {
		t.Fatalf("Render: %v", err)
	}
	return b.String()
}

func TestManifestRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name    string
		o       Options
		service string
		port    int
		env     string // the password variable, "" for none
	}{
		{"postgres with a secret", Options{Name: "bench", Image: "reg.example/sledge:1", Workers: 4, Workload: "tpcc",
			RunArgs: []string{"--vus=8", "--seed=7"}, DB: "postgres://u@db:5432/tpcc", PasswordEnv: "PGPASSWORD", Secret: "pg-pass"},
			"bench-coordinator", DefaultPort, "PGPASSWORD"},
		{"mysql, another key and namespace", Options{Name: "m", Namespace: "perf", Image: "sledge", Workers: 2, Workload: "tpcb",
			DB: "mysql://root@mariadb/tpcb", PasswordEnv: "MYSQL_PWD", Secret: "maria", SecretKey: "root-password", CPU: "1500m", Memory: "512Mi"},
			"m-coordinator", DefaultPort, "MYSQL_PWD"},
		{"no password, one worker, another port", Options{Name: "x1", Image: "sledge", Workers: 1, Workload: "tpcc", Port: 9000,
			DB: "postgres://trust@db/tpcc", PasswordEnv: "PGPASSWORD"},
			"x1-coordinator", 9000, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := Parse(t, render(t, c.o))
			n := int32(c.o.Workers)

			svc := p.Service
			if svc.Kind != "Service" || svc.Name != c.service || svc.Spec.ClusterIP != corev1.ClusterIPNone {
				t.Errorf("service %s %q clusterIP %q, want a headless Service %q", svc.Kind, svc.Name, svc.Spec.ClusterIP, c.service)
			}
			if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != int32(c.port) {
				t.Errorf("service ports %+v, want %d", svc.Spec.Ports, c.port)
			}
			sel := labels.SelectorFromSet(svc.Spec.Selector)
			if !sel.Matches(labels.Set(p.Coordinator.Spec.Template.Labels)) {
				t.Errorf("service selector %v does not select the coordinator pod %v", svc.Spec.Selector, p.Coordinator.Spec.Template.Labels)
			}
			if sel.Matches(labels.Set(p.Workers.Spec.Template.Labels)) {
				t.Errorf("service selector %v selects the worker pods too", svc.Spec.Selector)
			}

			co, wk := p.Coordinator.Spec, p.Workers.Spec
			if p.Coordinator.Kind != "Job" || p.Coordinator.APIVersion != "batch/v1" || deref(co.Completions) != 1 || deref(co.Parallelism) != 1 || deref(co.BackoffLimit) != 0 {
				t.Errorf("coordinator %s/%s completions %d parallelism %d backoffLimit %d, want a batch/v1 Job of 1, no retry",
					p.Coordinator.APIVersion, p.Coordinator.Kind, deref(co.Completions), deref(co.Parallelism), deref(co.BackoffLimit))
			}
			if wk.CompletionMode == nil || *wk.CompletionMode != batchv1.IndexedCompletion {
				t.Errorf("workers completionMode %v, want Indexed", wk.CompletionMode)
			}
			if deref(wk.Completions) != n || deref(wk.Parallelism) != n || deref(wk.BackoffLimit) != 0 {
				t.Errorf("workers completions %d parallelism %d backoffLimit %d, want %d, %d, 0", deref(wk.Completions), deref(wk.Parallelism), deref(wk.BackoffLimit), n, n)
			}

			cArgs, wArgs := co.Template.Spec.Containers[0].Args, wk.Template.Spec.Containers[0].Args
			workers := "--workers=" + strconv.Itoa(c.o.Workers)
			for _, want := range []string{"--listen=:" + strconv.Itoa(c.port), workers, "--db=" + c.o.DB} {
				if !slices.Contains(cArgs, want) {
					t.Errorf("coordinator args %q lack %s", cArgs, want)
				}
			}
			for _, want := range []string{"--coordinator=" + c.service + ":" + strconv.Itoa(c.port), workers, "--db=" + c.o.DB} {
				if !slices.Contains(wArgs, want) {
					t.Errorf("worker args %q lack %s", wArgs, want)
				}
			}
			if slices.ContainsFunc(wArgs, func(a string) bool { return strings.HasPrefix(a, "--listen") || strings.HasPrefix(a, "--worker-index") }) {
				t.Errorf("worker args %q: the index is JOB_COMPLETION_INDEX's, and workers do not listen", wArgs)
			}
			if wantRun := append([]string{"run", c.o.Workload}, c.o.RunArgs...); !slices.Equal(cArgs[:len(wantRun)], wantRun) || !slices.Equal(wArgs[:len(wantRun)], wantRun) {
				t.Errorf("args start %q and %q, want %q", cArgs, wArgs, wantRun)
			}

			for _, j := range []batchv1.Job{p.Coordinator, p.Workers} {
				if j.Namespace != c.o.Namespace {
					t.Errorf("%s: namespace %q, want %q", j.Name, j.Namespace, c.o.Namespace)
				}
				ps := j.Spec.Template.Spec
				ct := ps.Containers[0]
				if ps.RestartPolicy != corev1.RestartPolicyNever || ct.Image != c.o.Image {
					t.Errorf("%s: restartPolicy %q image %q", j.Name, ps.RestartPolicy, ct.Image)
				}
				if ps.SecurityContext == nil || !derefB(ps.SecurityContext.RunAsNonRoot) || ct.SecurityContext == nil || !derefB(ct.SecurityContext.ReadOnlyRootFilesystem) {
					t.Errorf("%s: want runAsNonRoot and a read-only root file system", j.Name)
				}
				var ref *corev1.SecretKeySelector
				var dataHome string
				for _, e := range ct.Env {
					if e.Name == c.env && e.ValueFrom != nil {
						ref = e.ValueFrom.SecretKeyRef
					}
					if e.Name == "XDG_DATA_HOME" {
						dataHome = e.Value
					}
					if e.Value != "" && (e.Name == "PGPASSWORD" || e.Name == "MYSQL_PWD") {
						t.Errorf("%s: %s has a value of its own", j.Name, e.Name)
					}
				}
				switch {
				case c.env == "" && len(ct.Env) != 2:
					t.Errorf("%s: env %+v, want only the data directory's", j.Name, ct.Env)
				case c.env != "" && (ref == nil || ref.Name != c.o.Secret || ref.Key != keyOr(c.o.SecretKey)):
					t.Errorf("%s: %s from %+v, want secret %q key %q", j.Name, c.env, ref, c.o.Secret, keyOr(c.o.SecretKey))
				}
				if !slices.ContainsFunc(ct.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == dataHome }) {
					t.Errorf("%s: XDG_DATA_HOME %q is not a mounted volume: %+v", j.Name, dataHome, ct.VolumeMounts)
				}
				if c.o.CPU != "" {
					if q := ct.Resources.Limits[corev1.ResourceCPU]; q.String() != c.o.CPU {
						t.Errorf("%s: cpu limit %s, want %s", j.Name, q.String(), c.o.CPU)
					}
					if q := ct.Resources.Requests[corev1.ResourceMemory]; q.String() != c.o.Memory {
						t.Errorf("%s: memory request %s, want %s", j.Name, q.String(), c.o.Memory)
					}
				} else if len(ct.Resources.Limits)+len(ct.Resources.Requests) != 0 {
					t.Errorf("%s: resources %+v, want none", j.Name, ct.Resources)
				}
			}
		})
	}
}

func keyOr(k string) string {
	if k == "" {
		return DefaultSecretKey
	}
	return k
}

func deref(p *int32) int32 {
	if p == nil {
		return -1
	}
	return *p
}

func derefB(p *bool) bool { return p != nil && *p }

func TestManifestRefuses(t *testing.T) {
	good := Options{Name: "sledge", Image: "sledge", Workers: 2, Workload: "tpcc", DB: "postgres://u@db/tpcc", PasswordEnv: "PGPASSWORD", Secret: "s"}
	for _, c := range []struct {
		name   string
		change func(*Options)
		want   string
	}{
		{"password in the URL", func(o *Options) { o.DB = "postgres://u:hunter2@db/tpcc" }, "put the password in a Secret: --secret"},
		{"password parameter", func(o *Options) { o.DB = "mysql://u@db/tpcc?password=hunter2" }, "put the password in a Secret"},
		{"empty password", func(o *Options) { o.DB = "postgres://u:@db/tpcc" }, "put the password in a Secret"},
		{"no image", func(o *Options) { o.Image = " " }, "--image is required"},
		{"no workers", func(o *Options) { o.Workers = 0 }, "--workers 0"},
		{"upper-case name", func(o *Options) { o.Name = "Bench" }, "--name"},
		{"name too long", func(o *Options) { o.Name = strings.Repeat("a", 52) }, "at most 51"},
		{"bad namespace", func(o *Options) { o.Namespace = "a_b" }, "--namespace"},
		{"bad secret", func(o *Options) { o.Secret = "Pg Pass" }, "--secret"},
		{"bad key", func(o *Options) { o.SecretKey = "a/b" }, "--secret-key"},
		{"secret without a variable", func(o *Options) { o.PasswordEnv = "" }, "takes no password"},
		{"bad cpu", func(o *Options) { o.CPU = "two" }, "--cpu"},
		{"negative memory", func(o *Options) { o.Memory = "-1Gi" }, "--memory"},
		{"bad port", func(o *Options) { o.Port = 70000 }, "port"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := good
			c.change(&o)
			objs, err := Manifest(o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Manifest: %v (%d objects), want an error with %q", err, len(objs), c.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
	// The name at its longest is accepted.
	o := good
	o.Name = strings.Repeat("a", 51)
	if _, err := Manifest(o); err != nil {
		t.Errorf("a 51-character name: %v", err)
	}
}
