package tpcb_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestInitOptionsPostgres: pgbench's initialization options on `sledge
// build tpcb`, each read back from PostgreSQL's catalog; the schema then
// checks, and runs where its tables differ from the usual ones.
func TestInitOptionsPostgres(t *testing.T) {
	type tc struct {
		name  string
		args  []string
		check func(t *testing.T, q querier)
		run   bool // a short run and a check on the built schema
	}
	rel := func(q querier, cond string) int64 {
		return one(t, q, "SELECT count(*) FROM pg_class WHERE relname LIKE 'pgbench_%' AND "+cond)
	}
	cases := []tc{
		{name: "default", args: nil, check: func(t *testing.T, q querier) {
			if n := rel(q, "reloptions @> '{fillfactor=100}'"); n != 3 {
				t.Errorf("%d tables with fillfactor 100, want 3", n)
			}
			if n := one(t, q, "SELECT count(*) FROM pg_constraint WHERE contype = 'p' AND conrelid::regclass::text LIKE 'pgbench_%'"); n != 3 {
				t.Errorf("%d primary keys", n)
			}
		}},
		{name: "dtgvp is the default", args: []string{"-I", "dtgvp"}, check: func(t *testing.T, q querier) {
			if n := one(t, q, "SELECT count(*) FROM pg_constraint WHERE contype = 'p' AND conrelid::regclass::text LIKE 'pgbench_%'"); n != 3 {
				t.Errorf("%d primary keys", n)
			}
			if n := rel(q, "reloptions @> '{fillfactor=100}'"); n != 3 {
				t.Errorf("%d tables with fillfactor 100, want 3", n)
			}
		}},
		{name: "fillfactor", args: []string{"-F", "80"}, run: true, check: func(t *testing.T, q querier) {
			if n := rel(q, "relname IN ('pgbench_accounts', 'pgbench_branches', 'pgbench_tellers') AND reloptions @> '{fillfactor=80}'"); n != 3 {
				t.Errorf("%d tables with fillfactor 80, want 3", n)
			}
		}},
		{name: "unlogged", args: []string{"--unlogged-tables"}, run: true, check: func(t *testing.T, q querier) {
			if n := rel(q, "relkind = 'r' AND relpersistence = 'u'"); n != 4 {
				t.Errorf("%d unlogged tables, want 4", n)
			}
		}},
		{name: "range partitions", args: []string{"--partitions", "3", "-F", "90"}, run: true, check: func(t *testing.T, q querier) {
			if n := one(t, q, "SELECT count(*) FROM pg_partitioned_table WHERE partrelid = 'pgbench_accounts'::regclass AND partstrat = 'r'"); n != 1 {
				t.Errorf("pgbench_accounts not range-partitioned")
			}
			if n := one(t, q, "SELECT count(*) FROM pg_inherits WHERE inhparent = 'pgbench_accounts'::regclass"); n != 3 {
				t.Errorf("%d partitions, want 3", n)
			}
			// pgbench: (100000 + 2) / 3 = 33334 rows a partition, open-ended at both ends.
			if n := one(t, q, `SELECT count(*) FROM pg_class WHERE relname IN ('pgbench_accounts_1', 'pgbench_accounts_2', 'pgbench_accounts_3')
				AND pg_get_expr(relpartbound, oid) IN ('FOR VALUES FROM (MINVALUE) TO (33335)', 'FOR VALUES FROM (33335) TO (66669)', 'FOR VALUES FROM (66669) TO (MAXVALUE)')
				AND reloptions @> '{fillfactor=90}'`); n != 3 {
				t.Errorf("%d partitions with pgbench's bounds and fillfactor", n)
			}
			if n := one(t, q, "SELECT count(*) FROM pgbench_accounts_2"); n != 33334 {
				t.Errorf("%d accounts in partition 2, want 33334", n)
			}
		}},
		{name: "hash partitions", args: []string{"--partitions", "4", "--partition-method", "hash", "--unlogged-tables"}, run: true, check: func(t *testing.T, q querier) {
			if n := one(t, q, "SELECT count(*) FROM pg_partitioned_table WHERE partrelid = 'pgbench_accounts'::regclass AND partstrat = 'h'"); n != 1 {
				t.Errorf("pgbench_accounts not hash-partitioned")
			}
			if n := one(t, q, `SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE inhparent = 'pgbench_accounts'::regclass
				AND pg_get_expr(c.relpartbound, c.oid) LIKE 'FOR VALUES WITH (modulus 4, remainder %)' AND c.relpersistence = 'u'`); n != 4 {
				t.Errorf("%d unlogged hash partitions, want 4", n)
			}
		}},
		{name: "foreign keys", args: []string{"--foreign-keys"}, run: true, check: func(t *testing.T, q querier) {
			if n := one(t, q, `SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND convalidated AND conname IN ('pgbench_tellers_bid_fkey',
				'pgbench_accounts_bid_fkey', 'pgbench_history_bid_fkey', 'pgbench_history_tid_fkey', 'pgbench_history_aid_fkey')`); n != 5 {
				t.Errorf("%d foreign keys, want pgbench's 5", n)
			}
		}},
		{name: "server-side generation", args: []string{"-I", "dtGvpf"}, run: true, check: func(t *testing.T, q querier) {
			if n := one(t, q, "SELECT count(*) FROM pgbench_accounts WHERE bid = 1 AND abalance = 0 AND filler = ''"); n != 100000 {
				t.Errorf("%d accounts", n)
			}
			if n := one(t, q, "SELECT count(*) FROM pg_constraint WHERE contype IN ('f', 'p') AND conrelid::regclass::text LIKE 'pgbench_%'"); n != 8 {
				t.Errorf("%d keys, want 3 primary and 5 foreign", n)
			}
		}},
		{name: "tables only", args: []string{"-I", "dt"}, check: func(t *testing.T, q querier) {
			if n := one(t, q, "SELECT count(*) FROM pgbench_accounts"); n != 0 {
				t.Errorf("%d accounts, want none", n)
			}
			if n := one(t, q, "SELECT count(*) FROM pg_constraint WHERE contype = 'p' AND conrelid::regclass::text LIKE 'pgbench_%'"); n != 0 {
				t.Errorf("%d primary keys, want none", n)
			}
		}},
	}
	if ts, ok := tablespace(t); ok {
		cases = append(cases, tc{name: "tablespaces", args: []string{"--tablespace", ts, "--index-tablespace", ts}, run: true, check: func(t *testing.T, q querier) {
			if n := one(t, q, fmt.Sprintf(`SELECT count(*) FROM pg_class c JOIN pg_tablespace s ON s.oid = c.reltablespace
				WHERE s.spcname = '%s' AND c.relname LIKE 'pgbench_%%'`, ts)); n != 7 {
				t.Errorf("%d relations in the tablespace, want 4 tables and 3 primary keys", n)
			}
		}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := emptyPostgres(t)
			args := append([]string{"build", "tpcb", "--db", u, "--scale", "1", "--json"}, c.args...)
			if code, _, stderr := sledge(t, args...); code != 0 {
				t.Fatalf("%s: exit %d: %s", strings.Join(c.args, " "), code, stderr)
			}
			c.check(t, postgresDB(t, u))
			if !c.run {
				return
			}
			if code, out, stderr := sledge(t, "run", "tpcb", "--db", u, "-t", "10", "-c", "2"); code != 0 {
				t.Fatalf("run: exit %d: %s%s", code, out, stderr)
			}
			if code, out, stderr := sledge(t, "check", "tpcb", "--db", u); code != 0 {
				t.Fatalf("check: exit %d: %s%s", code, out, stderr)
			}
		})
	}
	// Without g or G nothing is loaded, the marker table included: the
	// schema never looks complete, and run says so.
	t.Run("no data: run says so", func(t *testing.T) {
		u := emptyPostgres(t)
		if code, _, stderr := sledge(t, "build", "tpcb", "--db", u, "-I", "dtp", "--json"); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		code, _, stderr := sledge(t, "run", "tpcb", "--db", u, "-t", "1")
		if code != 1 || !strings.Contains(stderr, "is incomplete") {
			t.Errorf("run on a schema without data: exit %d: %s", code, stderr)
		}
	})
}

