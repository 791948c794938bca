package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/testdb"
)

// badPW is the password of every URL in the catalogue: it must never show.
const badPW = "pw-canary-7f3a9c"

// badCase is one refused input. In args and env values, {w} is the case's
// own work directory (empty at the start unless setup fills it), {s} the
// directory of the shared script files and {port} a loopback port nobody
// listens on.
type badCase struct {
	name  string
	args  []string
	env   map[string]string // over the defaults: XDG_DATA_HOME={w}/xdg, HOME={w}/home; "" unsets
	code  int
	want  string // in the one "sledge: " line
	warn  string // a "sledge: warning: " line that must come too, else none may
	setup func(t *testing.T, w string)
	// absent are paths (with {w}) that must not exist afterwards: the
	// database files of refused builds.
	absent []string
}

// The bad-input catalogue (issue 6, item 5): every case is one line on
// stderr starting with "sledge: " that says what is wrong, its exit status
// (2: bad input on the command line; 1: the command ran and failed), no
// stack trace, nothing on stdout, no password, and nothing half-written:
// input refused before any work (exit 2) creates no file at all (no job
// store, no database), a failure after it (exit 1) leaves only finished
// jobs, marked failed with the same message.
func TestBadInputCatalogue(t *testing.T) {
	scripts := t.TempDir()
	for name, text := range map[string]string{
		"ok.sql":       "\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
		"empty.sql":    "",
		"syntax.sql":   "\\set x 1 +\nSELECT 1;\n",
		"unknown.sql":  "\\bogus 1\n",
		"else.sql":     "\\else\nSELECT 1;\n",
		"noendif.sql":  "\\if 1\nSELECT 1;\n",
		"compound.sql": "SELECT 1 \\; SELECT 2;\n",
		"pipeline.sql": "\\startpipeline\nSELECT 1;\n\\endpipeline\n",
		"pgset.sql":    "\\startpipeline\nSELECT 1 AS a \\gset\n\\endpipeline\n",
		"sleep.sql":    "\\sleep 1 weeks\n",
		"func.sql":     "\\set x nosuch(1)\n",
		"quote.sql":    "SELECT 'abc\n",
	} {
		if err := os.WriteFile(filepath.Join(scripts, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	port, err := testdb.FreePort() // nobody listens there: connection refused
	if err != nil {
		t.Fatal(err)
	}
	pg := "postgres://sledge:" + badPW + "@127.0.0.1:{port}/bad"
	my := "mysql://root:" + badPW + "@127.0.0.1:{port}/bad"
	lite := "sqlite://{w}/x.db"
	file := func(t *testing.T, w string) {
		if err := os.WriteFile(filepath.Join(w, "file"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []badCase{
		// Flags.
		{name: "unknown flag", args: []string{"run", "--warp", "9"}, code: ExitUsage, want: "unknown flag: --warp"},
		{name: "unknown shorthand", args: []string{"run", "-Z"}, code: ExitUsage, want: "unknown shorthand flag: 'Z'"},
		{name: "flag without its value", args: []string{"run", "--vus"}, code: ExitUsage, want: "flag needs an argument: --vus"},
		{name: "unknown command", args: []string{"launch"}, code: ExitUsage, want: `unknown command "launch"`},
		{name: "unknown workload", args: []string{"run", "tpcz"}, code: ExitUsage, want: `unknown workload "tpcz"`},
		{name: "two workloads", args: []string{"run", "tpcc", "tpcb"}, code: ExitUsage, want: "one workload at a time: tpcc tpcb"},
		{name: "two databases", args: []string{"run", "--db", "sqlite:///tmp/a.db", "sqlite:///tmp/b.db"}, code: ExitUsage, want: "two databases"},
		{name: "vus not a number", args: []string{"run", "--vus", "many"}, code: ExitUsage, want: `invalid value "many" for "-c, --vus" flag: want a whole number`},
		{name: "zero vus", args: []string{"run", "-c", "0"}, code: ExitUsage, want: "--vus must be at least 1"},
		{name: "zero vus with --json", args: []string{"run", "--vus", "0", "--json"}, code: ExitUsage, want: "--vus must be at least 1"},
		{name: "duration with a bad unit", args: []string{"run", "--duration", "60x"}, code: ExitUsage, want: "want a duration such as 30 (seconds), 90s or 5m"},
		{name: "duration beyond range", args: []string{"run", "-T", "1e99"}, code: ExitUsage, want: "want a duration"},
		{name: "negative duration", args: []string{"run", "--duration", "-5s"}, code: ExitUsage, want: "--duration must be positive"},
		{name: "negative rampup", args: []string{"run", "--rampup", "-1s"}, code: ExitUsage, want: "--rampup must not be negative"},
		{name: "negative iterations", args: []string{"run", "--iterations", "-1"}, code: ExitUsage, want: "--iterations must not be negative"},
		{name: "iterations overflow", args: []string{"run", "-t", "99999999999999999999"}, code: ExitUsage, want: "want a whole number"},
		{name: "-T with -t", args: []string{"run", "-T", "5", "-t", "10"}, code: ExitUsage, want: "give either -T/--duration or -t/--iterations"},
		{name: "--max-tries with --max-retries", args: []string{"run", "--max-tries", "3", "--max-retries", "2"}, code: ExitUsage, want: "give either --max-tries or --max-retries"},
		{name: "negative max-tries", args: []string{"run", "--max-tries", "-1"}, code: ExitUsage, want: "--max-tries must not be negative"},
		{name: "unlimited tries without -T", args: []string{"run", "--max-tries", "0", "-t", "5"}, code: ExitUsage, want: "--max-tries 0 (unlimited) needs -T/--duration"},
		{name: "--seed with --random-seed", args: []string{"run", "--seed", "1", "--random-seed", "2"}, code: ExitUsage, want: "give either --seed or --random-seed"},
		{name: "bad random seed", args: []string{"run", "--random-seed", "often"}, code: ExitUsage, want: `--random-seed "often": want a whole number, time or rand`},
		{name: "negative seed", args: []string{"run", "--seed", "-1"}, code: ExitUsage, want: `invalid value "-1" for "--seed" flag: want a whole number`},
		{name: "extended protocol on tpcc", args: []string{"run", "tpcc", "--protocol", "extended"}, code: ExitUsage, want: "--protocol extended applies to scripts (-f)"},
		{name: "builtin on tpcc", args: []string{"run", "tpcc", "-b", "select-only"}, code: ExitUsage, want: "--builtin (-b) is pgbench's: it applies to tpcb and to script runs (-f), not to tpcc"},
		{name: "unknown protocol", args: []string{"run", "-M", "fast"}, code: ExitUsage, want: `--protocol "fast": use simple, extended or prepared`},
		{name: "--mode and --protocol disagree", args: []string{"run", "--mode", "client", "--protocol", "prepared"}, code: ExitUsage, want: "--protocol prepared and --mode client disagree"},
		{name: "unknown mode", args: []string{"run", "--mode", "bogus"}, code: ExitUsage, want: `unknown mode "bogus"`},
		{name: "procedure mode on sqlite", args: []string{"run", "--db", lite, "--mode", "procedure"}, code: ExitUsage, want: "sqlite has no stored procedures", absent: []string{"{w}/x.db"}},
		{name: "--mode with -f", args: []string{"run", "-f", "{s}/ok.sql", "--mode", "client"}, code: ExitUsage, want: "--mode applies to workloads with named statements"},
		{name: "negative rate", args: []string{"run", "-R", "-5"}, code: ExitUsage, want: "--rate must be a positive number"},
		{name: "rate not a number", args: []string{"run", "-R", "NaN"}, code: ExitUsage, want: "--rate must be a positive number"},
		{name: "negative latency limit", args: []string{"run", "-L", "-5"}, code: ExitUsage, want: "--latency-limit must be a positive number of milliseconds"},
		{name: "reconnect garbage", args: []string{"run", "--reconnect", "soon"}, code: ExitUsage, want: `--reconnect "soon": want off, or FIRST,MAX`},
		{name: "reconnect max below first", args: []string{"run", "--reconnect", "5s,1s"}, code: ExitUsage, want: "with MAX at least FIRST"},
		{name: "zero stop timeout", args: []string{"run", "--stop-timeout", "0s"}, code: ExitUsage, want: "--stop-timeout must be positive"},
		{name: "negative progress", args: []string{"run", "--progress", "-1"}, code: ExitUsage, want: "--progress must not be negative"},
		{name: "zero pgbench threads", args: []string{"run", "-j", "0"}, code: ExitUsage, want: "-j/--jobs must be at least 1"},
		{name: "more connections than vus", args: []string{"run", "--db", lite, "--vus", "4", "--connections", "5"}, code: ExitUsage, want: "--connections 5 is more than --vus 4", absent: []string{"{w}/x.db"}},
		{name: "negative connections", args: []string{"run", "--connections", "-1"}, code: ExitUsage, want: "--connections must not be negative"},

		// URLs.
		{name: "no scheme", args: []string{"run", "--db", "just-a-path.db"}, code: ExitUsage, want: "bad database URL just-a-path.db: no scheme: use e.g. sqlite:///path/to/file.db"},
		{name: "host and port without scheme", args: []string{"run", "--db", "127.0.0.1:5432/x"}, code: ExitUsage, want: "bad database URL 127.0.0.1:5432/x: not a URL"},
		{name: "unknown scheme", args: []string{"run", "--db", "oracle://u:" + badPW + "@127.0.0.1/x"}, code: ExitUsage, want: `bad database URL oracle://u:REDACTED@127.0.0.1/x: unknown scheme "oracle": known schemes are duckdb, mariadb, mysql, postgres, postgresql, sqlite, sqlite3`},
		{name: "unknown scheme, no host", args: []string{"run", "--db", "foo://x"}, code: ExitUsage, want: `unknown scheme "foo": known schemes are`},
		{name: "postgres port out of range", args: []string{"run", "--db", "postgres://u:" + badPW + "@127.0.0.1:99999/x"}, code: ExitUsage, want: `bad port "99999": want a number from 1 to 65535`},
		{name: "mysql port not a number", args: []string{"build", "--db", "mysql://root:" + badPW + "@127.0.0.1:abc/x"}, code: ExitUsage, want: `bad database URL mysql://root:REDACTED@127.0.0.1:abc/x: bad port "abc": want a number from 1 to 65535`},
		{name: "postgres routines=x", args: []string{"run", "--db", pg + "?routines=x"}, code: ExitUsage, want: `bad value "x" for routines: use functions or procedures`},
		{name: "postgres io=fast", args: []string{"run", "--db", pg + "?io=fast"}, code: ExitUsage, want: `bad value "fast" for io: use blocking, syscall, poller or loop`},
		{name: "mysql isolation=bogus", args: []string{"run", "--db", my + "?isolation=bogus"}, code: ExitUsage, want: `bad isolation "bogus"`},
		{name: "mysql unknown parameter", args: []string{"check", "--db", my + "?nosuch=1"}, code: ExitUsage, want: "unknown parameter nosuch"},
		{name: "mysql host and socket", args: []string{"run", "--db", my + "?socket={w}/my.sock"}, code: ExitUsage, want: "give a host or ?socket=, not both"},
		{name: "sqlite bad option", args: []string{"build", "--db", lite + "?journal_mode=bogus"}, code: ExitUsage, want: `bad value "bogus" for journal_mode`, absent: []string{"{w}/x.db"}},
		{name: "sqlite in a missing directory", args: []string{"build", "--db", "sqlite://{w}/missing/x.db"}, code: ExitFailure, want: "directory {w}/missing does not exist", absent: []string{"{w}/missing"}},
		{name: "sqlite in an unwritable directory", args: []string{"build", "--db", "sqlite:///proc/sledge-bad-input.db"}, code: ExitFailure, want: "directory /proc is not writable", absent: []string{"/proc/sledge-bad-input.db"}},
		{name: "sqlite under a file", args: []string{"build", "--db", "sqlite://{w}/file/x.db"}, setup: file, code: ExitFailure, want: "{w}/file is not a directory"},
		{name: "sqlite path is a directory", args: []string{"build", "--db", "sqlite://{w}"}, code: ExitFailure, want: "is a directory"},
		{name: "sqlite in memory", args: []string{"run", "--db", "sqlite::memory:"}, code: ExitUsage, want: `sqlite URL path ":memory:" is not a file`},
		{name: "postgres connection refused", args: []string{"run", "--db", pg, "-t", "1"}, code: ExitFailure, want: "cannot reach PostgreSQL at 127.0.0.1:{port}: connection refused"},
		{name: "postgres connection refused, build", args: []string{"build", "tpcb", "--db", pg, "--scale", "1"}, code: ExitFailure, want: "connection refused"},
		{name: "postgresql connection refused, check", args: []string{"check", "--db", "postgresql://sledge:" + badPW + "@127.0.0.1:{port}/bad"}, code: ExitFailure, want: "connection refused"},
		{name: "mariadb connection refused", args: []string{"build", "--db", "mariadb://root:" + badPW + "@127.0.0.1:{port}/bad"}, code: ExitFailure, want: "cannot reach MariaDB/MySQL at 127.0.0.1:{port}: connection refused"},
		{name: "mysql connection refused, script", args: []string{"run", "--db", my, "-f", "{s}/ok.sql", "-t", "1"}, code: ExitFailure, want: "connection refused"},
		{name: "postgres socket missing", args: []string{"run", "--db", "postgres://sledge:" + badPW + "@/bad?host={w}", "-t", "1"}, code: ExitFailure, want: "cannot reach PostgreSQL at {w}/.s.PGSQL.5432"},
		{name: "mysql socket missing", args: []string{"run", "--db", "mysql://root:" + badPW + "@/bad?socket={w}/my.sock", "-t", "1"}, code: ExitFailure, want: "cannot reach MariaDB/MySQL at {w}/my.sock"},
		{name: "postgres password in a query that does not parse", args: []string{"run", "--db", "postgres://sledge@127.0.0.1:{port}/bad?password=" + badPW + "&x=%zz"}, code: ExitUsage, want: `invalid URL escape "%zz"`},
		{name: "sqlite password in a query that does not parse", args: []string{"run", "--db", lite + "?password=" + badPW + "&x=%zz"}, code: ExitUsage, want: `invalid URL escape "%zz"`},
		{name: "libpq keyword/value string", args: []string{"run", "--db", "host=127.0.0.1 port={port} user=sledge password=" + badPW + " dbname=bad"}, code: ExitUsage, want: "a libpq keyword/value string, not a URL: write postgres://"},
		{name: "go-sql-driver DSN", args: []string{"build", "--db", "root:" + badPW + "@tcp(127.0.0.1:{port})/bad"}, code: ExitUsage, want: "a go-sql-driver DSN, not a URL: write mysql://"},
		{name: "postgres password with a bare %", args: []string{"run", "--db", "postgres://sledge@127.0.0.1:{port}/bad?password=50%off-" + badPW, "-t", "1"}, code: ExitUsage, want: "sledge: "},

		// Configuration values.
		{name: "zero warehouses", args: []string{"build", "--warehouses", "0", "--db", lite}, code: ExitUsage, want: "--warehouses must be at least 1", absent: []string{"{w}/x.db"}},
		{name: "warehouses not a number", args: []string{"build", "--warehouses", "many", "--db", lite}, code: ExitUsage, want: `invalid value "many" for "--warehouses" flag`},
		{name: "zero build vus", args: []string{"build", "--build-vus", "0", "--db", lite}, code: ExitUsage, want: "--build-vus must be at least 1", absent: []string{"{w}/x.db"}},
		{name: "tpcb scale 0", args: []string{"build", "tpcb", "--scale", "0", "--db", lite}, code: ExitUsage, want: "--scale must be at least 1", absent: []string{"{w}/x.db"}},
		{name: "tpcb scale 30000", args: []string{"build", "tpcb", "--scale", "30000", "--db", lite}, code: ExitUsage, want: "--scale must be at most 20000", absent: []string{"{w}/x.db"}},
		{name: "build of scripts", args: []string{"build", "script", "--db", lite}, code: ExitUsage, want: "script", absent: []string{"{w}/x.db"}},
		{name: "check of scripts", args: []string{"check", "script", "--db", lite}, code: ExitUsage, want: "script", absent: []string{"{w}/x.db"}},
		{name: "drop of scripts", args: []string{"drop", "script", "--db", lite}, code: ExitUsage, want: "script", absent: []string{"{w}/x.db"}},
		{name: "unknown builtin", args: []string{"run", "tpcb", "--builtin", "nosuch", "--db", lite}, code: ExitUsage, want: `no builtin script "nosuch"`},
		{name: "ambiguous builtin prefix", args: []string{"run", "tpcb", "-b", "s", "--db", lite}, code: ExitUsage, want: `"s" is ambiguous (2 builtin scripts start with it)`},
		{name: "builtin prefix is fine", args: []string{"run", "tpcb", "--builtin", "sel", "--db", lite, "-t", "1"}, code: ExitFailure, want: "no tpcb schema in sqlite://{w}/x.db: run `sledge build tpcb --db sqlite://{w}/x.db` first"},
		{name: "builtin weight not a number", args: []string{"run", "tpcb", "--builtin", "sel@x", "--db", lite}, code: ExitUsage, want: "the weight must be an integer"},
		{name: "builtin weights add up to zero", args: []string{"run", "tpcb", "--builtin", "tpcb-like@0", "--db", lite}, code: ExitUsage, want: "the weights add up to zero"},

		// Environment.
		{name: "SLEDGE_DB not a URL", args: []string{"run", "-t", "1"}, env: map[string]string{"SLEDGE_DB": "bogus"}, code: ExitUsage, want: "bad database URL bogus: no scheme"},
		{name: "SLEDGE_DB a libpq keyword/value string", args: []string{"check"}, env: map[string]string{"SLEDGE_DB": "host=127.0.0.1 port={port} password=" + badPW}, code: ExitUsage, want: "a libpq keyword/value string, not a URL"},
		{name: "SLEDGE_DB refused, with a password", args: []string{"check"}, env: map[string]string{"SLEDGE_DB": pg}, code: ExitFailure, want: "connect to postgres://sledge:REDACTED@127.0.0.1:{port}/bad"},
		{name: "SLEDGE_JOBS_DB in a missing directory", args: []string{"check", "--db", "sqlite://{w}/missing/x.db"}, env: map[string]string{"SLEDGE_JOBS_DB": "{w}/nodir/jobs.db"},
			code: ExitFailure, want: "directory {w}/missing does not exist", warn: "this check is not recorded: job store {w}/nodir/jobs.db"},
		{name: "SLEDGE_JOBS_DB in a missing directory, jobs list", args: []string{"jobs", "list"}, env: map[string]string{"SLEDGE_JOBS_DB": "{w}/nodir/jobs.db"}, code: ExitFailure, want: "{w}/nodir/jobs.db"},
		{name: "XDG_DATA_HOME is a file", args: []string{"run", "-t", "1"}, env: map[string]string{"XDG_DATA_HOME": "{w}/file"}, setup: file, code: ExitFailure, want: "cannot create {w}/file/sledge for the default database: not a directory"},
		{name: "XDG_DATA_HOME is a file, explicit database", args: []string{"check", "--db", "sqlite://{w}/missing/x.db"}, env: map[string]string{"XDG_DATA_HOME": "{w}/file"}, setup: file,
			code: ExitFailure, want: "directory {w}/missing does not exist", warn: "this check is not recorded: cannot create {w}/file/sledge for the job store"},
		{name: "HOME unset", args: []string{"run", "-t", "1"}, env: map[string]string{"XDG_DATA_HOME": "", "HOME": ""}, code: ExitFailure, want: "cannot find a place for the default database: HOME is not set; use --db"},
		{name: "HOME unset, jobs list", args: []string{"jobs", "list"}, env: map[string]string{"XDG_DATA_HOME": "", "HOME": ""}, code: ExitFailure, want: "cannot find a place for the job store: HOME is not set; use --jobs-db PATH"},

		// pgbench scripts.
		{name: "script missing", args: []string{"run", "-f", "{s}/missing.sql", "--db", lite}, code: ExitUsage, want: `could not read file "{s}/missing.sql": no such file or directory`},
		{name: "script empty", args: []string{"run", "-f", "{s}/empty.sql", "--db", lite}, code: ExitUsage, want: "{s}/empty.sql: empty script"},
		{name: "script \\set syntax error", args: []string{"run", "-f", "{s}/syntax.sql", "--db", lite}, code: ExitUsage, want: "{s}/syntax.sql:1: syntax error at end of expression"},
		{name: "script unknown meta-command", args: []string{"run", "-f", "{s}/unknown.sql", "--db", lite}, code: ExitUsage, want: `{s}/unknown.sql:1: invalid command \bogus`},
		{name: "script \\else without \\if", args: []string{"run", "-f", "{s}/else.sql", "--db", lite}, code: ExitUsage, want: `{s}/else.sql:1: \else without matching \if`},
		{name: "script missing \\endif", args: []string{"run", "-f", "{s}/noendif.sql", "--db", lite}, code: ExitUsage, want: `{s}/noendif.sql: missing \endif for the \if at line 1`},
		{name: "script bad \\sleep unit", args: []string{"run", "-f", "{s}/sleep.sql", "--db", lite}, code: ExitUsage, want: `unrecognized time unit "weeks" in \sleep`},
		{name: "script unknown function", args: []string{"run", "-f", "{s}/func.sql", "--db", lite}, code: ExitUsage, want: `{s}/func.sql:1: unknown function "nosuch"`},
		{name: "script unterminated quote", args: []string{"run", "-f", "{s}/quote.sql", "--db", lite}, code: ExitUsage, want: "unterminated quoted string"},
		{name: "script weight out of range", args: []string{"run", "-f", "{s}/ok.sql@99999999999", "--db", lite}, code: ExitUsage, want: "weight specification out of range (0 .. 2147483647)"},
		{name: "script weights add up to zero", args: []string{"run", "-f", "{s}/ok.sql@0", "--db", lite, "-t", "1"}, code: ExitUsage, want: "total script weight must not be zero", absent: []string{"{w}/x.db"}},
		{name: "-D without =", args: []string{"run", "-f", "{s}/ok.sql", "-D", "foo", "--db", lite}, code: ExitUsage, want: `invalid variable definition "foo" for --define: use name=value`},
		{name: "-D with a bad name", args: []string{"run", "-f", "{s}/ok.sql", "-D", "1a=x", "--db", lite}, code: ExitUsage, want: `invalid variable name "1a"`},
		{name: "compound with -M prepared", args: []string{"run", "-f", "{s}/compound.sql", "-M", "prepared", "--db", lite}, code: ExitUsage, want: `{s}/compound.sql:1: compound queries (\;) need --protocol simple`},
		{name: "pipeline with -M simple", args: []string{"run", "-f", "{s}/pipeline.sql", "-M", "simple", "--db", lite}, code: ExitUsage, want: `{s}/pipeline.sql:1: pipelines (\startpipeline) need --protocol extended or prepared`},
		{name: "pipeline on SQLite", args: []string{"run", "-f", "{s}/pipeline.sql", "-M", "extended", "--db", lite}, code: ExitUsage, want: `pipelines (\startpipeline) work only on PostgreSQL`, absent: []string{"{w}/x.db"}},
		// \gset inside a pipeline fails the client when it runs, as in
		// pgbench (pgbench_tap_test.go); SQLite refuses the pipeline first.
		{name: "\\gset inside a pipeline", args: []string{"run", "-f", "{s}/pgset.sql", "-M", "extended", "--db", lite}, code: ExitUsage, want: `pipelines (\startpipeline) work only on PostgreSQL`},
		{name: "-f with a workload", args: []string{"run", "tpcc", "-f", "{s}/ok.sql", "--db", lite}, code: ExitUsage, want: `-f runs pgbench scripts: leave out the workload "tpcc"`},
		{name: "-f with an unknown builtin", args: []string{"run", "-f", "{s}/ok.sql", "-b", "nosuch", "--db", lite}, code: ExitUsage, want: `no builtin script found for name "nosuch"`},
		{name: "script with a negative scale", args: []string{"run", "-f", "{s}/ok.sql", "-s", "-1", "--db", lite}, code: ExitUsage, want: "--scale must not be negative"},
		{name: "builtin in a script mix without tpcb", args: []string{"run", "-f", "{s}/ok.sql", "-b", "select-only", "--db", lite, "-t", "1", "--json"}, code: ExitFailure, want: "run `sledge build tpcb --db sqlite://{w}/x.db` first"},

		// Jobs and compare.
		{name: "job id not a number", args: []string{"jobs", "show", "x"}, code: ExitUsage, want: `"x" is not a job id`},
		{name: "job id unknown", args: []string{"jobs", "show", "99"}, code: ExitFailure, want: "no job 99 in {w}/xdg/sledge/jobs.db"},
		{name: "export format unknown", args: []string{"jobs", "export", "1", "--format", "xml"}, code: ExitUsage, want: `--format "xml": use json, csv, folded or pprof`},
		{name: "diff of one job", args: []string{"jobs", "diff", "1"}, code: ExitUsage, want: "sledge: jobs diff takes two job ids, got 1 (usage: sledge jobs diff A B [flags])", absent: []string{"arg(s)"}},
		{name: "show without a job id", args: []string{"jobs", "show"}, code: ExitUsage, want: "sledge: jobs show takes one job id, got none (usage: sledge jobs show ID [flags])"},
		{name: "rerun of two jobs", args: []string{"jobs", "rerun", "1", "2"}, code: ExitUsage, want: "sledge: jobs rerun takes one job id, got 2 (usage: sledge jobs rerun ID [flags])"},
		{name: "list with an argument", args: []string{"jobs", "list", "7"}, code: ExitUsage, want: "sledge: jobs list takes no arguments, got 1 (usage: sledge jobs list [flags])"},
		{name: "delete a job id that is not a number", args: []string{"jobs", "delete", "abc"}, code: ExitUsage, want: `"abc" is not a job id`},
		{name: "compare with zero vus", args: []string{"compare", "--db", lite, "--vus", "0"}, code: ExitUsage, want: `--vus 0: "0" is not a whole number of at least 1`},
		{name: "compare with more connections than its smallest vus", args: []string{"compare", "--db", lite, "--vus", "8,2,4", "--connections", "3"}, code: ExitUsage, want: "--connections 3 is more than --vus 2"},
		{name: "compare unknown mode", args: []string{"compare", "--db", lite, "--modes", "bogus"}, code: ExitUsage, want: `--modes: unknown mode "bogus"`},
		{name: "compare unknown transport", args: []string{"compare", "--db", lite, "--transports", "carrier"}, code: ExitUsage, want: `--transports: unknown transport "carrier"`},
		{name: "compare report in a missing directory", args: []string{"compare", "--db", lite, "--html", "{w}/missing/x.html"}, code: ExitUsage, want: "--html {w}/missing/x.html: no directory {w}/missing"},
	}
	for name := range badInputKnownBugs {
		if !slices.ContainsFunc(cases, func(c badCase) bool { return c.name == name }) {
			t.Errorf("badInputKnownBugs names no case: %q", name)
		}
	}
	if len(cases) < 50 {
		t.Fatalf("%d cases, the catalogue wants at least 50", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Failures are collected: a case whose bug is known and not
			// fixed yet (badInputKnownBugs) is skipped with them instead.
			var problems []string
			fail := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
			defer func() {
				if len(problems) == 0 {
					if _, listed := badInputKnownBugs[c.name]; listed {
						t.Errorf("listed in badInputKnownBugs, but passes: its bug is fixed, remove it from the list")
					}
					return
				}
				if bug := badInputKnownBugs[c.name]; bug != "" {
					t.Skipf("bug: %s\n%s", bug, strings.Join(problems, "\n"))
				}
				for _, p := range problems {
					t.Error(p)
				}
			}()
			w := t.TempDir()
			if c.setup != nil {
				c.setup(t, w)
			}
			expand := func(s string) string {
				return strings.NewReplacer("{w}", w, "{s}", scripts, "{port}", strconv.Itoa(port)).Replace(s)
			}
			vars := map[string]string{"XDG_DATA_HOME": filepath.Join(w, "xdg"), "HOME": filepath.Join(w, "home")}
			for k, v := range c.env {
				vars[k] = expand(v)
			}
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = expand(a)
			}
			before := filesUnder(t, w)
			var out, errb bytes.Buffer
			code := Main(context.Background(), args, Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }})
			stdout, stderr := out.String(), errb.String()

			if code != c.code {
				fail("exit %d, want %d; stderr %q", code, c.code, stderr)
			}
			if strings.Contains(stdout+stderr, "goroutine ") || strings.Contains(stderr, "panic") || strings.Contains(stderr, "internal error") {
				t.Fatalf("a panic:\n%s%s", stdout, stderr)
			}
			if strings.Contains(stdout+stderr, badPW) {
				fail("the password shows: %q", stdout+stderr)
			}
			if stdout != "" {
				fail("stdout is not empty: %q", stdout)
			}
			var msg, warning []string
			for _, l := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
				if strings.HasPrefix(l, "sledge: warning: ") {
					warning = append(warning, l)
				} else {
					msg = append(msg, l)
				}
			}
			if len(msg) != 1 || !strings.HasPrefix(msg[0], "sledge: ") {
				fail("stderr is not one line starting with 'sledge: ': %q", stderr)
			} else if want := expand(c.want); !strings.Contains(msg[0], want) {
				fail("stderr %q does not say %q", msg[0], want)
			}
			switch {
			case c.warn == "" && len(warning) > 0:
				fail("unexpected warning: %q", warning)
			case c.warn != "" && (len(warning) != 1 || !strings.Contains(warning[0], expand(c.warn))):
				fail("warnings %q, want one saying %q", warning, expand(c.warn))
			}

			// Nothing half-written.
			for _, p := range c.absent {
				if _, err := os.Stat(expand(p)); err == nil {
					fail("%s exists after a refused command", expand(p))
				}
			}
			store := filepath.Join(w, "xdg", "sledge", "jobs.db")
			if p := vars["SLEDGE_JOBS_DB"]; p != "" {
				store = p
			}
			created := newFiles(before, filesUnder(t, w))
			if c.code == ExitUsage && len(created) > 0 {
				fail("input refused before any work created files: %s%s", strings.Join(created, ", "), storeJobs(t, store, vars))
			}
			if code == ExitFailure {
				checkFailedJobs(t, fail, store, vars, msg)
			}
		})
	}
}

// badInputKnownBugs are the cases that fail because of a bug reported and
// not fixed yet, by case name: they are skipped, with what failed. Remove
// a case from here when its bug is fixed.
var badInputKnownBugs = map[string]string{}

// filesUnder lists the files (not directories) under dir.
func filesUnder(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out[p] = true
		}
		return nil
	})
	return out
}

