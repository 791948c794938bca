package runner

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/jobs"
	"github.com/sledge-bench/sledge/internal/sysprobe"
)

// The progress bar's redraws stay out of the log; the lines around it do not.
func TestLogTeeDropsRedraws(t *testing.T) {
	var out bytes.Buffer
	r := &JobRun{start: time.Now()}
	tee := &logTee{w: &out, r: r}
	for _, s := range []string{"building tpcc\n", "\r\x1b[K[##..] 10% loading", "\r\x1b[K[###.] 20% load",
		"ing\r\x1b[K", "loaded 5 rows\n", "\n", "a\r\nb\n"} {
		if _, err := tee.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, l := range r.lines {
		got = append(got, l.Line)
	}
	if strings.Join(got, "|") != "building tpcc|loaded 5 rows|b" {
		t.Errorf("log lines %q", got)
	}
	if !strings.Contains(out.String(), "20% loading") {
		t.Errorf("the terminal did not get everything: %q", out.String())
	}
}

// sysOutput keeps the system seconds a job hands its outputs.
type sysOutput struct {
	mu  sync.Mutex
	got []SystemSecond
}

func (o *sysOutput) Start(Job)         {}
func (o *sysOutput) Tick(int64, Tick)  {}
func (o *sysOutput) End(int64, Result) {}
func (o *sysOutput) System(_ int64, s SystemSecond) {
	o.mu.Lock()
	o.got = append(o.got, s)
	o.mu.Unlock()
}

// A run's system seconds (what ServerCost.Follow hands over) go to the job
// store with the job's other samples and to the outputs that follow them.
func TestJobRunSystemSeconds(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jobs.db")
	out := &sysOutput{}
	r, _, err := StartJob(ctx, JobStart{Kind: "run", Workload: "tpcb", RawURL: "postgres://u:pw-secret@h/db",
		Spec: Spec{Options: map[string]any{}}, Path: path, Record: true, Outputs: []Output{out}, Stderr: io.Discard, Version: "dev"})
	if err != nil || r == nil {
		t.Fatalf("start job: %v", err)
	}
	secs := []SystemSecond{
		{Source: "server", Elapsed: 1500 * time.Millisecond, Phase: "measure", Second: sysprobe.Second{Seq: 1,
			Interval: sysprobe.Interval{Seconds: 1, Host: sysprobe.Host{CPUs: 4}, Server: &sysprobe.Server{UserNs: 2e8, SysNs: 1e8,
				States: sysprobe.States{CPU: 30, Network: 70}, StateHz: 100}}}},
		{Source: "client_host", Elapsed: 1510 * time.Millisecond, Phase: "measure", Second: sysprobe.Second{Seq: 1,
			Interval: sysprobe.Interval{Seconds: 1, Host: sysprobe.Host{CPUs: 2, OtherCPU: 3e8}}}},
	}
	for _, s := range secs {
		r.System(s)
	}
	if err := r.End(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if len(out.got) != 2 || out.got[0].Source != "server" {
		t.Errorf("the output got %+v", out.got)
	}
	st, err := jobs.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec, err := st.Get(ctx, r.ID())
	if err != nil {
		t.Fatal(err)
	}
	want := []jobs.SystemSample{
		{Seq: 1, Source: "server", ElapsedMs: 1500, Phase: "measure", Interval: secs[0].Second.Interval},
		{Seq: 2, Source: "client_host", ElapsedMs: 1510, Phase: "measure", Interval: secs[1].Second.Interval},
	}
	if !reflect.DeepEqual(rec.System, want) {
		t.Errorf("stored system samples\n%+v\nwant\n%+v", rec.System, want)
	}
}
