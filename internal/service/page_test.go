package service_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/sledge-bench/sledge/internal/testbrowser"
)

// The page in headless Chromium: the token from #token=, a short run
// submitted with the form, the live counter rising while it runs, then
// the finished job's charts. Screenshots go to $SLEDGE_TEST_ARTIFACTS
// when set (CI keeps that directory), else to the test's temp dir.
func TestServePage(t *testing.T) {
	testbrowser.Need(t)
	shots := os.Getenv("SLEDGE_TEST_ARTIFACTS")
	if shots == "" {
		shots = t.TempDir()
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	s := startService(t, "")
	u := sqliteDB(t)

	// The whole browser lives at most this long: a hung page fails the test.
	tctx, cancelT := context.WithTimeout(context.Background(), 75*time.Second)
	defer cancelT()
	actx, cancelA := testbrowser.Allocator(tctx, t, 1280, 1400)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	shot := func(name string) {
		b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		p := filepath.Join(shots, "serve-"+name+".png")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot %s", p)
	}
	eval := func(expr string) any {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[any](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	text := func(sel string) string {
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return v
	}

	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/#token="+testToken),
		chromedp.WaitVisible(chromedp.CSS("#new-form")),
		chromedp.SetValue(chromedp.CSS("#f-kind"), "run"),
		chromedp.SetValue(chromedp.CSS("#f-db"), u),
		chromedp.SetValue(chromedp.CSS("#f-vus"), "2"),
		chromedp.SetValue(chromedp.CSS("#f-rampup"), "0s"),
		chromedp.SetValue(chromedp.CSS("#f-duration"), "6s"),
		chromedp.SetValue(chromedp.CSS("#f-mode"), "prepared"),
		clickCSS("#f-submit"),
		chromedp.WaitVisible(chromedp.CSS("#detail .live-tpm")),
	); err != nil {
		t.Fatalf("submit the form: %v", err)
	}
	if h := eval("location.hash"); h != "" {
		t.Errorf("the token stays in the address bar: %q", h)
	}

	// The live counter: a TPM above 0 while the job is running, on a chart.
	var first float64
	deadline := time.Now().Add(20 * time.Second)
	for {
		tpm, status := text("#detail .live-tpm"), text("#detail [data-role=status]")
		v, err := strconv.ParseFloat(strings.ReplaceAll(tpm, ",", ""), 64)
		if err == nil && v > 0 && status == "running" {
			first = v
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the live TPM is %q (job %s) after 20s, want > 0 while running", tpm, status)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The counter moves: the chart takes a second and a third tick while
	// the job still runs.
	deadline = time.Now().Add(10 * time.Second)
	for {
		n, _ := eval(`Number(document.querySelector("#detail .live").dataset.ticks || 0)`).(float64)
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) || text("#detail [data-role=status]") != "running" {
			t.Fatalf("the live chart holds %v ticks, want 3 while the job runs", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	shot("live")
	if n := eval(`document.querySelectorAll("#detail .live canvas").length`); n == float64(0) {
		t.Error("no live chart")
	}
	t.Logf("live TPM %.0f", first)

	// When it ends the page shows the finished job; open it from the list
	// and see its charts (throughput, latency percentiles).
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS("#jobs tbody tr .status.completed")),
		clickCSS("#jobs tbody tr:first-child td:nth-child(2)"),
		chromedp.WaitVisible(chromedp.CSS("#detail [data-role=status].completed")),
	); err != nil {
		t.Fatalf("the finished job: %v", err)
	}
	var canvases float64
	var titles string
	deadline = time.Now().Add(10 * time.Second)
	for canvases < 5 && time.Now().Before(deadline) {
		canvases, _ = eval(`document.querySelectorAll("#detail .uplot canvas").length`).(float64)
		titles, _ = eval(`[...document.querySelectorAll("#detail .u-title")].map(e => e.textContent).join("|")`).(string)
		time.Sleep(100 * time.Millisecond)
	}
	shot("done")
	for _, want := range []string{"transactions per minute", "mean latency each second", "failed transactions", "latency by percentile", "CPU µs per transaction"} {
		if !strings.Contains(titles, want) {
			t.Errorf("finished job: %v chart canvases, titles %q; want %q (throughput, errors, latency, cost)", canvases, titles, want)
		}
	}

	// A compare job (started through the API) shows its matrix: one row
	// per mode, one column per VU count, each cell's NOPM.
	cmp := submit(t, s.url, testToken, map[string]any{"kind": "compare", "db": u,
		"options": map[string]any{"modes": "client,prepared", "vus": "1", "duration": "1s", "rampup": "0s"}})
	waitStatus(t, s.url, testToken, cmp, 60*time.Second, "completed")
	sel := fmt.Sprintf("#jobs tbody tr[data-id='%d'] td:nth-child(2)", cmp)
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(sel)),
		clickCSS(sel),
		chromedp.WaitVisible(chromedp.CSS("#detail table.matrix")),
	); err != nil {
		t.Fatalf("the compare job's matrix: %v", err)
	}
	rows := eval(`[...document.querySelectorAll("#detail table.matrix tbody tr")].map(r => r.textContent).join("|")`).(string)
	if !strings.Contains(rows, "client / embedded") || !strings.Contains(rows, "prepared / embedded") || !strings.Contains(rows, "NOPM") {
		t.Errorf("matrix rows %q: want client and prepared with their NOPM", rows)
	}
	shot("compare")

	// Two jobs side by side: pick the run and the compare, then both show.
	for _, id := range []int64{cmp, 1} {
		box := fmt.Sprintf("#jobs tbody tr[data-id='%d'] input[type=checkbox]", id)
		if err := chromedp.Do(ctx, clickCSS(box)); err != nil {
			t.Fatalf("pick job %d: %v", id, err)
		}
	}
	if err := chromedp.Do(ctx, clickCSS("#side-by-side"), chromedp.WaitVisible(chromedp.CSS("#side .job"))); err != nil {
		t.Fatalf("side by side: %v", err)
	}
	var both float64
	deadline = time.Now().Add(10 * time.Second)
	for both < 2 && time.Now().Before(deadline) {
		both, _ = eval(`[...document.querySelectorAll("#side .job")].filter(b => b.querySelector("canvas")).length`).(float64)
		time.Sleep(100 * time.Millisecond)
	}
	shot("side")
	if both != 2 {
		t.Errorf("side by side: %v of 2 jobs with charts", both)
	}
}

// clickCSS clicks the first element matching sel from inside the page, as
// soon as there is one. chromedp.Click finds the node and then clicks it in
// a second call: the job list, redrawn on every poll, can replace the row
// in between ("Could not find node with given id", seen in CI).
func clickCSS(sel string) chromedp.Action[chromedp.Void] {
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; e.click(); return true })()`, sel)
	click := chromedp.Evaluate[bool](js)
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		for {
			ok, err := click(ctx, t)
			if err != nil {
				return chromedp.Void{}, fmt.Errorf("click %s: %w", sel, err)
			}
			if ok {
				return chromedp.Void{}, nil
			}
			select {
			case <-ctx.Done():
				return chromedp.Void{}, fmt.Errorf("click %s: no such element: %w", sel, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}
