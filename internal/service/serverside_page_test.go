package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/sledge-bench/sledge/internal/jobs"
	"github.com/sledge-bench/sledge/internal/report"
	"github.com/sledge-bench/sledge/internal/testbrowser"
)

// serverFigures are issue 25's keys of a run's summary, as a run with
// --agent and --stacks writes them: set on a real run's job, to render.
var serverFigures = map[string]any{
	"server_threads": map[string]any{"cpu": 0.3, "runnable": 0.05, "network": 0.35, "lock": 0.1, "io": 0.05, "idle": 0.15,
		"samples": 24000, "hz": 100, "threads": 40, "source": "agent db1:7078"},
	"server_host": map[string]any{"source": "agent db1:7078", "cpus": 8, "usr": 0.21, "nice": 0, "sys": 0.09, "iowait": 0.01,
		"irq": 0, "softirq": 0.02, "steal": 0, "idle": 0.67, "other_cpu_cores": 0.1, "other_cpu_share": 0.0125},
	"client_host": map[string]any{"source": "this host (/proc)", "cpus": 2, "usr": 0.5, "sys": 0.2, "idle": 0.3,
		"other_cpu_cores": 0.6, "other_cpu_share": 0.3,
		"warning": "other processes took 30% of this host's 2 CPUs during the measured interval: figures may not repeat"},
	"agent": map[string]any{"address": "db1:7078", "version": "test", "api": 1, "partial": true, "seconds_missed": 3},
	"server_stacks": map[string]any{"source": "agent db1:7078", "hz": 99, "samples": 90, "folded": `postgres;PostgresMain;exec_simple_query;PortalRun;ExecutorRun 40
postgres;PostgresMain;pq_getbyte;secure_read;tcp_recvmsg_[k] 25
postgres;PostgresMain;exec_execute_message;PortalRun;ExecutorRun;ExecScan 20
postgres;PostgresMain;LWLockAcquire;__x64_sys_futex_[k] 5
`},
}

var serverPerTxn = map[string]any{"cpu_user_us": 61.5, "cpu_sys_us": 20.25, "voluntary_switches": 4.5, "involuntary_switches": 0.75,
	"run_queue_delay_us": 12.5, "port_bytes_in": 431, "port_bytes_out": 1207}

// The job view of a run with the server's side: the agent (partial), the
// thread states as one bar of six segments as wide as their shares, the
// server's figures per transaction, both hosts' CPU shares, the client
// host's warning, and the flame graph drawn by the vendored library; and
// the page requests nothing but the service's own files and API.
func TestServePageServerSide(t *testing.T) {
	testbrowser.Need(t)
	s := startService(t, "")
	id := submit(t, s.url, testToken, map[string]any{"kind": "run", "db": sqliteDB(t),
		"options": map[string]any{"vus": 1, "rampup": "0s", "duration": "1s"}})
	waitStatus(t, s.url, testToken, id, 60*time.Second, "completed")

	// A real run's job, given the figures a run with --agent --stacks
	// keeps (the sampler's own tests measure them; this is the page's).
	ctx := context.Background()
	st, err := jobs.Open(ctx, s.store)
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	if err := json.Unmarshal(r.Summary, &sum); err != nil {
		t.Fatal(err)
	}
	for k, v := range serverFigures {
		sum[k] = v
	}
	spt, _ := sum["server_per_txn"].(map[string]any)
	if spt == nil {
		spt = map[string]any{}
	}
	for k, v := range serverPerTxn {
		spt[k] = v
	}
	sum["server_per_txn"] = spt
	if r.Summary, err = json.Marshal(sum); err != nil {
		t.Fatal(err)
	}
	if err := st.Update(ctx, &r.Job); err != nil {
		t.Fatal(err)
	}
	st.Close()

	states := map[string]float64{}
	for k, v := range serverFigures["server_threads"].(map[string]any) {
		if f, ok := v.(float64); ok {
			states[k] = f
		}
	}
	bctx := openServerSide(t, s, states, "exec_simple_query", "serve-server-side.png")
	var texts map[string]string
	evalJSON(t, bctx, `({agent: document.querySelector("#detail .agent").textContent,
		perTxn: document.querySelector("#detail table.server-per-txn").textContent,
		serverHost: document.querySelector("#detail table.server-host").textContent,
		clientHost: document.querySelector("#detail table.client-host").textContent,
		warning: document.querySelector("#detail [data-role=client_host-warning]").textContent,
		frames: document.querySelector("#detail .flame").dataset.frames})`, &texts)
	for k, want := range map[string]string{"agent": "partial: the agent did not answer for 3 s", "perTxn": "run-queue delay µs12.5",
		"serverHost": "idle21%0%9%1%0%2%0%67%", "clientHost": "30%", "warning": "other processes took 30%", "frames": "14"} {
		if !strings.Contains(texts[k], want) {
			t.Errorf("%s: %q, want %q in it", k, texts[k], want)
		}
	}
	for _, want := range []string{"port bytes in431", "port bytes out1,207", "involuntary switches0.8"} {
		if !strings.Contains(texts["perTxn"], want) {
			t.Errorf("server per transaction %q lacks %q", texts["perTxn"], want)
		}
	}
}

