package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/workload"
)

// Script sessions run SQL the user wrote (pgbench scripts) the way pgbench
// sends it with -M simple|extended|prepared: on sledge's own protocol
// (scriptwire.go, the default) or, with api=pgconn or api=pgx, straight on
// pgconn (pgx's protocol layer, this file); no pgx type map, no statement
// cache, parameters and results in text, rows streamed and never kept
// unless \gset/\aset asks. docs/scripts-databases.md is the user's guide.

var (
	_ db.ScriptDB         = (*DB)(nil)
	_ workload.ScriptConn = (*scriptConn)(nil)
	_ workload.Pipeliner  = (*scriptConn)(nil)
	_ metrics.Wired       = (*scriptConn)(nil)
)

var errScriptPipelineProto = errors.New("pipelines need --protocol extended or prepared (pgbench: cannot use pipeline mode with the simple query protocol)")

// ScriptSupports: every protocol; pipelines only with extended or
// prepared, as in pgbench.
func (d *DB) ScriptSupports(p workload.Protocol, pipelines bool) error {
	switch p {
	case workload.ProtoSimple:
		if pipelines {
			return errScriptPipelineProto
		}
		return nil
	case workload.ProtoExtended, workload.ProtoPrepared:
		return nil
	}
	return fmt.Errorf("postgres: unknown protocol %d: use simple, extended or prepared", int(p))
}

