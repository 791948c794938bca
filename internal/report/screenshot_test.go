package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/testbrowser"
)

// screenshot renders html in headless Chromium (Debian's package, installed
// by scripts/install-servers.sh) and decodes the PNG.
func screenshot(t *testing.T, html []byte) image.Image {
	t.Helper()
	testbrowser.Need(t)
	dir := t.TempDir()
	page, shot := filepath.Join(dir, "report.html"), filepath.Join(dir, "shot.png")
	if err := os.WriteFile(page, html, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := testbrowser.Command(ctx, t, "--disable-quic", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--screenshot="+shot, "--window-size=1200,1600",
		"file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("chromium wrote no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	return img
}

type rgb struct{ r, g, b int }

func hexColor(s string) rgb {
	v, _ := strconv.ParseUint(s[1:], 16, 32)
	return rgb{int(v >> 16 & 0xff), int(v >> 8 & 0xff), int(v & 0xff)}
}

func near(img image.Image, x, y int, c rgb, tol int) bool {
	r, g, b, _ := img.At(x, y).RGBA()
	d := func(a uint32, want int) bool { v := int(a>>8) - want; return v >= -tol && v <= tol }
	return d(r, c.r) && d(g, c.g) && d(b, c.b)
}

// region is the bounding box of the pixels of a plot background colour:
// where a chart is on the screen, whatever the page layout did.
func region(img image.Image, bg rgb) (image.Rectangle, int) {
	box, n := image.Rectangle{}, 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			if near(img, x, y, bg, 1) {
				box = box.Union(image.Rect(x, y, x+1, y+1))
				n++
			}
		}
	}
	return box, n
}

// checkCharts fails unless both charts are on the screen and each shows
// every series colour inside its plot area (the legend is outside it): an
// empty chart, or a series that drew nothing, is an error.
func checkCharts(img image.Image, series int) error {
	for _, ch := range []struct{ name, bg string }{{"throughput", ThroughputPlotBG}, {"cost", CostPlotBG}} {
		box, n := region(img, hexColor(ch.bg))
		if n < 10000 {
			return fmt.Errorf("%s chart: no plot area on the screenshot (%d background pixels)", ch.name, n)
		}
		for _, col := range Palette[:series] {
			c, count := hexColor(col), 0
			for y := box.Min.Y; y < box.Max.Y; y++ {
				for x := box.Min.X; x < box.Max.X; x++ {
					if near(img, x, y, c, 10) {
						count++
					}
				}
			}
			// A point alone (one VU count) is about 80 pixels, a line or a bar
			// hundreds. Anti-aliased edges alone give a few.
			if count < 40 {
				return fmt.Errorf("%s chart in %v: %d pixels of series colour %s, want a drawn series", ch.name, box, count, col)
			}
		}
	}
	return nil
}

// checkSplit fails unless the split chart is on the screen with each of
// its three segments drawn: client CPU, server CPU, waiting.
func checkSplit(img image.Image) error {
	box, n := region(img, hexColor(SplitPlotBG))
	if n < 10000 {
		return fmt.Errorf("split chart: no plot area on the screenshot (%d background pixels)", n)
	}
	for _, col := range []string{ClientCPUColor, ServerCPUColor, WaitColor} {
		c, count := hexColor(col), 0
		for y := box.Min.Y; y < box.Max.Y; y++ {
			for x := box.Min.X; x < box.Max.X; x++ {
				if near(img, x, y, c, 10) {
					count++
				}
			}
		}
		if count < 40 {
			return fmt.Errorf("split chart in %v: %d pixels of segment colour %s, want drawn bars", box, count, col)
		}
	}
	return nil
}

func TestScreenshotShowsCharts(t *testing.T) {
	r := sample()
	var buf bytes.Buffer
	if err := Write(&buf, r); err != nil {
		t.Fatal(err)
	}
	img := screenshot(t, buf.Bytes())
	if err := checkCharts(img, 4); err != nil {
		t.Error(err)
	}
	if err := checkSplit(img); err != nil {
		t.Error(err)
	}

	// The same page with one chart's data taken out (legend, axes and the
	// other chart left) must fail the check: it really looks at the data.
	for _, tc := range []struct {
		name  string
		empty func(v *view)
	}{
		{"no lines", func(v *view) {
			for i := range v.Throughput.Lines {
				v.Throughput.Lines[i].Points, v.Throughput.Lines[i].Dots = "", nil
			}
		}},
		{"no bars", func(v *view) {
			for i := range v.Costs {
				v.Costs[i].Bars = nil
			}
		}},
		{"no split bars", func(v *view) { v.Split.Bars = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := build(r)
			tc.empty(v)
			var buf bytes.Buffer
			if err := page.Execute(&buf, v); err != nil {
				t.Fatal(err)
			}
			img := screenshot(t, buf.Bytes())
			err := checkCharts(img, 4)
			if err == nil {
				err = checkSplit(img)
			}
			if err == nil {
				t.Fatal("a page with empty series passed the chart check")
			}
			t.Logf("as expected: %v", err)
		})
	}
}
