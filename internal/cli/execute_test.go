package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sledge-bench/sledge/internal/jobs"
	"github.com/sledge-bench/sledge/internal/runner"
)

// ticks records what an Output is told.
type ticks struct {
	mu     sync.Mutex
	starts []runner.Job
	ticks  []runner.Tick
	ends   []runner.Result
}

func (o *ticks) Start(j runner.Job) { o.mu.Lock(); o.starts = append(o.starts, j); o.mu.Unlock() }
func (o *ticks) Tick(_ int64, t runner.Tick) {
	o.mu.Lock()
	o.ticks = append(o.ticks, t)
	o.mu.Unlock()
}
func (o *ticks) End(_ int64, r runner.Result) { o.mu.Lock(); o.ends = append(o.ends, r); o.mu.Unlock() }

// A spec runs in-process as the command line runs it: thresholds given as
// a list in the spec are judged and recorded, a missed one is exit 99,
// the job is recorded as queued first and claimed, and the outputs see the
// job start, tick once a second and end with its result.
func TestExecuteSpec(t *testing.T) {
	home := t.TempDir()
	store := filepath.Join(home, "jobs.db")
	url := "sqlite://" + builtDB(t)
	ctx := context.Background()
	st, err := jobs.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	q := &jobs.Job{Kind: "run", Workload: "tpcc", Database: url, Version: Version(), Spec: json.RawMessage(`{}`)}
	if err := st.Queue(ctx, q); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()

	spec, err := runner.ParseSpec([]byte(`{"kind":"run","workload":"tpcc","db":"` + url + `",
		"options":{"vus":2,"rampup":"0s","duration":"3s","mode":"prepared",
		"threshold":["tpm>=1","nopm>=1000000000"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	var out ticks
	res := Execute(ctx, spec, runner.Exec{JobsDB: store, JobID: q.ID, Outputs: []runner.Output{&out}})
	if res.Code != ExitThreshold {
		t.Fatalf("exit %d (%s), want %d: the NOPM threshold cannot be met", res.Code, res.Err, ExitThreshold)
	}
	var sum struct {
		Thresholds []struct {
			Threshold string `json:"threshold"`
			OK        bool   `json:"ok"`
		} `json:"thresholds"`
	}
	if err := json.Unmarshal(res.JSON, &sum); err != nil {
		t.Fatalf("result: %v: %s", err, res.JSON)
	}
	if len(sum.Thresholds) != 2 || !sum.Thresholds[0].OK || sum.Thresholds[1].OK {
		t.Errorf("thresholds: %+v", sum.Thresholds)
	}
	if len(out.starts) != 1 || out.starts[0].ID != q.ID || len(out.starts[0].TxTypes) != 5 || out.starts[0].MeterName != "NOPM" {
		t.Errorf("starts: %+v", out.starts)
	}
	if len(out.ticks) < 2 {
		t.Errorf("%d ticks in a 3 s run", len(out.ticks))
	}
	var tpm float64
	for _, tk := range out.ticks {
		tpm = max(tpm, tk.TPM)
	}
	if tpm <= 0 {
		t.Errorf("no tick saw transactions: %+v", out.ticks)
	}
	if len(out.ends) != 1 || out.ends[0].Code != ExitThreshold || out.ends[0].JobID != q.ID {
		t.Errorf("ends: %+v", out.ends)
	}
	st, err = jobs.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := st.Get(ctx, q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != jobs.Completed || len(r.Samples) == 0 || len(r.Summary) == 0 {
		t.Errorf("job %d: status %s, %d samples, summary %d bytes", q.ID, r.Status, len(r.Samples), len(r.Summary))
	}
	if l, _ := st.List(ctx, 0); len(l) != 1 {
		t.Errorf("%d jobs: the queued one must be the one that ran", len(l))
	}

	// A queued job that was stopped before it started does not run.
	q2 := &jobs.Job{Kind: "run", Workload: "tpcc", Database: url, Version: Version(), Spec: json.RawMessage(`{}`)}
	if err := st.Queue(ctx, q2); err != nil {
		t.Fatal(err)
	}
	if ok, err := st.SetStatus(ctx, q2.ID, jobs.Queued, jobs.Stopped, "stopped before it started"); !ok || err != nil {
		t.Fatalf("stop queued: %v %v", ok, err)
	}
	res = Execute(ctx, spec, runner.Exec{JobsDB: store, JobID: q2.ID})
	if res.Code != ExitFailure || len(res.JSON) != 0 {
		t.Errorf("a stopped job ran: exit %d, %s", res.Code, res.JSON)
	}

	// An unknown option is bad input, refused as the command line refuses it.
	bad, _ := runner.ParseSpec([]byte(`{"kind":"run","db":"` + url + `","options":{"vuz":2}}`))
	if res := Execute(ctx, bad, runner.Exec{JobsDB: store}); res.Code != ExitUsage || res.Err == "" {
		t.Errorf("unknown option: exit %d %q", res.Code, res.Err)
	}
}

// runner.Execute runs builds, runs, checks and compares without the command line
// exactly as the command line runs them (executeMain, through Main): the
// same exit status and error, the same keys in the result, and the same
// spec in the job store.
func TestExecuteParity(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	getenv := func(k string) string {
		if k == "XDG_DATA_HOME" || k == "HOME" {
			return home
		}
		return ""
	}
	tpcc := "sqlite://" + builtDB(t)
	cases := []struct {
		name     string
		recorded bool               // the job store keeps the job
		spec     func(i int) string // i: 0 through runner.Execute, 1 through Main
	}{
		{"build", true, func(i int) string {
			return `{"kind":"build","workload":"tpcb","db":"sqlite://` + filepath.Join(home, "b"+string(rune('0'+i))+".db") + `","options":{"scale":1}}`
		}},
		{"build over a schema", true, func(int) string { return `{"kind":"build","db":"` + tpcc + `"}` }},
		{"check", true, func(int) string { return `{"kind":"check","db":"` + tpcc + `"}` }},
		{"run", true, func(int) string {
			return `{"kind":"run","workload":"tpcc","db":"` + tpcc + `","options":{"vus":2,"rampup":"0s","duration":"1s","mode":"prepared","seed":7,"progress":1,"threshold":["tpm>=1"]}}`
		}},
		{"run missing a threshold", true, func(int) string {
			return `{"kind":"run","db":"` + tpcc + `","options":{"iterations":3,"seed":7,"threshold":["nopm>=1000000000"]}}`
		}},
		{"unknown option", false, func(int) string { return `{"kind":"run","db":"` + tpcc + `","options":{"vuz":2}}` }},
		{"bad value", false, func(int) string { return `{"kind":"run","db":"` + tpcc + `","options":{"vus":"many"}}` }},
		{"bad combination", false, func(int) string {
			return `{"kind":"run","db":"` + tpcc + `","options":{"duration":"1s","iterations":3}}`
		}},
		{"no database", true, func(int) string { return `{"kind":"check","db":"postgres://nobody@127.0.0.1:1/x"}` }},
		{"compare", true, func(int) string {
			return `{"kind":"compare","db":"` + tpcc + `","options":{"modes":"client,prepared","vus":"1,2","iterations":3,"seed":7,"progress":1}}`
		}},
		{"compare, a bad matrix", false, func(int) string {
			return `{"kind":"compare","db":"` + tpcc + `","options":{"modes":"procedure","vus":"1","iterations":3}}`
		}},
		{"compare with a report", true, func(int) string {
			return `{"kind":"compare","db":"` + tpcc + `","options":{"modes":"client","vus":"1","iterations":2,"seed":7,"html":"` + filepath.Join(home, "r.html") + `"}}`
		}},
		{"run without a job", false, func(int) string {
			return `{"kind":"run","db":"` + tpcc + `","options":{"iterations":2,"seed":7}}`
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got [2]runner.Result
			var specs [2]map[string]any
			var keys [2][]string
			for i, exec := range []runner.Executor{
				func(ctx context.Context, s runner.Spec, x runner.Exec) runner.Result {
					return runner.Execute(ctx, s, x)
				}, executeMain} {
				spec, err := runner.ParseSpec([]byte(c.spec(i)))
				if err != nil {
					t.Fatal(err)
				}
				store := filepath.Join(t.TempDir(), "jobs.db")
				got[i] = exec(ctx, spec, runner.Exec{JobsDB: store, Getenv: getenv, NoJob: c.name == "run without a job"})
				var m map[string]any
				if len(got[i].JSON) > 0 {
					if err := json.Unmarshal(got[i].JSON, &m); err != nil {
						t.Fatalf("%d: %v", i, err)
					}
				}
				for k := range m {
					// client_host is sledge's host over the measured
					// interval, left out when its readings at the edges
					// did not both land: a two-transaction run on a busy
					// machine may end first, in either path.
					if k == "client_host" {
						continue
					}
					keys[i] = append(keys[i], k)
				}
				slices.Sort(keys[i])
				st, err := jobs.Open(ctx, store)
				if err != nil {
					t.Fatal(err)
				}
				l, _ := st.List(ctx, 0)
				if spec.Kind == "compare" {
					// The compare's job, beside its cells' runs.
					l = slices.DeleteFunc(l, func(j *jobs.Job) bool { return j.Kind != "compare" })
				}
				if len(l) == 1 {
					_ = json.Unmarshal(l[0].Spec, &specs[i])
					if specs[i]["db"] != nil && c.name == "build" {
						delete(specs[i], "db")
						delete(specs[i], "database")
						delete(specs[i]["options"].(map[string]any), "db")
					}
				}
				_ = st.Close()
			}
			if (specs[0] != nil) != c.recorded || (specs[1] != nil) != c.recorded {
				t.Errorf("recorded: runner %v, command line %v, want %v", specs[0] != nil, specs[1] != nil, c.recorded)
			}
			if got[0].Code != got[1].Code || got[0].Err != got[1].Err {
				t.Errorf("runner: exit %d %q; command line: exit %d %q", got[0].Code, got[0].Err, got[1].Code, got[1].Err)
			}
			if !slices.Equal(keys[0], keys[1]) {
				t.Errorf("result keys:\nrunner:       %v\ncommand line: %v", keys[0], keys[1])
			}
			a, _ := json.Marshal(specs[0])
			b, _ := json.Marshal(specs[1])
			if string(a) != string(b) {
				t.Errorf("stored spec:\nrunner:       %s\ncommand line: %s", a, b)
			}
		})
	}
}

// executeMain runs one spec through Main, with --json: the reference
// runner.Execute must do the same as (TestExecuteParity).
func executeMain(ctx context.Context, s runner.Spec, x runner.Exec) runner.Result {
	args, err := s.Args(x.Only)
	if err != nil {
		return runner.Result{Code: ExitUsage, Err: err.Error()}
	}
	args = append(args, "--json")
	if x.JobsDB != "" {
		args = append(args, "--jobs-db", x.JobsDB)
	}
	if x.NoJob {
		args = append(args, "--no-job")
	}
	var out, errBuf bytes.Buffer
	stderr := io.Writer(&errBuf)
	if x.Stderr != nil {
		stderr = io.MultiWriter(x.Stderr, &errBuf)
	}
	getenv := x.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	code := Main(ctx, args, Env{Stdout: &out, Stderr: stderr, Getenv: getenv, JobID: x.JobID, Outputs: x.Outputs})
	r := runner.Result{JobID: x.JobID, Code: code}
	if b := bytes.TrimSpace(out.Bytes()); json.Valid(b) && len(b) > 0 {
		r.JSON = json.RawMessage(b)
	}
	if code != ExitOK {
		r.Err = strings.TrimPrefix(lastLine(errBuf.String()), "sledge: ")
	}
	return r
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
