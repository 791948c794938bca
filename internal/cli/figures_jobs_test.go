package cli

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// columnStarts are the character offsets at which the header's cells
// after the first begin ("job 1", "job 2", "B/A").
func columnStarts(header string) []int {
	r := []rune(header)
	var starts []int
	for i := 1; i < len(r); i++ {
		if r[i] != ' ' && r[i-1] == ' ' && (i < 2 || r[i-2] == ' ') {
			starts = append(starts, i)
		}
	}
	return starts
}

// checkAligned fails unless every row of a table begins each of its cells
// at the header's column (a title line of its own excepted).
func checkAligned(t *testing.T, text string, isTitle func(string) bool) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	starts := columnStarts(lines[0])
	if len(starts) == 0 {
		t.Fatalf("no columns in the header %q", lines[0])
	}
	for n, l := range lines[1:] {
		if l == "" || isTitle(l) {
			continue
		}
		r := []rune(l)
		for k, s := range starts {
			if s >= len(r) {
				if k == 0 {
					t.Errorf("line %d has no value in column 1: %q", n+2, l)
				}
				break
			}
			if r[s] == ' ' || r[s-1] != ' ' || r[s-2] != ' ' {
				t.Errorf("line %d: column %d does not begin at character %d (header %q):\n%q", n+2, k+1, s, lines[0], l)
			}
		}
	}
}

