package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/testdb"
)

var pgbDBSeq atomic.Int64

// pgbDatabase creates a database of its own on the private PostgreSQL
// server and returns its name.
func pgbDatabase(t *testing.T, srv *testdb.Server) string {
	t.Helper()
	name := fmt.Sprintf("pgb_%d_%d", os.Getpid(), pgbDBSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s:%d/postgres", srv.User, srv.Password, srv.Host, srv.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return name
}

// pgbEnv is libpq's environment for the private server: its socket
// directory, port, user and password.
func pgbEnv(srv *testdb.Server) map[string]string {
	return map[string]string{"PGHOST": srv.Socket, "PGPORT": fmt.Sprint(srv.Port), "PGUSER": srv.User, "PGPASSWORD": srv.Password}
}

// sledgePgbench runs `sledge pgbench args` in-process with vars as the
// environment, bounded to two minutes.
func sledgePgbench(t *testing.T, home string, vars map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return runCLIEnv(t, ctx, home, vars, append([]string{"pgbench"}, args...)...)
}

// pgbenchPart is the pgbench report of sledge pgbench's stdout: what
// comes before sledge's own part.
func pgbenchPart(stdout string) string {
	part, _, _ := strings.Cut(stdout, "\n\n--- sledge ---\n")
	return part
}

// Command lines of sledge pgbench against a private PostgreSQL: exit
// codes, and the output's lines. Every run is bounded (-t small or -T 1).
func TestPgbenchCommandLines(t *testing.T) {
	srv := pgLazy.Get(t)
	home := t.TempDir()
	dbname := pgbDatabase(t, srv)
	env := pgbEnv(srv)
	withDB := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range env {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	// -i first: the other cases run on its tables.
	stdout, stderr, code := sledgePgbench(t, home, env, "-i", "-s", "1", dbname)
	if code != 0 || stdout != "" || !strings.Contains(stderr, "\ndone in ") {
		t.Fatalf("-i: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	script := home + "/div.sql"
	if err := os.WriteFile(script, []byte("SELECT 1/0;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noCols := home + "/nocols.sql"
	if err := os.WriteFile(noCols, []byte("SELECT \\gset\nSELECT 1 AS one \\gset\nSELECT :one;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	insertGset := home + "/insertgset.sql"
	if err := os.WriteFile(insertGset, []byte("CREATE TEMP TABLE IF NOT EXISTS t (x int);\nINSERT INTO t VALUES (1) \\gset\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tcp := fmt.Sprintf("postgres://%s:%s@%s:%d/%s", srv.User, srv.Password, srv.Host, srv.Port, dbname)
	cases := []struct {
		name   string
		env    map[string]string
		args   []string
		code   int
		stdout []string // patterns, in order, of stdout's lines
		stderr string   // a pattern stderr must match
	}{
		{"tpcb-like", env, []string{"-c", "2", "-t", "5", dbname}, 0, []string{
			`^pgbench \(sledge .*, server PostgreSQL 15`, `^transaction type: <builtin: TPC-B \(sort of\)>$`,
			`^scaling factor: 1$`, `^query mode: simple$`, `^number of clients: 2$`, `^number of threads: 1$`,
			`^maximum number of tries: 1$`, `^number of transactions per client: 5$`,
			`^number of transactions actually processed: 10/10$`, `^number of failed transactions: 0 \(0\.000%\)$`,
			`^latency average = [0-9.]+ ms$`, `^initial connection time = [0-9]+\.[0-9]{3} ms$`,
			`^tps = [0-9]+\.[0-9]{6} \(without initial connection time\)$`,
			`^$`, `^--- sledge ---$`, `^job [0-9]+$`, `latency percentiles: p50`, `cost per transaction`}, ""},
		{"-S", env, []string{"-S", "-t", "3", dbname}, 0, []string{`^transaction type: <builtin: select only>$`}, ""},
		{"-s with a builtin", env, []string{"-s", "7", "-S", "-t", "1", dbname}, 0, []string{`^scaling factor: 1$`}, `warning: scale option ignored`},
		{"-s with a file", env, []string{"-s", "7", "-f", script, "-t", "1", dbname}, 2, []string{`^scaling factor: 7$`}, ""},
		{"no more threads than clients", env, []string{"-c", "2", "-j", "4", "-S", "-t", "1", dbname}, 0, []string{`^number of threads: 2$`}, ""},
		{"-N long forms", env, []string{"-N", "--transactions=3", "--client", "2", dbname}, 0, []string{
			`^transaction type: <builtin: simple update>$`, `^number of clients: 2$`}, ""},
		{"clustered", env, []string{"-nS", "-c2", "-t3", "-Mprepared", dbname}, 0, []string{
			`^transaction type: <builtin: select only>$`, `^query mode: prepared$`, `^number of clients: 2$`}, ""},
		{"-T 1 with progress, rate and limit", env, []string{"--time=1", "-P", "1", "-R", "200", "-L", "100", "-S", dbname}, 0, []string{
			`^duration: 1 s$`, `^number of transactions skipped: `, `^number of transactions above the 100\.0 ms latency limit: `,
			`^latency average = `, `^latency stddev = `, `^rate limit schedule lag: avg `, `^tps = `}, `progress: `},
		{"-r", env, []string{"-r", "-S", "-t", "2", dbname}, 0, []string{
			`^tps = `, `^statement latencies in milliseconds and failures:$`, `^ +[0-9.]+ +0  \\set aid random`,
			`^ +[0-9.]+ +0  SELECT abalance`}, ""},
		{"two scripts", env, []string{"-S", "-b", "simple@2", "-t", "3", dbname}, 0, []string{
			`^transaction type: multiple scripts$`, `^SQL script 1: <builtin: select only>$`, `^ - weight: 1 \(targets 33\.3% of total\)$`,
			`^SQL script 2: <builtin: simple update>$`, `^ - weight: 2 `}, ""},
		{"PGDATABASE", withDB(map[string]string{"PGDATABASE": dbname}), []string{"-t", "1", "-S"}, 0, []string{`^number of transactions actually processed: 1/1$`}, ""},
		{"-h -p -U", map[string]string{"PGPASSWORD": srv.Password}, []string{"-h", srv.Socket, "-p", fmt.Sprint(srv.Port), "-U", srv.User, "-S", "-t", "1", dbname}, 0,
			[]string{`^number of transactions actually processed: 1/1$`}, ""},
		{"-h over TCP", withDB(map[string]string{"PGHOST": "/nonexistent"}), []string{"--host", srv.Host, "-S", "-t", "1", dbname}, 0,
			[]string{`^number of transactions actually processed: 1/1$`}, ""},
		{"--db", nil, []string{"--db", tcp, "-S", "-t", "1"}, 0, []string{`^number of transactions actually processed: 1/1$`}, ""},
		{"-b list", nil, []string{"-b", "list"}, 0, nil, `(?s)Available builtin scripts:\n      tpcb-like: <builtin: TPC-B \(sort of\)>\n  simple-update: <builtin: simple update>\n    select-only: <builtin: select only>\n`},
		{"--show-script", nil, []string{"--show-script=select"}, 0, nil, `(?s)^-- select-only: <builtin: select only>\n\\set aid random\(1, 100000 \* :scale\)\nSELECT abalance`},
		{"-V", nil, []string{"-V"}, 0, []string{`^pgbench \(sledge\) `}, ""},
		{"--help", nil, []string{"--help"}, 0, []string{`^sledge pgbench runs pgbench's command line`}, ""},
		{"errors during the run", env, []string{"-f", script, "-t", "2", dbname}, 2, []string{
			`^transaction type: .*div\.sql$`, `^number of transactions actually processed: 0/2$`,
			`^number of failed transactions: 2 \(100\.000%\)$`}, `transactions failed`},
		// pgbench: a SELECT of no columns sets nothing and succeeds; \gset
		// after a command that returns no rows is an error (exit 2).
		{"SELECT \\gset with no columns", env, []string{"-f", noCols, "-t", "2", dbname}, 0,
			[]string{`^number of transactions actually processed: 2/2$`}, ""},
		{"INSERT \\gset", env, []string{"-f", insertGset, "-t", "1", dbname}, 2,
			[]string{`^number of failed transactions: 1 \(100\.000%\)$`, `expected one row, got 0`}, `transactions failed`},
		// libpq's words for the failed connection, then pgbench's.
		{"failed first connection", withDB(map[string]string{"PGPORT": "1"}), []string{"-t", "1", dbname}, 1, nil,
			`^sledge pgbench: error: connection to server on socket "[^"]+/\.s\.PGSQL\.1" failed: No such file or directory\n\tIs the server running locally and accepting connections on that socket\?\nsledge pgbench: error: could not create connection for setup\n$`},
		{"no such database", env, []string{"-t", "1", "nosuchdb"}, 1, nil, `does not exist`},
		{"bad option", nil, []string{"-x"}, 1, nil, `^sledge pgbench: error: invalid option -- 'x'\nsledge pgbench: hint: Try "sledge pgbench --help" for more information\.\n$`},
		{"rate 0", nil, []string{"--rate=0"}, 1, nil, `^sledge pgbench: error: invalid rate limit: "0"\n$`},
		{"-t with -T", nil, []string{"-t", "1", "-T", "1"}, 1, nil, `^sledge pgbench: error: specify either .*\n$`},
		{"-l", env, []string{"-l", "--log-prefix", home + "/txlog", "-S", "-c", "2", "-t", "3", dbname}, 0,
			[]string{`^number of transactions actually processed: 6/6$`}, ""},
		{"--aggregate-interval without -l", nil, []string{"--aggregate-interval=1", "-t", "1"}, 1, nil, `^sledge pgbench: error: log aggregation is allowed only when actually logging transactions\n$`},
		{"-C", env, []string{"-C", "-c", "2", "-t", "3", "-S", dbname}, 0, []string{
			`^number of transactions actually processed: 6/6$`, `^latency average = `,
			`^average connection time = [0-9]+\.[0-9]{3} ms$`, `^tps = [0-9]+\.[0-9]{6} \(including reconnection times\)$`}, ""},
		{"--progress-timestamp", env, []string{"-P", "1", "--progress-timestamp", "-T", "2", "-S", dbname}, 0, []string{`^duration: 2 s$`},
			`(?m)^progress: 1[0-9]{9}\.[0-9]{3} s, [0-9.]+ tps, lat `},
		{"-I in another order", env, []string{"-i", "-I", "dtpgv", dbname}, 0, nil, `(?s)creating primary keys\.\.\.\ngenerating data \(client-side\)\.\.\..*\nvacuuming\.\.\.\ndone in `},
		{"-I with two loads", env, []string{"-i", "-I", "dtgvp dtGvp", dbname}, 0, nil, `\(drop tables [0-9.]+ s, create tables [0-9.]+ s, client-side generate [0-9.]+ s, vacuum [0-9.]+ s, primary keys [0-9.]+ s, drop tables [0-9.]+ s, create tables [0-9.]+ s, server-side generate [0-9.]+ s, vacuum [0-9.]+ s, primary keys [0-9.]+ s\)\.\n$`},
		{"-I failing as pgbench's", env, []string{"-i", "-I", "tgdvp", dbname}, 1, nil, `error: query failed: ERROR:  relation "pgbench_history" already exists\n`},
		{"unknown builtin", nil, []string{"-b", "nosuch"}, 1, nil, `^sledge pgbench: error: no builtin script found for name "nosuch"\nAvailable builtin scripts:`},
		// Last, as it builds the tables again: pgbench's initialization
		// options.
		{"-i with init options", env, []string{"-i", "-q", "-I", "dtgvpf", "-F", "90", "--partitions=2", "--partition-method=hash", "--unlogged-tables", dbname}, 0, nil, `creating foreign keys\.\.\.\ndone in `},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := sledgePgbench(t, home, tc.env, tc.args...)
			if code != tc.code {
				t.Fatalf("%q: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.args, code, tc.code, stdout, stderr)
			}
			if strings.Contains(stdout+stderr, srv.Password) {
				t.Errorf("%q: the output shows the password", tc.args)
			}
			lines := strings.Split(stdout, "\n")
			i := 0
			for _, p := range tc.stdout {
				re := regexp.MustCompile(p)
				for i < len(lines) && !re.MatchString(lines[i]) {
					i++
				}
				if i == len(lines) {
					t.Fatalf("%q: no line %q (in this order) in stdout:\n%s\nstderr:\n%s", tc.args, p, stdout, stderr)
				}
				i++
			}
			if tc.stderr != "" && !regexp.MustCompile(tc.stderr).MatchString(stderr) {
				t.Errorf("%q: stderr does not match %q:\n%s", tc.args, tc.stderr, stderr)
			}
			// One error line, but where pgbench says two: libpq's for a
			// failed connection, then its own.
			if tc.code == 1 && strings.Count(stderr, "sledge pgbench: error:") != 1 && tc.name != "--aggregate-interval without -l" &&
				!strings.Contains(stderr, "could not create connection for setup") {
				t.Errorf("%q: want one error line:\n%s", tc.args, stderr)
			}
			if tc.name == "-l" {
				// pgbench's per-transaction log: one line per transaction.
				files, _ := filepath.Glob(home + "/txlog.*")
				if len(files) != 1 {
					t.Fatalf("-l wrote %v, want one txlog.PID file", files)
				}
				b, err := os.ReadFile(files[0])
				if err != nil || strings.Count(string(b), "\n") != 6 {
					t.Errorf("-l: %v, %d lines, want 6:\n%s", err, strings.Count(string(b), "\n"), b)
				}
			}
		})
	}
}

// reportShape is the sequence of a pgbench report's line prefixes: each
// line up to its first ':' or '=', its numbers as '#'. The version line's
// text is left out.
func reportShape(report string) []string {
	num := regexp.MustCompile(`[0-9][0-9.]*`)
	var shape []string
	for _, l := range strings.Split(strings.TrimRight(report, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "pgbench ("):
			l = "pgbench ("
		}
		l = num.ReplaceAllString(l, "#")
		if i := strings.IndexAny(l, ":="); i >= 0 {
			l = l[:i]
		}
		shape = append(shape, strings.TrimRight(strings.Join(strings.Fields(l), " "), " "))
	}
	return shape
}

// The same command lines through pgbench 15 and sledge pgbench on the
// same private PostgreSQL: their reports have the same lines in the same
// order (sledge's additions come after its pgbench part).
func TestPgbenchSideBySide(t *testing.T) {
	bin, err := exec.LookPath("pgbench")
	if err != nil {
		bin = "/usr/bin/pgbench"
		if _, err := os.Stat(bin); err != nil {
			if testdb.InCI() {
				t.Fatal("pgbench is not installed: CI must have it (postgresql-client)")
			}
			t.Skip("skipping: pgbench is not installed (apt-get install postgresql-client)")
		}
	}
	srv := pgLazy.Get(t)
	home := t.TempDir()
	dbname := pgbDatabase(t, srv)
	env := pgbEnv(srv)
	pg := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append(args, dbname)...)
		cmd.Env = append(os.Environ(), "PGHOST="+env["PGHOST"], "PGPORT="+env["PGPORT"], "PGUSER="+env["PGUSER"], "PGPASSWORD="+env["PGPASSWORD"])
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("pgbench %q: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}
	// pgbench builds, sledge pgbench runs on its tables too.
	pg("-i", "-s", "1", "-q")
	// The same --random-seed gives the same values, client for client:
	// each run inserts every client's draws (random, its distributions,
	// :default_seed) into a table of its own, and the tables are equal.
	seeded := home + "/seeded.sql"
	if err := os.WriteFile(seeded, []byte("\\set u random(1, 1000000000)\n\\set e random_exponential(1, 1000, 2.5)\n"+
		"\\set g random_gaussian(1, 1000, 2.5)\n\\set z random_zipfian(1, 1000, 1.5)\n"+
		"INSERT INTO :tbl VALUES (:client_id, :u, :e, :g, :z, :default_seed);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s:%d/%s", srv.User, srv.Password, srv.Host, srv.Port, dbname))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, tbl := range []string{"by_pgbench", "by_sledge"} {
		if _, err := conn.Exec(ctx, "CREATE TABLE "+tbl+" (c int, u bigint, e bigint, g bigint, z bigint, ds bigint)"); err != nil {
			t.Fatal(err)
		}
	}
	seedArgs := []string{"-n", "-c", "3", "-t", "4", "--random-seed=4242", "-f", seeded}
	pg(append(seedArgs, "-D", "tbl=by_pgbench")...)
	if _, stderr, code := sledgePgbench(t, home, env, append(seedArgs, "-D", "tbl=by_sledge", dbname)...); code != 0 {
		t.Fatalf("sledge pgbench %q: exit %d\n%s", seedArgs, code, stderr)
	}
	var diff, n int
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM by_pgbench),
		(SELECT count(*) FROM ((TABLE by_pgbench EXCEPT ALL TABLE by_sledge) UNION ALL (TABLE by_sledge EXCEPT ALL TABLE by_pgbench)) d)`).Scan(&n, &diff); err != nil {
		t.Fatal(err)
	}
	if n != 12 || diff != 0 {
		t.Errorf("--random-seed=4242: %d rows from pgbench, %d differ from sledge pgbench's", n, diff)
	}
	file := home + "/mine.sql"
	if err := os.WriteFile(file, []byte("\\set n random(1, 10)\nSELECT :n;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Failures of pgbench's two classes, every time: serialization
	// failures and deadlocks (SQLSTATE 40001, 40P01), retried once.
	ser, dead := home+"/ser.sql", home+"/dead.sql"
	for f, code := range map[string]string{ser: "serialization_failure", dead: "deadlock_detected"} {
		if err := os.WriteFile(f, []byte("DO $$BEGIN RAISE EXCEPTION 'sledge test' USING ERRCODE = '"+code+"'; END$$;\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"-c", "2", "-t", "20"},
		{"-C", "-c", "2", "-t", "5", "-S"},
		// pgbench ends with 0 when the failures are all of its classes.
		{"-c", "2", "-t", "20", "-f", ser, "-f", dead, "-S", "--failures-detailed", "--max-tries=2", "--verbose-errors"},
		{"-t", "3", "-f", ser, "--failures-detailed"},
		{"-S", "-T", "1", "-P", "1", "-M", "prepared"},
		{"-t", "10", "-r", "-R", "500", "-L", "100", "-N"},
		{"-S", "-N", "-c", "2", "-t", "20", "--max-tries=2"}, // each script runs (all but surely)
		{"-f", file, "-M", "extended", "-t", "3", "-D", "x=1"},
	} {
		want := reportShape(pg(args...))
		stdout, stderr, code := sledgePgbench(t, home, env, append(args, dbname)...)
		if code != 0 {
			t.Fatalf("sledge pgbench %q: exit %d\n%s", args, code, stderr)
		}
		got := reportShape(pgbenchPart(stdout))
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%q: the reports differ\npgbench:\n  %s\nsledge pgbench:\n  %s", args,
				strings.Join(want, "\n  "), strings.Join(got, "\n  "))
		}
	}
}

// --failures-detailed on MariaDB through --db: its deadlock (1213, whose
// SQLSTATE is 40001) is a deadlock, not a serialization failure; the
// transactions that failed with it end the run with 0, as pgbench ends
// with serialization failures and deadlocks; -l writes the class, and
// --verbose-errors each try.
func TestPgbenchFailuresDetailedMariaDB(t *testing.T) {
	url := ownDB(t, mariaLazy.Get(t), "pgbfail")
	home := t.TempDir()
	script := filepath.Join(home, "deadlock.sql")
	if err := os.WriteFile(script, []byte("SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, MESSAGE_TEXT = 'sledge test deadlock';\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The database, created by a build of the empty tables.
	if stdout, stderr, code := sledgePgbench(t, home, nil, "--db", url, "-i", "-I", "t"); code != 0 {
		t.Fatalf("-i -I t: exit %d\n%s\n%s", code, stdout, stderr)
	}
	prefix := filepath.Join(home, "faillog")
	stdout, stderr, code := sledgePgbench(t, home, nil, "--db", url, "-s", "1", "-f", script, "-t", "3", "--max-tries=2",
		"--failures-detailed", "--verbose-errors", "-l", "--log-prefix", prefix)
	if code != 0 {
		t.Fatalf("exit %d, want 0 (deadlocks only)\n%s\n%s", code, stdout, stderr)
	}
	for _, p := range []string{"\nnumber of failed transactions: 3 (100.000%)\n", "\nnumber of serialization failures: 0 (0.000%)\n",
		"\nnumber of deadlock failures: 3 (100.000%)\n", "\nnumber of transactions retried: 3 (100.000%)\n"} {
		if !strings.Contains(pgbenchPart(stdout), p) {
			t.Errorf("no %q in the report:\n%s", p, stdout)
		}
	}
	if n, m := strings.Count(stderr, "client 0 repeats the transaction after the error (try 1/2)"),
		strings.Count(stderr, "client 0 ends the failed transaction (try 2/2)"); n != 3 || m != 3 || !strings.Contains(stderr, "sledge test deadlock") {
		t.Errorf("--verbose-errors: %d retries and %d ends, want 3 each, with the error:\n%s", n, m, stderr)
	}
	files, _ := filepath.Glob(prefix + ".*")
	if len(files) != 1 {
		t.Fatalf("-l wrote %v", files)
	}
	b, _ := os.ReadFile(files[0])
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 3 || strings.Fields(lines[0])[2] != "deadlock" {
		t.Errorf("-l --failures-detailed:\n%s", b)
	}
}

// sledge run's own report with pgbench's -C and --failures-detailed, on
// SQLite: pgbench's lines for them among its others.
func TestRunConnectPerTxReport(t *testing.T) {
	home := t.TempDir()
	url := "sqlite://" + filepath.Join(home, "tpcb.db")
	if _, stderr, code := runCLI(t, home, "build", "tpcb", "--db", url, "--scale", "1", "--no-job"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	stdout, stderr, code := runCLI(t, home, "run", "tpcb", "--db", url, "-C", "--failures-detailed", "-c", "2", "-t", "5", "--no-job")
	if code != 0 {
		t.Fatalf("run -C: exit %d: %s", code, stderr)
	}
	for _, p := range []string{`(?m)^number of serialization failures: 0 \(0\.000%\)$`, `(?m)^number of deadlock failures: 0 \(0\.000%\)$`,
		`(?m)^average connection time = [0-9]+\.[0-9]{3} ms$`, `(?m)^tps = [0-9.]+ \(including reconnection times; `} {
		if !regexp.MustCompile(p).MatchString(stdout) {
			t.Errorf("no %q in:\n%s", p, stdout)
		}
	}
	stdout, _, _ = runCLI(t, home, "run", "tpcb", "--db", url, "-c", "1", "-t", "2", "--no-job")
	if strings.Contains(stdout, "serialization failures") || strings.Contains(stdout, "average connection time") {
		t.Errorf("without -C and --failures-detailed, their lines:\n%s", stdout)
	}
}
