package report

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/sledge-bench/sledge/internal/testbrowser"
)

// sampleQueries is a compare of 22 queries on n databases, from 0.3 ms
// to 2 s, with one query database C did not run.
func sampleQueries(n int) *QueryReport {
	r := &QueryReport{Title: "sledge compare: tpch across databases", Command: "sledge compare tpch --db a --db b",
		Generated: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Source: "power", JobID: 3,
		Host: []Fact{{"CPUs", "2"}}, Run: []Fact{{"seed", "7"}}}
	for i := 0; i < n; i++ {
		p := 1000.0 * float64(i+1)
		r.Databases = append(r.Databases, Database{Name: fmt.Sprintf("postgres://u:REDACTED@h/db%d <&>", i), Driver: "postgres",
			Version: "16.4", Transport: "tcp", Scale: 0.01, Power: &p, JobID: int64(4 + i)})
	}
	for q := 1; q <= 22; q++ {
		row := QueryTimes{Query: q}
		for i := 0; i < n; i++ {
			s := 0.0003 * float64(q*q) * float64(i+1) // 0.3 ms … 0.45 s, and more on the later databases
			if q == 22 {
				s = 2
			}
			if i == 2 && q == 5 {
				row.Seconds = append(row.Seconds, nil)
				continue
			}
			row.Seconds = append(row.Seconds, &s)
		}
		r.Queries = append(r.Queries, row)
	}
	return r
}

func TestQueryChartScale(t *testing.T) {
	for _, tc := range []struct {
		name       string
		secs       []float64
		ticks      []string
		wantGroups int
	}{
		{"1 ms to 1 s", []float64{0.0012, 0.9}, []string{"1 ms", "10 ms", "100 ms", "1 s"}, 1},
		{"one decade", []float64{0.02, 0.03}, []string{"10 ms", "100 ms"}, 1},
		{"microseconds", []float64{0.0002}, []string{"100 µs", "1 ms"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := QueryTimes{Query: 1}
			var dbs []Database
			for i := range tc.secs {
				row.Seconds = append(row.Seconds, &tc.secs[i])
				dbs = append(dbs, Database{Name: fmt.Sprint(i)})
			}
			ch, groups := queryChart(&QueryReport{Databases: dbs, Queries: []QueryTimes{row}})
			var got []string
			for _, tk := range ch.YTicks {
				got = append(got, tk.Label)
			}
			if strings.Join(got, ",") != strings.Join(tc.ticks, ",") {
				t.Errorf("ticks %v, want %v", got, tc.ticks)
			}
			if len(groups) != tc.wantGroups || len(groups[0].Bars) != len(tc.secs) {
				t.Errorf("%d groups, %+v", len(groups), groups)
			}
		})
	}
}

// The page in headless Chromium (chromedp, as the service's page test):
// it loads without a JavaScript error or console error, shows 22 query
// groups of N bars each (one missing where a database did not run a
// query), and every database's colour is drawn in the plot area.
func TestQueryReportInChromium(t *testing.T) {
	testbrowser.Need(t)
	for _, tc := range []struct {
		name   string
		n      int
		broken bool // a control: the same page with a script that throws must fail the check
	}{{"2 databases", 2, false}, {"3 databases", 3, false}, {"control: a script error", 2, true}} {
		n := tc.n
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteQueries(&buf, sampleQueries(n)); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(buf.String(), "<script") || strings.Contains(buf.String(), "http://") || strings.Contains(buf.String(), "https://") {
				t.Error("the report loads or runs something: want inline CSS and SVG only")
			}
			html := buf.Bytes()
			if tc.broken {
				html = bytes.Replace(html, []byte("</body>"), []byte(`<script>throw new Error("control")</script></body>`), 1)
			}
			dir := t.TempDir()
			page := filepath.Join(dir, "report.html")
			if err := os.WriteFile(page, html, 0o644); err != nil {
				t.Fatal(err)
			}
			tctx, cancelT := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancelT()
			actx, cancelA := testbrowser.Allocator(tctx, t, 1200, 1400)
			defer cancelA()
			ctx, cancel := chromedp.NewContext(actx)
			defer cancel()
			var mu sync.Mutex
			var jsErrors []string
			if err := chromedp.Listen(ctx, func(ev any) {
				mu.Lock()
				defer mu.Unlock()
				switch e := ev.(type) {
				case *runtime.EventExceptionThrown:
					jsErrors = append(jsErrors, "exception: "+e.ExceptionDetails.Text)
				case *runtime.EventConsoleAPICalled:
					if e.Type == runtime.ConsoleAPICalledTypeError {
						jsErrors = append(jsErrors, "console.error")
					}
				}
			}); err != nil {
				t.Fatalf("listen: %v", err)
			}
			eval := func(expr string) any {
				v, err := chromedp.Run(ctx, chromedp.Evaluate[any](expr))
				if err != nil {
					t.Fatalf("%s: %v", expr, err)
				}
				return v
			}
			if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitVisible(chromedp.CSS("#queries svg.chart"))); err != nil {
				t.Fatalf("load the report: %v", err)
			}
			groups := eval(`document.querySelectorAll("#queries g.query").length`)
			bars := eval(`document.querySelectorAll("#queries g.query rect.bar").length`)
			labels := eval(`document.querySelectorAll("#figures thead th").length`)
			missing := eval(`[...document.querySelectorAll("#queries g.query")].filter(g => g.querySelectorAll("rect.bar").length != ` + fmt.Sprint(n) + `).map(g => g.dataset.query).join(",")`)
			shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			mu.Lock()
			errs := append([]string(nil), jsErrors...)
			mu.Unlock()
			if tc.broken {
				if len(errs) == 0 {
					t.Fatal("a page whose script throws passed the check for JavaScript errors")
				}
				t.Logf("as expected: %v", errs)
				return
			}
			if len(errs) > 0 {
				t.Errorf("JavaScript errors: %v", errs)
			}
			wantBars := 22 * n
			wantMissing := ""
			if n >= 3 {
				wantBars--
				wantMissing = "Q5"
			}
			if groups != float64(22) || bars != float64(wantBars) || missing != wantMissing {
				t.Errorf("%v query groups with %v bars (groups short of a bar: %q), want 22 with %d (%q)", groups, bars, missing, wantBars, wantMissing)
			}
			if labels != float64(n+1) {
				t.Errorf("the figures table has %v header cells, want %d: one per database", labels, n+1)
			}
			img, err := png.Decode(bytes.NewReader(shot))
			if err != nil {
				t.Fatal(err)
			}
			box, px := region(img, hexColor(QueryPlotBG))
			if px < 10000 {
				t.Fatalf("no plot area on the screenshot (%d background pixels)", px)
			}
			for _, col := range Palette[:n] {
				c, count := hexColor(col), 0
				for y := box.Min.Y; y < box.Max.Y; y++ {
					for x := box.Min.X; x < box.Max.X; x++ {
						if near(img, x, y, c, 10) {
							count++
						}
					}
				}
				if count < 500 {
					t.Errorf("%d pixels of database colour %s in the plot, want its bars", count, col)
				}
			}
		})
	}
}