// tablespace creates a tablespace in a directory of the test's, when the
// server (same machine, same user) can write there.
func tablespace(t *testing.T) (string, bool) {
	s := pgServer.Get(t)
	// Not under t.TempDir(), whose parent only this user may enter.
	dir, err := os.MkdirTemp("", "sledge-ts")
	if err != nil {
		t.Logf("no tablespace case: %v", err)
		return "", false
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	loc := filepath.Join(dir, "ts")
	if err := os.Mkdir(loc, 0o700); err != nil {
		t.Logf("no tablespace case: %v", err)
		return "", false
	}
	// The server runs as postgres when the tests run as root (testdb):
	// the directory is its, the way to it open.
	if u, err := user.Lookup("postgres"); err == nil && os.Getuid() == 0 {
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		_ = os.Chmod(dir, 0o755)
		if err := os.Chown(loc, uid, gid); err != nil {
			t.Logf("no tablespace case: %v", err)
			return "", false
		}
	}
	name := "sledge_ts"
	_ = pgExec(s, "DROP TABLESPACE IF EXISTS "+name)
	if err := pgExec(s, fmt.Sprintf("CREATE TABLESPACE %s LOCATION '%s'", name, loc)); err != nil {
		t.Logf("no tablespace case: the server cannot create one in %s: %v", loc, err)
		return "", false
	}
	t.Cleanup(func() { _ = pgExec(s, "DROP TABLESPACE IF EXISTS "+name) })
	return name, true
}

// TestInitOptionsRefused: bad values in pgbench's words, and the options
// MariaDB and SQLite have no equivalent for, each refused in one line
// with exit 2 (bad input), before anything is built.
func TestInitOptionsRefused(t *testing.T) {
	sqliteURL := func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "tpcb.db") }
	mariaURL := func(t *testing.T) string { return emptyMariaDB(t) }
	cases := []struct {
		name string
		url  func(t *testing.T) string
		args []string
		want string
	}{
		{"fillfactor range", sqliteURL, []string{"-F", "5"}, "-F/--fillfactor must be in range 10..100"},
		{"unknown step", sqliteURL, []string{"-I", "dtx"}, `unrecognized initialization step "x"`},
		{"no steps", sqliteURL, []string{"-I", ""}, "no initialization steps specified"},
		{"method without partitions", sqliteURL, []string{"--partition-method", "hash"}, "--partition-method requires greater than zero --partitions"},
		{"bad method", sqliteURL, []string{"--partitions", "2", "--partition-method", "list"}, `invalid partition method, expecting "range" or "hash", got: "list"`},
		{"steps out of order", sqliteURL, []string{"-I", "tdg"}, "in the order dtgGvpf"},
		{"sqlite fillfactor", sqliteURL, []string{"-F", "90"}, "-F/--fillfactor is PostgreSQL's only"},
		{"sqlite unlogged", sqliteURL, []string{"--unlogged-tables"}, "--unlogged-tables is PostgreSQL's only"},
		{"sqlite partitions", sqliteURL, []string{"--partitions", "2"}, "--partitions is PostgreSQL's only"},
		{"sqlite tablespace", sqliteURL, []string{"--tablespace", "x"}, "--tablespace/--index-tablespace is PostgreSQL's only"},
		{"sqlite foreign keys", sqliteURL, []string{"--foreign-keys"}, "--foreign-keys (-I f) is PostgreSQL's only"},
		{"sqlite server-side", sqliteURL, []string{"-I", "dtG"}, "-I G (server-side generation) is PostgreSQL's only"},
		{"sqlite without p", sqliteURL, []string{"-I", "dtg"}, "SQLite's primary keys are part of its tables"},
		{"mariadb fillfactor", mariaURL, []string{"-F", "90"}, "-F/--fillfactor is PostgreSQL's only: MariaDB/MySQL"},
		{"mariadb partitions", mariaURL, []string{"--partitions", "2", "--partition-method", "range"}, "--partitions is PostgreSQL's only"},
		{"mariadb foreign keys", mariaURL, []string{"-I", "dtgvpf"}, "--foreign-keys (-I f) is PostgreSQL's only"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := c.url(t)
			args := append([]string{"build", "tpcb", "--db", u}, c.args...)
			code, _, stderr := sledge(t, args...)
			if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, code, stderr, c.want)
			}
		})
	}
}

