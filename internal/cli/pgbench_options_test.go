package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// pgbenchBin is PostgreSQL 15's pgbench, which the option cases also run.
const pgbenchBin = "/usr/bin/pgbench"

// The command-line errors pgbench 15's own no-server suite checks (bad
// values, options of the other mode, conflicts, unknown options, too many
// arguments), plus --help and -V: sledge pgbench exits as pgbench does,
// with pgbench's message. Each command line also goes through the real
// pgbench, which must exit with the same code before it tries to connect
// anywhere, and print the same stderr apart from the program's name
// (--help and -V excepted: sledge says what it is).
func TestPgbenchOptionErrors(t *testing.T) {
	many := strings.Fields(strings.Repeat("-S ", pgbMaxScripts+1))
	cases := []struct {
		name string
		args []string
		code int
		// stderr (sledge's), one pattern per line of meaning, in order;
		// pgb: the pattern pgbench's stderr matches (its own words).
		stderr []string
		pgb    string
	}{
		{"unknown long option", []string{"-h", "home", "-p", "5432", "-U", "calvin", "-d", "--bad-option"}, 1,
			[]string{`unrecognized option '--bad-option'`, `hint: Try "sledge pgbench --help" for more information`}, `--help.*more information`},
		{"unknown short option", []string{"-x"}, 1, []string{`invalid option -- 'x'`, `hint: Try`}, `invalid option -- 'x'`},
		{"missing argument", []string{"-i", "-I"}, 1, []string{`option requires an argument -- 'I'`, `hint: Try`}, `requires an argument`},
		{"no such file", []string{"-f", "no-such-file"}, 1, []string{`could not open file "no-such-file": No such file or directory`}, `could not open file "no-such-file"`},
		{"a directory for a file", []string{"-f", "."}, 1, []string{`could not read file "\.": Is a directory`}, `could not read file "\."`},
		{"no such builtin", []string{"-b", "no-such-builtin"}, 1, []string{`no builtin script found for name "no-such-builtin"`}, `no builtin script .* "no-such-builtin"`},
		{"weight not a number", []string{"--builtin=select-only@one"}, 1, []string{`invalid weight specification: @one`}, `invalid weight specification: @one`},
		{"negative weight", []string{"-b", "select-only@-1"}, 1, []string{`weight specification out of range \(0 \.\. 2147483647\): -1`}, `out of range .*: -1`},
		{"zero total weight", []string{"-b", "se@0", "-b", "si@0", "-b", "tpcb@0"}, 1, []string{`total script weight must not be zero`}, `weight must not be zero`},
		{"too many scripts", many, 1, []string{`at most 128 SQL scripts are allowed`}, `at most 128 SQL scripts`},
		{"ambiguous builtin", []string{"-b", "s"}, 1, []string{`ambiguous builtin name: 2 builtin scripts found for prefix "s"`}, `ambiguous`},
		{"clients not a number", []string{"-c", "three"}, 1, []string{`invalid value "three" for option -c/--clients`}, `invalid value "three" for option -c/--clients`},
		{"jobs not a number", []string{"-j", "eleven"}, 1, []string{`invalid value "eleven" for option -j/--jobs`}, `-j/--jobs`},
		{"scale not a number", []string{"-i", "-s", "two"}, 1, []string{`invalid value "two" for option -s/--scale`}, `-s/--scale`},
		{"transactions not a number", []string{"-t", "zil"}, 1, []string{`invalid value "zil" for option -t/--transactions`}, `-t/--transactions`},
		{"duration not a number", []string{"-T", "ten"}, 1, []string{`invalid value "ten" for option -T/--time`}, `-T/--time`},
		{"-t and -T", []string{"-N", "-l", "--aggregate-interval=5", "--log-prefix=notused", "-t", "1000", "-T", "1"}, 1,
			[]string{`specify either a number of transactions \(-t\) or a duration \(-T\), not both`}, `specify either`},
		{"-T and -t", []string{"-P", "1", "--progress-timestamp", "-l", "--sampling-rate=0.001", "-T", "10", "-t", "1000"}, 1,
			[]string{`specify either`}, `specify either`},
		{"bad variable", []string{"--define", "foobla"}, 1, []string{`invalid variable definition: "foobla"`}, `invalid variable definition`},
		{"fillfactor out of range", []string{"-F", "1"}, 1, []string{`-F/--fillfactor must be in range 10\.\.100`}, `-F/--fillfactor must be in range`},
		{"bad query mode", []string{"-M", "no-such-mode"}, 1, []string{`invalid query mode \(-M\): "no-such-mode"`}, `invalid query mode`},
		{"progress 0", []string{"--progress=0"}, 1, []string{`-P/--progress must be in range 1\.\.`}, `-P/--progress must be in range`},
		{"rate 0", []string{"--rate=0.0"}, 1, []string{`invalid rate limit: "0\.0"`}, `invalid rate limit`},
		{"latency limit 0", []string{"--latency-limit=0.0"}, 1, []string{`invalid latency limit: "0\.0"`}, `invalid latency limit`},
		{"sampling rate 0", []string{"--sampling-rate=0"}, 1, []string{`invalid sampling rate: "0"`}, `invalid sampling rate`},
		{"sampling rate above 1", []string{"-l", "--sampling-rate=1.5"}, 1, []string{`invalid sampling rate: "1\.5"`}, `invalid sampling rate`},
		{"negative aggregate interval", []string{"--aggregate-interval=-3"}, 1, []string{`--aggregate-interval must be in range 1\.\.`}, `--aggregate-interval must be in range`},
		{"-i with a benchmarking option", []string{"-i", "-S"}, 1, []string{`cannot be used in initialization \(-i\) mode`}, `cannot be used in initialization`},
		{"-i with -C", []string{"-i", "-C"}, 1, []string{`cannot be used in initialization \(-i\) mode`}, `cannot be used in initialization`},
		{"-i with --failures-detailed", []string{"-i", "--failures-detailed"}, 1, []string{`cannot be used in initialization`}, `cannot be used in initialization`},
		{"-i with --verbose-errors", []string{"--verbose-errors", "-i"}, 1, []string{`cannot be used in initialization`}, `cannot be used in initialization`},
		{"-i with --progress-timestamp", []string{"-i", "--progress-timestamp"}, 1, []string{`cannot be used in initialization`}, `cannot be used in initialization`},
		{"an init option when benchmarking", []string{"-S", "-F", "90"}, 1, []string{`cannot be used in benchmarking mode`}, `cannot be used in benchmarking`},
		{"-I without -i", []string{"-I", "dtg"}, 1, []string{`cannot be used in benchmarking mode`}, `cannot be used in benchmarking mode`},
		{"--progress-timestamp without -P", []string{"--progress-timestamp"}, 1, []string{`--progress-timestamp is allowed only under --progress`}, `allowed only under`},
		{"unknown init step", []string{"-i", "-I", "dta"}, 1,
			[]string{`unrecognized initialization step "a"`, `detail: Allowed step characters are: "dtgGvpf"\.`}, `unrecognized initialization step`},
		{"no init steps", []string{"-i", "-I", ""}, 1, []string{`no initialization steps specified`}, `no initialization steps`},
		{"bad random seed", []string{"--random-seed=one"}, 1,
			[]string{`unrecognized random seed option "one"`, `detail: Expecting an unsigned integer, "time" or "rand"`,
				`error: error while setting random seed from --random-seed option`}, `unrecognized random seed option "one"`},
		{"bad partition method", []string{"-i", "--partition-method=BAD"}, 1,
			[]string{`invalid partition method, expecting "range" or "hash", got: "BAD"`}, `"range".*"hash".*"BAD"`},
		{"negative partitions", []string{"-i", "--partitions", "-1"}, 1, []string{`--partitions must be in range 0\.\.`}, `--partitions must be in range`},
		{"partition method without partitions", []string{"-i", "--partition-method=hash"}, 1,
			[]string{`--partition-method requires greater than zero --partitions`}, `requires greater than zero --partitions`},
		{"partition method with 0 partitions", []string{"-i", "--partitions=0", "--partition-method=range"}, 1,
			[]string{`--partition-method requires greater than zero --partitions`}, `requires greater than zero --partitions`},
		{"negative max tries", []string{"--max-tries", "-10"}, 1, []string{`invalid number of maximum tries: "-10"`}, `invalid number of maximum tries: "-10"`},
		{"unlimited tries without -T or -L", []string{"--max-tries", "0"}, 1,
			[]string{`an unlimited number of transaction tries can only be used with --latency-limit or a duration`}, `unlimited number of transaction tries`},
		{"sampling without -l", []string{"--sampling-rate=0.01"}, 1, []string{`log sampling \(--sampling-rate\) is allowed only when logging transactions \(-l\)`}, `log sampling .* only when`},
		{"sampling and aggregation", []string{"-l", "--sampling-rate=0.1", "--aggregate-interval=3"}, 1,
			[]string{`sampling .* aggregation .* cannot be used at the same time`}, `cannot be used at the same time`},
		{"aggregation without -l", []string{"--aggregate-interval=3"}, 1, []string{`aggregation .* only when`}, `aggregation .* only when`},
		{"log prefix without -l", []string{"--log-prefix=x"}, 1, []string{`prefix .* only when`}, `prefix .* only when`},
		{"aggregation longer than the run", []string{"-l", "-T", "1", "--aggregate-interval=3"}, 1, []string{`number of seconds for aggregation \(3\) must not be higher than test duration \(1\)`}, `not be higher`},
		{"duration not a multiple of aggregation", []string{"-l", "-T", "5", "--aggregate-interval=3"}, 1, []string{`duration \(5\) must be a multiple of aggregation interval \(3\)`}, `multiple`},
		{"too many arguments", []string{"a", "b"}, 1, []string{`too many command-line arguments \(first is "b"\)`, `hint: Try`}, `too many command-line arguments`},
		{"ambiguous long option", []string{"--pro", "1"}, 1, []string{`option '--pro' is ambiguous`, `hint: Try`}, `ambiguous`},
		{"--help", []string{"--help"}, 0, nil, ``},
		{"-V", []string{"-V"}, 0, nil, ``},
		{"-b list", []string{"-b", "list"}, 0, []string{`Available builtin scripts:`, `tpcb-like`, `simple-update`, `select-only`}, `Available builtin scripts`},
		{"--show-script", []string{"--show-script", "se"}, 0, []string{`select-only: `, `SELECT abalance FROM pgbench_accounts WHERE`}, `select-only: `},
	}
	_, pgbErr := os.Stat(pgbenchBin)
	dir := t.TempDir() // the relative file names resolve here, for both
	// Nothing must be reachable: a case that got as far as connecting is
	// not an option error.
	vars := map[string]string{"PGHOST": filepath.Join(dir, "nosuchdir"), "PGPORT": "5432", "PGUSER": "nobody", "PGDATABASE": "nodb"}
	connecting := regexp.MustCompile(`(?i)connect|cannot reach|socket`)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := sledgePgbench(t, dir, vars, tc.args...)
			if code != tc.code {
				t.Fatalf("sledge pgbench %q: exit %d, want %d\nstderr:\n%s", tc.args, code, tc.code, stderr)
			}
			if connecting.MatchString(stderr) {
				t.Errorf("sledge pgbench %q tried to connect:\n%s", tc.args, stderr)
			}
			if tc.code != 0 && stdout != "" {
				t.Errorf("sledge pgbench %q: stdout %q, want nothing (pgbench prints errors on stderr)", tc.args, stdout)
			}
			rest := stderr
			for _, p := range tc.stderr {
				loc := regexp.MustCompile(p).FindStringIndex(rest)
				if loc == nil {
					t.Fatalf("sledge pgbench %q: stderr lacks %q (in order):\n%s", tc.args, p, stderr)
				}
				rest = rest[loc[1]:]
			}
			if tc.code != 0 && !strings.HasPrefix(stderr, "sledge pgbench: ") {
				t.Errorf("sledge pgbench %q: want pgbench's error line first:\n%s", tc.args, stderr)
			}
			switch tc.name {
			case "--help":
				for _, p := range []string{`Usage:`, `Initialization options:`, `Common options:`} {
					if !strings.Contains(stdout, p) {
						t.Errorf("--help lacks %q", p)
					}
				}
			case "-V":
				if !regexp.MustCompile(`^pgbench \(sledge\) `).MatchString(stdout) {
					t.Errorf("-V: %q", stdout)
				}
			}

			if pgbErr != nil {
				t.Logf("no %s: sledge's side only", pgbenchBin)
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, pgbenchBin, tc.args...)
			cmd.Dir = dir
			cmd.Env = []string{"PATH=/usr/bin:/bin"}
			for k, v := range vars {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			var perr bytes.Buffer
			cmd.Stderr = &perr
			err := cmd.Run()
			pcode := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				pcode = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("pgbench %q: %v", tc.args, err)
			}
			if pcode != code {
				t.Errorf("%q: pgbench exits %d, sledge pgbench %d\npgbench's stderr:\n%s", tc.args, pcode, code, perr.String())
			}
			if connecting.MatchString(perr.String()) {
				t.Errorf("pgbench %q got as far as connecting: not an option error:\n%s", tc.args, perr.String())
			}
			if tc.pgb != "" && !regexp.MustCompile(tc.pgb).MatchString(perr.String()) {
				t.Errorf("pgbench %q: stderr lacks %q:\n%s", tc.args, tc.pgb, perr.String())
			}
			if tc.name != "--help" && tc.name != "-V" {
				pgbCompareStderr(t, tc.args, stderr, perr.String())
			}
		})
	}
}
