package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// Script sessions run SQL the user wrote (pgbench scripts). In-process
// there are no round trips, so the protocols differ in what SQLite
// compiles (docs/scripts-databases.md):
//
//   - simple: every statement compiled from its text each time, values
//     pasted in; a compound command runs statement by statement.
//   - extended: prepare, bind, step, finalize at every execution.
//   - prepared: prepared once per session per command, then bound and
//     stepped.
//
// SQLite has one writer. As InTx does for the named statements, a
// script's transaction takes the writer queue (DB.writer) and starts with
// BEGIN IMMEDIATE, whatever BEGIN it wrote, so SQLITE_BUSY never hits it
// half-way; a write outside a transaction queues for its one statement.

var (
	_ db.ScriptDB         = (*DB)(nil)
	_ workload.ScriptConn = (*scriptConn)(nil)
)

// ScriptSupports: every protocol, no pipelines.
func (d *DB) ScriptSupports(p workload.Protocol, pipelines bool) error {
	return db.SupportsWithoutPipelines("sqlite", p, pipelines)
}

// ConnectScript opens a script session on its own connection of the pool,
// tuned like every other (the URL's PRAGMAs).
func (d *DB) ConnectScript(ctx context.Context, p workload.Protocol) (workload.ScriptConn, error) {
	if err := d.ScriptSupports(p, false); err != nil {
		return nil, err
	}
	sc, err := d.pool.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: connect: %w", err)
	}
	return &scriptConn{
		ScriptOnly: db.ScriptOnly{DB: "sqlite", Proto: p},
		d:          d,
		c:          sc,
		stmts:      map[int]*sql.Stmt{},
		row:        db.RowKeeper{Time: appendTime},
	}, nil
}

// scriptConn is one script session. Not safe for concurrent use.
type scriptConn struct {
	db.ScriptOnly // Mode, and the named-statement methods refused
	d             *DB
	c             *sql.Conn
	stmts         map[int]*sql.Stmt // ProtoPrepared, by SQLQuery.ID
	// Transaction control, prepared once: what the script's BEGIN,
	// COMMIT and ROLLBACK become.
	begin, commit, rollback *sql.Stmt
	inTx                    bool // a transaction the script opened
	writer                  bool // holding d.writer
	row                     db.RowKeeper
}

// Placeholder is ?n.
func (c *scriptConn) Placeholder(n int) string { return "?" + strconv.Itoa(n) }

// InTransaction reports a transaction the script opened with BEGIN (or
// START TRANSACTION) and has not ended with COMMIT, END or ROLLBACK; an
// error inside it leaves it open until Rollback.
func (c *scriptConn) InTransaction() bool { return c.inTx }

// RunSQL runs q by the session's protocol.
func (c *scriptConn) RunSQL(ctx context.Context, q *workload.SQLQuery, keep workload.ResultFunc) error {
	if err := ctx.Err(); err != nil { // mattn may not notice by itself
		return c.fail(q.Text, err)
	}
	if c.Proto != workload.ProtoSimple || !db.MayBeCompound(q.Text) {
		if c.Proto == workload.ProtoSimple && len(q.Args) > 0 {
			return fmt.Errorf("sqlite: simple protocol command with %d bound values (they belong in the text)", len(q.Args))
		}
		return c.statement(ctx, q, q.Text, 0, keep)
	}
	stmts, err := db.SplitScript(q.Text)
	if err != nil {
		return c.fail(q.Text, err)
	}
	for i, s := range stmts {
		if err := c.statement(ctx, q, s, i, keep); err != nil {
			return err
		}
	}
	return nil
}

// statement runs one statement of q: transaction control through the
// session's own statements and the writer queue, a write outside a
// transaction inside the writer queue, a read as it is.
func (c *scriptConn) statement(ctx context.Context, q *workload.SQLQuery, text string, idx int, keep workload.ResultFunc) error {
	kind := classifyStatement(text)
	switch {
	case kind == stBegin && !c.inTx:
		return c.beginTx(ctx, text)
	case kind == stCommit && c.inTx:
		if _, err := c.commit.ExecContext(ctx); err != nil {
			return c.fail(text, err) // still open (SQLITE_BUSY): Rollback ends it
		}
		c.endTx()
		return nil
	case kind == stRollback && c.inTx:
		_, err := c.rollback.ExecContext(context.WithoutCancel(ctx))
		c.endTx()
		if err != nil && !noTransaction(err) {
			return c.fail(text, err)
		}
		return nil
	case kind != stRead && !c.inTx:
		// A write outside a transaction (or a BEGIN, COMMIT or ROLLBACK
		// that SQLite will refuse): one statement in the writer queue.
		if err := c.d.lockWriter(ctx); err != nil {
			return c.fail(text, err)
		}
		defer c.d.unlockWriter()
	}
	if err := c.run(ctx, q, text, idx, kind == stRead, keep); err != nil {
		return c.fail(text, err)
	}
	return nil
}