func newFiles(before, after map[string]bool) []string {
	var out []string
	for p := range after {
		if !before[p] {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// storeJobs describes the jobs in the store, for a message.
func storeJobs(t *testing.T, store string, vars map[string]string) string {
	t.Helper()
	if _, err := os.Stat(store); err != nil {
		return ""
	}
	l, ok := readStore(t, store, vars)
	if !ok {
		return " (the job store does not read)"
	}
	return " (the job store holds " + strconv.Itoa(len(l)) + " job(s))"
}

type storedJob struct {
	ID     int64  `json:"id"`
	Kind   string `json:"kind"`
	Status string `json:"status"`
	Error  string `json:"error"`
}

func readStore(t *testing.T, store string, vars map[string]string) ([]storedJob, bool) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"jobs", "list", "--json", "--limit", "0", "--jobs-db", store},
		Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }})
	if code != 0 {
		t.Errorf("jobs list on %s: exit %d: %s", store, code, errb.String())
		return nil, false
	}
	var l struct {
		Jobs []storedJob `json:"jobs"`
	}
	if err := json.Unmarshal(out.Bytes(), &l); err != nil {
		t.Errorf("jobs list --json: %v: %s", err, out.String())
		return nil, false
	}
	return l.Jobs, true
}

// checkFailedJobs: after a failure, every job in the store (if there is
// one) is finished, failed, with the message the command printed.
func checkFailedJobs(t *testing.T, fail func(string, ...any), store string, vars map[string]string, msg []string) {
	t.Helper()
	if _, err := os.Stat(store); err != nil {
		return
	}
	for _, f := range []string{store, store + "-wal"} {
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(badPW)) {
			fail("the job store file %s holds the password", f)
		}
	}
	l, ok := readStore(t, store, vars)
	if !ok {
		return
	}
	for _, j := range l {
		if j.Status != "failed" {
			fail("job %d (%s) is %s, want failed", j.ID, j.Kind, j.Status)
		}
		if len(msg) == 1 && "sledge: "+j.Error != msg[0] {
			fail("job %d error %q, the command said %q", j.ID, j.Error, msg[0])
		}
		if strings.Contains(j.Error, badPW) {
			fail("job %d keeps the password: %q", j.ID, j.Error)
		}
	}
}