// openServerSide opens the page on the first job of the list in headless
// Chromium and checks its server side: the thread-state bar's segments
// as wide as states' shares, the flame graph's frame drawn (frame ""
// when the job has no stacks), and every request to the service itself.
func openServerSide(t *testing.T, s *svc, states map[string]float64, frame, shot string) context.Context {
	t.Helper()
	tctx, cancelT := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancelT)
	actx, cancelA := testbrowser.Allocator(tctx, t, 1280, 1400)
	t.Cleanup(cancelA)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	var mu sync.Mutex
	var requests []string
	if err := chromedp.Listen(bctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	// The flame graph draws its frames' names on a canvas: record them.
	if _, err := chromedp.Call(bctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: `window.__drawn = [];
const __fill = CanvasRenderingContext2D.prototype.fillText;
CanvasRenderingContext2D.prototype.fillText = function (t, ...a) { window.__drawn.push(String(t)); return __fill.call(this, t, ...a); };`}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx,
		chromedp.Navigate(s.url+"/#token="+testToken),
		chromedp.WaitVisible(chromedp.CSS("#jobs tbody tr")),
		clickCSS("#jobs tbody tr:first-child td:nth-child(2)"),
		chromedp.WaitVisible(chromedp.CSS("#detail .server-side .state-bar")),
	); err != nil {
		t.Fatalf("open the job: %v", err)
	}
	eval := func(expr string, v any) { t.Helper(); evalJSON(t, bctx, expr, v) }

	var bar struct {
		W    float64 `json:"w"`
		Segs []struct {
			State string  `json:"state"`
			W     float64 `json:"w"`
			Title string  `json:"title"`
		} `json:"segs"`
	}
	eval(`(() => { const b = document.querySelector("#detail .state-bar"); return {w: b.getBoundingClientRect().width,
		segs: [...b.querySelectorAll(".seg")].map(s => ({state: s.dataset.state, w: s.getBoundingClientRect().width, title: s.title}))}; })()`, &bar)
	order := []string{"cpu", "runnable", "network", "lock", "io", "idle"}
	if len(bar.Segs) != len(order) {
		t.Fatalf("thread-state bar: %d segments, want %d", len(bar.Segs), len(order))
	}
	for i, sg := range bar.Segs {
		want := states[order[i]] * bar.W
		if sg.State != order[i] || math.Abs(sg.W-want) > 0.5 || !strings.HasSuffix(sg.Title, "%") {
			t.Errorf("segment %d: %s %.1fpx %q, want %s %.1fpx", i, sg.State, sg.W, sg.Title, order[i], want)
		}
	}

	if frame != "" {
		if err := chromedp.Do(bctx, chromedp.WaitVisible(chromedp.CSS("#detail .server-side .flame canvas"))); err != nil {
			t.Fatalf("no flame graph: %v", err)
		}
		var drawn []string
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) && !slices.Contains(drawn, frame) {
			time.Sleep(100 * time.Millisecond)
			eval(`window.__drawn`, &drawn)
		}
		if !slices.Contains(drawn, frame) {
			t.Errorf("the flame graph drew no frame %s: %q", frame, drawn)
		}
	}
	if b, err := chromedp.Run(bctx, chromedp.FullScreenshot(100)); err == nil && os.Getenv("SLEDGE_TEST_ARTIFACTS") != "" {
		_ = os.WriteFile(filepath.Join(os.Getenv("SLEDGE_TEST_ARTIFACTS"), shot), b, 0o644)
	}

	mu.Lock()
	defer mu.Unlock()
	own, _ := url.Parse(s.url)
	var flame bool
	for _, rq := range requests {
		u, err := url.Parse(rq)
		if err != nil || u.Host != own.Host {
			t.Errorf("the page requested %s: only the service's own files and API", rq)
		}
		flame = flame || bytes.HasSuffix([]byte(u.Path), []byte("/vendor/flame-chart-js/flame-chart.min.js"))
	}
	if !flame {
		t.Errorf("the page did not load the vendored flame graph library: %q", requests)
	}
	return bctx
}

