package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgbench's script behaviours, as PostgreSQL 15's pgbench test suite
// checks them (src/bin/pgbench/t/001_pgbench_with_server.pl and the script
// cases of 002_pgbench_no_server.pl), run through `sledge pgbench` against
// the private PostgreSQL. The scripts are this project's own; each case has
// pgbench 15's exit status (0 done, 1 bad script found before the run, 2 a
// client failed during the run) and patterns of what pgbench says; the run
// cases in pgbench's words (TestPgbenchRunWords has each stream's). Where sledge's status differs from
// pgbench's on purpose the case says so and docs/pgbench.md lists it.

// tapCase is one run: its scripts, written to files that {1}, {2}, ... in
// args name; with one script and no {1} in args, "-f {1}" is added.
type tapCase struct {
	name    string
	args    []string
	scripts []string
	code    int
	out     []string // patterns stdout and stderr (together) must match
	not     []string // patterns they must not match
	skip    string   // why sledge cannot pass yet (a known difference)
	db      string   // the database, when not the one with pgbench's tables
}

// Two clients that meet inside their transactions, then conflict: on the
// same row under REPEATABLE READ (a serialization failure), or on two rows
// in opposite orders (a deadlock). Advisory lock N (transaction level)
// says who is in; N+1 (session level, kept across a rollback) who went
// past, so a retry, or a client that comes second, does not wait there.
// meetScripts are the two scripts on table (prefix_ser, prefix_dl) with
// advisory locks from lock up (lock+1, lock+2 for the serialization
// script; lock+10 to lock+12 for the deadlock), so that tests running
// them at the same time on one server do not meet each other. set is
// put before the serialization script's transaction, and update is its
// new value of v.
func meetScripts(prefix string, lock int, set, update string) (serialization, deadlock string) {
	wait := func(in, past int) string {
		return fmt.Sprintf(`DO $$
DECLARE n int := 0;
BEGIN
  WHILE n < 2000 AND NOT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND objid = %[2]d AND granted)
    AND (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = %[1]d AND granted) < 2 LOOP
    PERFORM pg_sleep(0.005);
    n := n + 1;
  END LOOP;
  PERFORM pg_advisory_lock_shared(%[2]d);
END $$;
`, in, past)
	}
	serialization = set + fmt.Sprintf("BEGIN ISOLATION LEVEL REPEATABLE READ;\nSELECT pg_advisory_xact_lock_shared(%d);\n", lock+1) +
		wait(lock+1, lock+2) + fmt.Sprintf("UPDATE %s_ser SET v = %s WHERE k = 1;\nEND;\n", prefix, update)
	d := lock + 10
	deadlock = fmt.Sprintf(`-- a retry waits until the other client is done (%[3]d), so that it does
-- not take the first row again before the other gets it
DO $$
DECLARE n int := 0;
BEGIN
  WHILE n < 2000 AND EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND objid = %[2]d AND granted)
    AND NOT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND objid = %[3]d AND granted) LOOP
    PERFORM pg_sleep(0.005);
    n := n + 1;
  END LOOP;
END $$;
BEGIN;
UPDATE %[4]s_dl SET v = v + 1 WHERE k = 1 + :client_id %% 2;
SELECT pg_advisory_xact_lock_shared(%[1]d);
`, d+1, d+2, d+3, prefix) + wait(d+1, d+2) + fmt.Sprintf(`UPDATE %[1]s_dl SET v = v + 1 WHERE k = 2 - :client_id %% 2;
END;
SELECT pg_advisory_lock_shared(%[2]d);
`, prefix, d+3)
	return serialization, deadlock
}

var tapSerialization, tapDeadlock = meetScripts("tap", 70, "", "v + 1")

// tapDefines are the variables the error cases read.
var tapDefines = []string{"-Dword=abc", "-Dnothing=null", "-Dyes=true", "-Dtwo=2", "-Dhalf=0.5",
	"-Dnotbool=yesno", "-Dbig=9223372036854775807", "-Dsmall=-9223372036854775808"}

// rep is n copies of s joined by sep.
func rep(s, sep string, n int) string {
	return strings.TrimSuffix(strings.Repeat(s+sep, n), sep)
}

// failedAt is pgbench's line for client 0 aborted at command cmd (from 0,
// as pgbench's messages number them) of script 0: an SQL command's
// ("client 0 script 0 aborted in command 1 query 0: ERROR: …") or a
// meta-command's ("client 0 aborted in command 1 (set) of script 0; …"),
// or a \gset's that could not store its result ("client 0 script 0 command
// 1 query 0: expected one row, got 2").
func failedAt(cmd int) string {
	return fmt.Sprintf(`client 0 (script 0 aborted in command %d query [0-9]+: |aborted in command %d \([a-z]+\) of script 0; |script 0 command %d query [0-9]+: )`, cmd, cmd, cmd)
}

