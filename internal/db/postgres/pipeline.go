package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// group sends a pipeline-mode session's statement groups
// (workload.Grouper) as extended-protocol pipelines on the connection's
// pgconn: every statement of a group is written at once, one Sync ends
// the group, and the results are read in order. Each statement is
// prepared once per connection, its Parse travelling in the first group
// that uses it. Parameters and results travel as text, as on the fast
// path; the results are copied, so the buffers serve every group.
type group struct {
	pc       *pgconn.PgConn
	text     map[string]string
	prepared map[string]*pgconn.StatementDescription

	// The group being built: its statements and their parameters as text
	// (spans into buf; start < 0 is NULL).
	ops    []groupOp
	buf    []byte
	spans  []span
	params [][]byte

	// The results of the group sent last: each row's values copied into
	// vals (cells are spans of it), column types in oids.
	res   []groupResult
	vals  []byte
	cells []span
	oids  []uint32
	sent  bool // res holds a group's results; the next Queue clears them
	open  bool // the groups began a transaction not yet ended
	w     db.Watcher
}

type span struct{ start, end int32 }

// groupOp is one statement queued in the group.
type groupOp struct {
	name    string
	p0, p1  int  // its parameters: spans[p0:p1]
	prepare bool // its Parse goes first (first use on this connection)
}

// groupResult is one statement's result, read after Send.
type groupResult struct {
	g        *group
	name     string
	err      error
	n        int64 // rows affected
	c0, cols int   // its cells start at cells[c0]; columns per row
	o0       int   // its column types start at oids[o0]
	rows     int
	cur      int // Rows: the row Next moved to, from -1
}

// Transaction control, prepared like the workload's statements under
// names no workload uses.
const (
	groupBegin   = "sledge.begin"
	groupBeginRO = "sledge.begin_read_only"
	groupCommit  = "sledge.commit"
)

var groupTx = map[string]string{groupBegin: "BEGIN", groupBeginRO: "BEGIN READ ONLY", groupCommit: "COMMIT"}

// serverName is the name a statement is prepared under for the groups:
// the session's other calls (fast.go) prepare it under its own name, and
// the server would refuse a second Parse of that name. Built only for a
// statement's first group: later ones bind the description's name.
func serverName(name string) string { return "group:" + name }

func newGroup(pc *pgconn.PgConn, text map[string]string) *group {
	// vals is never nil, so an empty value is not taken for NULL.
	return &group{pc: pc, text: text, prepared: map[string]*pgconn.StatementDescription{}, vals: make([]byte, 0, 4096)}
}

// pipeConn is a pipeline-mode session: the session's own calls, plus the
// groups of workload.Grouper.
type pipeConn struct {
	*conn
	g *group
}

var _ workload.Grouper = (*pipeConn)(nil)

func (c *pipeConn) Begin(opts workload.TxOptions) {
	name := groupBegin
	if opts.ReadOnly {
		name = groupBeginRO
	}
	c.g.queue(name, nil)
}

func (c *pipeConn) Commit() { c.g.queue(groupCommit, nil) }

func (c *pipeConn) Queue(_ workload.Want, stmt string, args ...any) int {
	return c.g.queue(stmt, args)
}

func (c *pipeConn) Send(ctx context.Context) error {
	c.bind(ctx)
	return c.g.send(ctx)
}
func (c *pipeConn) Row(i int) workload.Row   { return c.g.result(i) }
func (c *pipeConn) Rows(i int) workload.Rows { return (*resultRows)(c.g.result(i)) }
func (c *pipeConn) Count(i int) int64        { return c.g.result(i).n }

func (c *pipeConn) Rollback(ctx context.Context, err error) error {
	g := c.g
	g.ops, g.spans, g.buf = g.ops[:0], g.spans[:0], g.buf[:0]
	if !g.open {
		return err
	}
	g.open = false
	// A failed COMMIT ended the transaction already.
	if c.c.IsClosed() || c.c.PgConn().TxStatus() == 'I' {
		return err
	}
	return c.rollback(ctx, err)
}

func (c *pipeConn) Close(ctx context.Context) error {
	c.g.w.Close()
	return c.conn.Close(ctx)
}

