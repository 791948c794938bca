package report

import (
	"bytes"
	"strings"
	"testing"
)

func TestNiceScale(t *testing.T) {
	for _, tc := range []struct{ v, top, step float64 }{
		{0, 1, 0.2}, {1, 1, 0.2}, {7, 8, 2}, {9.5, 10, 2}, {23456, 25000, 5000}, {0.3, 0.3, 0.1},
	} {
		top, step := niceScale(tc.v)
		if top < tc.v || abs(top-tc.top) > 1e-9 || abs(step-tc.step) > 1e-9 {
			t.Errorf("niceScale(%v) = %v, %v; want %v, %v", tc.v, top, step, tc.top, tc.step)
		}
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// The page is self-contained and escapes what it shows.
func TestWriteSelfContainedAndEscaped(t *testing.T) {
	r := sample()
	r.Title = `compare <script>alert(1)</script>`
	r.Settings["evil"] = `"><img src=x onerror=alert(1)>`
	var buf bytes.Buffer
	if err := Write(&buf, r); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, bad := range []string{"<img", "http://", "https://", "@import", "<link", "<script src", "<script>alert"} {
		if strings.Contains(html, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	// One script, inline: the flame graph library and its call (issue 25),
	// there because cells have stacks.
	if n := strings.Count(html, "<script"); n != 1 || !strings.Contains(html, "<script>") {
		t.Errorf("page has %d scripts, want the flame graph's one, inline", n)
	}
	r.Cells = r.Cells[1:2] // no stacks: no script at all
	buf.Reset()
	if err := Write(&buf, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "<script") {
		t.Error("a page without stacks has a script")
	}
	for _, want := range []string{"&lt;script&gt;", "x86 &lt;test&gt; &amp; co", "<polyline", "<rect", "NOPM against virtual users",
		"procedure · unix", "stroke-dasharray", "round trips per transaction", "shared_buffers",
		"Mode against mode", "<td class=\"n\">&#43;30.0</td><td class=\"n\">&#43;90</td><td class=\"n\">&#43;200</td>", "<td class=\"n\">0.50</td><td class=\"n\">-</td>"} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// The database's version is one fact, in the server's own words when its
// settings carry them (PostgreSQL's version()), never two "version" rows.
func TestWriteOneVersion(t *testing.T) {
	for _, c := range []struct {
		name, full, want string
	}{
		{"settings carry version()", "PostgreSQL 15.14 on x86_64-pc-linux-gnu, compiled by gcc 12.2.0, 64-bit", "<dt>version</dt><dd>PostgreSQL 15.14 on x86_64-pc-linux-gnu, compiled by gcc 12.2.0, 64-bit</dd>"},
		{"no version setting", "", "<dt>version</dt><dd>PostgreSQL 15.14</dd>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := sample()
			if c.full != "" {
				r.Settings["version"] = c.full
			}
			var buf bytes.Buffer
			if err := Write(&buf, r); err != nil {
				t.Fatal(err)
			}
			html := buf.String()
			if n := strings.Count(html, "<dt>version</dt>"); n != 1 || !strings.Contains(html, c.want) {
				t.Errorf("%d version rows, want 1: %q", n, c.want)
			}
		})
	}
}

func TestWriteCases(t *testing.T) {
	nopm := 1200.0
	cases := []struct {
		name       string
		cells      []Cell
		want, lack []string
	}{
		{"no cost figures", []Cell{{Mode: "client", Transport: "embedded", VUs: 1, NOPM: &nopm, TPM: 2000}},
			[]string{"no cost figures in these runs", "reported no cost figures", "<polyline"}, []string{"fill-opacity"}},
		{"no meter: TPM", []Cell{{Mode: "client", Transport: "tcp", VUs: 2, TPM: 2000, Cost: &Cost{RoundTrips: 3}}},
			[]string{"TPM against virtual users", "fill-opacity"}, []string{"NOPM against"}},
		{"no cells", nil, []string{"no throughput was measured"}, []string{"<polyline"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, &Report{Title: "t", Cells: tc.cells}); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("lacks %q", w)
				}
			}
			for _, w := range tc.lack {
				if strings.Contains(buf.String(), w) {
					t.Errorf("contains %q", w)
				}
			}
		})
	}
}