func TestPgbenchScriptBehaviours(t *testing.T) {
	srv := pgLazy.Get(t)
	home := t.TempDir()
	dbname := pgbDatabase(t, srv)
	env := pgbEnv(srv)
	if stdout, stderr, code := sledgePgbench(t, home, env, "-i", "-s", "1", "-q", dbname); code != 0 {
		t.Fatalf("-i: exit %d\n%s%s", code, stdout, stderr)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s:%d/%s", srv.User, srv.Password, srv.Host, srv.Port, dbname))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE tap_ser (k int PRIMARY KEY, v int); INSERT INTO tap_ser VALUES (1, 0);
		CREATE TABLE tap_dl (k int PRIMARY KEY, v int); INSERT INTO tap_dl VALUES (1, 0), (2, 0)`); err != nil {
		t.Fatal(err)
	}
	one := []string{"processed: 1/1$"}
	failed := func(cmd int, what ...string) []string {
		return append([]string{`processed: 0/1$`, failedAt(cmd)}, what...)
	}
	exprScript := `-- integer, double and boolean operators and functions
\set a debug(7 * 6)
\set b debug(abs(-9) + greatest(1, 5, 3) - least(8, 2))
\set c debug(int(9.99) + int(-9.99))
\set d debug(double(3) / 2)
\set e debug(17 % 5 + (1 << 4) + (12 & 10) + (12 | 3) + (6 # 3) + (256 >> 4))
\set f debug(~0)
\set g debug(sqrt(16.0) + pow(2, 3))
\set h debug(mod(-7, 3))
\set i debug(case when 3 >= 3 and not false then 10 else 20 end)
\set j debug(NULL IS NULL and :nul IS NULL and 1 IS NOT NULL)
\set k debug(-9223372036854775808)
\set l debug(-5 / 2)
\set m debug(exp(0) + ln(1))
\set n debug(pi() > 3.14 and pi() < 3.15)
\set o debug(hash_fnv1a(0, 0))
\set p debug(hash_murmur2(1, 2))
\set q debug(permute(3, 10, 99))
\set r debug(:x * 2 + :y)
-- seeded: pgbench 15's values for --random-seed=777
\set s debug(random(1, 1000))
\set t debug(random_exponential(1, 1000, 3.0))
\set u debug(random_gaussian(1, 1000, 4.0))
\set v debug(random_zipfian(1, 1000, 1.07))
\set w debug(:random_seed)
\set z debug(:client_id + :scale)
\set aa debug(1 = 1.0 or 2 <> 2)
\set bb debug(case when 0 then 1 when 1.5 then 2 end)
\set cc debug(power(2.0, -1))
\set dd debug(NULL * 3)
\set ee debug(:bo and true)
\set ff debug(1 != 1)
\set gg debug(7 <= 7 and 7 < 8 and 8 > 7 and 8 >= \
   8)
\set hh debug(-4.5e-1)
`
	// What pgbench 15 prints for exprScript, command by command.
	exprWant := []string{"int 42", "int 12", "int 0", "double 1.5", "int 62", "int -1", "double 12", "int -1",
		"int 10", "boolean true", "int -9223372036854775808", "int -2", "double 1", "boolean true",
		"int -6284781860667377211", "int -3827666828038376880", "int 9", "int 42",
		"int 874", "int 102", "int 612", "int 812", "int 777", "int 1",
		"boolean true", "int 2", "double 0.5", "null", "boolean true", "boolean false", "boolean true", "double -0.45"}
	var exprOut []string
	for i, w := range exprWant {
		exprOut = append(exprOut, fmt.Sprintf(`(?m)^debug\(script=0,command=%d\): %s$`, i+1, regexp.QuoteMeta(w)))
	}
	sleepy := time.Now() // the \sleep case's lower bound is checked below

	cases := []tapCase{
		// Builtins, protocols, clients.
		{name: "builtin tpcb-like simple", args: []string{"-n", "-c", "2", "-t", "3", "-M", "simple", "-b", "tpcb-like", "-Dunused=1"}, out: []string{
			`transaction type: <builtin: TPC-B \(sort of\)>`, `query mode: simple`, `number of clients: 2\n`,
			`maximum number of tries: 1`, `processed: 6/6`}},
		{name: "builtin simple-update by prefix, extended", args: []string{"-n", "-c", "3", "-t", "2", "-M", "extended", "-b", "si"}, out: []string{
			`<builtin: simple update>`, `query mode: extended`, `number of clients: 3\n`, `processed: 6/6`}},
		{name: "builtin select-only by prefix, prepared", args: []string{"-n", "-c", "2", "-t", "5", "-M", "prepared", "-b", "se"}, out: []string{
			`<builtin: select only>`, `query mode: prepared`, `processed: 10/10`}},
		{name: "two scripts with weights, prepared", args: []string{"-n", "-c", "1", "-t", "20", "-M", "prepared", "-f", "{1}@3", "-f", "{2}"},
			scripts: []string{
				"-- the select-only kind\n\\set aid random(1, :scale * 100000)\nSELECT abalance::int AS bal\n  FROM pgbench_accounts\n  WHERE aid = :aid;\n",
				"-- automatic variables, cast for the prepared protocol\nBEGIN;\n\\set k 4\nSELECT :k::int + :scale::int * :client_id::int AS s;\nEND;\n"},
			out: []string{`transaction type: multiple scripts`, `query mode: prepared`,
				`SQL script 1: \S+_1\.sql\n - weight: 3 `, `SQL script 2: \S+_2\.sql\n - weight: 1 `, `processed: 20/20`}},
		{name: "custom script simple", args: []string{"-n", "-t", "4", "-M", "simple"},
			scripts: []string{"\\set aid random(1, :scale * 100000)\nBEGIN;\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\nCOMMIT;\n"},
			out:     []string{`transaction type: \S+_1\.sql`, `query mode: simple`, `processed: 4/4`}},
		{name: "many clients, DDL in a transaction, prepared", args: []string{"-n", "-c", "4", "-t", "5", "-M", "prepared"},
			scripts: []string{"BEGIN;\nCREATE TYPE pg_temp.colour AS ENUM ('red', 'green', 'blue');\nDROP TYPE pg_temp.colour;\nCOMMIT;\n"},
			out:     []string{`processed: 20/20`}},

		// \set: expressions, functions, operators, NULL, automatic
		// variables and -D values; the random functions with a seed.
		{name: "expressions", args: []string{"-n", "-t", "1", "--random-seed=777", "-Dx=20", "-Dy=2", "-Dnul=null", "-Dbo=true"},
			scripts: []string{exprScript}, out: append([]string{`(?m)^sledge pgbench: setting random seed to 777$`}, append(exprOut, one...)...)},

		// Meta-commands.
		{name: "sleep units, setshell, shell", args: []string{"-n", "-t", "1"},
			scripts: []string{"\\set ms 2\n\\sleep :ms ms\n\\sleep 500 us\n\\sleep 0 s\n\\sleep 0\n\\setshell three printf \\\n   3\n\\set four debug(:three + 1)\n\\shell echo marker-from-shell\n"},
			out:     []string{`debug\(script=0,command=7\): int 4\b`, `marker-from-shell`, `processed: 1/1`}},
		{name: "if elif else endif", args: []string{"-n", "-t", "1", "-M", "extended"},
			scripts: []string{`\set path 0
\if :path = 1
\set path 100
\elif 2 > 1
\set path 2
\else
\set path 300
\endif
\if false
\set path 400
\elif 0.0
\set path 500
\else
\if :path = 2
\set path :path + 5
\endif
\endif
\if 0
SELECT 1 / 0;
\endif
\set path debug(:path)
`}, out: []string{`debug\(script=0,command=[0-9]+\): int 7\b`, `processed: 1/1`}},
		{name: "gset", args: []string{"-n", "-t", "1", "-M", "simple"}, scripts: []string{`-- no columns: sets nothing
SELECT \gset
SELECT 11 AS one \gset
SELECT 21 AS a, 22 AS b \gset
SELECT 31 AS c \gset pre_
-- the last of two columns of one name wins
SELECT 41 AS d, 42 AS d \gset
-- a compound command: the last query's row
SELECT 1 AS e \; SELECT 51 AS e \gset
\set r debug(:one + :a + :b + :pre_c + :d + :e)
`}, out: []string{`int 178\b`, `processed: 1/1`}},
		{name: "gset NULL pasted as nothing", args: []string{"-n", "-t", "1", "-M", "simple"},
			scripts: []string{"SELECT NULL AS n \\gset\nSELECT 'x:n' = 'x' AS ok \\gset\n\\set v debug(:ok)\n"},
			out:     []string{`debug\(script=0,command=3\): boolean true`, `processed: 1/1`}},
		{name: "aset", args: []string{"-n", "-t", "1", "-M", "simple"}, scripts: []string{`SELECT 1 AS p \; SELECT 2 AS q \aset
-- several rows: the last is kept
SELECT 3 AS p UNION ALL SELECT 4 ORDER BY 1 DESC \aset
\set s debug(:p * 10 + :q)
`}, out: []string{`int 32\b`, `processed: 1/1`}},
		{name: "protocols bind variables alike, simple", args: []string{"-n", "-t", "2", "-M", "simple", "-Dv=5"},
			scripts: []string{"SELECT :v::int * 2 AS w \\gset\n\\set x debug(:w)\n"}, out: []string{`int 10\b`, `processed: 2/2`}},
		{name: "protocols bind variables alike, extended", args: []string{"-n", "-t", "2", "-M", "extended", "-Dv=5"},
			scripts: []string{"SELECT :v::int * 2 AS w \\gset\n\\set x debug(:w)\n"}, out: []string{`int 10\b`, `processed: 2/2`}},
		{name: "protocols bind variables alike, prepared", args: []string{"-n", "-t", "2", "-M", "prepared", "-Dv=5"},
			scripts: []string{"SELECT :v::int * 2 AS w \\gset\n\\set x debug(:w)\n"}, out: []string{`int 10\b`, `processed: 2/2`}},
		{name: "per-command report", args: []string{"-n", "-t", "3", "-r"},
			scripts: []string{"\\set x 3\nSELECT :x;\n\\sleep 1 ms\n"}, out: []string{
				`statement latencies in milliseconds and failures:\n +[0-9.]+ +0  \\set x 3\n +[0-9.]+ +0  SELECT :x;\n +[0-9.]+ +0  \\sleep 1 ms\n`}},

		{name: "per-command report of two scripts", args: []string{"-n", "-t", "40", "-r", "-f", "{1}@2", "-f", "{2}"},
			scripts: []string{"\\set x 1\nSELECT :x;\n", "SELECT 2;\n\\sleep 1 ms\n"}, out: []string{
				`SQL script 1: \S+_1\.sql\n - weight: 2 \(targets 66\.7% of total\)\n - [0-9]+ transactions .*\n(?: - .*\n)* - statement latencies in milliseconds and failures:\n +[0-9.]+ +0  \\set x 1\n +[0-9.]+ +0  SELECT :x;\n`,
				`SQL script 2: \S+_2\.sql\n - weight: 1 .*\n(?: - .*\n)* - statement latencies in milliseconds and failures:\n +[0-9.]+ +0  SELECT 2;\n +[0-9.]+ +0  \\sleep 1 ms\n`}},

		// SQL as psql's lexer reads it: ';' ends a command outside quotes,
		// dollar quotes and comments; variables are replaced everywhere,
		// in quotes too.
		{name: "SQL lexing", args: []string{"-n", "-t", "1", "-M", "simple"},
			scripts: []string{"SELECT ';' AS semi, $x$ ; $x$ AS dollar, 1 /* ; */ + 1 AS two \\gset\n-- a comment;\nSELECT 1\n  + 2;\n\\set v debug(:two)\n"},
			out:     []string{`debug\(script=0,command=3\): int 2\b`, `processed: 1/1`}},
		{name: "variable in quotes, extended", args: []string{"-n", "-t", "1", "-M", "extended", "-Dx=1"},
			scripts: []string{"SELECT ':x' AS s;\n"}, code: 2,
			out: []string{`processed: 0/1`, `bind message supplies 1 parameters, but prepared statement "" requires 0`}},
		{name: "undefined variable in SQL, simple", args: []string{"-n", "-t", "1", "-M", "simple"},
			scripts: []string{"SELECT :nosuch;\n"}, code: 2, out: []string{`processed: 0/1`, `syntax error at or near ":"`}},
		// A builtin without its tables: TestPgbenchRunWords ("builtin
		// without its tables"), pgbench's lines and hint.

		// Pipelines.
		{name: "pipeline, extended", args: []string{"-n", "-t", "2", "-M", "extended"},
			scripts: []string{"\\startpipeline\n" + rep("SELECT 1;", "\n", 8) + "\n\\endpipeline\n"}, out: []string{`processed: 2/2`}},
		{name: "pipeline, prepared", args: []string{"-n", "-t", "2", "-M", "prepared"},
			scripts: []string{"\\startpipeline\n" + rep("SELECT 1;", "\n", 8) + "\n\\endpipeline\n"}, out: []string{`processed: 2/2`}},
		{name: "pipeline, serializable, clients", args: []string{"-n", "-c", "3", "-t", "4", "-M", "prepared"},
			scripts: []string{"\\startpipeline\nBEGIN ISOLATION LEVEL SERIALIZABLE;\n" + rep("SELECT 2;", "\n", 5) + "\nEND;\n\\endpipeline\n"},
			out:     []string{`processed: 12/12`}},
		{name: "pipeline with an error", args: []string{"-n", "-t", "1", "-M", "extended"},
			scripts: []string{"\\startpipeline\nSELECT 1;\nSELECT 1 / 0;\nSELECT 3;\n\\endpipeline\n"}, code: 2,
			out: []string{`processed: 0/1`, `division by zero`}},
		// The pipeline's state is checked when the command runs (exit 2).
		{name: "startpipeline twice", args: []string{"-n", "-t", "1", "-M", "extended"},
			scripts: []string{"\\startpipeline\n\\startpipeline\n\\endpipeline\n"}, code: 2,
			out: []string{`processed: 0/1`, failedAt(1), `already in pipeline mode`}},
		{name: "endpipeline without start", args: []string{"-n", "-t", "1", "-M", "extended"},
			scripts: []string{"SELECT 1;\n\\endpipeline\n"}, code: 2,
			out: []string{`processed: 0/1`, failedAt(1), `not in pipeline mode`}},
		{name: "pipeline never ended", args: []string{"-n", "-t", "1", "-M", "extended"},
			scripts: []string{"\\startpipeline\nSELECT 1;\n"}, code: 2,
			out: []string{`processed: 0/1`, `client 0 aborted: end of script reached with pipeline open`}},
		{name: "gset in a pipeline", args: []string{"-n", "-t", "1", "-M", "prepared"},
			scripts: []string{"\\startpipeline\nSELECT 1 AS one \\gset\n\\endpipeline\n"}, code: 2,
			out: []string{`processed: 0/1`, failedAt(1), `\\gset is not allowed in pipeline mode`}},
		// pgbench aborts the client at its \startpipeline (exit 2); sledge
		// refuses the run before it starts (exit 1): whether a protocol
		// or a database can pipeline is known then.
		{name: "pipeline with the simple protocol", args: []string{"-n", "-t", "1", "-M", "simple"},
			scripts: []string{"\\startpipeline\nSELECT 1;\n\\endpipeline\n"}, code: 1, out: []string{`pipelines .* need --protocol extended or prepared`}},

		// COPY: pgbench cannot serve it and aborts the client, promptly.
		{name: "COPY FROM STDIN, simple", args: []string{"-n", "-t", "2", "-M", "simple"},
			scripts: []string{"CREATE TEMP TABLE IF NOT EXISTS sink (x int);\nCOPY sink FROM STDIN;\n"}, code: 2,
			out: []string{`processed: 0/2`, `COPY is not supported in pgbench`}},
		{name: "COPY FROM STDIN, extended", args: []string{"-n", "-t", "2", "-M", "extended"},
			scripts: []string{"CREATE TEMP TABLE IF NOT EXISTS sink (x int);\nCOPY sink FROM STDIN;\nSELECT 1;\n"}, code: 2,
			out: []string{`processed: 0/2`, `COPY is not supported in pgbench`}},
		{name: "COPY FROM STDIN, prepared", args: []string{"-n", "-t", "2", "-M", "prepared"},
			scripts: []string{"BEGIN;\nCREATE TEMP TABLE IF NOT EXISTS sink (x int);\nCOPY sink FROM STDIN;\nEND;\n"}, code: 2,
			out: []string{`processed: 0/2`, `COPY is not supported in pgbench`}},
		{name: "COPY TO STDOUT", args: []string{"-n", "-t", "1", "-M", "simple"},
			scripts: []string{"COPY (SELECT g FROM generate_series(1, 3) g) TO STDOUT;\n"}, code: 2,
			out: []string{`processed: 0/1`, `COPY is not supported in pgbench`}},
		{name: "COPY in a pipeline", args: []string{"-n", "-t", "1", "-M", "extended"},
			scripts: []string{"CREATE TEMP TABLE IF NOT EXISTS sink (x int);\n\\startpipeline\nSELECT 1;\nCOPY sink FROM STDIN;\n\\endpipeline\n"}, code: 2,
			out: []string{`processed: 0/1`, `COPY is not supported in pgbench`}},

		// pgbench's limits (MAX_ARGS = 256).
		{name: "255 parameters, prepared", args: []string{"-n", "-t", "1", "-M", "prepared", "-Dz=0"},
			scripts: []string{"SELECT greatest(" + rep(":z", ", ", 255) + ");\n"}, out: one},
		{name: "256 parameters, prepared", args: []string{"-n", "-t", "1", "-M", "prepared", "-Dz=0"},
			scripts: []string{"SELECT greatest(" + rep(":z", ", ", 256) + ");\n"}, code: 1,
			out: []string{`statement has too many arguments \(maximum is 255\)`}},
		{name: "256 parameters, extended", args: []string{"-n", "-t", "1", "-M", "extended", "-Dz=0"},
			scripts: []string{"SELECT greatest(" + rep(":z", ", ", 256) + ");\n"}, code: 1,
			out: []string{`statement has too many arguments \(maximum is 255\)`}},
		{name: "256 variables, simple (pasted, no parameters)", args: []string{"-n", "-t", "1", "-M", "simple", "-Dz=0"},
			scripts: []string{"SELECT greatest(" + rep(":z", ", ", 256) + ");\n"}, out: one},
		{name: "shell with too many arguments", args: []string{"-n", "-t", "1"},
			scripts: []string{"\\shell true " + rep("x", " ", 255) + "\n"}, code: 1, out: []string{`too many arguments in command "shell"`}},
		{name: "setshell with too many arguments", args: []string{"-n", "-t", "1"},
			scripts: []string{"\\setshell v echo " + rep("1", " ", 254) + "\n"}, code: 1, out: []string{`too many arguments in command "setshell"`}},
		{name: "shell with 256 words", args: []string{"-n", "-t", "1"},
			scripts: []string{"\\shell true " + rep("x", " ", 254) + "\n"}, out: one},

		// Rate limit and latency limit (-R, -L) with a script.
		{name: "rate and latency limit, builtin", args: []string{"-n", "-c", "2", "-t", "20", "-S", "--rate=100000", "--latency-limit=1000000", "-r"},
			out: []string{`<builtin: select only>`, `processed: 40/40`, `skipped: 0 `, `above the 1000000\.0 ms latency limit: 0/40`}},
		{name: "late transactions skipped", args: []string{"-n", "-t", "10", "--rate=100000", "--latency-limit=1", "-r"},
			scripts: []string{"\\sleep 2ms\n"},
			out:     []string{`processed: [01]/10`, `skipped: [0-9]+ `, `above the 1\.0 ms latency limit: [01]/[01]`, `[0-9.]+ +0  \\sleep 2ms`}},

		// Serialization failures and deadlocks are retried (--max-tries),
		// the variables restored.
		{name: "serialization failure retried", args: []string{"-n", "-c", "2", "-t", "1", "--max-tries", "2"},
			scripts: []string{tapSerialization}, out: []string{`processed: 2/2`, `number of transactions retried: 1 `, `total number of retries: 1$`}},
		{name: "deadlock retried", args: []string{"-n", "-c", "2", "-t", "1", "--max-tries", "2"},
			scripts: []string{tapDeadlock}, out: []string{`processed: 2/2`, `number of transactions retried: 1 `, `total number of retries: 1$`}},
		{name: "serialization failure not retried", args: []string{"-n", "-c", "2", "-t", "1", "--max-tries", "1"},
			scripts: []string{tapSerialization}, out: []string{`processed: 1/2`, `number of failed transactions: 1 `},
			// pgbench counts the failure and exits 0: only an aborted
			// client makes it exit 2.
		},

		// A transaction left open at the end of the script. pgbench
		// aborts the client after counting its first transaction; sledge
		// fails each transaction and goes on (docs/pgbench.md).
		{name: "incomplete transaction block", args: []string{"-n", "-t", "3"},
			scripts: []string{"BEGIN;SELECT 1;\n"}, code: 2,
			out: []string{`processed: 0/3`, `client 0 aborted: end of script reached without completing the last transaction`}},
	}

	// Errors while the client runs: pgbench exits 2 and names the client,
	// script and command, numbered from 0, as sledge pgbench does.
	runErr := func(name, script string, cmd int, what string) tapCase {
		return tapCase{name: name, args: append([]string{"-n", "-t", "1", "-M", "prepared"}, tapDefines...),
			scripts: []string{script}, code: 2, out: failed(cmd, what)}
	}
	cases = append(cases,
		runErr("SQL syntax error", "-- a syntax error\n  SELECT 2 * ;\n", 0, `syntax error`),
		runErr("SQL division by zero", "SELECT 7 / (random() * 0)::int;\n", 0, `division by zero`),
		runErr("bad parameter value", "SELECT 5 AS v1, '5x' AS v2 \\gset\nSELECT :v1::smallint, :v2::smallint;\n", 1,
			`invalid input syntax for type smallint: "5x"`),
		runErr("set division by zero", "\\set i 3 / 0\n", 0, `division by zero`),
		runErr("set modulo by zero", "\\set i 1\n\\set j 3 % (:i - 1)\n", 1, `division by zero`),
		runErr("set undefined variable", "\\set i :neverset + 1\n", 0, `undefined variable "neverset"`),
		runErr("set non-numeric variable", "\\set i :word * 2\n", 0, `malformed variable "word" value: "abc"`),
		runErr("set not a boolean", "\\set b :notbool and true\n", 0, `malformed variable "notbool" value: "yesno"`),
		runErr("set too many function arguments", "\\set i greatest("+rep("1", ",", 17)+")\n", 0, `too many function arguments`),
		runErr("set empty random range", "\\set i random(10, 9)\n", 0, `empty range given to random`),
		runErr("set random range too large", "\\set i random(:small, :big)\n", 0, `random range is too large`),
		runErr("set gaussian parameter", "\\set i random_gaussian(1, 9, 1.5)\n", 0, `gaussian param.* at least 2`),
		runErr("set exponential parameter", "\\set i random_exponential(1, 9, -1.0)\n", 0, `exponential parameter must be greater than zero`),
		runErr("set zipfian parameter low", "\\set i random_zipfian(1, 9, 1.0)\n", 0, `zipfian parameter must be in range \[1\.001, 1000\]`),
		runErr("set zipfian parameter high", "\\set i random_zipfian(1, 9, 5000)\n", 0, `zipfian parameter must be in range \[1\.001, 1000\]`),
		runErr("set double to boolean", "\\set b NOT :half\n", 0, `cannot coerce double to boolean`),
		runErr("set boolean to int", "\\set i :yes + 1\n", 0, `cannot coerce boolean to int`),
		runErr("set boolean to double", "\\set d sqrt(false)\n", 0, `cannot coerce boolean to double`),
		runErr("set boolean random bound", "\\set i random(true, 9)\n", 0, `cannot coerce boolean to int`),
		runErr("set double to int overflow", "\\set i int(-1e40)\n", 0, `double to int overflow`),
		runErr("set add overflow", "\\set i :big + 1\n", 0, `bigint add out of range`),
		runErr("set sub overflow", "\\set i :small - 1\n", 0, `bigint sub out of range`),
		runErr("set mul overflow", "\\set i (1 << 40) * (1 << 40)\n", 0, `bigint mul out of range`),
		runErr("set div overflow", "\\set i :small / -1\n", 0, `bigint div out of range`),
		runErr("set permute size", "\\set i permute(1, -3)\n", 0, `permute size parameter must be greater than zero`),
		runErr("setshell not an integer", "\\setshell i echo forty-two\n", 0, `must return an integer`),
		runErr("setshell failing command", "\\setshell i sledge-no-such-command-xyz\n", 0, `sledge-no-such-command-xyz: could not read result of shell command`),
		runErr("shell failing command", "\\shell sledge-no-such-command-xyz\n", 0, `sledge-no-such-command-xyz: could not launch shell command`),
		runErr("shell undefined variable", "\\shell echo ::literal :neverset\n", 0, `echo: undefined variable ":neverset"`),
		runErr("sleep undefined variable", "\\sleep :neverset ms\n", 0, `sleep: undefined variable "neverset"`),
		runErr("gset no row", "SELECT 1 AS x WHERE false \\gset\n", 0, `expected one row, got 0\b`),
		runErr("gset two rows", "SELECT g FROM generate_series(1, 2) g \\gset\n", 0, `expected one row, got 2\b`),
		runErr("gset after a command without rows", "SET application_name = 'tap' \\gset\n", 0, `expected one row, got 0\b`),
		runErr("gset default column name", "SELECT 5 \\gset\n", 0, `error storing into variable \?column\?`),
		runErr("gset bad column name", "SELECT 5 AS \"no good\" \\gset\n", 0, `error storing into variable no good`),
		runErr("set invalid variable name", "\\set 1x 1\n", 0, `set: invalid variable name: "1x"`),
		runErr("setshell invalid variable name", "\\setshell x. echo 3\n", 0, `setshell: invalid variable name: "x\."`),
		runErr("set negated minimum integer", "\\set i -(-9223372036854775808)\n", 0, `bigint sub out of range`),
		// \gset stores a NULL as libpq's text of it, the empty string.
		runErr("gset NULL in an expression", "SELECT NULL AS n \\gset\n\\set i :n + 1\n", 1,
			`evaluation of meta-command failed`),
		runErr("gset NULL bound as empty text", "SELECT NULL AS n \\gset\nSELECT :n::int;\n", 1, `invalid input syntax for type integer: ""`),
		runErr("aset no row", "SELECT 9 AS nothere WHERE false \\aset\n\\set v :nothere\n", 1, `undefined variable "nothere"`),
	)

	// Errors in the script's text: pgbench exits 1 before the run, in its
	// words (pgbench_words_parse_test.go has them line for line against
	// pgbench's): FILE:LINE: what, in command "NAME", then the command's
	// line and a caret under where the error was found; conditionals out
	// of place once the script is read, by command number.
	parseErr := func(name, script string, what ...string) tapCase {
		return tapCase{name: name, args: append([]string{"-n", "-t", "1", "-M", "prepared"}, tapDefines...),
			scripts: []string{script}, code: 1, out: what}
	}
	const file = `pgbench: error: \S+_1\.sql`
	caret := func(col int) string { return fmt.Sprintf(`^ {%d}\^ error found here$`, col) }
	cases = append(cases,
		parseErr("set incomplete expression", "\\set i 2 *\n", file+`:1: syntax error in command "set"$`, `^\\set i 2 \*$`, caret(10)),
		parseErr("set unknown function", "\\set i nosuchfn(1)\n", file+`:1: unexpected function name \(nosuchfn\) in command "set"$`, caret(14)),
		parseErr("set unexpected character", "\\set i 1 $ 2\n", file+`:1: unexpected character \(\$\) in command "set"$`, `^\\set i 1 \$ 2$`, caret(9)),
		parseErr("set no expression", "\\set i\n", file+`:1: syntax error in command "set"$`, `^\\set i$`, caret(6)),
		parseErr("set no argument", "\\set\n", file+`:1: missing argument in command "set"$`),
		parseErr("set CASE without WHEN", "\\set i CASE 1 ELSE 2 END\n", file+`:1: syntax error in command "set"$`, caret(12)),
		parseErr("set wrong number of arguments", "\\set d sqrt(4.0, 2.0)\n", file+`:1: unexpected number of arguments \(sqrt\) in command "set"$`, caret(20)),
		parseErr("set greatest of nothing", "\\set i greatest()\n", file+`:1: at least one argument expected \(greatest\) in command "set"$`),
		parseErr("set least of nothing", "\\set i least()\n", file+`:1: at least one argument expected \(least\) in command "set"$`),
		parseErr("set hash without arguments", "\\set i hash()\n", file+`:1: unexpected number of arguments \(hash\) in command "set"$`),
		parseErr("set hash of three", "\\set i hash(1, 2, 3)\n", file+`:1: unexpected number of arguments \(hash\) in command "set"$`),
		parseErr("set permute of one", "\\set i permute(5)\n", file+`:1: unexpected number of arguments \(permute\) in command "set"$`),
		parseErr("set permute of four", "\\set i permute(1, 2, 3, 4)\n", file+`:1: unexpected number of arguments \(permute\) in command "set"$`),
		parseErr("set bigint constant overflow", "\\set i 99999999999999999999\n", file+`:1: bigint constant overflow \(99999999999999999999\) in command "set"$`),
		// 9223372036854775808 is a constant only after a minus.
		parseErr("set minimum integer without its minus", "\\set i 9223372036854775808\n", file+`:1: syntax error in command "set"$`, caret(25)),
		parseErr("set double constant overflow", "\\set d 2.5e308\n", file+`:1: double constant overflow \(2\.5e308\) in command "set"$`),
		parseErr("set double constant overflow, leading dot", "\\set d .5E309\n", file+`:1: double constant overflow \(\.5E309\) in command "set"$`),
		parseErr("sleep without duration", "\\sleep\n", file+`:1: missing argument in command "sleep"$`, `^\\sleep$`),
		parseErr("sleep too many arguments", "\\sleep 1 ms now\n", file+`:1: too many arguments in command "sleep"$`, caret(12)),
		parseErr("sleep unknown unit", "\\sleep 3 hours\n", file+`:1: unrecognized time unit, must be us, ms or s \(hours\) in command "sleep"$`, caret(9)),
		parseErr("setshell without command", "\\setshell v\n", file+`:1: missing argument in command "setshell"$`, `^\\setshell v$`),
		parseErr("shell without command", "\\shell\n", file+`:1: missing command in command "shell"$`),
		parseErr("unknown meta-command", "\\frobnicate\n", file+`:1: invalid command in command "frobnicate"$`, `^\\frobnicate$`),
		parseErr("gset first", "\\gset\n", file+`:1: \\gset must follow an SQL command$`),
		parseErr("gset after a meta-command", "\\set i 1\n\\gset\n", file+`:2: \\gset must follow an SQL command \(\\set i 1\)$`),
		parseErr("gset twice", "SELECT 1 AS i \\gset\n\\gset\n", file+`:2: \\gset must follow an SQL command$`),
		parseErr("gset two prefixes", "SELECT 1 AS i \\gset p q\n", file+`:1: too many arguments in command "gset"$`, `^\\gset p q$`),
		parseErr("if without endif", "\\if true\n", `pgbench: error: condition error in script "\S+_1\.sql" command 2: \\if without matching \\endif$`),
		parseErr("elif without if", "\\elif true\n", `condition error in script "\S+_1\.sql" command 1: \\elif without matching \\if$`),
		parseErr("else without if", "\\else\n", `condition error in script "\S+_1\.sql" command 1: \\else without matching \\if$`),
		parseErr("endif without if", "\\endif\n", `condition error in script "\S+_1\.sql" command 1: \\endif without matching \\if$`),
		parseErr("elif after else", "\\if false\n\\else\n\\elif true\n\\endif\n", `condition error in script "\S+_1\.sql" command 3: \\elif after \\else$`),
		parseErr("else after else", "\\if false\n\\else\n\\else\n\\endif\n", `condition error in script "\S+_1\.sql" command 3: \\else after \\else$`),
		parseErr("if without expression", "\\if\n\\endif\n", file+`:1: syntax error in command "if"$`, `^\\if$`, caret(3)),
		parseErr("elif bad expression", "\\if false\n\\elif 1 -\n\\endif\n", file+`:2: syntax error in command "elif"$`, caret(9)),
		parseErr("else with an argument", "\\if false\n\\else 1\n\\endif\n", file+`:2: unexpected argument in command "else"$`, `^\\else 1$`),
		parseErr("endif with an argument", "\\if false\n\\endif 1\n", file+`:2: unexpected argument in command "endif"$`, `^\\endif 1$`),
		parseErr("empty script", "-- nothing but a comment\n", `pgbench: error: empty command list for script "\S+_1\.sql"$`),
	)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != "" {
				t.Skip("known difference: " + tc.skip)
			}
			args := append([]string(nil), tc.args...)
			dir := t.TempDir()
			hasRef := strings.Contains(strings.Join(args, " "), "{1}")
			for i, text := range tc.scripts {
				path := filepath.Join(dir, fmt.Sprintf("%s_%d.sql", strings.NewReplacer(" ", "_", ",", "", "\\", "").Replace(tc.name), i+1))
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				ref := fmt.Sprintf("{%d}", i+1)
				if !hasRef {
					args = append(args, "-f", path)
					continue
				}
				for j := range args {
					args[j] = strings.ReplaceAll(args[j], ref, path)
				}
			}
			if tc.db != "" {
				args = append(args, tc.db)
			} else {
				args = append(args, dbname)
			}
			// No case may hang: each is bounded well below the transaction
			// timeout.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			stdout, stderr, code := runCLIEnv(t, ctx, home, env, append([]string{"pgbench"}, args...)...)
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %v", d)
			}
			all := stdout + "\n" + stderr
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			for _, p := range tc.out {
				if !regexp.MustCompile(`(?m)` + p).MatchString(all) {
					t.Errorf("no match for %q in\nstdout:\n%s\nstderr:\n%s", p, stdout, stderr)
				}
			}
			for _, p := range tc.not {
				if regexp.MustCompile(`(?m)` + p).MatchString(all) {
					t.Errorf("unwanted match for %q in\nstdout:\n%s\nstderr:\n%s", p, stdout, stderr)
				}
			}
			if code == 1 {
				// pgbench: nothing on stdout, one error line (a script's
				// error adds its line and a caret line).
				if stdout != "" {
					t.Errorf("exit 1 with stdout:\n%s", stdout)
				}
				if n := strings.Count(stderr, "sledge pgbench: error:"); n != 1 || strings.Count(strings.TrimSpace(stderr), "\n") > 2 {
					t.Errorf("want one error line, got:\n%s", stderr)
				}
			}
			if strings.Contains(all, "goroutine ") || strings.Contains(all, "panic:") {
				t.Errorf("a stack trace:\n%s", all)
			}
		})
	}
	// \sleep :ms ms, 500 us: at least 2.5 ms went by in that case (and
	// the -r case's 3 × 1 ms); a bound that catches a sleep of nothing.
	if d := time.Since(sleepy); d < 5*time.Millisecond {
		t.Errorf("the cases took %v: the sleeps did not sleep", d)
	}
}

// The same --random-seed gives the same values, run after run; another
// seed gives others.
func TestPgbenchScriptSeedDeterminism(t *testing.T) {
	srv := pgLazy.Get(t)
	home := t.TempDir()
	dbname := pgbDatabase(t, srv)
	env := pgbEnv(srv)
	script := filepath.Join(home, "seeded.sql")
	if err := os.WriteFile(script, []byte("\\set u debug(random(1000, 1999))\n\\set e debug(random_exponential(2000, 2999, 2.0))\n"+
		"\\set g debug(random_gaussian(3000, 3999, 3.0))\n\\set z debug(random_zipfian(4000, 4999, 1.5))\n\\set s debug(:random_seed)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	debugLines := func(seed string) string {
		t.Helper()
		_, stderr, code := sledgePgbench(t, home, env, "-n", "-c", "2", "-t", "3", "--random-seed="+seed, "-f", script, dbname)
		if code != 0 {
			t.Fatalf("--random-seed=%s: exit %d\n%s", seed, code, stderr)
		}
		var lines []string
		for _, l := range strings.Split(stderr, "\n") {
			if strings.HasPrefix(l, "debug(") {
				lines = append(lines, l)
			}
		}
		if len(lines) != 2*3*5 {
			t.Fatalf("--random-seed=%s: %d debug lines, want 30:\n%s", seed, len(lines), stderr)
		}
		// Clients interleave: compare the sorted lines.
		sort.Strings(lines)
		return strings.Join(lines, "\n")
	}
	a, b, c := debugLines("31337"), debugLines("31337"), debugLines("31338")
	if a != b {
		t.Errorf("the same seed gave different values:\n%s\n--\n%s", a, b)
	}
	if a == c {
		t.Errorf("seeds 31337 and 31338 gave the same values:\n%s", a)
	}
	if !strings.Contains(a, "command=5): int 31337") {
		t.Errorf(":random_seed is not the seed:\n%s", a)
	}
}
