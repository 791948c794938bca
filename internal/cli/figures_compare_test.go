package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A compare without --seed picks one, runs every cell with it and records
// it in its job, so the recorded command line repeats the compare; the
// run's spellings (-c, -T in plain seconds, -P) work in compare too.
func TestCompareRecordsItsSeed(t *testing.T) {
	path := builtDB(t)
	home := t.TempDir()
	html := filepath.Join(home, "r.html")
	stdout, stderr, code := runCLI(t, home, "compare", "--db", "sqlite://"+path, "--mode", "client",
		"-c", "1", "--rampup", "0", "-T", "2", "-P", "1", "--json", "--html", html)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	var out compareOut
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("bad JSON %v: %s", err, stdout)
	}
	if out.Seed == 0 || len(out.Cells) != 1 || out.Cells[0].JobID == nil {
		t.Fatalf("compare: %s", stdout)
	}
	if !regexp.MustCompile(`(?m)^progress: \d+\.\d s, `).MatchString(stderr) {
		t.Errorf("-P 1: no progress lines on stderr:\n%s", stderr)
	}
	seed := strconv.FormatUint(out.Seed, 10)
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "--seed "+seed) {
		t.Errorf("the report's command lacks --seed %s (%v)", seed, err)
	}
	for _, id := range []int64{out.JobID, *out.Cells[0].JobID} {
		r := showJob(t, home, strconv.FormatInt(id, 10))
		spec, err := decodeSpec(r.Spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := spec.Options["seed"]; got != json.Number(seed) {
			t.Errorf("job %d (%s) records --seed %v, the compare ran with %s", id, r.Kind, got, seed)
		}
		if r.Kind == "compare" {
			if dur := spec.Options["duration"]; dur != "2s" {
				t.Errorf("compare job records --duration %v, want 2s", dur)
			}
			text, _, _ := runCLI(t, home, "jobs", "show", strconv.FormatInt(id, 10))
			if !strings.Contains(text, "--seed "+seed) {
				t.Errorf("jobs show: command line lacks --seed %s:\n%s", seed, text)
			}
		}
	}
}

// Every option run and compare share parses to the same value under the
// same spellings.
func TestRunAndCompareShareFlags(t *testing.T) {
	env := &Env{Getenv: func(string) string { return "" }}
	cases := []struct {
		name    string
		args    []string
		flag    string // run's name
		cmpFlag string // compare's name, when it differs
		want    string
	}{
		{"-T plain seconds", []string{"-T", "10"}, "duration", "", "10s"},
		{"--duration plain seconds", []string{"--duration", "10"}, "duration", "", "10s"},
		{"--duration=90s", []string{"--duration=90s"}, "duration", "", "1m30s"},
		{"--duration 5m", []string{"--duration", "5m"}, "duration", "", "5m0s"},
		{"--rampup plain seconds", []string{"--rampup", "5"}, "rampup", "", "5s"},
		{"--rampup 0", []string{"--rampup", "0"}, "rampup", "", "0s"},
		{"-c", []string{"-c", "4"}, "vus", "", "4"},
		{"--vus", []string{"--vus", "8"}, "vus", "", "8"},
		{"-t", []string{"-t", "100"}, "iterations", "", "100"},
		{"--iterations", []string{"--iterations", "7"}, "iterations", "", "7"},
		{"-P", []string{"-P", "5"}, "progress", "", "5"},
		{"--progress", []string{"--progress", "2"}, "progress", "", "2"},
		{"--seed", []string{"--seed", "42"}, "seed", "", "42"},
		{"--random-seed", []string{"--random-seed", "42"}, "random-seed", "", "42"},
		{"--mode", []string{"--mode", "client"}, "mode", "modes", "client"},
		{"--all-warehouses", []string{"--all-warehouses"}, "all-warehouses", "", "true"},
		{"--db", []string{"--db", "sqlite:///tmp/x.db"}, "db", "", "sqlite:///tmp/x.db"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, cmd := range []string{"run", "compare"} {
				var fs = newRun(env).Flags()
				name := c.flag
				if cmd == "compare" {
					fs = newCompare(env).Flags()
					if c.cmpFlag != "" {
						name = c.cmpFlag
					}
				}
				if err := fs.Parse(c.args); err != nil {
					t.Fatalf("%s %v: %v", cmd, c.args, err)
				}
				f := fs.Lookup(name)
				if f == nil {
					t.Fatalf("%s has no --%s", cmd, name)
				}
				if got := f.Value.String(); got != c.want {
					t.Errorf("%s %v: --%s is %q, want %q", cmd, c.args, name, got, c.want)
				}
			}
		})
	}
	// The same spelling, and the same pgbench name in the help.
	run, cmp := newRun(env).Flags(), newCompare(env).Flags()
	pg := regexp.MustCompile(`\(pgbench -\w\)`)
	for _, n := range []string{"duration", "iterations", "vus", "progress", "rampup", "seed", "db", "json"} {
		a, b := run.Lookup(n), cmp.Lookup(n)
		if a.Shorthand != b.Shorthand || pg.FindString(a.Usage) != pg.FindString(b.Usage) {
			t.Errorf("--%s: run -%s %q, compare -%s %q", n, a.Shorthand, a.Usage, b.Shorthand, b.Usage)
		}
	}
}

