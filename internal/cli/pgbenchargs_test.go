package cli

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// pgbench's command line read with getopt_long's rules and pgbench 15's
// checks: what each command line means, or the one error it gets.
func TestReadPgbench(t *testing.T) {
	// pgbench reads a script file when it meets -f.
	script := filepath.Join(t.TempDir(), "x.sql")
	if err := os.WriteFile(script, []byte("SELECT 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want func(c *pgbConfig) bool
		err  string // the error's message; hint: pgbench's "Try --help" follows
		hint bool
	}{
		{"defaults", nil, func(c *pgbConfig) bool {
			return c.clients == 1 && c.threads == 1 && c.txns == 10 && c.duration == 0 && c.protocol == "simple" &&
				c.maxTries == 1 && reflect.DeepEqual(c.scripts, []pgbScript{{builtin: true, spec: "tpcb-like"}})
		}, "", false},
		{"clustered", []string{"-nS", "-c4", "-j", "2"}, func(c *pgbConfig) bool {
			return c.clients == 4 && c.threads == 2 && c.scripts[0].spec == "select-only"
		}, "", false},
		{"cluster ending with an argument", []string{"-Sc", "3"}, func(c *pgbConfig) bool {
			return c.clients == 3 && c.scripts[0].spec == "select-only"
		}, "", false},
		{"long with =", []string{"--client=4", "--transactions=7", "--protocol=prepared"}, func(c *pgbConfig) bool {
			return c.clients == 4 && c.txns == 7 && c.protocol == "prepared"
		}, "", false},
		{"long with a separate value", []string{"--client", "4", "--time", "2"}, func(c *pgbConfig) bool {
			return c.clients == 4 && c.duration == 2 && c.txns == 0
		}, "", false},
		{"unique prefix", []string{"--cli=5", "--trans", "3", "--report"}, func(c *pgbConfig) bool {
			return c.clients == 5 && c.txns == 3 && c.perCommand
		}, "", false},
		{"--no is pgbench's --no-vacuum", []string{"--no", "--db=sqlite:///x.db"}, func(c *pgbConfig) bool {
			return c.db == "sqlite:///x.db" && !c.noJob
		}, "", false},
		{"report-latencies is -r", []string{"--report-latencies"}, func(c *pgbConfig) bool { return c.perCommand }, "", false},
		{"-N", []string{"-N"}, func(c *pgbConfig) bool { return c.scripts[0].spec == "simple-update" }, "", false},
		{"scripts in order", []string{"-b", "se@2", "-f", script, "-S"}, func(c *pgbConfig) bool {
			return reflect.DeepEqual(c.scripts, []pgbScript{{true, "se@2"}, {false, script}, {true, "select-only"}})
		}, "", false},
		{"dbname anywhere", []string{"-c", "2", "mydb", "-t", "3"}, func(c *pgbConfig) bool {
			return c.dbname == "mydb" && c.clients == 2 && c.txns == 3
		}, "", false},
		{"-- ends options", []string{"-t", "1", "--", "-db"}, func(c *pgbConfig) bool { return c.dbname == "-db" }, "", false},
		{"defines", []string{"-D", "a=1", "--define=b=2"}, func(c *pgbConfig) bool {
			return reflect.DeepEqual(c.defines, []string{"a=1", "b=2"})
		}, "", false},
		{"libpq options", []string{"-h", "/tmp/s", "-p", "5433", "-U", "bob", "-d"}, func(c *pgbConfig) bool {
			return c.host == "/tmp/s" && c.port == "5433" && c.user == "bob"
		}, "", false},
		{"init", []string{"-i", "-s", "3", "-n"}, func(c *pgbConfig) bool { return c.init && c.scale == 3 }, "", false},
		{"max-tries 0 with -T", []string{"--max-tries=0", "-T", "1"}, func(c *pgbConfig) bool { return c.maxTries == 0 }, "", false},
		{"-b list", []string{"-c", "2", "-b", "list"}, func(c *pgbConfig) bool { return c.list }, "", false},
		{"help first", []string{"--help", "-x"}, func(c *pgbConfig) bool { return c.help }, "", false},
		{"-? first", []string{"-?"}, func(c *pgbConfig) bool { return c.help }, "", false},
		{"-V first", []string{"-V"}, func(c *pgbConfig) bool { return c.version }, "", false},
		{"--version first", []string{"--version"}, func(c *pgbConfig) bool { return c.version }, "", false},

		{"-V later", []string{"-c", "2", "-V"}, nil, "invalid option -- 'V'", true},
		{"unknown short", []string{"-x"}, nil, "invalid option -- 'x'", true},
		{"unknown in a cluster", []string{"-nx"}, nil, "invalid option -- 'x'", true},
		{"unknown long", []string{"--foo"}, nil, "unrecognized option '--foo'", true},
		{"missing short argument", []string{"-c"}, nil, "option requires an argument -- 'c'", true},
		{"missing long argument", []string{"--client"}, nil, "option '--client' requires an argument", true},
		{"argument to a flag", []string{"--foreign-keys=1"}, nil, "option '--foreign-keys' doesn't allow an argument", true},
		{"ambiguous prefix", []string{"--c=3"}, nil, "option '--c=3' is ambiguous; possibilities: '--client' '--connect'", true},
		{"two dbnames", []string{"db1", "db2"}, nil, `too many command-line arguments (first is "db2")`, true},
		{"zero clients", []string{"-c", "0"}, nil, "-c/--clients must be in range 1..2147483647", false},
		{"negative clients", []string{"-c", "-1"}, nil, "-c/--clients must be in range 1..2147483647", false},
		{"clients not a number", []string{"-c", "abc"}, nil, `invalid value "abc" for option -c/--clients`, false},
		{"zero jobs", []string{"-j", "0"}, nil, "-j/--jobs must be in range 1..2147483647", false},
		{"zero time", []string{"-T", "0"}, nil, "-T/--time must be in range 1..2147483647", false},
		{"zero transactions", []string{"-t", "0"}, nil, "-t/--transactions must be in range 1..2147483647", false},
		{"zero scale", []string{"-s", "0"}, nil, "-s/--scale must be in range 1..2147483647", false},
		{"-t and -T", []string{"-t", "5", "-T", "5"}, nil, "specify either a number of transactions (-t) or a duration (-T), not both", false},
		{"rate 0", []string{"--rate=0"}, nil, `invalid rate limit: "0"`, false},
		{"latency limit 0", []string{"--latency-limit=0"}, nil, `invalid latency limit: "0"`, false},
		{"progress 0", []string{"--progress=0"}, nil, "-P/--progress must be in range 1..2147483647", false},
		{"bad protocol", []string{"-M", "fast"}, nil, `invalid query mode (-M): "fast"`, false},
		{"bad define", []string{"-D", "foo"}, nil, `invalid variable definition: "foo"`, false},
		{"unlimited tries with -t", []string{"--max-tries=0"}, nil, "an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)", false},
		{"negative tries", []string{"--max-tries=-1"}, nil, `invalid number of maximum tries: "-1"`, false},
		{"bench option with -i", []string{"-i", "-S"}, nil, "some of the specified options cannot be used in initialization (-i) mode", false},
		{"init option without -i", []string{"-F", "50"}, nil, "some of the specified options cannot be used in benchmarking mode", false},
		{"fillfactor range", []string{"-i", "-F", "5"}, nil, "-F/--fillfactor must be in range 10..100", false},
		{"partitions range", []string{"-i", "--partitions=-1"}, nil, "--partitions must be in range 0..2147483647", false},
		{"partition method", []string{"-i", "--partition-method=x"}, nil, `invalid partition method, expecting "range" or "hash", got: "x"`, false},
		{"--progress-timestamp without -P", []string{"--progress-timestamp"}, nil, "--progress-timestamp is allowed only under --progress", false},
		{"unknown init step", []string{"-i", "-I", "dtx"}, nil, `unrecognized initialization step "x"`, false},
		{"no init steps", []string{"-i", "-I", ""}, nil, "no initialization steps specified", false},
		{"method without partitions", []string{"-i", "--partition-method=hash"}, nil, "--partition-method requires greater than zero --partitions", false},
		{"weight out of range", []string{"-b", "si@4294967296"}, nil, "weight specification out of range (0 .. 2147483647): 4294967296", false},
		{"weight not a number", []string{"-f", "x.sql@w"}, nil, "invalid weight specification: @w", false},
		{"sampling rate above 1", []string{"-l", "--sampling-rate=2"}, nil, `invalid sampling rate: "2"`, false},
		{"aggregate interval 0", []string{"-l", "--aggregate-interval=0"}, nil, "--aggregate-interval must be in range 1..2147483647", false},
		{"bad random seed", []string{"--random-seed=x"}, nil, `unrecognized random seed option "x"`, false},
		{"weight beyond strtol", []string{"-b", "si@99999999999999999999"}, nil, "invalid weight specification: @99999999999999999999", false},
		{"zero total weight", []string{"-b", "se@0", "-b", "si@0"}, nil, "total script weight must not be zero", false},
		{"a builtin's weight of zero among others", []string{"-b", "se@0", "-N"}, func(c *pgbConfig) bool { return len(c.scripts) == 2 }, "", false},
		{"aggregation with -l", []string{"-l", "--aggregate-interval=2", "-T", "4"}, func(c *pgbConfig) bool { return len(c.logOpts) == 2 }, "", false},
		{"log prefix without -l", []string{"--log-prefix=x"}, nil, "log file prefix (--log-prefix) is allowed only when logging transactions (-l)", false},
		{"aggregation without -l", []string{"--aggregate-interval=3"}, nil, "log aggregation is allowed only when actually logging transactions", false},
		{"benchmarking options of issue 16", []string{"-C", "--failures-detailed", "--verbose-errors", "-P", "1", "--progress-timestamp"}, func(c *pgbConfig) bool {
			return c.connect && c.detailed && c.verbose && c.timestamp && c.progress == 1
		}, "", false},
		{"init steps in any order, repeated, with spaces", []string{"-i", "-I", "tg dvpfd"}, func(c *pgbConfig) bool {
			return c.init && len(c.initOpts) == 1 && c.initOpts[0].value == "tg dvpfd"
		}, "", false},
		{"128 scripts", strings.Fields(strings.Repeat("-S ", 128)), func(c *pgbConfig) bool { return len(c.scripts) == 128 }, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := readPgbench(tc.args)
			if tc.err != "" {
				var ue *pgbUsageError
				if !errors.As(err, &ue) {
					t.Fatalf("%q: %v, want the error %q", tc.args, err, tc.err)
				}
				if ue.msg != tc.err || ue.hint != tc.hint {
					t.Errorf("%q: error %q (hint %v), want %q (hint %v)", tc.args, ue.msg, ue.hint, tc.err, tc.hint)
				}
				return
			}
			if err != nil {
				t.Fatalf("%q: %v", tc.args, err)
			}
			if !tc.want(c) {
				t.Errorf("%q: %+v", tc.args, c)
			}
		})
	}
}

