package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/testdb"
)

// pgbench15Bin is pgbench 15's binary, or "" when it is not installed (CI
// must have it).
func pgbench15Bin(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"pgbench", "/usr/lib/postgresql/15/bin/pgbench", "/usr/bin/pgbench"} {
		if bin, err := exec.LookPath(p); err == nil {
			return bin
		}
	}
	if testdb.InCI() {
		t.Fatal("pgbench is not installed: CI must have it (postgresql-client)")
	}
	return ""
}

// runPgbench15 runs the real pgbench with the private server's
// environment: its stdout, stderr and exit status.
func runPgbench15(t *testing.T, bin string, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("pgbench %q: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// initShape is pgbench -i's stderr with its numbers as '#', the program's
// name as "pgbench:" and a failed query's text left out (sledge's SQL is
// spelt otherwise); with quiet, progress lines before the last are left
// out (-q prints one about every 5 s, which depends on the machine).
func initShape(stderr string, quiet bool) []string {
	num := regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
	var shape []string
	for _, l := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		l = strings.Replace(l, "sledge pgbench: ", "pgbench: ", 1)
		if strings.HasPrefix(l, "pgbench: detail: Query was: ") {
			l = "pgbench: detail: Query was: …"
		}
		if quiet && strings.Contains(l, " tuples (") && !strings.Contains(l, "(100%)") {
			continue
		}
		shape = append(shape, num.ReplaceAllString(l, "#"))
	}
	return shape
}

// pgbTables is the row counts of the four tables, the accounts' sum of
// bid and the number of foreign keys on them, or an error when a table is
// missing.
func pgbTables(t *testing.T, srv *testdb.Server, dbname string) (string, error) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s:%d/%s", srv.User, srv.Password, srv.Host, srv.Port, dbname))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var b, tl, a, h, bids, fks int64
	err = c.QueryRow(ctx, `SELECT (SELECT count(*) FROM pgbench_branches), (SELECT count(*) FROM pgbench_tellers),
		(SELECT count(*) FROM pgbench_accounts), (SELECT count(*) FROM pgbench_history),
		(SELECT coalesce(sum(bid), 0) FROM pgbench_accounts),
		(SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conrelid::regclass::text LIKE 'pgbench_%')`).Scan(&b, &tl, &a, &h, &bids, &fks)
	return fmt.Sprintf("branches %d tellers %d accounts %d history %d bids %d fkeys %d", b, tl, a, h, bids, fks), err
}

