package tpcb

import (
	"errors"

	"github.com/sledge-bench/sledge/internal/workload"
)

// Statement names. The text of each lives only in the database packages
// (sql/tpcb/statements.sql and checks.sql); this file is the contract those
// files implement.
//
// Argument rules, for every database:
//   - Arguments are listed below in order; in the SQL text they appear in
//     exactly that order, each once (SQLite ?1..?n, PostgreSQL $1..$n,
//     MariaDB/MySQL plain ?), which is why delta comes before the id in the
//     updates.
//   - Every value is an int64 (bound once as an *int64 in client, prepared
//     and procedure modes: workload.Stmt): ids (aid, bid, tid) and delta. The history
//     timestamp is never passed: the statement uses the database's clock
//     (CURRENT_TIMESTAMP), as pgbench's INSERT does.
//   - "→" lists the result columns in scan order; "exec" statements return
//     nothing but the affected row count.
//   - The texts are pgbench's builtin statements (docs/tpcb.md part 3)
//     with the variables as parameters: no locking clause, no RETURNING,
//     the balance read with its own SELECT.
const (
	// tpcb.scale () → count(*) of pgbench_branches, count(*) of
	// pgbench_tellers. The first is the scale (pgbench reads it the same
	// way); the second tells a complete build (10 per branch) from one
	// interrupted while loading branches, the table loaded last.
	stmtScale = "tpcb.scale"

	// The statements of the builtins, client and prepared modes. tpcb-like
	// runs account_update, account_select, teller_update, branch_update
	// and history_insert between BEGIN and COMMIT; simple-update runs
	// account_update, account_select and history_insert between BEGIN and
	// COMMIT; select-only runs account_select alone, in autocommit, in
	// every mode.
	//
	// tpcb.account_update (delta, aid) exec: abalance += delta.
	stmtAccountUpdate = "tpcb.account_update"
	// tpcb.account_select (aid) → abalance.
	stmtAccountSelect = "tpcb.account_select"
	// tpcb.teller_update (delta, tid) exec: tbalance += delta.
	stmtTellerUpdate = "tpcb.teller_update"
	// tpcb.branch_update (delta, bid) exec: bbalance += delta.
	stmtBranchUpdate = "tpcb.branch_update"
	// tpcb.history_insert (tid, bid, aid, delta) exec: INSERT INTO
	// pgbench_history with mtime = CURRENT_TIMESTAMP (filler NULL).
	stmtHistoryInsert = "tpcb.history_insert"

	// Procedure mode: one statement per transaction; the routine runs the
	// builtin's statements above in the same order inside one transaction
	// of its own and returns the balance its SELECT read (one row, one
	// integer column).
	//
	// tpcb-like.call (aid, bid, tid, delta) → abalance.
	stmtTPCBLikeCall = "tpcb-like.call"
	// simple-update.call (aid, bid, tid, delta) → abalance. bid and tid only
	// go into the history row.
	stmtSimpleUpdateCall = "simple-update.call"

	// Consistency checks: "check.<ID>" for each Checks() entry, in checks.sql.
	// Each returns one integer, the number of violations.
)

// Database-side statements outside the workload's contract, which a
// database package may define for its own use:
//
//   - "<tx>.call_procedure" (PostgreSQL): the CALL of a PROCEDURE that
//     replaces "<tx>.call" with the URL parameter routines=procedures;
//     same arguments, the result in an INOUT argument.
//   - "schema.built" (PostgreSQL, MariaDB/MySQL) () → a positive integer
//     once the build has loaded its last table (the rows of
//     pgbench_branches). Procedure mode checks at connect time that the
//     routines exist, but only where a schema is built, so that a build or
//     a run on an empty database is not refused for the wrong reason.

// clientStatements are the statements of the three builtins when the
// client drives them statement by statement.
func clientStatements() []string {
	return []string{stmtAccountUpdate, stmtAccountSelect, stmtTellerUpdate, stmtBranchUpdate, stmtHistoryInsert}
}

// checkStatements are the statements of Checks().
func checkStatements() []string {
	var out []string
	for _, c := range checks() {
		out = append(out, "check."+c.ID)
	}
	return out
}

// Statements names every statement the workload uses in mode m, whatever
// the mix: the builtins' statements (in procedure mode the two calls and
// select-only's SELECT), tpcb.scale and the checks.
func (w *Workload) Statements(m workload.Mode) []string {
	var out []string
	if m.ProcedureLike() {
		out = []string{stmtTPCBLikeCall, stmtSimpleUpdateCall, stmtAccountSelect}
	} else {
		out = clientStatements()
	}
	out = append(out, stmtScale)
	return append(out, checkStatements()...)
}

// SupportsMode refuses batched mode: each of the builtins' statements
// touches one row of its own table, so there is no set to batch.
func (w *Workload) SupportsMode(m workload.Mode) error {
	if m == workload.ModeBatched {
		return errors.New("tpcb: --mode batched has no set-oriented form here (each statement touches one row of its own table); use prepared or pipeline")
	}
	return nil
}
