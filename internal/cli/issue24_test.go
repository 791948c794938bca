package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/workload"
)

// A mistyped command or subcommand gets cobra's nearest names on the one
// error line, exit 2; a word near nothing gets none.
func TestUnknownCommandSuggests(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rnu"}, `sledge: unknown command "rnu" for "sledge"; did you mean "run"?` + "\n"},
		{[]string{"bild", "tpcc"}, `sledge: unknown command "bild" for "sledge"; did you mean "build"?` + "\n"},
		{[]string{"jobs", "lst"}, `sledge: unknown command "lst" for "sledge jobs"; did you mean "list"?` + "\n"},
		{[]string{"zzzzzz"}, `sledge: unknown command "zzzzzz" for "sledge"` + "\n"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, stderr, code := runCLI(t, t.TempDir(), c.args...)
			if code != ExitUsage || stderr != c.want {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, ExitUsage, c.want)
			}
		})
	}
}

// A build names what it creates after the load as it is: tpch's indexes
// and statistics, and no procedures on SQLite, which has none. check
// tpch's columns line up however long its condition names are.
func TestBuildAndCheckMessages(t *testing.T) {
	home := t.TempDir()
	for _, c := range []struct {
		args            []string
		stderr, summary string
	}{
		{[]string{"build", "tpch", "--scale", "0.01"}, "; creating indexes and statistics, then loading tpch_meta (3 rows), which marks",
			`\(load [0-9.]+ (ms|s), indexes and statistics [0-9.]+ (ms|s);`},
		{[]string{"build", "tpcc", "--warehouses", "1"}, "; creating indexes, then loading sledge_meta",
			`\(load [0-9.]+ (ms|s), indexes [0-9.]+ (ms|s);`},
	} {
		u := "sqlite://" + filepath.Join(t.TempDir(), c.args[1]+".db")
		out, stderr, code := runCLI(t, home, append(c.args, "--db", u, "--no-job")...)
		if code != 0 || !strings.Contains(stderr, c.stderr) || !regexp.MustCompile(c.summary).MatchString(out) {
			t.Errorf("%s: exit %d\n%s%s\nwant %q and %q", strings.Join(c.args, " "), code, stderr, out, c.stderr, c.summary)
		}
		if c.args[1] != "tpch" {
			continue
		}
		out, stderr, code = runCLI(t, home, "check", "tpch", "--db", u, "--no-job")
		lines := regexp.MustCompile(`(?m)^  (\S+)( +)(pass|fail|skipped) `).FindAllStringSubmatch(out, -1)
		if code != 0 || len(lines) != 7 {
			t.Fatalf("check tpch: exit %d, %d condition lines: %s%s", code, len(lines), stderr, out)
		}
		for _, l := range lines {
			if col := len(l[1]) + len(l[2]); col != len(lines[0][1])+len(lines[0][2]) {
				t.Errorf("check tpch: %q's status is at column %d, the first's at %d:\n%s", l[1], col, len(lines[0][1])+len(lines[0][2]), out)
			}
		}
	}
}

// Without --progress and with stderr not a terminal, the plain lines of
// the measured interval count its transactions only, and the last one,
// printed at the end, is the summary's total; the summary says the run
// is no TPC-C result (no keying, NOPM far above the ceiling).
func TestPlainProgressEndsWithTheTotal(t *testing.T) {
	path := builtDB(t)
	out, stderr, code := runCLI(t, t.TempDir(), "run", "--db", "sqlite://"+path, "--rampup", "1s", "--duration", "2s", "--no-job")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	last := regexp.MustCompile(`(?m)^measured 2s/2s: ([0-9,]+) transactions measured, [0-9,]+ TPM \(client\)$`).FindStringSubmatch(stderr)
	total := regexp.MustCompile(`(?m)^ +total +([0-9,]+) `).FindStringSubmatch(out)
	if last == nil || total == nil || last[1] != total[1] {
		t.Errorf("last progress line %q, summary total %q: want the same count\n%s\n%s", last, total, stderr, out)
	}
	if !regexp.MustCompile(`(?m)^note: NOPM [0-9,]+ is above TPC-C's ceiling of about 12.86 for 1 warehouse, and the run had no keying or think times \(--keying-thinking\): this is not a TPC-C result and cannot be called tpmC$`).MatchString(out) {
		t.Errorf("summary lacks the TPC-C note:\n%s", out)
	}
}

// sledge run -P: each line is of one phase. Ramp-up lines say so (the
// ramp-up's last part with its length), the measured ones have no
// suffix, and the measured interval's last part, shorter than -P, gets
// the last line with its length.
func TestRunProgressLinesPhases(t *testing.T) {
	path := builtDB(t)
	_, stderr, code := runCLI(t, t.TempDir(), "run", "--db", "sqlite://"+path, "--rampup", "1s", "--duration", "3s", "-P", "2", "--no-job")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	re := regexp.MustCompile(`(?m)^progress: [0-9.]+ s, [0-9.]+ tps, lat [^,]+, \d+ failed, [\d,]+ NOPM( \(([^)]*)\))?$`)
	var notes []string
	for _, m := range re.FindAllStringSubmatch(stderr, -1) {
		notes = append(notes, m[2])
	}
	// ramp-up (1 s, the first tick at 2 s comes after it): its one line,
	// then a line at 2 s into the measured 3 s, then the last 1 s.
	if len(notes) != 3 || !regexp.MustCompile(`^ramp-up, [0-9.]+ s$`).MatchString(notes[0]) || notes[1] != "" ||
		!regexp.MustCompile(`^last [0-9.]+ s$`).MatchString(notes[2]) {
		t.Errorf("line suffixes %q, want (ramp-up, N s), none, (last N s):\n%s", notes, stderr)
	}
}

// An interrupted run's last plain line gives the measured interval's real
// length and the rate over it, even when no line was drawn while it ran
// (the 10-s lines of a run stopped after 3 s of measuring).
func TestPlainProgressLastLineInterrupted(t *testing.T) {
	p := &engine.Plan{VUs: 1, Rampup: time.Second, Duration: 20 * time.Second,
		Mix: []workload.TxType{{Name: "a", Weight: 1}}}
	live := engine.NewLive(p)
	render := runRenderer(p, live)
	t0 := time.Now().Add(-time.Hour)
	live.SetPhase(engine.PhaseRampup, t0)
	live.SetPhase(engine.PhaseMeasure, t0.Add(time.Second))
	live.Add(0, engine.Counts{Completed: 300}, true)
	live.SetPhase(engine.PhaseStop, t0.Add(4*time.Second))
	frac, line := render()
	if want := "measured 3s/20s: 300 transactions measured, 6,000 TPM (client)"; frac != 1 || line != want {
		t.Errorf("last line %v %q; want 1 %q", frac, line, want)
	}
}