// queue adds statement name with args; its index is its place in the
// group.
func (g *group) queue(name string, args []any) int {
	if g.sent {
		g.res, g.vals, g.cells, g.oids = g.res[:0], g.vals[:0], g.cells[:0], g.oids[:0]
		g.sent = false
	}
	op := groupOp{name: name, p0: len(g.spans)}
	for _, a := range args {
		start := len(g.buf)
		switch v := a.(type) {
		case nil:
			g.spans = append(g.spans, span{-1, -1})
			continue
		case int64:
			g.buf = strconv.AppendInt(g.buf, v, 10)
		case int:
			g.buf = strconv.AppendInt(g.buf, int64(v), 10)
		case float64:
			g.buf = strconv.AppendFloat(g.buf, v, 'f', -1, 64)
		case string:
			g.buf = append(g.buf, v...)
		case bool:
			g.buf = strconv.AppendBool(g.buf, v)
		default:
			// Reported by send, before anything travels.
			g.spans = append(g.spans, span{-2, -2})
			continue
		}
		g.spans = append(g.spans, span{int32(start), int32(len(g.buf))})
	}
	op.p1 = len(g.spans)
	g.ops = append(g.ops, op)
	return len(g.ops) - 1
}

// sql is the text of statement name.
func (g *group) sql(name string) (string, bool) {
	if q, ok := groupTx[name]; ok {
		return q, true
	}
	q, ok := g.text[name]
	return q, ok
}

// send writes the group as one pipeline, reads every result and returns
// the first statement's error. After an error the server skips the rest
// of the group up to the Sync.
func (g *group) send(ctx context.Context) error {
	ops := g.ops
	g.ops, g.sent = g.ops[:0], true
	defer func() { g.spans, g.buf = g.spans[:0], g.buf[:0] }()
	g.res = g.res[:0]
	for i := range ops {
		g.res = append(g.res, groupResult{g: g, name: ops[i].name, err: errNotRun, cur: -1})
	}
	if len(ops) == 0 {
		return nil
	}
	// Check everything that can fail here before a byte is written.
	for i := range ops {
		op := &ops[i]
		if _, ok := g.sql(op.name); !ok {
			return fmt.Errorf("postgres: no statement %q", op.name)
		}
		for _, s := range g.spans[op.p0:op.p1] {
			if s.start == -2 {
				return fmt.Errorf("postgres: %s: an argument has no text form in pipeline mode", op.name)
			}
		}
		if _, seen := g.prepared[op.name]; !seen {
			op.prepare = true
			g.prepared[op.name] = nil // its Parse is queued: once per group
		}
	}
	if err := g.w.Begin(ctx, g.pc.Conn()); err != nil {
		return err
	}
	defer g.w.End()
	began := false
	p := g.pc.StartPipeline(context.Background()) // the watcher stands for ctx
	for i := range ops {
		op := &ops[i]
		if op.prepare {
			q, _ := g.sql(op.name)
			p.SendPrepare(serverName(op.name), q, nil)
		}
		g.params = g.params[:0]
		for _, s := range g.spans[op.p0:op.p1] {
			if s.start < 0 {
				g.params = append(g.params, nil)
			} else {
				g.params = append(g.params, g.buf[s.start:s.end])
			}
		}
		// Bind copies the values into the send buffer at once.
		if sd := g.prepared[op.name]; sd != nil {
			p.SendQueryStatement(sd, g.params, nil, nil)
		} else {
			p.SendQueryPrepared(serverName(op.name), g.params, nil, nil)
		}
		if op.name == groupBegin || op.name == groupBeginRO {
			began = true
		}
	}
	if began {
		g.open = true
	}
	if err := p.Sync(); err != nil {
		_ = p.Close()
		return g.fail(0, ops, err)
	}
	var first error
	k := 0 // the statement whose results come next
	for {
		r, err := p.GetResults()
		if err != nil {
			if first == nil {
				first = g.fail(k, ops, err)
			}
			var pe *pgconn.PgError
			if !errors.As(err, &pe) {
				break // the connection is gone
			}
			continue // the server skips the rest up to the Sync
		}
		if r == nil {
			break
		}
		switch r := r.(type) {
		case *pgconn.StatementDescription:
			if k < len(ops) {
				r.Name = serverName(ops[k].name)
				g.prepared[ops[k].name] = r
			}
		case *pgconn.ResultReader:
			if k < len(ops) {
				if err := g.read(&g.res[k], r); err != nil && first == nil {
					first = g.fail(k, ops, err)
				}
			} else {
				_, _ = r.Close()
			}
			k++
		}
	}
	if err := p.Close(); err != nil && first == nil {
		first = g.fail(k, ops, err)
	}
	// A Parse the server skipped (after an error) is queued again next time.
	for i := range ops {
		if ops[i].prepare && g.prepared[ops[i].name] == nil {
			delete(g.prepared, ops[i].name)
		}
	}
	if g.pc.TxStatus() == 'I' {
		g.open = false // committed, or never began
	}
	return first
}

