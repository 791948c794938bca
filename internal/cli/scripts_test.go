package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/pgbench"
)

// scriptRun is the part of a script run's --json this test reads.
type scriptRun struct {
	Workload     string  `json:"workload"`
	TPS          float64 `json:"tps"`
	Transactions int64   `json:"transactions"`
	Failed       int64   `json:"failed"`
	Protocol     string  `json:"protocol"`
	Script       string  `json:"script"`
	PerTxn       *struct {
		RoundTrips float64 `json:"round_trips"`
	} `json:"per_txn"`
	PerType map[string]struct {
		Count int64 `json:"count"`
	} `json:"per_type"`
	Errors []struct {
		Message string `json:"message"`
	} `json:"errors"`
}

// custom exercises the script language against pgbench's tables: every
// kind of meta-command a database can run, with its results checked by
// the database itself (a wrong value fails the SELECT's division).
const custom = `-- a custom script
\set aid random(1, 100000 * :scale)
\set delta random_gaussian(-5000, 5000, 2.5)
\set half (:delta / 2) * 2
\set pick CASE WHEN :half = :delta THEN 1 ELSE 0 END + greatest(0, least(1, abs(:delta) % 2))
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance AS bal FROM pgbench_accounts WHERE aid = :aid \gset acct_
\if :pick = 1
SELECT 1 / (CASE WHEN :acct_bal + 0 IS NOT NULL THEN 1 ELSE 0 END);
\elif :pick > 1
SELECT 1 / 0;
\else
SELECT 1 / 0;
\endif
\sleep 100 us
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, :aid, :delta, CURRENT_TIMESTAMP);
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = 1;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = 1;
END;
`

const pipelined = `\set aid random(1, 100000 * :scale)
\set delta random(-5000, 5000)
\startpipeline
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, :aid, :delta, CURRENT_TIMESTAMP);
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = 1;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = 1;
END;
\endpipeline
`

// Users' pgbench scripts, pgbench's own builtins written out as files among
// them, run through the CLI on every database in every protocol; the
// balances stay consistent (sledge check tpcb) and pipelines work where
// they can and are refused before the run where they cannot.
func TestScriptsOnEveryDatabase(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"custom.sql": custom, "pipelined.sql": pipelined}
	for _, b := range pgbench.BuiltinNames() {
		files[b+".sql"] = pgbench.BuiltinText(b)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := func(name string) string { return filepath.Join(dir, name) }

	type target struct {
		name      string
		url       func(t *testing.T) string
		pipelines bool
	}
	targets := []target{
		{"sqlite", func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "tpcb.db") }, false},
		{"postgres", func(t *testing.T) string {
			return ownDB(t, pgLazy.Get(t), "scripts")
		}, true},
		{"mariadb", func(t *testing.T) string {
			return ownDB(t, mariaLazy.Get(t), "scripts")
		}, false},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel() // each its own database and data home
			home := t.TempDir()
			u := tg.url(t)
			if _, stderr, code := runCLI(t, home, "build", "tpcb", "--db", u, "--scale", "1", "--no-job"); code != 0 {
				t.Fatalf("build: exit %d: %s", code, stderr)
			}
			for _, proto := range []string{"simple", "extended", "prepared"} {
				args := []string{"run", "--db", u, "-f", f("tpcb-like.sql") + "@2", "-f", f("simple-update.sql"),
					"-f", f("select-only.sql"), "-f", f("custom.sql"), "-M", proto, "-c", "2", "-t", "60", "--json", "--no-job", "--seed", "7"}
				stdout, stderr, code := runCLI(t, home, args...)
				if code != 0 {
					t.Fatalf("%s: exit %d: %s", proto, code, stderr)
				}
				var r scriptRun
				if err := json.Unmarshal([]byte(stdout), &r); err != nil {
					t.Fatalf("%s: %v: %s", proto, err, stdout)
				}
				if r.Workload != "script" || r.Transactions != 120 || r.Failed != 0 || r.Protocol != proto || r.Script != "multiple scripts" {
					t.Errorf("%s: %+v", proto, r)
				}
				if n := r.PerType[f("custom.sql")].Count; n == 0 {
					t.Errorf("%s: the custom script never ran: %+v", proto, r.PerType)
				}
				if tg.name != "sqlite" && (r.PerTxn == nil || r.PerTxn.RoundTrips < 1) {
					t.Errorf("%s: round trips not counted: %+v", proto, r.PerTxn)
				}
			}
			if tg.pipelines {
				stdout, stderr, code := runCLI(t, home, "run", "--db", u, "-f", f("pipelined.sql"), "-M", "extended",
					"-c", "2", "-t", "30", "--json", "--no-job")
				if code != 0 {
					t.Fatalf("pipelined: exit %d: %s", code, stderr)
				}
				var r scriptRun
				if err := json.Unmarshal([]byte(stdout), &r); err != nil || r.Transactions != 60 || r.Failed != 0 {
					t.Errorf("pipelined: %v %+v", err, r)
				}
				// BEGIN, four statements and END travel together: one round
				// trip, where the same script unpipelined takes six.
				if r.PerTxn == nil || r.PerTxn.RoundTrips > 1.01 {
					t.Errorf("pipelined: %+v round trips per transaction, want 1", r.PerTxn)
				}
			} else {
				_, stderr, code := runCLI(t, home, "run", "--db", u, "-f", f("pipelined.sql"), "-M", "extended", "-t", "1", "--no-job")
				if code != ExitUsage || !strings.Contains(stderr, "pipelines") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
					t.Errorf("pipeline on %s: exit %d, %q; want one line refusing it before the run", tg.name, code, stderr)
				}
			}
			stdout, stderr, code := runCLI(t, home, "check", "tpcb", "--db", u, "--no-job")
			if code != 0 {
				t.Errorf("check after the scripts: exit %d: %s %s", code, stdout, stderr)
			}
		})
	}
}
