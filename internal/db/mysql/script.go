package mysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/workload"
)

// Script sessions run SQL the user wrote (pgbench scripts). MySQL's
// protocol has no unnamed statement, so the three pgbench protocols map
// to the nearest things (docs/scripts-databases.md):
//
//   - simple: the text protocol (COM_QUERY) with the values pasted in;
//     compound commands run as one multi-statement query.
//   - extended: prepare, execute, close for every execution (binary
//     protocol; the close needs no reply, so two round trips).
//   - prepared: prepared once per session per command, then executed.

// erCheckRead is MariaDB's "Record has changed since last read": the
// serialization failure of innodb_snapshot_isolation (REPEATABLE READ
// that refuses lost updates; MariaDB 10.6.18 and later).
const erCheckRead = 1020

var (
	_ db.ScriptDB         = (*DB)(nil)
	_ workload.ScriptConn = (*scriptConn)(nil)
	_ metrics.Wired       = (*scriptConn)(nil)
	_ workload.Breakable  = (*scriptConn)(nil)
)

// ScriptSupports: every protocol, no pipelines.
func (d *DB) ScriptSupports(p workload.Protocol, pipelines bool) error {
	return db.SupportsWithoutPipelines("mysql", p, pipelines)
}

// ConnectScript opens a script session on a connection of its own, dialed
// like Connect's (same URL options, TLS, timeouts, isolation, messages and
// wire counting) but allowing multi-statement queries, which compound
// commands need.
func (d *DB) ConnectScript(ctx context.Context, p workload.Protocol) (workload.ScriptConn, error) {
	if err := d.ScriptSupports(p, false); err != nil {
		return nil, err
	}
	wire := metrics.WireFrom(ctx)
	own, sc, err := d.ownConn(ctx, wire, func(cfg *mysql.Config) {
		cfg.MultiStatements = true
		cfg.InterpolateParams = false // values are pasted by the script (simple) or bound
	})
	if err != nil {
		return nil, err
	}
	c := &scriptConn{
		ScriptOnly: db.ScriptOnly{DB: "mysql", Proto: p},
		d:          d,
		c:          sc,
		own:        own,
		wire:       wire,
		stmts:      map[int]*sql.Stmt{},
		row:        db.RowKeeper{Time: appendTime},
	}
	if _, err := sc.ExecContext(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL "+isolations[d.cfg.isolation]); err != nil {
		_ = c.Close(ctx)
		return nil, fmt.Errorf("mysql: set isolation: %w", d.connErr(err))
	}
	return c, nil
}

// scriptConn is one script session. Not safe for concurrent use.
type scriptConn struct {
	db.ScriptOnly // Mode, and the named-statement methods refused
	d             *DB
	c             *sql.Conn
	own           *sql.DB
	wire          *metrics.WireCounts // nil: not counted
	stmts         map[int]*sql.Stmt   // ProtoPrepared, by SQLQuery.ID
	inTx          bool                // from the statements sent (track)
	row           db.RowKeeper        // the last row, for keep
}

func (c *scriptConn) Wire() *metrics.WireCounts { return c.wire }

// Broken reports whether the session's connection is unusable (connlost.go).
func (c *scriptConn) Broken() bool { return !sessionUsable(c.c) }

// Placeholder is ? for every parameter.
func (c *scriptConn) Placeholder(int) string { return "?" }

// InTransaction is tracked from the statements the session sent: BEGIN or
// START TRANSACTION opens, COMMIT or ROLLBACK closes; an error inside a
// transaction leaves it open until Rollback. The driver does not expose
// the server's own status flag.
func (c *scriptConn) InTransaction() bool { return c.inTx }

// RunSQL sends q by the session's protocol and reads all of its results.
func (c *scriptConn) RunSQL(ctx context.Context, q *workload.SQLQuery, keep workload.ResultFunc) error {
	var err error
	if t := mysqlSpelling(q.Text); t != q.Text {
		qq := *q
		qq.Text = t
		q = &qq
	}
	switch c.Proto {
	case workload.ProtoSimple:
		if len(q.Args) > 0 {
			return fmt.Errorf("mysql: simple protocol command with %d bound values (they belong in the text)", len(q.Args))
		}
		if keep == nil {
			_, err = c.c.ExecContext(ctx, q.Text) // reads every result set
		} else {
			var rs *sql.Rows
			if rs, err = c.c.QueryContext(ctx, q.Text); err == nil {
				err = c.results(rs, rowStatements(q.Text), keep)
			}
		}
	case workload.ProtoExtended:
		var st *sql.Stmt
		if st, err = c.c.PrepareContext(ctx, trimSemicolon(q.Text)); err == nil {
			err = c.execute(ctx, st, q.Args, keep)
			if cerr := st.Close(); err == nil {
				err = cerr
			}
		}
	default:
		st, ok := c.stmts[q.ID]
		if !ok {
			if st, err = c.c.PrepareContext(ctx, trimSemicolon(q.Text)); err != nil {
				break
			}
			c.stmts[q.ID] = st
		}
		err = c.execute(ctx, st, q.Args, keep)
	}
	c.track(q.Text, err == nil)
	if err != nil {
		return c.fail(q.Text, err)
	}
	return nil
}