// textTable: columns as wide as their widest cell in characters (µ, ×
// and · are one each), titles outside the columns.
func TestTextTableAligns(t *testing.T) {
	cases := []struct {
		name string
		rows [][]string // nil: a title line
	}{
		{"ascii", [][]string{{"", "job 1", "job 2", "B/A"}, {"nopm", "1,234", "12,345", "10.00"}, {"kind", "run", "run"}}},
		{"multibyte", [][]string{{"", "job 1", "job 2", "B/A"}, {"host", "vm (AMD EPYC × 2)", "vm (Intel × 16)"}, {"cpu µs", "1.0", "2.0", "2.00"}, nil, {"  a·b", "-", "-"}}},
		{"long first column", [][]string{{"", "job 10", "job 200", "B/A"}, {"client/embedded/1.client_cpu_us", "1223.2", "591.5", "0.48"}, {"x", "y", "z", "w"}}},
		{"empty cells", [][]string{{"", "job 1", "job 2", "B/A"}, {"a", "", "b", "1.00"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tt textTable
			for _, r := range c.rows {
				if r == nil {
					tt.line("a title: not in the columns at all")
					continue
				}
				tt.row(r...)
			}
			var b bytes.Buffer
			tt.write(&b)
			if c.name == "empty cells" {
				// An empty cell keeps its column: the next one starts where it should.
				lines := strings.Split(b.String(), "\n")
				if i, j := strings.Index(lines[0], "job 2"), strings.Index(lines[1], "b"); utf8.RuneCountInString(lines[0][:i]) != utf8.RuneCountInString(lines[1][:j]) {
					t.Errorf("empty cell shifts the row:\n%s", b.String())
				}
				return
			}
			checkAligned(t, b.String(), func(l string) bool { return strings.HasPrefix(l, "a title") })
		})
	}
}

// jobs show of a compare prints its table of cells, not JSON; jobs diff of
// two compares compares them cell by cell, and of two runs includes the
// cost per transaction, every line in the same columns.
func TestJobsShowAndDiffCompares(t *testing.T) {
	path := builtDB(t)
	home := t.TempDir()
	ids := []int64{}
	for _, args := range [][]string{{"--mode", "client,prepared", "-c", "1,2"}, {"--mode", "client", "-c", "1,3"}} {
		stdout, stderr, code := runCLI(t, home, append([]string{"compare", "--db", "sqlite://" + path, "-t", "20", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("compare: exit %d: %s", code, stderr)
		}
		var out compareOut
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, out.JobID)
	}
	a, b := strconv.FormatInt(ids[0], 10), strconv.FormatInt(ids[1], 10)

	shown, stderr, code := runCLI(t, home, "jobs", "show", a)
	if code != 0 {
		t.Fatalf("jobs show: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"mode", "transport", "vus", "NOPM", "TPM", "neword p90 ms", "rt/txn", "bytes/txn", "cpu µs/txn", "job",
		"client   embedded    1", "prepared   embedded    2"} {
		if !strings.Contains(shown, want) {
			t.Errorf("jobs show of a compare lacks %q:\n%s", want, shown)
		}
	}
	if strings.Contains(shown, `"cells"`) || strings.Contains(shown, "result:") {
		t.Errorf("jobs show of a compare dumps JSON:\n%s", shown)
	}

	js, _, code := runCLI(t, home, "jobs", "diff", a, b, "--json")
	var d jobDiff
	if err := json.Unmarshal([]byte(js), &d); err != nil || code != 0 {
		t.Fatalf("diff --json: exit %d %v: %s", code, err, js)
	}
	fig := map[string]diffRow{}
	for _, f := range d.Figures {
		fig[f.Name] = f
	}
	for _, n := range []string{"client/embedded/1.nopm", "client/embedded/1.tpm", "client/embedded/1.p90_ms",
		"client/embedded/1.round_trips", "client/embedded/1.bytes", "client/embedded/1.client_cpu_us"} {
		if _, ok := fig[n]; !ok {
			t.Errorf("diff of compares lacks %s: %+v", n, d.Figures)
		}
	}
	if f := fig["client/embedded/1.nopm"]; f.Ratio == nil || *f.Ratio != f.B.(float64)/f.A.(float64) {
		t.Errorf("nopm ratio: %+v", f)
	}
	if strings.Join(d.OnlyA, " ") != "client/embedded/2 prepared/embedded/1 prepared/embedded/2" || strings.Join(d.OnlyB, " ") != "client/embedded/3" {
		t.Errorf("unmatched cells: A %v, B %v", d.OnlyA, d.OnlyB)
	}
	text, _, _ := runCLI(t, home, "jobs", "diff", a, b)
	if strings.Contains(text, "no figures") || !strings.Contains(text, "client/embedded/1.nopm") || !strings.Contains(text, "cells only in job "+b+": client/embedded/3") {
		t.Errorf("diff of compares:\n%s", text)
	}
	isTitle := func(l string) bool {
		return strings.HasSuffix(l, ":") || strings.HasPrefix(l, "(") || strings.HasPrefix(l, "cells only in")
	}
	checkAligned(t, text, isTitle)

	// Two runs: the cells of the first compare.
	var cells struct {
		Cells []struct {
			JobID int64 `json:"job_id"`
		} `json:"cells"`
	}
	r := showJob(t, home, a)
	if err := json.Unmarshal(r.Summary, &cells); err != nil || len(cells.Cells) != 4 {
		t.Fatalf("compare summary: %v %s", err, r.Summary)
	}
	ra, rb := strconv.FormatInt(cells.Cells[0].JobID, 10), strconv.FormatInt(cells.Cells[3].JobID, 10)
	js, _, _ = runCLI(t, home, "jobs", "diff", ra, rb, "--json")
	d = jobDiff{}
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatal(err)
	}
	fig = map[string]diffRow{}
	for _, f := range d.Figures {
		fig[f.Name] = f
	}
	for _, n := range []string{"per_txn.round_trips", "per_txn.bytes_sent", "per_txn.bytes_received", "per_txn.client_cpu_us", "per_txn.context_switches"} {
		if _, ok := fig[n]; !ok {
			t.Errorf("diff of runs lacks %s", n)
		}
	}
	if f := fig["per_txn.client_cpu_us"]; f.Ratio == nil || f.A.(float64) <= 0 {
		t.Errorf("per_txn.client_cpu_us: %+v", f)
	}
	text, _, _ = runCLI(t, home, "jobs", "diff", ra, rb)
	for _, want := range []string{"per_txn.round_trips", "per_txn.client_cpu_us", "per_txn.context_switches", "options that differ:"} {
		if !strings.Contains(text, want) {
			t.Errorf("diff of runs lacks %q:\n%s", want, text)
		}
	}
	checkAligned(t, text, isTitle)
}