// run sends text (with q's values) by the session's protocol.
func (c *scriptConn) run(ctx context.Context, q *workload.SQLQuery, text string, idx int, read bool, keep workload.ResultFunc) error {
	rows := read || keep != nil // otherwise Exec: no row is read
	switch c.Proto {
	case workload.ProtoSimple:
		if !rows {
			_, err := c.c.ExecContext(ctx, text)
			return err
		}
		rs, err := c.c.QueryContext(ctx, text)
		if err != nil {
			return err
		}
		return c.results(rs, idx, keep)
	case workload.ProtoExtended:
		st, err := c.c.PrepareContext(ctx, text)
		if err != nil {
			return err
		}
		err = c.execute(ctx, st, q.Args, idx, rows, keep)
		if cerr := st.Close(); err == nil {
			err = cerr
		}
		return err
	}
	st, ok := c.stmts[q.ID]
	if !ok {
		var err error
		if st, err = c.c.PrepareContext(ctx, text); err != nil {
			return err
		}
		c.stmts[q.ID] = st
	}
	return c.execute(ctx, st, q.Args, idx, rows, keep)
}

func (c *scriptConn) execute(ctx context.Context, st *sql.Stmt, args []any, idx int, rows bool, keep workload.ResultFunc) error {
	if !rows {
		_, err := st.ExecContext(ctx, args...)
		return err
	}
	rs, err := st.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	return c.results(rs, idx, keep)
}

// results steps through every row; with keep, the last one is kept and
// handed over with the columns and the count.
func (c *scriptConn) results(rs *sql.Rows, idx int, keep workload.ResultFunc) error {
	defer rs.Close()
	if keep == nil {
		for rs.Next() {
		}
		if err := rs.Err(); err != nil {
			return err
		}
		return rs.Close()
	}
	cols, err := rs.Columns()
	if err != nil {
		return err
	}
	dest := c.row.Targets(len(cols))
	n := 0
	for rs.Next() {
		if err := rs.Scan(dest...); err != nil {
			return err
		}
		n++
	}
	if err := rs.Err(); err != nil {
		return err
	}
	if err := rs.Close(); err != nil {
		return err
	}
	if len(cols) > 0 {
		keep(idx, cols, c.row.Last(n), n)
	}
	return nil
}

// beginTx takes the writer queue and starts the transaction with BEGIN
// IMMEDIATE, whichever BEGIN the script wrote.
func (c *scriptConn) beginTx(ctx context.Context, text string) error {
	if c.commit == nil {
		for _, p := range []struct {
			st   **sql.Stmt
			text string
		}{{&c.begin, "BEGIN IMMEDIATE"}, {&c.commit, "COMMIT"}, {&c.rollback, "ROLLBACK"}} {
			st, err := c.c.PrepareContext(ctx, p.text)
			if err != nil {
				return c.fail(p.text, err)
			}
			*p.st = st
		}
	}
	if err := c.d.lockWriter(ctx); err != nil {
		return c.fail(text, err)
	}
	if _, err := c.begin.ExecContext(ctx); err != nil {
		c.d.unlockWriter()
		return c.fail(text, err)
	}
	c.inTx, c.writer = true, true
	return nil
}

// endTx notes the end of the transaction and leaves the writer queue.
func (c *scriptConn) endTx() {
	c.inTx = false
	if c.writer {
		c.writer = false
		c.d.unlockWriter()
	}
}

// noTransaction reports SQLite's answer to a ROLLBACK after it had
// already rolled back by itself.
func noTransaction(err error) bool { return strings.Contains(err.Error(), "no transaction is active") }

// Rollback ends the script's open transaction and leaves the writer queue.
func (c *scriptConn) Rollback(ctx context.Context) error {
	if !c.inTx {
		return nil
	}
	_, err := c.rollback.ExecContext(context.WithoutCancel(ctx))
	c.endTx()
	if err != nil && !noTransaction(err) {
		return c.fail("ROLLBACK", err)
	}
	return nil
}

