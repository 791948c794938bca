package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/testdb"
)

// tpmRun is what these tests read of run --json.
type tpmRun struct {
	TPM            float64  `json:"tpm"`
	TPMSource      string   `json:"tpm_source"`
	TPMClient      float64  `json:"tpm_client"`
	TPMDatabase    *float64 `json:"tpm_database"`
	DBTransactions *int64   `json:"db_transactions"`
	TPMNote        string   `json:"tpm_note"`
	Failed         int64    `json:"failed"`
	Retries        int64    `json:"retries"`
	Total          txJSON   `json:"total"`
}

// The database's count of the measured interval's transactions (PostgreSQL
// pg_stat_database, MariaDB Com_commit + Com_rollback) agrees with the
// transactions sledge's VUs ended, within 2%, in every mode and protocol,
// on short runs where a reading at the edges that missed a second of
// unpublished counts was off by up to a quarter (issue 11). bench-tpm
// holds the same over 20 runs of 8 s.
func TestDatabaseTPMAgreesWithClient(t *testing.T) {
	script := filepath.Join(t.TempDir(), "tpcb.sql")
	if err := os.WriteFile(script, []byte(`\set aid random(1, 100000 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
END;
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The timed runs are throttled (-R): what is judged is the reading at
	// the interval's edges, which misses or adds counts the same way at
	// any rate (a second of unpublished counts is a third of a 3 s run),
	// and unthrottled they kept both cores busy for 25 s per database
	// (issue 24: the suite's CPU). The -t run goes at full speed.
	runs := [][]string{
		{"tpcc", "--mode", "procedure", "-c", "2", "--rampup", "1", "-T", "3s", "-R", "150"},
		{"tpcc", "--mode", "client", "-c", "2", "--rampup", "1", "-T", "3s", "-R", "150"},
		{"tpcc", "--mode", "prepared", "-c", "2", "--rampup", "1", "-T", "3s", "-R", "150"},
		{"tpcc", "--mode", "client", "-c", "2", "-t", "150"},
		{"tpcb", "--mode", "procedure", "-c", "2", "-T", "2s", "-R", "250"},
		{"tpcb", "--mode", "client", "-c", "2", "-T", "2s", "-R", "250"},
		{"tpcb", "--mode", "prepared", "-c", "2", "-T", "2s", "-R", "250"},
		{"-f", script, "-M", "simple", "-c", "2", "-T", "2s", "-R", "250"},
		{"-f", script, "-M", "extended", "-c", "2", "-T", "2s", "-R", "250"},
		{"-f", script, "-M", "prepared", "-c", "2", "-T", "2s", "-R", "250"},
	}
	for _, kind := range []string{"postgres", "mariadb"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			u := tpmServer(t, kind)
			home := t.TempDir()
			for _, b := range [][]string{{"build", "tpcc", "--warehouses", "1"}, {"build", "tpcb", "--scale", "1"}} {
				if _, stderr, code := runCLI(t, home, append(b, "--db", u, "--no-job")...); code != 0 {
					t.Fatalf("%s: exit %d: %s", b, code, stderr)
				}
			}
			for _, args := range runs {
				name := strings.Join(args, " ")
				r := runTPM(t, home, append(append([]string{"run"}, args...), "--db", u)...)
				if want := r.Total.Commits + r.Total.Rollbacks + r.Failed + r.Retries; want < 100 {
					// A busy machine (make test's groups side by side) can
					// leave a 2-3 s run too few transactions to judge 2%
					// by: the same run once more, three times as long.
					t.Logf("%s: only %d transactions; again, three times as long", name, want)
					r = runTPM(t, home, append(append([]string{"run"}, longer(args, 3)...), "--db", u)...)
				}
				if r.DBTransactions == nil || r.TPMDatabase == nil {
					t.Errorf("%s: no database figure: %+v", name, r)
					continue
				}
				// What the database must have counted: every transaction
				// the VUs ended, failed attempts too (rollbacks there).
				want := r.Total.Commits + r.Total.Rollbacks + r.Failed + r.Retries
				got := *r.DBTransactions
				t.Logf("%s: database %d, sledge %d (%+.2f%%), tpm %.0f from %s", name, got, want,
					100*float64(got-want)/float64(want), r.TPM, r.TPMSource)
				if want < 100 {
					t.Errorf("%s: only %d transactions: too few to judge", name, want)
				}
				// 2%, and the few statements of sledge's control session
				// that PostgreSQL counts too (runner.TPMSlack), which matter on a
				// slow machine's 3 s run; bench-tpm holds 2% on 8 s runs.
				if math.Abs(float64(got-want)) > max(0.02*float64(want), runner.TPMSlack) {
					t.Errorf("%s: the database counted %d transactions, sledge %d: more than 2%% apart", name, got, want)
				}
				if r.TPMSource != "database" || r.TPM != *r.TPMDatabase || r.TPMNote != "" {
					t.Errorf("%s: headline %.0f from %q (note %q), want the database's %.0f", name, r.TPM, r.TPMSource, r.TPMNote, *r.TPMDatabase)
				}
			}
		})
	}
}

// longer returns args with its -T duration (seconds, "Ns") k times as long.
func longer(args []string, k int) []string {
	out := append([]string(nil), args...)
	for i := 0; i+1 < len(out); i++ {
		if out[i] == "-T" {
			var n int
			if _, err := fmt.Sscanf(out[i+1], "%ds", &n); err == nil {
				out[i+1] = fmt.Sprintf("%ds", n*k)
			}
		}
	}
	return out
}

// Where other sessions commit on the database during the run, its counters
// are not the VUs' transactions: the headline is sledge's own count, both
// figures are printed with their source, and the note says why.
func TestOtherActivityMakesClientTheHeadline(t *testing.T) {
	u := tpmServer(t, "postgres")
	home := t.TempDir()
	if _, stderr, code := runCLI(t, home, "build", "tpcb", "--scale", "1", "--db", u, "--no-job"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	// A session of its own committing one SELECT after another. (It reads
	// a table: PostgreSQL publishes a session's counts when it goes idle
	// only if it has table statistics to publish too.)
	ctx, stop := context.WithCancel(context.Background())
	other, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		n := 0
		for ctx.Err() == nil {
			if _, err := other.Exec(ctx, "SELECT bid FROM pgbench_branches LIMIT 1"); err != nil && ctx.Err() == nil {
				t.Errorf("other session: %v", err)
				return
			}
			n++
		}
		t.Logf("other session: %d statements", n)
	}()
	args := []string{"run", "tpcb", "--builtin", "simple-update", "--db", u, "-c", "1", "-T", "3s", "--rate", "50"}
	r := runTPM(t, home, args...)
	stdout, stderr, code := runCLI(t, home, append(args, "--no-job")...)
	stop()
	wg.Wait()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if r.TPMSource != "client" || r.TPM != r.TPMClient || r.TPMDatabase == nil || *r.TPMDatabase <= 1.02*r.TPMClient {
		t.Errorf("headline %.0f from %q, client %.0f, database %v: want the client's, with the database's beside it", r.TPM, r.TPMSource, r.TPMClient, r.TPMDatabase)
	}
	if !strings.Contains(r.TPMNote, "other sessions were busy on the database") {
		t.Errorf("note %q does not say why", r.TPMNote)
	}
	for _, want := range []string{"counted by sledge (the database counted", "from the database's commit and rollback counters (not the headline)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
}

// tpmServer starts a private server of kind and returns its URL.
func tpmServer(t *testing.T, kind string) string {
	t.Helper()
	var (
		srv    *testdb.Server
		err    error
		scheme = "postgres"
	)
	if kind == "mariadb" {
		srv, err = testdb.StartMariaDB(context.Background())
		scheme = "mysql"
	} else {
		// Without autovacuum: its workers' transactions count in
		// pg_stat_database too (a table's vacuum and analyze, about 14),
		// and the runs here leave tables for it to visit; on a 2 s run of
		// 260 transactions that alone was 7% (what the note's "other
		// sessions" means; TestOtherActivityMakesClientTheHeadline).
		srv, err = testdb.StartPostgresWith(context.Background(), "autovacuum=off")
	}
	srv = testdb.Need(t, srv, err)
	t.Cleanup(func() { _ = srv.Stop() })
	return fmt.Sprintf("%s://%s:%s@%s:%d/tpm", scheme, srv.User, srv.Password, srv.Host, srv.Port)
}

func runTPM(t *testing.T, home string, args ...string) tpmRun {
	t.Helper()
	stdout, stderr, code := runCLI(t, home, append(args, "--json", "--no-job")...)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", args, code, stderr)
	}
	var r tpmRun
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%s: %v: %s", args, err, stdout)
	}
	return r
}
