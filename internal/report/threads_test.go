package report

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/sledge-bench/sledge/internal/testbrowser"
)

// fillTextHook records what is drawn as text on any canvas: the flame
// graph draws its frames' names there, not in the DOM.
const fillTextHook = `window.__drawn = [];
const __fill = CanvasRenderingContext2D.prototype.fillText;
CanvasRenderingContext2D.prototype.fillText = function (t, ...a) { window.__drawn.push(String(t)); return __fill.call(this, t, ...a); };`

// browse opens html in headless Chromium with the canvas hook installed
// and returns the context and every URL the page requested.
func browse(t *testing.T, html []byte) (context.Context, func() []string) {
	t.Helper()
	testbrowser.Need(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, html, 0o644); err != nil {
		t.Fatal(err)
	}
	tctx, cancelT := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancelT)
	actx, cancelA := testbrowser.Allocator(tctx, t, 1280, 1400)
	t.Cleanup(cancelA)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	var mu sync.Mutex
	var urls []string
	// Open the tab first, so that the listener misses nothing of the page.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			urls = append(urls, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: fillTextHook}); err != nil {
		t.Fatalf("install the canvas hook: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+file), chromedp.WaitVisible(chromedp.CSS("#threads"))); err != nil {
		t.Fatalf("open the report: %v", err)
	}
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		for i, u := range urls {
			if u == "file://"+file {
				return append(urls[:i:i], urls[i+1:]...)
			}
		}
		return urls
	}
}

// The compare report in a browser: per cell, the server's thread states
// as one bar of six segments as wide as their shares, the client's bar
// beneath it, a cell without an agent saying so; a flame graph per cell
// with stacks, drawn by the vendored library with its frames' names; and
// nothing requested but the file itself.
func TestReportThreadsAndFlame(t *testing.T) {
	r := sample()
	var buf bytes.Buffer
	if err := Write(&buf, r); err != nil {
		t.Fatal(err)
	}
	ctx, requests := browse(t, buf.Bytes())
	eval := func(expr string, v any) {
		t.Helper()
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expr))
		if err == nil {
			err = json.Unmarshal(raw, v)
		}
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
	}

	// The segments of the first cell's server row: the rects whose title
	// names it, in order; widths against the plot area's.
	var plotW float64
	eval(`document.querySelector("#threads svg.chart > rect").getBoundingClientRect().width`, &plotW)
	var segs []struct {
		Title string  `json:"title"`
		W     float64 `json:"w"`
		Fill  string  `json:"fill"`
	}
	eval(`[...document.querySelectorAll("#threads rect.seg")].map(r => ({title: r.querySelector("title").textContent,
		w: r.getBoundingClientRect().width, fill: r.getAttribute("fill")}))`, &segs)
	first := r.Cells[0]
	name := "procedure · tcp · 1 VUs, server threads: "
	var got []string
	for _, s := range segs {
		if strings.HasPrefix(s.Title, name) {
			got = append(got, s.Fill)
			k := stateKeys[len(got)-1]
			want := k.share(*first.Threads) * plotW
			if math.Abs(s.W-want) > 0.5 || s.Fill != k.color || !strings.Contains(s.Title, k.name) {
				t.Errorf("segment %d %q: %.1fpx %s, want %.1fpx %s", len(got), s.Title, s.W, s.Fill, want, k.color)
			}
		}
	}
	if len(got) != 6 {
		t.Errorf("first cell's server bar: %d segments %v, want one per state (6)", len(got), got)
	}
	client := 0
	for _, s := range segs {
		if strings.HasPrefix(s.Title, "procedure · tcp · 1 VUs, client: ") {
			client++
		}
	}
	if client != 3 {
		t.Errorf("first cell's client bar: %d segments, want 3", client)
	}
	var notes []string
	eval(`[...document.querySelectorAll("#threads text.empty")].map(e => e.textContent)`, &notes)
	if len(notes) != 4 || notes[0] != "server threads not sampled: no agent" {
		t.Errorf("notes %q, want the 4 client·unix cells' 'no agent'", notes)
	}

	// Two cells have stacks: two flame graphs, each a canvas of the
	// library holding every frame.
	var flames []struct {
		Frames  string `json:"frames"`
		Samples string `json:"samples"`
		Canvas  bool   `json:"canvas"`
		W       int    `json:"w"`
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(".flame canvas"))); err != nil {
		t.Fatal(err)
	}
	eval(`[...document.querySelectorAll(".flame")].map(f => ({frames: f.dataset.frames, samples: f.dataset.samples,
		canvas: !!f.querySelector("canvas"), w: f.querySelector("canvas") ? f.querySelector("canvas").width : 0}))`, &flames)
	if len(flames) != 2 {
		t.Fatalf("%d flame graphs, want 2 (the cells with stacks)", len(flames))
	}
	for _, f := range flames {
		// postgres and the frames under it merged by path: 20 nodes
		// (PostgresMain, PortalRun and ExecutorRun are on two paths each).
		if f.Frames != "20" || f.Samples != "90" || !f.Canvas || f.W < 500 {
			t.Errorf("flame graph %+v, want 20 frames of 90 samples on a canvas", f)
		}
	}
	var drawn []string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		eval(`window.__drawn`, &drawn)
		if strings.Contains(strings.Join(drawn, "\n"), "exec_simple_query") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, frame := range []string{"postgres", "PostgresMain", "exec_simple_query"} {
		found := false
		for _, d := range drawn {
			found = found || d == frame
		}
		if !found {
			t.Errorf("frame %q not drawn on the flame graph's canvas (drew %q)", frame, drawn)
		}
	}
	if rq := requests(); len(rq) != 0 {
		t.Errorf("the report requested %q: it must load nothing", rq)
	}
}
