package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// kubeObjects reads `sledge kube manifest`'s output back into the API
// types: the Service, the coordinator's Job, the workers' Job.
func kubeObjects(t *testing.T, out string) (svc corev1.Service, coord, workers batchv1.Job) {
	t.Helper()
	docs := strings.Split(out, "\n---\n")
	if len(docs) != 3 {
		t.Fatalf("%d YAML documents, want 3:\n%s", len(docs), out)
	}
	for i, into := range []any{&svc, &coord, &workers} {
		if err := yaml.UnmarshalStrict([]byte(docs[i]), into); err != nil {
			t.Fatalf("document %d: %v\n%s", i+1, err, docs[i])
		}
	}
	return svc, coord, workers
}

// runParsed parses a pod's arguments with sledge run's own flags, leaving
// out the scale-out ones while run does not have them yet: what the pod's
// sledge will read.
func runParsed(t *testing.T, args []string) map[string]string {
	t.Helper()
	if len(args) < 2 || args[0] != "run" {
		t.Fatalf("pod args %q: want run WORKLOAD …", args)
	}
	root := newRoot(t.Context(), &Env{Getenv: func(string) string { return "" }})
	run, _, err := root.Find([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, a := range args[2:] {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if run.Flags().Lookup(name) == nil && slices.Contains([]string{"workers", "listen", "coordinator"}, name) {
			continue
		}
		keep = append(keep, a)
	}
	if err := run.ParseFlags(keep); err != nil {
		t.Fatalf("sledge run refuses the pod's args %q: %v", keep, err)
	}
	if len(run.Flags().Args()) > 0 {
		t.Errorf("pod args %q: positional %q after the workload", args, run.Flags().Args())
	}
	got := map[string]string{"workload": args[1]}
	run.Flags().Visit(func(f *pflag.Flag) { got[f.Name] = f.Value.String() })
	return got
}

func TestKubeManifest(t *testing.T) {
	const secret = "s3cret-Value"
	for _, c := range []struct {
		name    string
		vars    map[string]string
		args    []string
		workers int32
		env     string // the password variable filled from the Secret
		secret  string
		key     string
		run     map[string]string // run options every pod must read
		note    string            // on stderr
	}{
		{"postgres, pgbench's short options", map[string]string{"PGPASSWORD": secret},
			[]string{"--db", "postgres://bench@pg.example:5432/tpcc", "--workers", "2", "--image", "reg/sledge:1", "--secret", "pg", "-c", "4", "-T", "30", "--threshold", "nopm>=1", "--threshold", "p95(new_order)<50ms"},
			2, "PGPASSWORD", "pg", "password",
			map[string]string{"workload": "tpcc", "vus": "4", "duration": "30s", "threshold": "[nopm>=1,p95(new_order)<50ms]", "db": "postgres://bench@pg.example:5432/tpcc"}, ""},
		{"mysql positional URL, tpcb builtin, seed", map[string]string{"MYSQL_PWD": secret},
			[]string{"tpcb", "mysql://root@maria.example/tpcb", "--workers=3", "--image=sledge", "--secret=maria", "--secret-key=root", "-b", "select-only", "--vus", "6", "--seed", "42", "--json", "--name", "tb", "--no-job"},
			3, "MYSQL_PWD", "maria", "root",
			map[string]string{"workload": "tpcb", "vus": "6", "builtin": "[select-only]", "seed": "42", "json": "true", "no-job": "true", "db": "mysql://root@maria.example/tpcb"}, ""},
		{"URL from SLEDGE_DB, no secret, random-seed as a number", map[string]string{"SLEDGE_DB": "postgres://trust@pg/tpcc", "PGPASSWORD": secret},
			[]string{"--workers", "1", "--image", "sledge", "--random-seed", "9", "--mode", "prepared"},
			1, "", "", "",
			map[string]string{"workload": "tpcc", "seed": "9", "mode": "prepared", "db": "postgres://trust@pg/tpcc"}, ""},
		{"loopback host, job store", nil,
			[]string{"--db", "postgres://u@127.0.0.1/tpcc", "--workers", "1", "--image", "sledge", "--jobs-db", "j.db"},
			1, "", "", "",
			map[string]string{"workload": "tpcc", "jobs-db": "j.db"}, "127.0.0.1, in a pod, is the pod itself"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runCLIEnv(t, t.Context(), t.TempDir(), c.vars, append([]string{"kube", "manifest"}, c.args...)...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if c.note != "" && !strings.Contains(stderr, c.note) || c.note == "" && stderr != "" {
				t.Errorf("stderr %q, want %q", stderr, c.note)
			}
			if strings.Contains(stdout+stderr, secret) {
				t.Fatalf("the password from the environment is in the output:\n%s", stdout)
			}
			svc, coord, workers := kubeObjects(t, stdout)
			if svc.Spec.ClusterIP != corev1.ClusterIPNone {
				t.Errorf("service clusterIP %q, want None", svc.Spec.ClusterIP)
			}
			wk := workers.Spec
			if wk.CompletionMode == nil || *wk.CompletionMode != batchv1.IndexedCompletion || *wk.Completions != c.workers || *wk.Parallelism != c.workers {
				t.Errorf("workers: completionMode %v completions %v parallelism %v, want Indexed, %d, %d", wk.CompletionMode, *wk.Completions, *wk.Parallelism, c.workers, c.workers)
			}
			cArgs := coord.Spec.Template.Spec.Containers[0].Args
			wArgs := wk.Template.Spec.Containers[0].Args
			if !slices.Contains(cArgs, "--listen=:7077") {
				t.Errorf("coordinator args %q lack --listen=:7077", cArgs)
			}
			if want := "--coordinator=" + svc.Name + ":7077"; !slices.Contains(wArgs, want) {
				t.Errorf("worker args %q lack %s", wArgs, want)
			}
			for _, args := range [][]string{cArgs, wArgs} {
				if want := "--worker-timeout=5m0s"; !slices.Contains(args, want) && c.run["worker-timeout"] == "" {
					t.Errorf("args %q lack %s (pods start slower than processes)", args, want)
				}
			}
			cRun, wRun := runParsed(t, cArgs), runParsed(t, wArgs)
			for k, v := range c.run {
				if cRun[k] != v || wRun[k] != v {
					t.Errorf("--%s: coordinator %q, workers %q, want %q", k, cRun[k], wRun[k], v)
				}
			}
			// One seed for all: drawn once, written into both Jobs.
			if cRun["seed"] == "" || cRun["seed"] != wRun["seed"] {
				t.Errorf("seeds: coordinator %q, workers %q: want one, the same", cRun["seed"], wRun["seed"])
			}
			if _, ok := cRun["random-seed"]; ok {
				t.Errorf("coordinator args %q keep --random-seed: each pod would draw its own", cArgs)
			}
			for _, j := range []batchv1.Job{coord, workers} {
				var ref *corev1.SecretKeySelector
				for _, e := range j.Spec.Template.Spec.Containers[0].Env {
					if e.ValueFrom != nil && e.Name == c.env {
						ref = e.ValueFrom.SecretKeyRef
					}
					if e.Name == "PGPASSWORD" || e.Name == "MYSQL_PWD" {
						if e.Value != "" || c.env == "" {
							t.Errorf("%s: %+v, want %s from the Secret only", j.Name, e, c.env)
						}
					}
				}
				if c.env != "" && (ref == nil || ref.Name != c.secret || ref.Key != c.key) {
					t.Errorf("%s: %s from %+v, want Secret %q key %q", j.Name, c.env, ref, c.secret, c.key)
				}
			}
		})
	}
}

// Bad input is one line and exit 2, as sledge run's; a password is never
// echoed.
func TestKubeManifestBadInput(t *testing.T) {
	base := []string{"kube", "manifest", "--workers", "2", "--image", "sledge", "--vus", "2"}
	pg := "postgres://u@db/tpcc"
	for _, c := range []struct {
		name string
		vars map[string]string
		args []string
		want string
	}{
		{"password in --db", nil, []string{"--db", "postgres://u:hunter2@db/tpcc"}, "put the password in a Secret: --secret"},
		{"password in a positional URL", nil, []string{"mysql://root:hunter2@db/tpcc"}, "put the password in a Secret: --secret"},
		{"password parameter", nil, []string{"--db", "postgres://u@db/tpcc?password=hunter2"}, "put the password in a Secret"},
		{"password in SLEDGE_DB", map[string]string{"SLEDGE_DB": "postgres://u:hunter2@db/tpcc"}, nil, "put the password in a Secret"},
		{"sqlite URL", nil, []string{"--db", "sqlite:///tmp/tpcc.db"}, "embedded SQLite file, which pods cannot share"},
		{"no database", nil, nil, "the embedded SQLite default cannot be shared"},
		{"run's check: vus", nil, []string{"--db", pg, "--vus", "0"}, "--vus"},
		{"run's parse: duration", nil, []string{"--db", pg, "-T", "forever"}, "duration"},
		{"run's check: duration and iterations", nil, []string{"--db", pg, "-T", "5", "-t", "5"}, "not both"},
		{"unknown flag", nil, []string{"--db", pg, "--no-such"}, "unknown flag"},
		{"more workers than vus", nil, []string{"--db", pg, "--vus", "1"}, "--workers 2 is more than --vus 1"},
		{"tpch", nil, []string{"tpch", "--db", pg}, "not split"},
		{"script file", nil, []string{"--db", pg, "-f", "x.sql"}, "cannot read this machine's files"},
		{"key without secret", nil, []string{"--db", pg, "--secret-key", "k"}, "--secret NAME"},
		{"bad cpu", nil, []string{"--db", pg, "--cpu", "lots"}, "--cpu"},
		{"bad name", nil, []string{"--db", pg, "--name", "Bench"}, "--name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runCLIEnv(t, t.Context(), t.TempDir(), c.vars, append(slices.Clone(base), c.args...)...)
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
				t.Errorf("stderr shows the password: %s", stderr)
			}
		})
	}
	// Without --workers or --image.
	for _, args := range [][]string{
		{"kube", "manifest", "--db", pg, "--image", "sledge"},
		{"kube", "manifest", "--db", pg, "--workers", "2"},
	} {
		_, stderr, code := runCLIEnv(t, t.Context(), t.TempDir(), nil, args...)
		if code != ExitUsage || !strings.Contains(stderr, "required") {
			t.Errorf("%q: exit %d %q, want 2 saying what is required", args, code, stderr)
		}
	}
}