// sledge pgbench -i, case after case on one database, says and does what
// pgbench 15 -i says and does: its lines on stderr (nothing on stdout),
// its exit status, the tables it leaves. Each case has pgbench's words as
// patterns of stderr's lines, in order; where pgbench is installed the
// same sequence of command lines runs through it on a database of its own,
// and the two stderrs must have the same lines but for the numbers, and
// the tables the same contents.
func TestPgbenchInitLikePgbench(t *testing.T) {
	srv := pgLazy.Get(t)
	home := t.TempDir()
	env := pgbEnv(srv)
	mine := pgbDatabase(t, srv)
	bin := pgbench15Bin(t)
	theirs := ""
	if bin != "" {
		theirs = pgbDatabase(t, srv)
	}
	const (
		drop     = `^dropping old tables\.\.\.$`
		notice   = `^NOTICE:  table "pgbench_accounts" does not exist, skipping$`
		create   = `^creating tables\.\.\.$`
		client   = `^generating data \(client-side\)\.\.\.$`
		server   = `^generating data \(server-side\)\.\.\.$`
		vacuum   = `^vacuuming\.\.\.$`
		pkeys    = `^creating primary keys\.\.\.$`
		fkeys    = `^creating foreign keys\.\.\.$`
		half     = `^100000 of 200000 tuples \(50%\) done \(elapsed [0-9]+\.[0-9]{2} s, remaining [0-9]+\.[0-9]{2} s\)$`
		all2     = `^200000 of 200000 tuples \(100%\) done \(elapsed [0-9]+\.[0-9]{2} s, remaining 0\.00 s\)$`
		all1     = `^100000 of 100000 tuples \(100%\) done \(elapsed [0-9]+\.[0-9]{2} s, remaining 0\.00 s\)$`
		doneFull = `^done in [0-9.]+ s \(drop tables [0-9.]+ s, create tables [0-9.]+ s, client-side generate [0-9.]+ s, vacuum [0-9.]+ s, primary keys [0-9.]+ s\)\.$`
	)
	scale1 := "branches 1 tellers 10 accounts 100000 history 0 bids 100000"
	scale2 := "branches 2 tellers 20 accounts 200000 history 0 bids 300000"
	cases := []struct {
		name   string
		args   []string
		code   int
		lines  []string // patterns of stderr's lines, in this order
		not    string   // a pattern stderr must not match
		tables string   // the tables afterwards ("" not checked)
	}{
		{"scale 2, first time", []string{"-i", "-s", "2"}, 0,
			[]string{drop, notice, create, client, half, all2, vacuum, pkeys, doneFull}, "sledge|built", scale2 + " fkeys 0"},
		{"-q", []string{"-i", "-q", "-s", "2"}, 0,
			[]string{drop, create, client, all2, vacuum, pkeys, doneFull}, `NOTICE|\(50%\)`, scale2 + " fkeys 0"},
		{"--foreign-keys", []string{"-i", "--foreign-keys"}, 0,
			[]string{drop, create, client, all1, vacuum, pkeys, fkeys,
				`^done in [0-9.]+ s \(drop tables [0-9.]+ s, create tables [0-9.]+ s, client-side generate [0-9.]+ s, vacuum [0-9.]+ s, primary keys [0-9.]+ s, foreign keys [0-9.]+ s\)\.$`},
			"", scale1 + " fkeys 5"},
		// Re-initialising over the foreign keys: one DROP TABLE of the four.
		{"-i after --foreign-keys", []string{"-i"}, 0, []string{drop, create, client, all1, vacuum, pkeys, doneFull}, "", scale1 + " fkeys 0"},
		{"-I dtGvpf, server-side", []string{"-i", "-I", "dtGvpf", "-s", "2"}, 0,
			[]string{drop, create, server, vacuum, pkeys, fkeys,
				`^done in [0-9.]+ s \(drop tables [0-9.]+ s, create tables [0-9.]+ s, server-side generate [0-9.]+ s, vacuum [0-9.]+ s, primary keys [0-9.]+ s, foreign keys [0-9.]+ s\)\.$`},
			`tuples`, scale2 + " fkeys 5"},
		{"-I dtg after foreign keys", []string{"-i", "-I", "dtg"}, 0,
			[]string{drop, create, client, all1, `^done in [0-9.]+ s \(drop tables [0-9.]+ s, create tables [0-9.]+ s, client-side generate [0-9.]+ s\)\.$`},
			vacuum, scale1 + " fkeys 0"},
		{"-I with spaces and repeats", []string{"-i", "-I", "d t g v p g"}, 0,
			[]string{drop, create, client, all1, vacuum, pkeys, client, all1,
				`^done in [0-9.]+ s \(drop tables [0-9.]+ s, create tables [0-9.]+ s, client-side generate [0-9.]+ s, vacuum [0-9.]+ s, primary keys [0-9.]+ s, client-side generate [0-9.]+ s\)\.$`},
			"", scale1 + " fkeys 0"},
		{"-I t over existing tables", []string{"-i", "-I", "tgdvp"}, 1,
			[]string{create, `^sledge pgbench: error: query failed: ERROR:  relation "pgbench_history" already exists$`,
				`^sledge pgbench: detail: Query was: (?i)create table pgbench_history`}, "done in", scale1 + " fkeys 0"},
		{"-I unknown step", []string{"-i", "-I", "dtx"}, 1,
			[]string{`^sledge pgbench: error: unrecognized initialization step "x"$`,
				`^sledge pgbench: detail: Allowed step characters are: "dtgGvpf"\.$`}, drop, ""},
		{"-I empty", []string{"-i", "-I", ""}, 1, []string{`^sledge pgbench: error: no initialization steps specified$`}, "", ""},
		{"-n skips every v", []string{"-i", "-n", "-I", "dtgvpv"}, 0,
			[]string{drop, create, client, all1, pkeys, `^done in [0-9.]+ s \(drop tables [0-9.]+ s, create tables [0-9.]+ s, client-side generate [0-9.]+ s, primary keys [0-9.]+ s\)\.$`},
			vacuum, scale1 + " fkeys 0"},
		{"-I v only", []string{"-i", "-I", "v"}, 0, []string{vacuum, `^done in [0-9.]+ s \(vacuum [0-9.]+ s\)\.$`}, drop, scale1 + " fkeys 0"},
		// pgbench's own test of --init-steps with the legacy options, on a
		// partitioned pgbench_accounts: its "creating N partitions" line.
		{"--partitions, -I dtpvGvv --no-vacuum", []string{"--initialize", "--init-steps=dtpvGvv", "--no-vacuum", "--foreign-keys", "--unlogged-tables", "--partitions=3"}, 0,
			[]string{drop, create, `^creating 3 partitions\.\.\.$`, pkeys, server, fkeys,
				`^done in [0-9.]+ s \(drop tables [0-9.]+ s, create tables [0-9.]+ s, primary keys [0-9.]+ s, server-side generate [0-9.]+ s, foreign keys [0-9.]+ s\)\.$`},
			vacuum, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := sledgePgbench(t, home, env, append(tc.args, mine)...)
			if code != tc.code || stdout != "" {
				t.Fatalf("%q: exit %d (want %d), stdout %q\nstderr:\n%s", tc.args, code, tc.code, stdout, stderr)
			}
			if strings.Contains(stderr, srv.Password) {
				t.Errorf("%q: the output shows the password", tc.args)
			}
			lines := strings.Split(stderr, "\n")
			i := 0
			for _, p := range tc.lines {
				re := regexp.MustCompile(p)
				for i < len(lines) && !re.MatchString(lines[i]) {
					i++
				}
				if i == len(lines) {
					t.Fatalf("%q: no line %q (in this order) in stderr:\n%s", tc.args, p, stderr)
				}
				i++
			}
			if tc.not != "" && regexp.MustCompile(tc.not).MatchString(stderr) {
				t.Errorf("%q: stderr matches %q:\n%s", tc.args, tc.not, stderr)
			}
			if tc.tables != "" {
				got, err := pgbTables(t, srv, mine)
				if err != nil || got != tc.tables {
					t.Errorf("%q: tables %s (%v), want %s", tc.args, got, err, tc.tables)
				}
			}
			if bin == "" {
				return
			}
			pout, perr, pcode := runPgbench15(t, bin, env, append(tc.args, theirs)...)
			if pcode != code || pout != "" {
				t.Errorf("%q: pgbench exits %d, stdout %q; sledge pgbench %d\npgbench's stderr:\n%s", tc.args, pcode, pout, code, perr)
			}
			quiet := strings.Contains(strings.Join(tc.args, " "), "-q")
			if want, got := initShape(perr, quiet), initShape(stderr, quiet); strings.Join(want, "\n") != strings.Join(got, "\n") {
				t.Errorf("%q: stderr differs from pgbench's\npgbench:\n  %s\nsledge pgbench:\n  %s", tc.args,
					strings.Join(want, "\n  "), strings.Join(got, "\n  "))
			}
			if tc.tables != "" {
				if got, err := pgbTables(t, srv, theirs); err != nil || got != tc.tables {
					t.Errorf("%q: pgbench's tables %s (%v), want %s", tc.args, got, err, tc.tables)
				}
			}
		})
	}
}