func evalJSON(t *testing.T, ctx context.Context, expr string, v any) {
	t.Helper()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expr))
	if err == nil {
		err = json.Unmarshal(raw, v)
	}
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
}

// The page on a real run's job on the private PostgreSQL server with
// --stacks, read in-process: its own thread states drawn, and its flame
// graph where perf could take stacks.
func TestServePageServerSidePostgres(t *testing.T) {
	testbrowser.Need(t)
	srv := pgServer.Get(t)
	srv.DropAtEnd(t, "service_server_side")
	u := fmt.Sprintf("postgres://%s:%s@%s:%d/service_server_side", srv.User, srv.Password, srv.Host, srv.Port)
	s := startService(t, "")
	b := submit(t, s.url, testToken, map[string]any{"kind": "build", "db": u, "options": map[string]any{"warehouses": 1}})
	if j := waitStatus(t, s.url, testToken, b, 60*time.Second, "completed", "failed"); j.Status != "completed" {
		t.Fatalf("build: %s: %s", j.Status, j.Error)
	}
	id := submit(t, s.url, testToken, map[string]any{"kind": "run", "db": u,
		"options": map[string]any{"vus": 2, "duration": "3s", "rampup": "1s", "mode": "client", "stacks": true}})
	j := waitStatus(t, s.url, testToken, id, 60*time.Second, "completed", "failed")
	var res struct {
		Threads map[string]any `json:"server_threads"`
		Stacks  *struct {
			Folded string `json:"folded"`
			Why    string `json:"why"`
		} `json:"server_stacks"`
	}
	if err := json.Unmarshal(j.Result, &res); j.Status != "completed" || err != nil || res.Threads == nil || res.Stacks == nil {
		t.Fatalf("run: %s %s %v: server_threads %v, server_stacks %v", j.Status, j.Error, err, res.Threads, res.Stacks)
	}
	states := map[string]float64{}
	for k, v := range res.Threads {
		if f, ok := v.(float64); ok {
			states[k] = f
		}
	}
	frame := ""
	if res.Stacks.Folded != "" {
		// The root with the most samples: the process name, the first
		// frame of its stacks. (A stack of a process that ended before
		// perf read its name has a root of ":PID", and may be too thin
		// to draw.)
		weight := map[string]int{}
		for _, line := range strings.Split(strings.TrimSpace(res.Stacks.Folded), "\n") {
			i := strings.LastIndexByte(line, ' ')
			n, _ := strconv.Atoi(line[i+1:])
			weight[strings.SplitN(line, ";", 2)[0]] += n
		}
		for root, n := range weight {
			if frame == "" || n > weight[frame] || (n == weight[frame] && root < frame) {
				frame = root
			}
		}
	} else {
		t.Logf("no stacks here: %s", res.Stacks.Why)
	}
	ctx := openServerSide(t, s, states, frame, "serve-server-side-postgres.png")
	var why string
	if frame == "" {
		evalJSON(t, ctx, `document.querySelector("#detail .server-side").textContent`, &why)
		if !strings.Contains(why, "no stacks: "+res.Stacks.Why) {
			t.Errorf("the page does not say why there are no stacks (%q)", res.Stacks.Why)
		}
	}
}

// The page loads the flame graph's library and wrapper from the service,
// which serves the compare report's copies (one copy in the repository).
func TestPageServesTheReportsFlameFiles(t *testing.T) {
	s := startService(t, "")
	for path, want := range report.FlameFiles() {
		code, body := call(t, s.url, "", http.MethodGet, "/"+path, nil)
		if code != http.StatusOK || string(body) != want {
			t.Errorf("GET /%s: %d, %d bytes, want the report's %d", path, code, len(body), len(want))
		}
	}
}
