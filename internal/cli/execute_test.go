package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
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
