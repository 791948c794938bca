package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// A pgbench script whose every transaction fails: each is an error, not a
// rollback; TPS and TPM leave them out (the database's count of them as
// rollbacks is not the headline); the server answered, so there was no
// outage; and the run exits 3 with its result printed.
func TestEveryTransactionFailsExits3(t *testing.T) {
	u := ownDB(t, pgLazy.Get(t), "failed")
	home := t.TempDir()
	if _, stderr, code := runCLI(t, home, "build", "tpcb", "--scale", "1", "--db", u, "--no-job"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	script := filepath.Join(home, "bad.sql")
	if err := os.WriteFile(script, []byte("BEGIN;\nSELECT abalance FROM pgbench_accounts WHERE aid = 1;\nSELECT * FROM no_such_table;\nEND;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, home, "run", "--db", u, "-f", script, "-c", "2", "-T", "2s", "--json")
	if code != ExitFailedTx {
		t.Fatalf("exit %d, want %d: %s", code, ExitFailedTx, stderr)
	}
	if !strings.Contains(stderr, "failed with errors that were not retried") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("stderr should be one line saying why: %q", stderr)
	}
	var r struct {
		Transactions int64   `json:"transactions"`
		Failed       int64   `json:"failed"`
		TPS          float64 `json:"tps"`
		TPM          float64 `json:"tpm"`
		TPMSource    string  `json:"tpm_source"`
		TPMNote      string  `json:"tpm_note"`
		OutageS      int     `json:"outage_s"`
		Total        txJSON  `json:"total"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if r.Failed < 100 || r.Transactions != 0 || r.Total.Rollbacks != 0 || r.Total.Errors != r.Failed {
		t.Errorf("failed %d, processed %d, rollbacks %d, errors %d: want every transaction failed, none a rollback",
			r.Failed, r.Transactions, r.Total.Rollbacks, r.Total.Errors)
	}
	if r.TPS != 0 || r.TPM != 0 || r.TPMSource != "client" || !strings.Contains(r.TPMNote, "failed") {
		t.Errorf("tps %v, tpm %v from %q (%s): want 0 from the client, saying why", r.TPS, r.TPM, r.TPMSource, r.TPMNote)
	}
	if r.OutageS != 0 {
		t.Errorf("outage of %d s: the server answered every transaction", r.OutageS)
	}

	// The text summary says the same, and the job is saved.
	stdout, stderr, code = runCLI(t, home, "run", "--db", u, "-f", script, "-c", "1", "-t", "20")
	if code != ExitFailedTx || !strings.Contains(stdout, "number of failed transactions: 20 (100.000%)") || strings.Contains(stdout, "outage") {
		t.Errorf("exit %d:\n%s%s", code, stdout, stderr)
	}
	// Its job is complete (the result is whole) and says what failed.
	out, _, _ := runCLI(t, home, "jobs", "list", "--json")
	var l struct {
		Jobs []struct {
			Status string `json:"status"`
			Error  string `json:"error"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil || len(l.Jobs) == 0 {
		t.Fatalf("jobs list: %v: %s", err, out)
	}
	if j := l.Jobs[0]; j.Status != "completed" || !strings.Contains(j.Error, "20 of 20 transactions failed") {
		t.Errorf("job %+v: want completed, with an error saying what failed", j)
	}
}

// -r: TPC-C's own rollbacks (1% of New-Orders, an unused item) are not
// statement failures: in procedure mode the call that raised it counts as a
// rollback, in client mode the item query found no row and did not fail.
func TestPerStatementRollbacksAreNotFailures(t *testing.T) {
	u := ownDB(t, pgLazy.Get(t), "failed")
	home := t.TempDir()
	if _, stderr, code := runCLI(t, home, "build", "--warehouses", "1", "--db", u, "--no-job"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	for _, mode := range []string{"procedure", "client"} {
		// Seed 3's one virtual user draws two rolled-back New-Orders in
		// its first 150 transactions (the draws are the client's, the same
		// on every database); 1,500 took ten times the CPU for the same.
		stdout, stderr, code := runCLI(t, home, "run", "--db", u, "--mode", mode, "-t", "150", "-r", "--json", "--no-job", "--seed", "3")
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", mode, code, stderr)
		}
		var r struct {
			Statements []stmtJSON `json:"statements"`
			Total      txJSON     `json:"total"`
		}
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatal(err)
		}
		var failures, rollbacks int64
		for _, st := range r.Statements {
			failures += st.Failures
			rollbacks += st.Rollbacks
		}
		if r.Total.Rollbacks == 0 {
			t.Fatalf("%s: no New-Order rolled back in 150 transactions of seed 3", mode)
		}
		want := int64(0)
		if mode == "procedure" {
			want = r.Total.Rollbacks // one raising call per rolled-back New-Order
		}
		if failures != 0 || rollbacks != want {
			t.Errorf("%s: %d statement failures and %d rollbacks for %d rolled-back transactions, want 0 and %d",
				mode, failures, rollbacks, r.Total.Rollbacks, want)
		}
	}
}

// Every command's --help ends with the same exit-status table, which
// names every code sledge uses.
func TestEveryHelpHasTheExitCodes(t *testing.T) {
	root := newRoot(t.Context(), &Env{Getenv: func(string) string { return "" }})
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		n++
		path := strings.Fields(c.CommandPath())[1:]
		stdout, _, code := runCLI(t, t.TempDir(), append(path, "--help")...)
		if code != ExitOK {
			t.Errorf("%s --help: exit %d", c.CommandPath(), code)
		}
		if c.Name() == "pgbench" {
			// pgbench's exit statuses, not sledge's (docs/contracts.md).
			if !strings.HasSuffix(stdout, pgbExitHelp) {
				t.Errorf("%s --help lacks pgbench's exit-status table:\n%s", c.CommandPath(), stdout)
			}
			return
		}
		if c.Name() == "serve" {
			// The service's own (docs/serve.md): a signal ends it with 0.
			if !strings.HasSuffix(stdout, serveExitHelp) || strings.Contains(stdout, exitCodesHelp) {
				t.Errorf("%s --help lacks the service's exit-status table:\n%s", c.CommandPath(), stdout)
			}
			return
		}
		if c.Name() == "agent" {
			// The agent's own (docs/agent.md): a signal ends it with 0.
			if !strings.HasSuffix(stdout, agentExitHelp) || strings.Contains(stdout, exitCodesHelp) {
				t.Errorf("%s --help lacks the agent's exit-status table:\n%s", c.CommandPath(), stdout)
			}
			return
		}
		if !strings.Contains(stdout, exitCodesHelp) {
			t.Errorf("%s --help lacks the exit-status table:\n%s", c.CommandPath(), stdout)
		}
		for _, code := range []int{ExitOK, ExitFailure, ExitUsage, ExitFailedTx, ExitInternal, ExitInterrupted} {
			if !strings.Contains(stdout, "\n  "+strconv.Itoa(code)+" ") {
				t.Errorf("%s --help: no line for exit %d", c.CommandPath(), code)
			}
		}
		for _, sub := range c.Commands() {
			if !sub.Hidden && sub.Name() != "help" {
				walk(sub)
			}
		}
	}
	walk(root)
	if n < 10 {
		t.Errorf("walked %d commands", n)
	}
}
