package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/sysprobe"
	"github.com/sledge-bench/sledge/internal/testbrowser"
)

// serverSecond is second n of a server: CPU growing with n, its threads
// mostly waiting on the network; and of sledge's host.
func serverSecond(n int64) []runner.SystemSecond {
	el := time.Duration(n) * time.Second
	return []runner.SystemSecond{
		{Source: "server", Elapsed: el, Phase: "measure", Second: sysprobe.Second{Seq: n, Interval: sysprobe.Interval{Seconds: 1,
			Host: sysprobe.Host{CPUs: 4, CPU: sysprobe.CPUTimes{User: 1e9, System: 5e8, Idle: 2.5e9}},
			Server: &sysprobe.Server{Threads: 8, UserNs: 1e8 * n, SysNs: 5e7, Voluntary: 800, Involuntary: 10,
				States: sysprobe.States{CPU: 20, Runnable: 5, Network: 60, Lock: 5, IO: 0, Idle: 10}, StateHz: 100}}}},
		{Source: "client_host", Elapsed: el, Phase: "measure", Second: sysprobe.Second{Seq: n, Interval: sysprobe.Interval{Seconds: 1,
			Host:   sysprobe.Host{CPUs: 2, CPU: sysprobe.CPUTimes{User: 1e9, Idle: 1e9}, OtherCPU: 2e8},
			Server: &sysprobe.Server{UserNs: 9e8}}}}, // sledge's own processes
	}
}

// The server's seconds of a job on the page, in headless Chromium: a job
// run by another sledge process on the service's store (a command-line
// run; its seconds reach the service through the store, as its
// transaction counter does) draws the server's CPU and thread states live
// as the seconds arrive, and from /api/jobs/{id}/system once it has ended.
func TestServePageSystemSeries(t *testing.T) {
	testbrowser.Need(t)
	s := startService(t, "")
	ctx0 := context.Background()
	job, _, err := runner.StartJob(ctx0, runner.JobStart{Kind: "run", Workload: "tpcc", RawURL: "postgres://u@db1/tpcc",
		Spec: runner.Spec{Options: map[string]any{}}, Path: s.store, Record: true, Stderr: io.Discard, Version: "test"})
	if err != nil || job == nil {
		t.Fatalf("start a job on the service's store: %v", err)
	}
	// The run's sampler: a second at a time until the page has drawn
	// three, then three more, then the end.
	var sent atomic.Int64
	feed := func(n int) {
		for range n {
			for _, sec := range serverSecond(sent.Add(1)) {
				job.System(sec)
			}
		}
	}
	ended := false
	defer func() {
		if !ended {
			_ = job.End(ctx0, nil)
		}
	}()

	tctx, cancelT := context.WithTimeout(ctx0, 75*time.Second)
	defer cancelT()
	actx, cancelA := testbrowser.Allocator(tctx, t, 1280, 1400)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	eval := func(expr string) any {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[any](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	row := fmt.Sprintf("#jobs tbody tr[data-id='%d'] td:nth-child(2)", job.ID())
	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/#token="+testToken),
		chromedp.WaitVisible(chromedp.CSS(row)),
		clickCSS(row),
		chromedp.WaitVisible(chromedp.CSS("#detail .live")),
	); err != nil {
		t.Fatalf("open the running job: %v", err)
	}
	// Live: each second the store receives reaches the page's charts.
	deadline := time.Now().Add(30 * time.Second)
	for {
		feed(1)
		n, _ := eval(`Number((document.querySelector("#detail .live-system") || {dataset: {}}).dataset.seconds || 0)`).(float64)
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the live server charts hold %v seconds after 30s (%d sent), want 3", n, sent.Load())
		}
		time.Sleep(300 * time.Millisecond)
	}
	titles, _ := eval(`[...document.querySelectorAll("#detail .live-system .u-title")].map(e => e.textContent).join("|")`).(string)
	if titles != "server CPU, cores (live)|server thread states, share of samples (live)" {
		t.Errorf("live server charts: titles %q", titles)
	}
	// A second's values as the page holds them: uPlot's data of the
	// states chart, network's series, is the stored share.
	if c := eval(`document.querySelectorAll("#detail .live-system canvas").length`); c != float64(2) {
		t.Errorf("%v live server canvases, want 2", c)
	}

	feed(3)
	job.SetSummary(&runner.RunSummary{Workload: "tpcc", TPM: 1000, MeasuredS: float64(sent.Load())})
	if err := job.End(ctx0, nil); err != nil {
		t.Fatal(err)
	}
	ended = true
	total := sent.Load()

	// Ended: the page reopens the job and draws what the store kept.
	var secs float64
	deadline = time.Now().Add(20 * time.Second)
	for secs != float64(total) && time.Now().Before(deadline) {
		secs, _ = eval(`Number((document.querySelector("#detail .system:not(.live-system)") || {dataset: {}}).dataset.seconds || 0)`).(float64)
		time.Sleep(200 * time.Millisecond)
	}
	if secs != float64(total) {
		t.Fatalf("the finished job's server charts hold %v seconds, want the %d stored", secs, total)
	}
	titles, _ = eval(`[...document.querySelectorAll("#detail .system .u-title")].map(e => e.textContent).join("|")`).(string)
	if titles != "server CPU, cores, each second|server thread states, share of samples, each second" {
		t.Errorf("finished server charts: titles %q", titles)
	}
	if shots := os.Getenv("SLEDGE_TEST_ARTIFACTS"); shots != "" {
		if b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
			_ = os.WriteFile(filepath.Join(shots, "serve-system.png"), b, 0o644)
		}
	}

	// The API the page reads: one point per stored second, rates and
	// shares worked out.
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/api/jobs/%d/system", s.url, job.ID()), nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Samples []struct {
			T       float64            `json:"t"`
			Source  string             `json:"source"`
			CPUUser *float64           `json:"cpu_user"`
			States  map[string]float64 `json:"states"`
			Host    map[string]float64 `json:"host"`
			Other   float64            `json:"other_cores"`
		} `json:"samples"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET system: %d %v", resp.StatusCode, err)
	}
	if len(body.Samples) != int(2*total) {
		t.Fatalf("%d points, want %d", len(body.Samples), 2*total)
	}
	p, h := body.Samples[2], body.Samples[3] // second 2
	if p.Source != "server" || p.T != 2 || p.CPUUser == nil || *p.CPUUser != 0.2 || p.States["network"] != 0.6 || p.Host["usr"] != 0.25 {
		t.Errorf("server point %+v", p)
	}
	if h.Source != "client_host" || h.CPUUser != nil || h.Other != 0.2 || !strings.Contains(fmt.Sprint(h.Host), "usr:0.5") {
		t.Errorf("host point %+v", h)
	}
}