// execute runs a prepared statement with args. Always as a query: the
// driver's Exec of a statement that returns rows hangs when MariaDB sends
// no column metadata for it (its cached-metadata extension: go-sql-driver
// 1.10.1 then still skips column packets that never come).
func (c *scriptConn) execute(ctx context.Context, st *sql.Stmt, args []any, keep workload.ResultFunc) error {
	rs, err := st.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	if keep == nil {
		return drain(rs)
	}
	return c.results(rs, nil, keep)
}

// drain reads every row of every result set of rs without converting.
func drain(rs *sql.Rows) error {
	defer rs.Close()
	for {
		for rs.Next() {
		}
		if !rs.NextResultSet() {
			break
		}
	}
	if err := rs.Err(); err != nil {
		return err
	}
	return rs.Close()
}

// results reads every result set of rs and calls keep for those with
// columns, with the index of their statement: index[k] for the k-th
// result set when given (the driver skips the results of statements that
// return no rows), else k.
func (c *scriptConn) results(rs *sql.Rows, index []int, keep workload.ResultFunc) error {
	defer rs.Close()
	for k := 0; ; k++ {
		stmt := k
		if k < len(index) {
			stmt = index[k]
		}
		cols, err := rs.Columns()
		if err != nil {
			return err
		}
		if len(cols) > 0 {
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
			keep(stmt, cols, c.row.Last(n), n)
		}
		if !rs.NextResultSet() {
			break
		}
	}
	if err := rs.Err(); err != nil {
		return err
	}
	return rs.Close()
}

// track follows the transaction state through the statements of text.
// After an error in a compound command the statements that ran are not
// known: a BEGIN in it counts, a COMMIT does not (a needless ROLLBACK is
// harmless; a missing one would leave locks held).
func (c *scriptConn) track(text string, ok bool) {
	if !db.MayBeCompound(text) {
		c.inTx = txApply(c.inTx, txEffectOf(text), ok)
		return
	}
	stmts, err := db.SplitScript(text)
	if err != nil {
		return
	}
	for _, s := range stmts {
		e := txEffectOf(s)
		if !ok && e == txCommit {
			continue // it may not have run
		}
		c.inTx = txApply(c.inTx, e, true)
	}
}

// Rollback sends ROLLBACK when a transaction is open.
func (c *scriptConn) Rollback(ctx context.Context) error {
	if !c.inTx {
		return nil
	}
	c.inTx = false
	_, err := c.c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	if err != nil && !errors.Is(err, sqldriver.ErrBadConn) && !errors.Is(err, mysql.ErrInvalidConn) && !errors.Is(err, sql.ErrConnDone) {
		return c.fail("ROLLBACK", err)
	}
	return nil
}

// Close closes the session's statements and its connection.
func (c *scriptConn) Close(ctx context.Context) error {
	var errs []error
	for _, st := range c.stmts {
		errs = append(errs, st.Close())
	}
	c.stmts = nil
	errs = append(errs, c.c.Close(), c.own.Close())
	return errors.Join(errs...)
}

// fail classifies a script command's error: ErrRetry for a deadlock (and
// MariaDB's snapshot-isolation conflict) only, as pgbench retries
// deadlocks and serialization failures; not for a lock wait timeout.
// ErrNoSchema for a missing table. The message is one line.
func (c *scriptConn) fail(text string, err error) error {
	if isNetErr(err) && !lostConnection(err) { // connlost.go
		return c.d.connErr(err)
	}
	return &scriptError{db.OpError{DB: "mysql", Op: "exec", Stmt: db.FirstLine(strings.TrimSpace(text)), Err: err, Kind: scriptKind(err)}}
}

// scriptKind is the workload sentinel for a script command's error.
func scriptKind(err error) error {
	if lostConnection(err) { // connlost.go: the engine reconnects
		return workload.ErrConnLost
	}
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return nil
	}
	switch me.Number {
	case erLockDeadlock, erCheckRead:
		return workload.ErrRetry
	case erNoSuchTable:
		return workload.ErrNoSchema
	}
	return nil
}

// scriptError is an OpError on one line: the server quotes the statement
// in syntax errors, newlines included.
type scriptError struct{ db.OpError }

func (e *scriptError) Error() string { return strings.ReplaceAll(e.OpError.Error(), "\n", " ") }

// rowStatements returns the index of each statement of a compound
// command that returns rows, in order; nil for a single statement.
func rowStatements(text string) []int {
	if !db.MayBeCompound(text) {
		return nil
	}
	stmts, err := db.SplitScript(text)
	if err != nil {
		return nil
	}
	var out []int
	for i, s := range stmts {
		if returnsRows(s) {
			out = append(out, i)
		}
	}
	return out
}

