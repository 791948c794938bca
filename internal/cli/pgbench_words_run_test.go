package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// What `sledge pgbench` says while clients connect and run, stream by
// stream, in pgbench 15's words: the behaviours the run cases of pgbench
// 15's 001_pgbench_with_server.pl check (an empty stderr for a normal run,
// the seed, connection errors and the initialization hint, the scale
// warning, -d's lines, \shell's output on stdout, server errors with
// their CONTEXT lines, each error that aborts a client, --verbose-errors).
// The scripts are this project's own. Where pgbench is installed, the
// cases marked compare run through pgbench 15 too, on the same database:
// both exit alike and say the same lines on stderr apart from numbers
// (client ids, commands, times, the statements' names).

// runWordsCase is one command line of TestPgbenchRunWords.
type runWordsCase struct {
	name    string
	args    []string // "{1}", "{2}" name the scripts; with one script and no {1}, "-f {1}" is added
	scripts []string
	db      string // the database: "" the initialised one, else a name given in the test
	env     map[string]string
	code    int
	stdout  []string // patterns stdout must match (pgbench's stdout checks)
	stderr  []string // patterns stderr must match
	not     []string // patterns stderr must not match
	quiet   bool     // stderr is empty, as pgbench's
	noOut   bool     // stdout is empty, as pgbench's
	compare bool     // pgbench 15 too, stderr compared
	skip    string   // pgbench's lines the comparison passes over (a known difference, docs/pgbench.md)
	// check, when set, says what is wrong with stderr beyond patterns
	// ("" when nothing is).
	check func(stderr string) string
}

// runShapeSkip are lines the comparison passes over on both sides: the
// last line of a run in which a client failed (pgbench: the run was
// aborted; sledge: how many transactions failed, its clients having gone
// on, docs/pgbench.md).
var runShapeSkip = regexp.MustCompile(`^pgbench: error: (Run was aborted; the above results are incomplete\.|[0-9,]+ of [0-9,]+ transactions failed with errors that were not retried)`)

// runShape is a run's stderr as the comparison reads it: sledge pgbench's
// name as pgbench's, numbers as '#', the lines skip matches left out.
func runShape(stderr, skip string) []string {
	num := regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
	var re *regexp.Regexp
	if skip != "" {
		re = regexp.MustCompile(skip)
	}
	var shape []string
	for _, l := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		l = strings.Replace(l, "sledge pgbench: ", "pgbench: ", 1)
		if runShapeSkip.MatchString(l) || (re != nil && re.MatchString(l)) {
			continue
		}
		shape = append(shape, num.ReplaceAllString(l, "#"))
	}
	return shape
}

// Two clients that meet inside their transactions and then update the
// same row under REPEATABLE READ (a serialization failure), or two rows
// in opposite orders (a deadlock). Advisory lock N (transaction level)
// says who is in; N+1 (session level, kept across a rollback) who went
// past, so that a retry does not wait. The update adds a random delta:
// the retry sends the same one.
var wordsSerialization, wordsDeadlock = meetScripts("words", 170, "\\set delta random(-5000, 5000)\n", "v + :delta")

// wordsDefines are the variables the error cases read.
var wordsDefines = []string{"-Dword=abc", "-Dnothing=null", "-Dyes=true", "-Done=1", "-Dhalf=0.5", "-Dnotbool=yesyes",
	"-Dtop=9223372036854775807", "-Dbottom=-9223372036854775808"}

// wordsErr is a script that fails while its client runs, as pgbench's
// error cases run it: pgbench exits 2, processed 0/1, and says what
// failed on stderr.
func wordsErr(name, script string, stderr ...string) runWordsCase {
	return runWordsCase{name: name, args: append([]string{"-n", "-t", "1", "-M", "prepared"}, wordsDefines...),
		scripts: []string{script}, code: 2, stdout: []string{`processed: 0/1$`}, stderr: stderr, compare: true}
}