// ConnectScript opens a script session on its own connection, dialed like
// Connect's (same URL options, TLS, timeouts, messages, wire counting).
func (d *DB) ConnectScript(ctx context.Context, p workload.Protocol) (workload.ScriptConn, error) {
	if err := d.ScriptSupports(p, false); err != nil {
		return nil, err
	}
	g := &copyGuard{extended: p != workload.ProtoSimple}
	cfg := d.cfg.Copy()
	cfg.BuildFrontend = func(r io.Reader, w io.Writer) *pgproto3.Frontend {
		g.r, g.w = r, w
		return pgproto3.NewFrontend(g, w)
	}
	c, err := d.connect(ctx, cfg, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, err
	}
	sc := &scriptConn{
		ScriptOnly: db.ScriptOnly{DB: "postgres", Proto: p},
		guard:      g,
		pc:         c.PgConn(),
		wire:       metrics.WireFrom(ctx),
		stmts:      map[int]*scriptStmt{},
		buf:        make([]byte, 0, 256),
	}
	if d.wire {
		if err := sc.takeOver(ctx); err != nil {
			_ = c.Close(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	return sc, nil
}

// takeOver hands the new session's connection from pgconn to pgwire
// (scriptwire.go), as conn.takeOver does for the tpcb and tpcc hot path.
func (c *scriptConn) takeOver(ctx context.Context) error {
	if err := c.pc.SyncConn(ctx); err != nil {
		return fmt.Errorf("postgres: take over the connection: %w", classify(err))
	}
	hc, err := c.pc.Hijack()
	if err != nil {
		return fmt.Errorf("postgres: take over the connection: %w", err)
	}
	c.pw, c.hc = newPgwire(c.pc, hc, false), hc
	return nil
}

// scriptConn is one script session. Not safe for concurrent use.
type scriptConn struct {
	db.ScriptOnly                     // Mode, and the named-statement methods refused
	pc            *pgconn.PgConn      // the session's protocol unless pw is set
	wire          *metrics.WireCounts // the dial counted into it; nil: not counted
	guard         *copyGuard          // refuses COPY as pgbench does on pgconn (copyguard.go)

	// pw speaks the protocol on the connection pgconn opened and handed
	// over (scriptwire.go); nil with api=pgconn or api=pgx, and after a
	// pipeline handed it back to pgconn (hc, from Hijack, is for that).
	pw *pgwire
	hc *pgconn.HijackedConn

	// stmts are the statements prepared on this connection (ProtoPrepared),
	// by SQLQuery.ID, named P_<ID> as pgbench names them; sd is nil for
	// those prepared on the wire.
	stmts map[int]*scriptStmt

	// Text parameters of the command being sent: params[i] is a slice of
	// buf, or nil for NULL. Both are reused by every command.
	buf    []byte
	spans  []int
	params [][]byte

	// The last row of the result being read, copied (its values are only
	// valid until the next row), for keep.
	row  []byte
	ends []int // end of each value in row; -1: NULL
	cols []string
	last []any

	pipe *pgconn.Pipeline // between StartPipeline and EndPipeline
	ops  []pipeOp         // what the pipeline queued, in order

	// w makes the cancellation of the VU's context interrupt a call in
	// flight (watch.go); a pipeline is in flight from start to end.
	w db.Watcher
}

// scriptStmt is a statement prepared on the session. sd is nil while its
// Parse travels in a pipeline whose results are not read yet.
type scriptStmt struct {
	name string
	sd   *pgconn.StatementDescription
}

// pipeOp is one request queued in a pipeline, to match its result.
type pipeOp struct {
	kind byte   // opPrepare, opQuery, opSync
	id   int    // opPrepare: the SQLQuery.ID
	text string // opQuery, opPrepare: for the error message
}

const (
	opPrepare = iota + 1
	opQuery
	opSync
)

func (c *scriptConn) Wire() *metrics.WireCounts { return c.wire }

// Placeholder is PostgreSQL's $n.
func (c *scriptConn) Placeholder(n int) string { return "$" + strconv.Itoa(n) }

// InTransaction is the server's own transaction status, from the last
// ReadyForQuery: in a block ('T') or in a failed one ('E').
func (c *scriptConn) InTransaction() bool {
	s := c.pc.TxStatus()
	if c.pw != nil {
		s = c.pw.tx
	}
	return s == 'T' || s == 'E'
}

// RunSQL sends q by the session's protocol and reads all of its results.
// A COPY fails the command, as it aborts a pgbench client.
func (c *scriptConn) RunSQL(ctx context.Context, q *workload.SQLQuery, keep workload.ResultFunc) error {
	if c.pw != nil {
		copied, err := c.wireRun(ctx, q, keep)
		if copied {
			return c.copyErr(q.Text)
		}
		return err
	}
	err := c.runSQL(ctx, q, keep)
	if c.guard.take() {
		return c.copyErr(q.Text)
	}
	return err
}

// copyErr is the error of a command that started a COPY.
func (c *scriptConn) copyErr(text string) error {
	return &db.OpError{DB: "postgres", Op: "exec", Stmt: db.FirstLine(strings.TrimSpace(text)), Err: errScriptCopy}
}

func (c *scriptConn) runSQL(ctx context.Context, q *workload.SQLQuery, keep workload.ResultFunc) error {
	if c.pipe != nil {
		return c.queue(q, keep) // in flight since StartPipeline
	}
	if err := c.w.Begin(ctx, c.pc.Conn()); err != nil {
		return c.fail(q.Text, err)
	}
	defer c.w.End()
	ctx = context.Background() // watched by begin
	switch c.Proto {
	case workload.ProtoSimple:
		if len(q.Args) > 0 {
			return fmt.Errorf("postgres: simple protocol command with %d bound values (they belong in the text)", len(q.Args))
		}
		return c.simple(ctx, q, keep)
	case workload.ProtoExtended:
		params, err := c.encode(q.Args)
		if err != nil {
			return err
		}
		// Unnamed statement, parameter types left to the server (OID 0),
		// text in and out: what libpq's PQexecParams sends for pgbench.
		rr := c.pc.ExecParams(ctx, q.Text, params, nil, nil, nil)
		return c.result(rr, q, 0, keep)
	}
	st, err := c.prepared(ctx, q)
	if err != nil {
		return err
	}
	params, err := c.encode(q.Args)
	if err != nil {
		return err
	}
	var rr *pgconn.ResultReader
	if st.sd != nil {
		// With the statement's description no Describe travels.
		rr = c.pc.ExecStatement(ctx, st.sd, params, nil, nil)
	} else {
		rr = c.pc.ExecPrepared(ctx, st.name, params, nil, nil)
	}
	return c.result(rr, q, 0, keep)
}

// simple sends q's text as one simple-protocol Query message: a compound
// command gives one result per statement.
func (c *scriptConn) simple(ctx context.Context, q *workload.SQLQuery, keep workload.ResultFunc) error {
	mrr := c.pc.Exec(ctx, q.Text)
	if keep == nil {
		if err := mrr.Close(); err != nil {
			return c.fail(q.Text, err)
		}
		return nil
	}
	var first error
	for i := 0; mrr.NextResult(); i++ {
		if err := c.result(mrr.ResultReader(), q, i, keep); err != nil {
			first = err
			break
		}
	}
	if err := mrr.Close(); err != nil && first == nil {
		first = c.fail(q.Text, err)
	}
	return first
}

// prepared returns q's statement, preparing it on first use (one round
// trip: Parse, Describe, Sync).
func (c *scriptConn) prepared(ctx context.Context, q *workload.SQLQuery) (*scriptStmt, error) {
	if st, ok := c.stmts[q.ID]; ok {
		return st, nil
	}
	name := "P_" + strconv.Itoa(q.ID)
	sd, err := c.pc.Prepare(ctx, name, q.Text, nil)
	if err != nil {
		return nil, c.fail(q.Text, err)
	}
	st := &scriptStmt{name: name, sd: sd}
	c.stmts[q.ID] = st
	return st, nil
}

// result reads one result to its end. Without keep the rows are skipped
// unread; with it, only the last row is copied, into buffers the session
// reuses.
func (c *scriptConn) result(rr *pgconn.ResultReader, q *workload.SQLQuery, stmt int, keep workload.ResultFunc) error {
	fields := rr.FieldDescriptions()
	if keep == nil {
		if _, err := rr.Close(); err != nil {
			return c.fail(q.Text, err)
		}
		return nil
	}
	n := 0
	for rr.NextRow() {
		c.keepRow(rr.Values())
		n++
	}
	tag, err := rr.Close()
	if err != nil {
		return c.fail(q.Text, err)
	}
	if len(fields) == 0 && !tag.Select() {
		// A command without rows (INSERT) gets no call, so \gset says it
		// expected one row; a SELECT of no columns (`SELECT \gset`) has
		// rows with nothing to store, as pgbench takes it.
		return nil
	}
	c.cols = c.cols[:0]
	for i := range fields {
		c.cols = append(c.cols, fields[i].Name)
	}
	var last []any
	if n > 0 {
		last = c.lastRow()
	}
	keep(stmt, c.cols, last, n)
	return nil
}

// keepRow copies a row's values (text format) into c.row.
func (c *scriptConn) keepRow(vals [][]byte) {
	c.row, c.ends = c.row[:0], c.ends[:0]
	for _, v := range vals {
		if v == nil {
			c.ends = append(c.ends, -1)
			continue
		}
		c.row = append(c.row, v...)
		c.ends = append(c.ends, len(c.row))
	}
}

// lastRow returns the kept row as strings, nil for NULL.
func (c *scriptConn) lastRow() []any {
	c.last = c.last[:0]
	start := 0
	for _, end := range c.ends {
		if end < 0 {
			c.last = append(c.last, nil)
			continue
		}
		c.last = append(c.last, string(c.row[start:end]))
		start = end
	}
	return c.last
}

// encode writes args in PostgreSQL's text format into c.buf and returns
// the parameters: integers in decimal, floats in the shortest form that
// reads back exactly, booleans as true/false, nil as NULL.
func (c *scriptConn) encode(args []any) ([][]byte, error) {
	buf, spans := c.buf[:0], c.spans[:0]
	for i, a := range args {
		start := len(buf)
		switch v := a.(type) {
		case nil:
			spans = append(spans, -1, -1)
			continue
		case int64:
			buf = strconv.AppendInt(buf, v, 10)
		case float64:
			buf = db.AppendFloat(buf, v, 64)
		case string:
			buf = append(buf, v...)
		case bool:
			buf = strconv.AppendBool(buf, v)
		case int:
			buf = strconv.AppendInt(buf, int64(v), 10)
		default:
			return nil, fmt.Errorf("postgres: value %d has unsupported type %T", i+1, a)
		}
		spans = append(spans, start, len(buf))
	}
	params := c.params[:0]
	for i := 0; i < len(spans); i += 2 {
		if spans[i] < 0 {
			params = append(params, nil)
			continue
		}
		params = append(params, buf[spans[i]:spans[i+1]:spans[i+1]])
	}
	c.buf, c.spans, c.params = buf, spans, params
	return params, nil
}

// Rollback ends an open transaction block (a failed one too) with
// ROLLBACK; a pipeline still open is ended first.
func (c *scriptConn) Rollback(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	if c.pipe != nil {
		_ = c.EndPipeline(ctx) // its error is the script's, already reported
	}
	if c.Broken() || !c.InTransaction() {
		return nil // the server rolls back a connection that went away
	}
	if c.pw != nil {
		if err := c.pw.simpleExec(ctx, "ROLLBACK"); err != nil {
			return c.wireFail("ROLLBACK", err)
		}
		return nil
	}
	if err := c.pc.Exec(ctx, "ROLLBACK").Close(); err != nil {
		return c.fail("ROLLBACK", err)
	}
	return nil
}

// Close closes the connection (the server ends an open transaction).
func (c *scriptConn) Close(ctx context.Context) error {
	c.w.Close()
	if c.pw != nil {
		c.pw.close()
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return c.pc.Close(ctx)
}

// StartPipeline enters pipeline mode: until EndPipeline, RunSQL only
// queues. ctx is in effect for the whole pipeline.
func (c *scriptConn) StartPipeline(ctx context.Context) error {
	if c.Proto == workload.ProtoSimple {
		return errScriptPipelineProto
	}
	if c.pipe != nil {
		return errors.New("postgres: \\startpipeline inside a pipeline")
	}
	if c.pw != nil {
		if err := c.handBack(); err != nil {
			return c.wireFail("\\startpipeline", err)
		}
	}
	if err := c.w.Begin(ctx, c.pc.Conn()); err != nil {
		return c.fail("\\startpipeline", err)
	}
	p := c.pc.StartPipeline(context.Background()) // watched by begin until EndPipeline
	// A pipeline that could not start says so here.
	if _, err := p.GetResults(); err != nil {
		_ = p.Close()
		c.w.End()
		return c.fail("\\startpipeline", err)
	}
	c.pipe, c.ops = p, c.ops[:0]
	c.guard.pipeline = true
	return nil
}

// queue adds q to the pipeline: an unnamed statement (extended), or the
// session's prepared statement, whose Parse is queued first the first
// time (prepared).
func (c *scriptConn) queue(q *workload.SQLQuery, keep workload.ResultFunc) error {
	if keep != nil {
		return errors.New("postgres: \\gset and \\aset are not allowed inside a pipeline")
	}
	params, err := c.encode(q.Args)
	if err != nil {
		return err
	}
	if c.Proto == workload.ProtoExtended {
		c.pipe.SendQueryParams(q.Text, params, nil, nil, nil)
		c.ops = append(c.ops, pipeOp{kind: opQuery, text: q.Text})
		return nil
	}
	st, ok := c.stmts[q.ID]
	if !ok {
		st = &scriptStmt{name: "P_" + strconv.Itoa(q.ID)}
		c.stmts[q.ID] = st
		c.pipe.SendPrepare(st.name, q.Text, nil)
		c.ops = append(c.ops, pipeOp{kind: opPrepare, id: q.ID, text: q.Text})
	}
	if st.sd != nil {
		c.pipe.SendQueryStatement(st.sd, params, nil, nil)
	} else {
		c.pipe.SendQueryPrepared(st.name, params, nil, nil)
	}
	c.ops = append(c.ops, pipeOp{kind: opQuery, text: q.Text})
	return nil
}

// SyncPipeline queues a sync point without sending anything.
func (c *scriptConn) SyncPipeline(context.Context) error {
	if c.pipe == nil {
		return errors.New("postgres: \\syncpipeline outside a pipeline")
	}
	c.pipe.SendPipelineSync()
	c.ops = append(c.ops, pipeOp{kind: opSync})
	return nil
}

// EndPipeline sends a sync, reads every result and leaves pipeline mode.
// It returns the first error; after an error the server skipped the rest
// of that sync's requests, which the results show by their absence.
func (c *scriptConn) EndPipeline(context.Context) error {
	if c.pipe == nil {
		return errors.New("postgres: \\endpipeline outside a pipeline")
	}
	p := c.pipe
	c.pipe = nil
	c.guard.pipeline = false
	defer c.w.End() // in flight since StartPipeline
	var first error
	record := func(text string, err error) {
		if first == nil {
			first = c.fail(text, err)
		}
	}
	c.ops = append(c.ops, pipeOp{kind: opSync})
	if err := p.Sync(); err != nil {
		record("\\endpipeline", err)
	}
	ops, i := c.ops, 0
	// skip passes the failed request and those the server then skipped,
	// up to the next sync.
	skip := func() {
		if i < len(ops) && ops[i].kind != opSync {
			i++
		}
		for i < len(ops) && ops[i].kind != opSync {
			i++
		}
	}
	opText := func() string {
		if i < len(ops) && ops[i].text != "" {
			return ops[i].text
		}
		return "\\endpipeline"
	}
	for {
		res, err := p.GetResults()
		if err != nil {
			record(opText(), err)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) {
				break // the connection is gone
			}
			skip()
			continue
		}
		if res == nil {
			break
		}
		switch r := res.(type) {
		case *pgconn.StatementDescription:
			if i < len(ops) && ops[i].kind == opPrepare {
				if st := c.stmts[ops[i].id]; st != nil {
					r.Name = st.name
					st.sd = r
				}
			}
			i++
		case *pgconn.ResultReader:
			if _, err := r.Close(); err != nil {
				record(opText(), err)
				skip()
				continue
			}
			i++
		default: // *PipelineSync, *CloseComplete
			i++
		}
	}
	if err := p.Close(); err != nil && first == nil {
		first = c.fail("\\endpipeline", err)
	}
	// Statements whose Parse the server skipped (after an error) or never
	// saw do not exist: prepare them again next time.
	for _, op := range ops {
		if op.kind == opPrepare {
			if st := c.stmts[op.id]; st != nil && st.sd == nil {
				delete(c.stmts, op.id)
			}
		}
	}
	c.ops = c.ops[:0]
	if c.guard.take() {
		// The guard ended the connection (copyguard.go): say why.
		return c.copyErr("\\endpipeline")
	}
	return first
}

// fail classifies a script command's error: ErrRetry for serialization
// failures and deadlocks only (what pgbench retries), ErrNoSchema for an
// undefined table. The message is one line: the command's first line and
// PostgreSQL's message with its SQLSTATE.
func (c *scriptConn) fail(text string, err error) error {
	if werr := c.w.Interrupted(); werr != nil && !errors.Is(err, werr) {
		// The socket's deadline (watch.go) failed the call: a cancelled
		// run, not a lost connection.
		err = fmt.Errorf("interrupted: %w (%v)", werr, err)
	}
	return &db.OpError{DB: "postgres", Op: "exec", Stmt: db.FirstLine(strings.TrimSpace(text)), Err: err, Kind: scriptKind(err)}
}

// scriptKind is the workload sentinel for a script command's error.
func scriptKind(err error) error {
	if lostConnection(err) { // connlost.go
		return workload.ErrConnLost
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return nil
	}
	switch pe.Code {
	case codeSerialization, codeDeadlock:
		return workload.ErrRetry
	case codeUndefinedTab:
		return workload.ErrNoSchema
	}
	return nil
}