// TestInitStepsOthers: -I on SQLite and MariaDB: steps left out are
// skipped, v is an ANALYZE; the schema with every default step runs.
func TestInitStepsOthers(t *testing.T) {
	for _, c := range []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "tpcb.db") }},
		{"mariadb", emptyMariaDB},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := c.url(t)
			if code, _, stderr := sledge(t, "build", "tpcb", "--db", u, "-I", "dtgvp", "-q", "--json"); code != 0 {
				t.Fatalf("build -I dtgvp: exit %d: %s", code, stderr)
			}
			if code, out, stderr := sledge(t, "run", "tpcb", "--db", u, "-t", "10"); code != 0 {
				t.Fatalf("run: exit %d: %s%s", code, out, stderr)
			}
			if code, out, stderr := sledge(t, "check", "tpcb", "--db", u); code != 0 {
				t.Fatalf("check: exit %d: %s%s", code, out, stderr)
			}
		})
	}
}

// TestInitLikePgbench: where pgbench itself is installed, its `-i -I dtp`
// and sledge's `build -I dtp` with the same options leave the same
// catalog: tables, partitions and their bounds, primary keys, options,
// persistence, tablespaces.
func TestInitLikePgbench(t *testing.T) {
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		t.Skip("no pgbench here")
	}
	const catalog = `SELECT string_agg(format('%s %s %s %s %s %s', relname, relkind, relpersistence,
		coalesce(pg_get_expr(relpartbound, oid), '-'), coalesce(array_to_string(reloptions, ','), '-'),
		coalesce((SELECT spcname FROM pg_tablespace WHERE oid = reltablespace), '-')), E'\n' ORDER BY relname)
		FROM pg_class WHERE relname LIKE 'pgbench_%'`
	s := pgServer.Get(t)
	cases := [][]string{
		{"--partitions", "3", "-F", "90", "--unlogged-tables"},
		{"--partitions", "7", "--partition-method", "hash"},
		{"-F", "75"},
	}
	if ts, ok := tablespace(t); ok {
		cases = append(cases, []string{"--partitions", "2", "--tablespace", ts, "--index-tablespace", ts})
	}
	for _, opts := range cases {
		t.Run(strings.Join(opts, " "), func(t *testing.T) {
			theirs, ours := emptyPostgres(t), emptyPostgres(t)
			cmd := exec.Command(pgbench, append([]string{"-i", "-I", "dtp", "-s", "2", "-h", s.Host, "-p", strconv.Itoa(s.Port), "-U", s.User,
				strings.TrimPrefix(theirs[strings.LastIndex(theirs, "/"):], "/")}, opts...)...)
			cmd.Env = append(os.Environ(), "PGPASSWORD="+s.Password)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("pgbench: %v: %s", err, out)
			}
			args := append([]string{"build", "tpcb", "--db", ours, "-I", "dtp", "-s", "2", "--json"}, opts...)
			if code, _, stderr := sledge(t, args...); code != 0 {
				t.Fatalf("sledge: exit %d: %s", code, stderr)
			}
			want, got := catalogText(t, theirs, catalog), catalogText(t, ours, catalog)
			if got != want || !strings.Contains(want, "pgbench_accounts") {
				t.Errorf("sledge:\n%s\npgbench:\n%s", got, want)
			}
		})
	}
}

func catalogText(t *testing.T, u, q string) string {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var s string
	if err := c.QueryRow(ctx, q).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}