// -I with several loads: one build per load, cut at the last d before
// each later load.
func TestPgbLoadSegments(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"dtgvp", []string{"dtgvp"}},
		{"tgdvpf", []string{"tgdvpf"}},
		{"vp", []string{"vp"}},
		{"dtgvpdtgvp", []string{"dtgvp", "dtgvp"}},
		{"dtgvdpdtGp", []string{"dtgvdp", "dtGp"}},
		{"dtgg", []string{"dtg", "g"}},
		{"dtgdtgdtg", []string{"dtg", "dtg", "dtg"}},
	} {
		if got := pgbLoadSegments(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q, want %q", c.in, got, c.want)
		}
	}
}

// Every long option of pgbench 15's --help is known, with its letter.
func TestPgbenchKnowsEveryOption(t *testing.T) {
	for _, o := range []string{"initialize", "init-steps", "fillfactor", "no-vacuum", "quiet", "scale", "foreign-keys",
		"index-tablespace", "partition-method", "partitions", "tablespace", "unlogged-tables", "builtin", "file",
		"skip-some-updates", "select-only", "client", "connect", "define", "jobs", "log", "latency-limit", "protocol",
		"progress", "report-per-command", "rate", "transactions", "time", "vacuum-all", "aggregate-interval",
		"failures-detailed", "log-prefix", "max-tries", "progress-timestamp", "random-seed", "sampling-rate",
		"show-script", "verbose-errors", "debug", "host", "port", "username"} {
		if _, err := lookupLong(o, "--"+o); err != nil {
			t.Errorf("--%s: %v", o, err)
		}
	}
}