// read copies a statement's rows and reads its row count.
func (g *group) read(res *groupResult, rr *pgconn.ResultReader) error {
	fds := rr.FieldDescriptions()
	res.c0, res.cols, res.o0 = len(g.cells), len(fds), len(g.oids)
	for _, fd := range fds {
		g.oids = append(g.oids, fd.DataTypeOID)
	}
	for rr.NextRow() {
		for _, v := range rr.Values() {
			if v == nil {
				g.cells = append(g.cells, span{-1, -1})
				continue
			}
			start := len(g.vals)
			g.vals = append(g.vals, v...)
			g.cells = append(g.cells, span{int32(start), int32(len(g.vals))})
		}
		res.rows++
	}
	tag, err := rr.Close()
	if err != nil {
		res.err = err
		return err
	}
	res.err = nil
	res.n = tag.RowsAffected()
	return nil
}

// fail names statement k of the group (the one whose results were due)
// and classifies err as every call does.
func (g *group) fail(k int, ops []groupOp, err error) error {
	name := "pipeline"
	if k < len(ops) {
		name = ops[k].name
		if k < len(g.res) {
			g.res[k].err = err
		}
	}
	if werr := g.w.Interrupted(); werr != nil && !errors.Is(err, werr) {
		err = fmt.Errorf("interrupted: %w (%w)", werr, err)
	}
	return wrap("pipeline", name, err)
}

// errNotRun is the result of a statement after a failed one.
var errNotRun = errors.New("not run: an earlier statement of its group failed")

func (g *group) result(i int) *groupResult {
	if i < 0 || i >= len(g.res) {
		return &groupResult{err: fmt.Errorf("postgres: no result %d in a group of %d", i, len(g.res)), cur: -1}
	}
	return &g.res[i]
}

// Scan reads the statement's first row.
func (r *groupResult) Scan(dest ...any) error {
	if r.err != nil {
		return wrap("query", r.name, r.err)
	}
	if r.rows == 0 {
		return &db.OpError{DB: "postgres", Op: "query", Stmt: r.name, Err: errNoRow, Kind: workload.ErrNoRows}
	}
	return r.scanRow(0, dest)
}

func (r *groupResult) scanRow(row int, dest []any) error {
	if len(dest) != r.cols {
		return fmt.Errorf("postgres: %s returns %d columns, scanned into %d", r.name, r.cols, len(dest))
	}
	g := r.g
	cells := g.cells[r.c0+row*r.cols : r.c0+(row+1)*r.cols]
	for i, d := range dest {
		var v []byte
		if c := cells[i]; c.start >= 0 {
			v = g.vals[c.start:c.end:c.end]
		}
		if err := scanText(v, g.oids[r.o0+i], d); err != nil {
			return fmt.Errorf("postgres: %s column %d: %w", r.name, i+1, err)
		}
	}
	return nil
}

// resultRows is a groupResult read as a result set.
type resultRows groupResult

func (r *resultRows) Next() bool {
	if r.err != nil || r.cur+1 >= r.rows {
		r.cur = r.rows
		return false
	}
	r.cur++
	return true
}

func (r *resultRows) Scan(dest ...any) error {
	if r.cur < 0 || r.cur >= r.rows {
		return fmt.Errorf("postgres: %s: Scan without a row", r.name)
	}
	return (*groupResult)(r).scanRow(r.cur, dest)
}

func (r *resultRows) Err() error {
	if r.err != nil {
		return wrap("query", r.name, r.err)
	}
	return nil
}

func (r *resultRows) Close() error { return nil }
