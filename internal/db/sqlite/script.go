package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
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

var errScriptNamed = errors.New("sqlite: named statements are not available in a script session")

// ScriptSupports: every protocol, no pipelines.
func (d *DB) ScriptSupports(p workload.Protocol, pipelines bool) error {
	switch p {
	case workload.ProtoSimple, workload.ProtoExtended, workload.ProtoPrepared:
	default:
		return fmt.Errorf("sqlite: unknown protocol %d: use simple, extended or prepared", int(p))
	}
	if pipelines {
		return errors.New("pipelines (\\startpipeline) work only on PostgreSQL")
	}
	return nil
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
	return &scriptConn{d: d, c: sc, proto: p, stmts: map[int]*sql.Stmt{}}, nil
}

// scriptConn is one script session. Not safe for concurrent use.
type scriptConn struct {
	d     *DB
	c     *sql.Conn
	proto workload.Protocol
	stmts map[int]*sql.Stmt // ProtoPrepared, by SQLQuery.ID
	// Transaction control, prepared once: what the script's BEGIN,
	// COMMIT and ROLLBACK become.
	begin, commit, rollback *sql.Stmt
	inTx                    bool // a transaction the script opened
	writer                  bool // holding d.writer
	row                     rowKeeper
}

// Mode is client for the simple protocol (values in the text), prepared
// otherwise (values bound).
func (c *scriptConn) Mode() workload.Mode {
	if c.proto == workload.ProtoSimple {
		return workload.ModeClient
	}
	return workload.ModePrepared
}

func (c *scriptConn) Exec(context.Context, string, ...any) (int64, error) {
	return 0, errScriptNamed
}

func (c *scriptConn) QueryRow(context.Context, string, ...any) workload.Row {
	return &row{err: errScriptNamed}
}

func (c *scriptConn) Query(context.Context, string, ...any) (workload.Rows, error) {
	return nil, errScriptNamed
}

func (c *scriptConn) InTx(context.Context, workload.TxOptions, func(context.Context) error) error {
	return errors.New("sqlite: InTx is not available in a script session: the script's BEGIN and COMMIT go through RunSQL")
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
	if c.proto != workload.ProtoSimple || !mayBeCompound(q.Text) {
		if c.proto == workload.ProtoSimple && len(q.Args) > 0 {
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
	switch c.proto {
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
	dest := c.row.targets(len(cols))
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
		keep(idx, cols, c.row.last(n), n)
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

// mayBeCompound reports whether text has a ';' before its end, so more
// than one statement (or a ';' in a literal).
func mayBeCompound(text string) bool {
	return strings.IndexByte(strings.TrimRight(text, " \t\r\n;"), ';') >= 0
}

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
		if !isWordByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		if oneOf(s[i:j], "INSERT", "UPDATE", "DELETE", "REPLACE") {
			return true
		}
		i = j
	}
	return false
}

func isWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// skipSpace skips spaces and comments (--, /* */) from s[i:].
func skipSpace(s string, i int) int {
	for i < len(s) {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return len(s)
			}
			i += j
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return len(s)
			}
			i += j + 4
		default:
			return i
		}
	}
	return i
}

// nextWord returns the word at s[i:] after spaces and comments, and the
// offset after it; "" when something else comes first.
func nextWord(s string, i int) (string, int) {
	i = skipSpace(s, i)
	j := i
	for j < len(s) && isWordByte(s[j]) {
		j++
	}
	return s[i:j], j
}

// atEnd reports that only spaces, comments and ';' follow s[i:].
func atEnd(s string, i int) bool {
	for i = skipSpace(s, i); i < len(s) && s[i] == ';'; i = skipSpace(s, i+1) {
	}
	return i == len(s)
}

// rowKeeper scans rows into buffers of its own, so the last row of a
// result is still there when the rows are done, without an allocation
// per row.
type rowKeeper struct {
	cells []cell
	dest  []any // &cells[i]
	n     int   // columns of the current result
	out   []any
}

// targets returns n scan targets.
func (k *rowKeeper) targets(n int) []any {
	if len(k.cells) < n {
		k.cells = make([]cell, n)
		k.dest = make([]any, n)
		for i := range k.cells {
			k.dest[i] = &k.cells[i]
		}
	}
	k.n = n
	return k.dest[:n]
}

// last returns the last row scanned as strings (nil for NULL); nil when
// there were no rows.
func (k *rowKeeper) last(rows int) []any {
	if rows == 0 {
		return nil
	}
	k.out = k.out[:0]
	for i := range k.n {
		if k.cells[i].null {
			k.out = append(k.out, nil)
			continue
		}
		k.out = append(k.out, string(k.cells[i].b))
	}
	return k.out
}

// cell is one value of a row as text: integers in decimal, floats as
// PostgreSQL prints them, dates as stored, booleans as 1 or 0 (what
// SQLite stores).
type cell struct {
	b    []byte
	null bool
}

func (c *cell) Scan(src any) error {
	c.b, c.null = c.b[:0], false
	switch v := src.(type) {
	case nil:
		c.null = true
	case []byte:
		c.b = append(c.b, v...)
	case string:
		c.b = append(c.b, v...)
	case int64:
		c.b = strconv.AppendInt(c.b, v, 10)
	case float64:
		c.b = appendFloat(c.b, v)
	case bool:
		if v {
			c.b = append(c.b, '1')
		} else {
			c.b = append(c.b, '0')
		}
	case time.Time:
		c.b = v.UTC().AppendFormat(c.b, readTimeLayout)
	default:
		return fmt.Errorf("unsupported value type %T", src)
	}
	return nil
}

// appendFloat writes f as PostgreSQL prints a float8: the shortest digits
// that read back exactly, in fixed notation from 1e-4 up to 1e15 and in
// exponent notation outside.
func appendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-4 && a < 1e15) {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	return strconv.AppendFloat(b, f, 'e', -1, 64)
}
