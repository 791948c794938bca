package service_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sledge-bench/sledge/internal/cli"
	"github.com/sledge-bench/sledge/internal/testbrowser"
)

// Issue 28: a compare ch job on the page: what the terminals and the
// analytic streams cost each other, as a table and two bar charts, from a
// real compare of the three sides on SQLite.
func TestServePageMixedCompare(t *testing.T) {
	testbrowser.Need(t)
	u := "sqlite://" + filepath.Join(t.TempDir(), "ch.db")
	var stderr bytes.Buffer
	if c := cli.Main(context.Background(), []string{"build", "ch", "--db", u, "--no-job"},
		cli.Env{Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }}); c != 0 {
		t.Fatalf("build ch: exit %d: %s", c, stderr.String())
	}
	s := startService(t, "")
	id := submit(t, s.url, testToken, map[string]any{"kind": "compare", "workload": "ch", "db": u,
		"options": map[string]any{"vus": "1", "analytic-streams": 1, "rampup": "0s", "duration": "4s", "modes": "prepared"}})
	waitStatus(t, s.url, testToken, id, 120*time.Second, "completed")

	tctx, cancelT := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancelT()
	actx, cancelA := testbrowser.Allocator(tctx, t, 1280, 1400)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/#token="+testToken),
		chromedp.WaitVisible(chromedp.CSS("#jobs tbody tr")),
		// The compare's own job, not one of its cells' runs.
		clickCSS(fmt.Sprintf(`#jobs tbody tr[data-id="%d"] td:nth-child(2)`, id)),
		chromedp.WaitVisible(chromedp.CSS("#detail table.interference")),
	); err != nil {
		t.Fatalf("open the compare job: %v", err)
	}
	var page struct {
		Table    string   `json:"table"`
		Canvases int      `json:"canvases"`
		Titles   []string `json:"titles"`
	}
	evalJSON(t, ctx, `({table: document.querySelector("#detail table.interference").textContent,
		canvases: document.querySelectorAll("#detail .chart canvas").length,
		titles: [...document.querySelectorAll("#detail .chart .u-title")].map(e => e.textContent)})`, &page)
	for _, want := range []string{"NOPM (terminals, from the database)", "queries per hour (streams, measured by sledge)", "Q1 mean s", "Q22 mean s"} {
		if !strings.Contains(page.Table, want) {
			t.Errorf("the table lacks %q: %q", want, page.Table)
		}
	}
	titles := strings.Join(page.Titles, " | ")
	for _, want := range []string{"NOPM: terminals alone and beside the streams", "mean seconds per query: streams alone and beside the terminals"} {
		if !strings.Contains(titles, want) {
			t.Errorf("no chart %q among %q", want, titles)
		}
	}
	if page.Canvases < 2 {
		t.Errorf("%d charts drawn, want 2", page.Canvases)
	}
	if b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil && os.Getenv("SLEDGE_TEST_ARTIFACTS") != "" {
		_ = os.WriteFile(filepath.Join(os.Getenv("SLEDGE_TEST_ARTIFACTS"), "serve-compare-ch.png"), b, 0o644)
	}
}