// aborted is pgbench's line for client 0 aborted at command cmd (from 0)
// of script 0: an SQL command's, or a meta-command's (meta) with why.
func aborted(cmd int, meta, why string) string {
	if meta == "" {
		return fmt.Sprintf(`(?m)^sledge pgbench: error: client 0 script 0 aborted in command %d query 0: %s`, cmd, why)
	}
	return fmt.Sprintf(`(?m)^sledge pgbench: error: client 0 aborted in command %d \(%s\) of script 0; %s$`, cmd, meta, why)
}

// pgbErrLine is one of pgbench's error lines: "sledge pgbench: error: " and
// the pattern, the whole line.
func pgbErrLine(p string) string { return `(?m)^sledge pgbench: error: ` + p + `$` }

func TestPgbenchRunWords(t *testing.T) {
	srv := pgLazy.Get(t)
	home := t.TempDir()
	env := pgbEnv(srv)
	dbname := pgbDatabase(t, srv)
	empty := pgbDatabase(t, srv)
	params := pgbDatabase(t, srv) // the server's parameters in the CONTEXT of errors
	if stdout, stderr, code := sledgePgbench(t, home, env, "-i", "-s", "1", "-q", dbname); code != 0 {
		t.Fatalf("-i: exit %d\n%s%s", code, stdout, stderr)
	}
	admin := func(db, sql string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s:%d/%s", srv.User, srv.Password, srv.Host, srv.Port, db))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	admin(dbname, `CREATE TABLE words_ser (k int PRIMARY KEY, v int); INSERT INTO words_ser VALUES (1, 0);
		CREATE TABLE words_dl (k int PRIMARY KEY, v int); INSERT INTO words_dl VALUES (1, 0), (2, 0)`)
	// The server puts a failed statement's parameters, cut to 64
	// characters, in the error's CONTEXT (pgbench's test sets the same in
	// postgresql.conf).
	admin("postgres", "ALTER DATABASE "+params+" SET log_parameter_max_length_on_error = 64")
	bin := pgbench15Bin(t)
	logs := t.TempDir()

	jsonScript := `-- two values for jsonb, the first not JSON
select '{ oops ' as first \gset
select $$'En un lugar de la Mancha, de cuyo nombre no quiero acordarme, no ha mucho tiempo'$$ as second \gset
select column1::jsonb from (values (:first), (:second)) as v;
`
	labels := make([]string, 300)
	for i := range labels {
		labels[i] = fmt.Sprintf("'c%d'", i)
	}
	cases := []runWordsCase{
		// A normal run says nothing on stderr.
		{name: "concurrent DDL, prepared", args: []string{"-n", "-c", "5", "-M", "prepared", "-t", "25"},
			scripts: []string{"CREATE TYPE pg_temp.colours AS ENUM (" + strings.Join(labels, ", ") + "); DROP TYPE pg_temp.colours;\n"},
			stdout:  []string{`processed: 125/125`}, quiet: true},
		{name: "tpcb-like, -C, -v with -n", args: []string{"--transactions=4", "-Dunused=x", "--client=2", "--protocol=simple", "--builtin=tp", "--connect", "-n", "-v", "-n"},
			stdout: []string{`builtin: TPC-B`, `clients: 2\b`, `processed: 8/8`, `mode: simple`, `maximum number of tries: 1`}, quiet: true},
		{name: "two scripts with weights, -j", args: []string{"-t", "50", "-c", "1", "-j", "2", "-M", "prepared", "-n", "-f", "{1}@1", "-f", "{2}@2"},
			scripts: []string{"\\set aid random(1, :scale * 100000)\nSELECT abalance::int AS b FROM pgbench_accounts WHERE aid = :aid;\n",
				"BEGIN;\n\\set two 2\nSELECT :two::int + :scale::int * :client_id::int AS s;\nCOMMIT;\n"},
			stdout: []string{`type: multiple scripts`, `mode: prepared`, `script 1: .*_1\.sql`, `weight: 1`, `script 2: .*_2\.sql`, `weight: 2`, `processed: 50/50`},
			quiet:  true},
		{name: "custom script, simple", args: []string{"-n", "-t", "6", "-c", "1", "-M", "simple"},
			scripts: []string{"\\set aid random(1, :scale * 100000)\nBEGIN;\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\nCOMMIT;\n"},
			stdout:  []string{`type: .*_1\.sql`, `processed: 6/6`, `mode: simple`}, quiet: true},
		{name: "custom script, extended", args: []string{"-n", "-t", "6", "-c", "2", "-M", "extended"},
			scripts: []string{"\\set aid random(1, :scale * 100000)\nBEGIN;\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\nCOMMIT;\n"},
			stdout:  []string{`type: .*_1\.sql`, `processed: 12/12`, `mode: extended`}, quiet: true},
		{name: "rate and latency limit", args: []string{"-t", "50", "-S", "--rate=100000", "--latency-limit=1000000", "-c", "2", "-n", "-r"},
			stdout: []string{`processed: 100/100`, `builtin: select only`}, quiet: true},
		{name: "late transactions skipped", args: []string{"-t", "10", "--rate=100000", "--latency-limit=1", "-n", "-r"},
			scripts: []string{"\\sleep 2ms\n"},
			stdout:  []string{`processed: [01]/10`, `type: .*_1\.sql`, `above the 1\.0 ms latency limit: [01]/`}, quiet: true},
		{name: "sampled log", args: []string{"-n", "-S", "-t", "50", "-c", "2", "--log", "--sampling-rate=0.5", "--log-prefix=" + filepath.Join(logs, "sampled")},
			stdout: []string{`select only`, `processed: 100/100`}, quiet: true},
		{name: "log", args: []string{"-n", "-b", "select-only", "-t", "10", "-l", "--log-prefix=" + filepath.Join(logs, "all")},
			stdout: []string{`select only`, `processed: 10/10`}, quiet: true},

		// The setup connection: what pgbench says before any client runs.
		{name: "no such database", args: []string{"no-such-database"}, db: "-", code: 1, noOut: true, compare: true,
			stderr: []string{`connection to server .* failed`, `FATAL:  database "no-such-database" does not exist`,
				pgbErrLine(`connection to server on socket "[^"]+/\.s\.PGSQL\.[0-9]+" failed: FATAL:  database "no-such-database" does not exist`),
				pgbErrLine(`could not create connection for setup`)}},
		{name: "builtin without its tables", args: []string{"-S", "-t", "1"}, db: empty, code: 1, compare: true,
			stderr: []string{`Perhaps you need to do initialization`,
				pgbErrLine(`could not count number of branches: ERROR:  relation "pgbench_branches" does not exist`),
				`(?m)^LINE 1: select count\(\*\) from pgbench_branches\n {29}\^$`,
				`(?m)^sledge pgbench: hint: Perhaps you need to do initialization \("pgbench -i"\) in database "` + empty + `"\.$`}},
		{name: "scale ignored with a builtin", args: []string{"--transactions=10", "--client=5", "-M", "extended", "--builtin=si", "-C", "--no-vacuum", "-s", "1"},
			stdout: []string{`builtin: simple update`, `clients: 5\b`, `threads: 1\b`, `processed: 50/50`, `mode: extended`},
			stderr: []string{`scale option ignored`, `(?m)^sledge pgbench: warning: scale option ignored, using count from pgbench_branches table \(1\)$`}},
		{name: "vacuum and -d", args: []string{"-t", "20", "-c", "7", "-M", "prepared", "-b", "se", "--debug"},
			stdout: []string{`builtin: select only`, `clients: 7\b`, `threads: 1\b`, `processed: 140/140`, `mode: prepared`},
			stderr: []string{`vacuum`, `client 0`, `client 1`, `sending`, `receiving`, `executing`,
				`(?m)^starting vacuum\.\.\.end\.$`,
				`(?m)^sledge pgbench: debug: client 6 executing script "<builtin: select only>"$`,
				`(?m)^sledge pgbench: debug: client 3 executing \\set aid$`,
				`(?m)^sledge pgbench: debug: client 0 sending P_[0-9]+$`,
				`(?m)^sledge pgbench: debug: client 0 receiving$`}},

		// The seed, said as the option is read.
		{name: "random seed", args: []string{"--random-seed=5432", "-t", "1"},
			scripts: []string{"\\set r debug(random(10, 19))\n"},
			stdout:  []string{`type: .*_1\.sql`, `processed: 1/1`},
			stderr:  []string{`setting random seed to 5432\b`, `(?m)^sledge pgbench: setting random seed to 5432$`, `command=1.: int 17\b`}},
		{name: "random seed from PGBENCH_RANDOM_SEED", args: []string{"-n", "-t", "1"}, env: map[string]string{"PGBENCH_RANDOM_SEED": "5432"},
			scripts: []string{"\\set r debug(random(10, 19))\n"},
			stdout:  []string{`processed: 1/1`},
			stderr:  []string{`(?m)^sledge pgbench: setting random seed to 5432$`, `command=1.: int 17\b`}},
		{name: "no seed, no seed line", args: []string{"-n", "-t", "1"},
			scripts: []string{"SELECT 1;\n"}, stdout: []string{`processed: 1/1`}, quiet: true},

		// Meta-commands: \shell's output is on stdout, as pgbench's.
		{name: "backslash commands", args: []string{"-t", "1"},
			scripts: []string{"\\set nought 0\n\\set unit 1.0\n\\sleep :unit ms\n\\sleep 50 us\n\\sleep 0 s\n\\sleep :nought\n" +
				"\\setshell also_one\\\n  echo \\\n    :unit\n\\set m debug(:also_one)\n\\shell echo shell-said-this\n"},
			stdout: []string{`type: .*_1\.sql`, `processed: 1/1`, `shell-said-this`},
			stderr: []string{`command=8.: int 1\b`}, not: []string{`shell-said-this`}},
		{name: "gset, several ways", args: []string{"-t", "1"}, scripts: []string{`-- nothing to set
SELECT \gset
SELECT 10 AS a0 \gset
\set v debug(:a0)
SELECT 11 AS a1, 12 AS a2 \gset
\set v debug(:a1)
\set v debug(:a2)
SELECT 13 AS a3 \gset pre_
\set v debug(:pre_a3)
SELECT 0 AS a4, 14 AS a4 \gset
\set v debug(:a4)
\; \; SELECT 0 AS a5 \; SELECT 15 AS a5 \; \; \gset
\set v debug(:a5)
`}, stdout: []string{`type: .*_1\.sql`, `processed: 1/1`},
			stderr: []string{`command=3.: int 10\b`, `command=5.: int 11\b`, `command=6.: int 12\b`, `command=8.: int 13\b`, `command=10.: int 14\b`, `command=12.: int 15\b`}},
		{name: "aset", args: []string{"-t", "1"}, scripts: []string{`\; SELECT 21 AS b1 \; SELECT 22 AS b2 \; \aset
SELECT 23 AS b1 UNION SELECT 24 ORDER BY 1 DESC \aset
\set v debug(:b1)
\set v debug(:b2)
`}, stdout: []string{`type: .*_1\.sql`, `processed: 1/1`}, stderr: []string{`command=3.: int 23\b`, `command=4.: int 22\b`}},
		{name: "pipeline, extended", args: []string{"-t", "1", "-n", "-M", "extended"},
			scripts: []string{"\\startpipeline\n" + strings.Repeat("select 2;\n", 6) + "\\endpipeline\n"},
			stdout:  []string{`type: .*_1\.sql`, `actually processed: 1/1`}},
		{name: "pipelines, prepared", args: []string{"-t", "1", "-n", "-M", "prepared"},
			scripts: []string{"\\startpipeline\n\\endpipeline\n\\startpipeline\n" + strings.Repeat("select 2;\n", 6) + "\\endpipeline\n"},
			stdout:  []string{`type: .*_1\.sql`, `actually processed: 1/1`}},
		{name: "pipeline, serializable, clients", args: []string{"-c4", "-j2", "-t", "5", "-n", "-M", "prepared"},
			scripts: []string{"\\startpipeline\nBEGIN ISOLATION LEVEL SERIALIZABLE;\n" + strings.Repeat("select 3;\n", 6) + "END;\n\\endpipeline\n"},
			stdout:  []string{`type: .*_1\.sql`, `actually processed: (\d+)/(\d+)`}},

		// Server errors as libpq prints them, with their CONTEXT.
		{name: "no parameters in the context unless the server logs them", args: []string{"-n", "-t1", "-c1", "-M", "prepared"},
			scripts: []string{jsonScript}, code: 2, compare: true,
			stderr: []string{`ERROR:  invalid input syntax for type json`, `(?m)^DETAIL:  Token "oops" is invalid\.$`, `(?m)^CONTEXT:  JSON data, line 1: \{ oops\.\.\.$`,
				aborted(2, "", `ERROR:  invalid input syntax for type json`)},
			not: []string{`unnamed portal with parameters`}},
		{name: "parameters in the context, cut", args: []string{"-n", "-t1", "-c1", "-M", "prepared"}, db: params,
			scripts: []string{jsonScript}, code: 2, compare: true,
			stderr: []string{`ERROR:  invalid input syntax for type json`,
				`(?m)^CONTEXT:  JSON data, line 1: \{ oops\.\.\.[\r\n]+unnamed portal with parameters: \$1 = '\{ oops ', \$2 = '''En un lugar de la Mancha, de cuyo nombre [^']*\.\.\.'$`}},
		{name: "a NULL parameter in the context", args: []string{"-n", "-t1", "-c1", "-M", "prepared"}, db: params,
			scripts: []string{"select '1' as one \\gset\nSELECT 1 / (random() / 2)::int, :one::int, :nosuch::int;\n"}, code: 2, compare: true,
			stderr: []string{`ERROR:  division by zero`, `CONTEXT:  unnamed portal with parameters: \$1 = '1', \$2 = NULL`,
				aborted(1, "", `ERROR:  division by zero`)}},
		{name: "a bad parameter named in the context", args: []string{"-n", "-t1", "-c1", "-M", "prepared"}, db: params,
			scripts: []string{"select 42 as good, '4x' as bad \\gset\nselect :good::smallint, :bad::smallint;\n"}, code: 2, compare: true,
			stderr: []string{`ERROR:  invalid input syntax for type smallint: "4x"`, `CONTEXT:  unnamed portal parameter \$2 = '4x'`}},

		// Errors that abort a client (pgbench exits 2): SQL.
		// pgbench 15.18 prepares a script's statements first: it says the
		// failed Parse on a line of its own, then aborts the client at
		// its Execute ("prepared statement … does not exist"); sledge
		// aborts it at the Parse (docs/pgbench.md), so no comparison.
		func() runWordsCase {
			c := wordsErr("sql syntax error", "-- a syntax error\n    SELECT 1 * ;\n", `ERROR:  syntax error`,
				`(?m)^sledge pgbench: error: .*ERROR:  syntax error at or near ";"$`, `(?m)^LINE 1: SELECT 1 \* ;\n {19}\^$`)
			c.compare = false
			return c
		}(),
		// libpq's cursor under the error's position, on the statement's
		// line, a long line cut around it (the extended protocol sends the
		// text, which libpq shows).
		{name: "syntax error on the second line", args: []string{"-n", "-t", "1", "-M", "extended"}, code: 2, compare: true,
			scripts: []string{"SELECT 1,\n  2 +;\n"}, stdout: []string{`processed: 0/1$`},
			stderr: []string{`(?m)^LINE 2:   2 \+;\n {13}\^$`}},
		{name: "syntax error far along a long line", args: []string{"-n", "-t", "1", "-M", "extended"}, code: 2, compare: true,
			scripts: []string{"SELECT " + strings.Repeat("10, ", 30) + "x y;\n"}, stdout: []string{`processed: 0/1$`},
			stderr: []string{`(?m)^LINE 1: \.\.\.[0-9, ]+x y;$`}},
		{name: "syntax error early in a long line", args: []string{"-n", "-t", "1", "-M", "extended"}, code: 2, compare: true,
			scripts: []string{"SELECT x y, " + strings.Repeat("10, ", 30) + "1;\n"}, stdout: []string{`processed: 0/1$`},
			stderr: []string{`(?m)^LINE 1: SELECT x y, [0-9, ]+\.\.\.\n {15}\^$`}},
		// Meta-commands: the reason, then the line naming the command.
		wordsErr("shell bad command", "\\shell sledge-no-such-command\n", `\(shell\) .* meta-command failed`,
			pgbErrLine(`sledge-no-such-command: could not launch shell command`), aborted(0, "shell", "execution of meta-command failed")),
		wordsErr("shell undefined variable", "-- an undefined variable\n\\shell echo ::literal :nosuchvariable\n",
			`undefined variable ":nosuchvariable"`, pgbErrLine(`echo: undefined variable ":nosuchvariable"`)),
		wordsErr("set invalid variable name", "\\set . 1\n", `invalid variable name`,
			pgbErrLine(`set: invalid variable name: "\."`), aborted(0, "set", "assignment of meta-command failed")),
		wordsErr("set division by zero", "\\set i 7/0\n", `division by zero`,
			pgbErrLine(`division by zero`), aborted(0, "set", "evaluation of meta-command failed")),
		wordsErr("set undefined variable", "\\set i :nosuchvariable\n", `undefined variable "nosuchvariable"`),
		wordsErr("set too many function arguments", "\\set i greatest(0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16)\n", `too many function arguments`),
		wordsErr("set empty random range", "\\set i random(9,2)\n", `empty range given to random`),
		wordsErr("set random range too large", "\\set i random(:bottom, :top)\n", `random range is too large`),
		wordsErr("set gaussian parameter too small", "\\set i random_gaussian(0, 10, 1.5)\n", `gaussian param.* at least 2`),
		wordsErr("set exponential parameter not above 0", "\\set i random_exponential(0, 10, 0.0)\n", `exponential parameter must be greater `),
		wordsErr("set zipfian parameter 1", "\\set i random_zipfian(0, 10, 1)\n", `zipfian parameter must be in range \[1\.001, 1000\]`),
		wordsErr("set zipfian parameter too large", "\\set i random_zipfian(0, 10, 2000)\n", `zipfian parameter must be in range \[1\.001, 1000\]`),
		wordsErr("set non-numeric value", "\\set i :word + 1\n", `malformed variable "word" value: "abc"`),
		wordsErr("set not a boolean", "\\set b NOT 0.5\n", `cannot coerce double to boolean`),
		wordsErr("set not an int", "\\set i TRUE + 7\n", `cannot coerce boolean to int`),
		wordsErr("set not a double", "\\set d exp(FALSE)\n", `cannot coerce boolean to double`),
		wordsErr("set boolean random bound", "\\set b random(TRUE, 3)\n", `cannot coerce boolean to int`),
		wordsErr("set double to int overflow", "\\set i int(1E40)\n", `double to int overflow for 100`),
		wordsErr("set bigint add overflow", "\\set i (1<<62) + (1<<62)\n", `int add out`),
		wordsErr("set bigint sub overflow", "\\set i 0 - (1<<62) - (1<<62) - (1<<62)\n", `int sub out`),
		wordsErr("set bigint mul overflow", "\\set i 4 * (1<<62)\n", `int mul out`),
		wordsErr("set bigint div out of range", "\\set i :bottom / -1\n", `bigint div out of range`),
		wordsErr("set malformed boolean", "\\set b :notbool or true\n", `malformed variable.*yesyes`),
		wordsErr("set permute size", "\\set i permute(0, 0)\n", `permute size parameter must be greater than zero`),
		wordsErr("setshell not an integer", "\\setshell i echo -n seven\n", `command must return an integer`,
			pgbErrLine(`echo: shell command must return an integer \(not "seven"\)`), aborted(0, "setshell", "execution of meta-command failed")),
		wordsErr("setshell no such command", "\\setshell v sledge-no-such-command\n", `could not read result `),
		wordsErr("sleep undefined variable", "\\sleep :nosuchvariable\n", `sleep: undefined variable`,
			pgbErrLine(`sleep: undefined variable "nosuchvariable"`), aborted(0, "sleep", "execution of meta-command failed")),
		// \gset and \aset.
		wordsErr("gset no row", "SELECT WHERE FALSE \\gset\n", `expected one row, got 0\b`,
			pgbErrLine(`client 0 script 0 command 0 query 0: expected one row, got 0`)),
		wordsErr("gset not a SELECT", "SET application_name = 'words' \\gset\n", `expected one row, got 0`),
		wordsErr("gset default column name", "SELECT 1 \\gset\n", `error storing into variable \?column\?`,
			pgbErrLine(`client 0 script 0 command 0 query 0: error storing into variable \?column\?`)),
		wordsErr("gset bad column name", "SELECT 1 AS \"not a name\" \\gset\n", `error storing into variable not a name`),
		{name: "gset two rows", args: []string{"-t", "1"}, scripts: []string{"\nSELECT 1 AS two UNION SELECT 2 ORDER BY 1 \\gset\n"}, code: 2,
			stdout: []string{`type: .*_1\.sql`, `processed: 0/1`}, stderr: []string{`expected one row, got 2\b`}, compare: true},
		{name: "aset of no row", args: []string{"-t", "1"}, scripts: []string{"\n-- no row\n\\; SELECT 7 AS c8 WHERE FALSE \\; \\aset\n\\set i debug(:c8)\n"}, code: 2,
			stdout: []string{`type: .*_1\.sql`, `processed: 0/1`}, compare: true,
			stderr: []string{`undefined variable \"c8\"`, `evaluation of meta-command failed\b`, aborted(1, "set", "evaluation of meta-command failed")}},
		// Pipelines, as checked when the command runs.
		{name: "startpipeline twice", args: []string{"-t", "1", "-n", "-M", "extended"}, scripts: []string{"\\startpipeline\n\\startpipeline\n"}, code: 2, compare: true,
			stderr: []string{`already in pipeline mode`, aborted(1, "startpipeline", "already in pipeline mode")}},
		{name: "endpipeline without a pipeline", args: []string{"-t", "1", "-n", "-M", "extended"}, scripts: []string{"\\endpipeline\n"}, code: 2, compare: true,
			stderr: []string{`not in pipeline mode`, aborted(0, "endpipeline", "not in pipeline mode")}},
		{name: "gset in a pipeline", args: []string{"-t", "1", "-n", "-M", "extended"}, scripts: []string{"\\startpipeline\nselect 1 \\gset g\n\\endpipeline\n"}, code: 2, compare: true,
			stderr: []string{`gset is not allowed in pipeline mode`, aborted(1, "gset", `\\gset is not allowed in pipeline mode`)}},
		// A transaction left open: pgbench aborts the client after its
		// first transaction (processed: 1/10); sledge fails each one and
		// goes on (docs/pgbench.md), with pgbench's line for each.
		{name: "incomplete transaction block", args: []string{"--no-vacuum"}, scripts: []string{"BEGIN;SELECT 1;\n"}, code: 2,
			stdout: []string{`processed: 0/10`},
			stderr: []string{`(?m)^sledge pgbench: error: client 0 aborted: end of script reached without completing the last transaction$`}},

		// Serialization failures and deadlocks, retried, said with
		// --verbose-errors; -d shows the retry sending the same values.
		{name: "serialization failure retried, verbose, debug", args: []string{"-n", "-c", "2", "-t", "1", "-d", "--verbose-errors", "--max-tries", "2"},
			scripts: []string{wordsSerialization},
			stdout:  []string{`processed: 2/2\b`, `number of transactions retried: 1\b`, `total number of retries: 1\b`},
			stderr: []string{`(?m)^sledge pgbench: client [01] got an error in command 4 \(SQL\) of script 0; ERROR:  could not serialize access due to concurrent update$`,
				`(?m)^sledge pgbench: client [01] repeats the transaction after the error \(try 1/2\)$`},
			check: sendsAgain},
		{name: "deadlock retried, verbose", args: []string{"-n", "-c", "2", "-t", "1", "--max-tries", "2", "--verbose-errors"},
			scripts: []string{wordsDeadlock},
			stdout:  []string{`processed: 2/2\b`, `number of transactions retried: 1\b`, `total number of retries: 1\b`},
			stderr:  []string{`client [01] got an error in command 5 \(SQL\) of script 0; ERROR:  deadlock detected\b`, `(?m)^DETAIL:  Process [0-9]+ waits for ShareLock on transaction`}},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string(nil), tc.args...)
			hasRef := strings.Contains(strings.Join(args, " "), "{1}")
			for i, text := range tc.scripts {
				path := filepath.Join(dir, fmt.Sprintf("words_%d.sql", i+1))
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				if !hasRef {
					args = append(args, "-f", path)
					continue
				}
				for j := range args {
					args[j] = strings.ReplaceAll(args[j], fmt.Sprintf("{%d}", i+1), path)
				}
			}
			switch tc.db {
			case "":
				args = append(args, dbname)
			case "-":
			default:
				args = append(args, tc.db)
			}
			vars := env
			if tc.env != nil {
				vars = map[string]string{}
				for k, v := range env {
					vars[k] = v
				}
				for k, v := range tc.env {
					vars[k] = v
				}
			}
			stdout, stderr, code := sledgePgbench(t, home, vars, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			for _, p := range tc.stdout {
				if !regexp.MustCompile(`(?m)` + p).MatchString(stdout) {
					t.Errorf("stdout does not match %q:\n%s", p, stdout)
				}
			}
			for _, p := range tc.stderr {
				if !regexp.MustCompile(p).MatchString(stderr) {
					t.Errorf("stderr does not match %q:\n%s", p, stderr)
				}
			}
			if tc.check != nil {
				if msg := tc.check(stderr); msg != "" {
					t.Errorf("%s:\n%s", msg, stderr)
				}
			}
			for _, p := range tc.not {
				if regexp.MustCompile(p).MatchString(stderr) {
					t.Errorf("stderr matches %q:\n%s", p, stderr)
				}
			}
			if tc.quiet && stderr != "" {
				t.Errorf("stderr is not empty:\n%s", stderr)
			}
			if tc.noOut && stdout != "" {
				t.Errorf("stdout is not empty:\n%s", stdout)
			}
			if strings.Contains(stdout+stderr, srv.Password) {
				t.Errorf("the output shows the password")
			}
			if strings.Contains(stdout+stderr, "goroutine ") || strings.Contains(stdout+stderr, "panic:") {
				t.Errorf("a stack trace:\n%s%s", stdout, stderr)
			}
			if !tc.compare || bin == "" {
				return
			}
			_, perr, pcode := runPgbench15(t, bin, vars, args...)
			if pcode != code {
				t.Errorf("pgbench exits %d, sledge pgbench %d\npgbench's stderr:\n%s", pcode, code, perr)
			}
			if want, got := runShape(perr, tc.skip), runShape(stderr, tc.skip); strings.Join(want, "\n") != strings.Join(got, "\n") {
				t.Errorf("stderr differs from pgbench's\npgbench:\n  %s\nsledge pgbench:\n  %s", strings.Join(want, "\n  "), strings.Join(got, "\n  "))
			}
		})
	}
}

// sendsAgain checks what pgbench's test of a serialization failure checks
// (with a back reference, which Go's regexp has not): a client sends an
// UPDATE with a random delta, gets the serialization failure in that
// command, then sends the same UPDATE again, the delta restored.
func sendsAgain(stderr string) string {
	sent := regexp.MustCompile(`(?m)^sledge pgbench: debug: client ([01]) sending (UPDATE words_ser SET v = v \+ -?[0-9]+\b.*)$`)
	for _, m := range sent.FindAllStringSubmatchIndex(stderr, -1) {
		client, line := stderr[m[2]:m[3]], stderr[m[0]:m[1]]
		rest := stderr[m[1]:]
		failed := "sledge pgbench: client " + client + " got an error in command 4 (SQL) of script 0; ERROR:  could not serialize access due to concurrent update"
		if i := strings.Index(rest, failed); i >= 0 && strings.Contains(rest[i:], line) {
			return ""
		}
	}
	return "no client sends its UPDATE, fails with a serialization failure and sends the same UPDATE again"
}