// The refusals run makes of the shared options, compare makes too.
func TestCompareRefusesAsRunDoes(t *testing.T) {
	path := builtDB(t)
	lite := "sqlite://" + path
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"duration and iterations", []string{"-T", "10", "-t", "5"}, "give either -T/--duration or -t/--iterations, not both"},
		{"seed and random-seed", []string{"--seed", "1", "--random-seed", "2"}, "give either --seed or --random-seed, not both"},
		{"bad random-seed", []string{"--random-seed", "soon"}, `--random-seed "soon": want a whole number, time or rand`},
		{"negative progress", []string{"-P", "-1"}, "--progress must not be negative"},
		{"bad duration", []string{"-T", "ten"}, "want a duration such as 30 (seconds), 90s or 5m"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, cmd := range []string{"run", "compare"} {
				args := append([]string{cmd, "--db", lite, "--no-job"}, c.args...)
				_, stderr, code := runCLI(t, t.TempDir(), args...)
				if code != ExitUsage || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
					t.Errorf("%s %v: exit %d, want %d and one line saying %q: %q", cmd, c.args, code, ExitUsage, c.want, stderr)
				}
			}
		})
	}
}

// --random-seed time: the job records the seed it came to as --seed, so
// its command line repeats the run or compare (and is accepted).
func TestRandomSeedIsRecordedAsSeed(t *testing.T) {
	path := builtDB(t)
	for _, cmd := range []string{"run", "compare"} {
		t.Run(cmd, func(t *testing.T) {
			home := t.TempDir()
			stdout, stderr, code := runCLI(t, home, cmd, "--db", "sqlite://"+path, "--mode", "client", "-c", "1", "-t", "5", "--random-seed", "time", "--json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var out struct {
				Seed  uint64 `json:"seed"`
				JobID int64  `json:"job_id"`
			}
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatal(err)
			}
			id := "1"
			if out.JobID != 0 {
				id = strconv.FormatInt(out.JobID, 10)
			}
			text, _, _ := runCLI(t, home, "jobs", "show", id)
			line := regexp.MustCompile(`(?m)^command   sledge (.*)$`).FindStringSubmatch(text)
			if line == nil {
				t.Fatalf("no command line:\n%s", text)
			}
			if !strings.Contains(line[1], "--seed "+strconv.FormatUint(out.Seed, 10)) || strings.Contains(line[1], "--random-seed") {
				t.Errorf("command line %q does not repeat seed %d", line[1], out.Seed)
			}
		})
	}
}