// Close ends an open transaction, closes the statements and returns the
// connection.
func (c *scriptConn) Close(ctx context.Context) error {
	errs := []error{c.Rollback(ctx)}
	for _, st := range c.stmts {
		errs = append(errs, st.Close())
	}
	for _, st := range []*sql.Stmt{c.begin, c.commit, c.rollback} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	c.stmts = nil
	errs = append(errs, c.c.Close())
	return errors.Join(errs...)
}

// fail classifies a script command's error: ErrRetry for SQLITE_BUSY and
// SQLITE_LOCKED, ErrNoSchema for a missing table; one line.
func (c *scriptConn) fail(text string, err error) error {
	return &scriptError{db.OpError{DB: "sqlite", Op: "exec", Stmt: db.FirstLine(strings.TrimSpace(text)), Err: err, Kind: kind(err)}}
}

// scriptError is an OpError on one line.
type scriptError struct{ db.OpError }

func (e *scriptError) Error() string { return strings.ReplaceAll(e.OpError.Error(), "\n", " ") }

// stmtKind is what a statement means for the writer queue.
type stmtKind int

const (
	stWrite    stmtKind = iota // anything that may write: queue outside a transaction
	stRead                     // SELECT, VALUES, EXPLAIN, WITH … SELECT
	stBegin                    // BEGIN [DEFERRED|IMMEDIATE|EXCLUSIVE] [TRANSACTION|WORK], START TRANSACTION
	stCommit                   // COMMIT or END [TRANSACTION|WORK]
	stRollback                 // ROLLBACK or ABORT [TRANSACTION|WORK], not ROLLBACK TO
)

// classifyStatement reads a statement's first words. Forms it does not
// know go to SQLite as written, as writes.
func classifyStatement(s string) stmtKind {
	w, i := nextWord(s, 0)
	switch strings.ToUpper(w) {
	case "SELECT", "VALUES", "EXPLAIN":
		return stRead
	case "WITH":
		if hasWriteWord(s) {
			return stWrite
		}
		return stRead
	case "BEGIN":
		if w, j := nextWord(s, i); oneOf(w, "DEFERRED", "IMMEDIATE", "EXCLUSIVE") {
			i = j
		}
		if txEnd(s, i) {
			return stBegin
		}
	case "START":
		if w, j := nextWord(s, i); strings.EqualFold(w, "TRANSACTION") && atEnd(s, j) {
			return stBegin
		}
	case "COMMIT", "END":
		if txEnd(s, i) {
			return stCommit
		}
	case "ROLLBACK", "ABORT":
		if txEnd(s, i) {
			return stRollback
		}
	}
	return stWrite
}

// txEnd reports an optional TRANSACTION or WORK and then the end.
func txEnd(s string, i int) bool {
	if w, j := nextWord(s, i); oneOf(w, "TRANSACTION", "WORK") {
		i = j
	}
	return atEnd(s, i)
}

func oneOf(w string, words ...string) bool {
	for _, x := range words {
		if strings.EqualFold(w, x) {
			return true
		}
	}
	return false
}

// hasWriteWord reports INSERT, UPDATE, DELETE or REPLACE as a word of s.
func hasWriteWord(s string) bool {
	for i := 0; i < len(s); {
		if !db.IsWordByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && db.IsWordByte(s[j]) {
			j++
		}
		if oneOf(s[i:j], "INSERT", "UPDATE", "DELETE", "REPLACE") {
			return true
		}
		i = j
	}
	return false
}

// nextWord is db.NextWord without # comments: in SQLite '#' starts a
// parameter name.
func nextWord(s string, i int) (string, int) { return db.NextWord(s, i, false) }

// atEnd reports that only spaces, comments and ';' follow s[i:].
func atEnd(s string, i int) bool {
	for i = db.SkipSpace(s, i, false); i < len(s) && s[i] == ';'; i = db.SkipSpace(s, i+1, false) {
	}
	return i == len(s)
}

// appendTime writes a time in UTC as SQLite stores it, so a stored
// "YYYY-MM-DD HH:MM:SS[.fff]" comes back unchanged.
func appendTime(b []byte, t time.Time) []byte { return t.UTC().AppendFormat(b, readTimeLayout) }
