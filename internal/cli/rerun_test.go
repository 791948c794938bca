package cli

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/runner"
)

// jobs rerun runs a stored spec again as a new job: the options that were
// given, the seed the first run picked and the mode it resolved, and the
// same summary keys; a run with one VU and a fixed seed over the same
// iterations completes the same transactions per type.
func TestJobsRerunRepeatsTheSpec(t *testing.T) {
	home := t.TempDir()
	url := "sqlite://" + builtDB(t)
	_, stderr, code := runCLI(t, home, "run", "--db", url, "--iterations", "40", "--vus", "1", "--json",
		"--threshold", "tpm>=1", "--threshold", "p99(neword)<60000ms")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	first := listJobs(t, home).Jobs[0]
	stdout, stderr, code := runCLI(t, home, "jobs", "rerun", strconv.FormatInt(first.ID, 10), "--json")
	if code != 0 {
		t.Fatalf("jobs rerun: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "rerunning job "+strconv.FormatInt(first.ID, 10)) {
		t.Errorf("rerun did not say what it runs: %s", stderr)
	}
	var sum runSummary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("rerun --json: %v: %s", err, stdout)
	}
	l := listJobs(t, home).Jobs
	if len(l) != 2 || l[0].ID == first.ID {
		t.Fatalf("want a second job, have %+v", l)
	}
	a, b := showJob(t, home, strconv.FormatInt(first.ID, 10)), showJob(t, home, strconv.FormatInt(l[0].ID, 10))
	sa, err := runner.ParseSpec(a.Spec)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := runner.ParseSpec(b.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if sa.Version != runner.SpecVersion || sb.Version != runner.SpecVersion {
		t.Errorf("spec versions %d, %d: want %d", sa.Version, sb.Version, runner.SpecVersion)
	}
	for _, k := range []string{"seed", "mode", "iterations", "vus", "threshold"} {
		if fmt.Sprint(sa.Options[k]) != fmt.Sprint(sb.Options[k]) {
			t.Errorf("option %s: first %v, rerun %v", k, sa.Options[k], sb.Options[k])
		}
	}
	// A repeated flag is a list in the spec, each value its own flag again.
	if th, ok := sb.Options["threshold"].([]any); !ok || len(th) != 2 || th[0] != "tpm>=1" || th[1] != "p99(neword)<60000ms" {
		t.Errorf("threshold in the rerun's spec: %#v", sb.Options["threshold"])
	}
	if len(sum.Thresholds) != 2 || sum.Thresholds[1].Threshold != "p99(neword)<60000ms" || !sum.Thresholds[1].OK {
		t.Errorf("the rerun did not judge both thresholds: %+v", sum.Thresholds)
	}
	// jobs show's command line can be pasted into a shell: quoted where a
	// shell would read the value otherwise.
	text, _, _ := runCLI(t, home, "jobs", "show", strconv.FormatInt(first.ID, 10))
	if !strings.Contains(text, "--threshold 'tpm>=1' --threshold 'p99(neword)<60000ms'") {
		t.Errorf("jobs show's command line:\n%s", text)
	}
	if sa.Kind != "run" || sb.Kind != "run" || sa.DB != sb.DB {
		t.Errorf("kind/db: %s %s / %s %s", sa.Kind, sa.DB, sb.Kind, sb.DB)
	}
	var ra, rb runSummary
	if err := json.Unmarshal(a.Summary, &ra); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b.Summary, &rb); err != nil {
		t.Fatal(err)
	}
	if len(ra.PerType) == 0 {
		t.Fatalf("first run has no per-type counts: %s", a.Summary)
	}
	for name, x := range ra.PerType {
		if y := rb.PerType[name]; x.Count != y.Count {
			t.Errorf("%s: first run %d, rerun %d: the same seed draws the same mix", name, x.Count, y.Count)
		}
	}

	// A job that does not exist, and one whose id is not a number.
	if _, stderr, code := runCLI(t, home, "jobs", "rerun", "999"); code != ExitFailure || !strings.Contains(stderr, "no job 999") {
		t.Errorf("rerun 999: exit %d: %s", code, stderr)
	}
	if _, _, code := runCLI(t, home, "jobs", "rerun", "x"); code != ExitUsage {
		t.Errorf("rerun x: exit %d, want %d", code, ExitUsage)
	}
}