// The URL from libpq's options and environment.
func TestPgbenchURL(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		c    pgbConfig
		env  map[string]string
		want string
	}{
		{pgbConfig{}, map[string]string{"USER": "ann"}, "postgres://ann@/ann"},
		{pgbConfig{dbname: "bench"}, map[string]string{"PGHOST": "/run/pg", "PGPORT": "5433", "PGUSER": "bob", "PGPASSWORD": "p@ss/w"},
			"postgres://bob:p%40ss%2Fw@/bench?host=%2Frun%2Fpg&port=5433"},
		{pgbConfig{host: "db.example", port: "6432", user: "carl"}, map[string]string{"PGDATABASE": "x", "PGHOST": "/ignored"},
			"postgres://carl@db.example:6432/x"},
		{pgbConfig{db: "sqlite:///tmp/a.db"}, map[string]string{"PGHOST": "/ignored"}, "sqlite:///tmp/a.db"},
	}
	for _, tc := range cases {
		got, err := tc.c.pgbURL(env(tc.env))
		if err != nil || got != tc.want {
			t.Errorf("%+v with %v: %q, %v; want %q", tc.c, tc.env, got, err, tc.want)
		}
	}
	if _, err := (&pgbConfig{db: "sqlite:///a.db", host: "h"}).pgbURL(env(nil)); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("--db with -h: %v", err)
	}
	if _, err := (&pgbConfig{port: "x"}).pgbURL(env(nil)); err == nil {
		t.Error("a bad port is taken")
	}
}