// The vacuum before a run, as pgbench's: "starting vacuum...end." on
// stderr unless -n, pgbench_accounts too with -v, a file's run vacuums
// too and passes over the failures (no pgbench tables), history emptied.
func TestPgbenchVacuumBeforeRun(t *testing.T) {
	srv := pgLazy.Get(t)
	home := t.TempDir()
	env := pgbEnv(srv)
	dbname := pgbDatabase(t, srv)
	empty := pgbDatabase(t, srv)
	if _, stderr, code := sledgePgbench(t, home, env, "-i", dbname); code != 0 {
		t.Fatalf("-i: exit %d\n%s", code, stderr)
	}
	file := home + "/one.sql"
	if err := os.WriteFile(file, []byte("SELECT 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ignored := `sledge pgbench: error: ERROR:  relation "pgbench_%s" does not exist\nsledge pgbench: detail: \(ignoring this error and continuing anyway\)\n`
	cases := []struct {
		name, db string
		args     []string
		stderr   string // stderr starts with a match
		not      string
		history  int64 // rows in pgbench_history after the run (-1 not checked)
	}{
		{"builtin", dbname, []string{"-t", "3"}, `^starting vacuum\.\.\.end\.\n`, `starting vacuum pgbench_accounts`, 3},
		// history is emptied before each run: three rows, not six
		{"again", dbname, []string{"-t", "3"}, `^starting vacuum\.\.\.end\.\n`, ``, 3},
		{"-n", dbname, []string{"-n", "-t", "2"}, ``, `starting vacuum`, 5},
		{"-v", dbname, []string{"-v", "-S", "-t", "1"}, `^starting vacuum\.\.\.end\.\nstarting vacuum pgbench_accounts\.\.\.end\.\n`, ``, 0},
		{"--no-vacuum", dbname, []string{"--no-vacuum", "-S", "-t", "1"}, ``, `starting vacuum`, 0},
		{"a file without pgbench's tables", empty, []string{"-f", file, "-t", "1"},
			`^starting vacuum\.\.\.` + fmt.Sprintf(ignored, "branches") + fmt.Sprintf(ignored, "tellers") + fmt.Sprintf(ignored, "history") + `end\.\n`, ``, -1},
		{"a file with -n", empty, []string{"-n", "-f", file, "-t", "1"}, ``, `starting vacuum|error`, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := sledgePgbench(t, home, env, append(tc.args, tc.db)...)
			if code != 0 {
				t.Fatalf("%q: exit %d\n%s%s", tc.args, code, stdout, stderr)
			}
			if strings.Contains(stdout, "vacuum") {
				t.Errorf("%q: stdout has the vacuum's line:\n%s", tc.args, stdout)
			}
			if tc.stderr != "" && !regexp.MustCompile(tc.stderr).MatchString(stderr) {
				t.Errorf("%q: stderr does not match %q:\n%s", tc.args, tc.stderr, stderr)
			}
			if tc.not != "" && regexp.MustCompile(tc.not).MatchString(stderr) {
				t.Errorf("%q: stderr matches %q:\n%s", tc.args, tc.not, stderr)
			}
			if tc.history >= 0 {
				got, err := pgbTables(t, srv, tc.db)
				if want := fmt.Sprintf("history %d ", tc.history); err != nil || !strings.Contains(got, want) {
					t.Errorf("%q: tables %s (%v), want %s", tc.args, got, err, want)
				}
			}
		})
	}
}