// returnsRows reports a statement that answers with a result set: a query
// (also in parentheses), SHOW, EXPLAIN and the like, CALL, or a write
// with RETURNING.
func returnsRows(s string) bool {
	w, _ := nextWord(s, 0)
	switch strings.ToUpper(w) {
	case "", "SELECT", "WITH", "VALUES", "TABLE", "SHOW", "DESC", "DESCRIBE", "EXPLAIN", "CALL",
		"CHECK", "CHECKSUM", "ANALYZE", "OPTIMIZE", "REPAIR", "HELP":
		return true
	}
	for i := 0; i < len(s); {
		w, j := nextWord(s, i)
		if strings.EqualFold(w, "RETURNING") {
			return true
		}
		if j == i {
			j++
		}
		i = j
	}
	return false
}

// trimSemicolon drops a final ';': a prepared statement is one statement.
func trimSemicolon(s string) string { return strings.TrimRight(s, " \t\r\n;") }

// txEffect is what a statement does to the transaction state.
type txEffect int

const (
	txNone txEffect = iota
	txBegin
	txCommit
	txRollback
)

// txApply returns the state after a statement with effect e ran (ok) or
// failed.
func txApply(inTx bool, e txEffect, ok bool) bool {
	switch {
	case e == txBegin && ok:
		return true
	case e == txCommit && ok, e == txRollback:
		return false
	}
	return inTx
}

// txEffectOf reads the first words of a statement: BEGIN [WORK], START
// TRANSACTION …, COMMIT, END, ROLLBACK or ABORT (not ROLLBACK TO
// SAVEPOINT; COMMIT AND CHAIN leaves a transaction open).
func txEffectOf(s string) txEffect {
	w, i := nextWord(s, 0)
	switch strings.ToUpper(w) {
	case "BEGIN":
		if w2, _ := nextWord(s, i); w2 == "" || strings.EqualFold(w2, "WORK") {
			return txBegin
		}
	case "START":
		if w2, _ := nextWord(s, i); strings.EqualFold(w2, "TRANSACTION") {
			return txBegin
		}
	case "COMMIT", "END":
		if chained(s, i) {
			return txBegin
		}
		return txCommit
	case "ROLLBACK", "ABORT":
		for w, j := nextWord(s, i); w != ""; w, j = nextWord(s, j) {
			if strings.EqualFold(w, "TO") {
				return txNone
			}
		}
		if chained(s, i) {
			return txBegin
		}
		return txRollback
	}
	return txNone
}

// chained reports "AND CHAIN" (not "AND NO CHAIN") in the words from i.
func chained(s string, i int) bool {
	prev := ""
	for w, j := nextWord(s, i); w != ""; w, j = nextWord(s, j) {
		if strings.EqualFold(w, "CHAIN") && strings.EqualFold(prev, "AND") {
			return true
		}
		prev = w
	}
	return false
}

// nextWord is db.NextWord with MySQL's # comments.
func nextWord(s string, i int) (string, int) { return db.NextWord(s, i, true) }

// appendTime writes a time as MySQL prints a DATETIME, microseconds when
// there are any, in the location the driver gave it (no conversion).
func appendTime(b []byte, t time.Time) []byte { return t.AppendFormat(b, "2006-01-02 15:04:05.999999") }

// mysqlSpelling turns PostgreSQL's spellings of transaction control, which
// pgbench's own builtins use (their last command is END;), into MySQL's:
// END [WORK|TRANSACTION] is COMMIT, ABORT is ROLLBACK, BEGIN TRANSACTION
// is START TRANSACTION. Same meaning, so the scripts pgbench runs run here
// unmodified. Any other text is returned as it is.
func mysqlSpelling(text string) string {
	s := strings.TrimSpace(text)
	if s == "" {
		return text
	}
	switch s[0] {
	case 'e', 'E', 'a', 'A', 'b', 'B':
	default:
		return text
	}
	s = strings.TrimSpace(strings.TrimSuffix(s, ";"))
	switch strings.ToUpper(strings.Join(strings.Fields(s), " ")) {
	case "END", "END WORK", "END TRANSACTION":
		return "COMMIT"
	case "ABORT", "ABORT WORK", "ABORT TRANSACTION":
		return "ROLLBACK"
	case "BEGIN TRANSACTION":
		return "START TRANSACTION"
	}
	return text
}

// ownConn opens a connection of its own, configured by tune from the
// URL's (TLS, timeouts, isolation) and with wire counting: a script or
// SQL text session, which closing closes.
func (d *DB) ownConn(ctx context.Context, wire *metrics.WireCounts, tune func(*mysql.Config)) (*sql.DB, *sql.Conn, error) {
	cfg := d.cfg.drv.Clone()
	tune(cfg)
	if wire != nil || d.cfg.io != db.IOPoller {
		cfg.DialFunc = countingDial(wire, d.cfg.io) // wire.go
	}
	connector, err := newConnector(cfg)
	if err != nil {
		return nil, nil, err
	}
	own := sql.OpenDB(connector)
	own.SetMaxIdleConns(0) // closing the session closes its connection
	sc, err := own.Conn(ctx)
	if err != nil {
		_ = own.Close()
		return nil, nil, d.connErr(err)
	}
	return own, sc, nil
}
