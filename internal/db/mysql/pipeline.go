package mysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/go-sql-driver/mysql"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// pipeConn is a pipeline-mode session (workload.Grouper): a group's
// statements, with their values written in as literals (as client mode
// sends them), travel as one multi-statement text (COM_QUERY) on a
// connection that allows them, and the results come back in order.
//
// The driver gives either the rows of every result set (Query) or the row
// count of every statement (Exec), never both: a group with statements
// whose counts are read (workload.WantCount) and statements whose rows are
// read goes as one text per run of either kind, one round trip each.
type pipeConn struct {
	*conn
	g group
}

var _ workload.Grouper = (*pipeConn)(nil)

type group struct {
	ops  []groupOp
	text []byte // the statements, each followed by ';'
	err  error  // a statement that could not be queued, reported by Send

	// The results of the group sent last.
	res   []groupResult
	vals  []byte
	cells []cell
	dest  []sqldriver.Value // the driver's row, reused
	sent  bool
	open  bool // the groups began a transaction not yet ended
}

type groupOp struct {
	name       string
	want       workload.Want
	start, end int // its text: text[start:end], ';' included
}

type groupResult struct {
	g        *group
	name     string
	err      error
	n        int64 // rows affected (WantCount)
	c0, cols int   // its cells start at cells[c0]
	rows     int
	cur      int // Rows: the row Next moved to, from -1
}

// cell is one value of a row as the text protocol gave it: the driver
// turns integer and float columns into numbers, everything else is text.
type cell struct {
	kind       uint8
	n          int64
	f          float64
	start, end int32 // kind cellText: vals[start:end]
}

const (
	cellNull = iota
	cellInt
	cellFloat
	cellText
)

// Transaction control in a group.
const (
	groupBegin   = "BEGIN"
	groupBeginRO = "START TRANSACTION READ ONLY"
	groupCommit  = "COMMIT"
)

func (c *pipeConn) Begin(opts workload.TxOptions) {
	q := groupBegin
	if opts.ReadOnly {
		q = groupBeginRO
	}
	c.g.add(q, workload.WantNothing, q)
}

func (c *pipeConn) Commit() { c.g.add(groupCommit, workload.WantNothing, groupCommit) }

func (c *pipeConn) Queue(want workload.Want, stmt string, args ...any) int {
	q, ok := c.ns.Text[stmt]
	if !ok {
		if c.g.err == nil {
			c.g.err = c.ns.Unknown(stmt)
		}
		return c.g.add(stmt, want, "")
	}
	// As client mode's statements: the server parses each with its values.
	s, err := db.Interpolate(q, db.Question, args)
	if err != nil && c.g.err == nil {
		c.g.err = fmt.Errorf("mysql: %s: %w", stmt, err)
	}
	return c.g.add(stmt, want, s)
}

// add queues statement name (text q) and returns its index.
func (g *group) add(name string, want workload.Want, q string) int {
	if g.sent {
		g.res, g.vals, g.cells = g.res[:0], g.vals[:0], g.cells[:0]
		g.sent = false
	}
	op := groupOp{name: name, want: want, start: len(g.text)}
	g.text = append(g.text, q...)
	g.text = append(g.text, ';')
	op.end = len(g.text)
	g.ops = append(g.ops, op)
	return len(g.ops) - 1
}

func (c *pipeConn) Row(i int) workload.Row   { return c.g.result(i) }
func (c *pipeConn) Rows(i int) workload.Rows { return (*resultRows)(c.g.result(i)) }
func (c *pipeConn) Count(i int) int64        { return c.g.result(i).n }

// Rollback sends ROLLBACK when the groups began a transaction that no
// group committed; after a failed group the server may have ended it
// already (a deadlock), which makes ROLLBACK a no-op.
func (c *pipeConn) Rollback(ctx context.Context, err error) error {
	g := &c.g
	g.ops, g.text, g.err = g.ops[:0], g.text[:0], nil
	if !g.open {
		return err
	}
	g.open = false
	return c.rollback(ctx, err)
}

// Send sends the group: one text, or one per run of statements whose
// rows or whose counts are read.
func (c *pipeConn) Send(ctx context.Context) error {
	g := &c.g
	ops := g.ops
	defer func() { g.ops, g.text, g.err = g.ops[:0], g.text[:0], nil }()
	g.sent = true
	g.res = g.res[:0]
	for _, op := range ops {
		g.res = append(g.res, groupResult{g: g, name: op.name, err: errNotRun, cur: -1})
	}
	if g.err != nil {
		return g.err
	}
	for a := 0; a < len(ops); {
		// The run [a, b): no statement with rows after one with a count
		// read, nor the other way round.
		b, rows, count := a, false, false
		for ; b < len(ops); b++ {
			w := ops[b].want
			if (w == workload.WantRows && count) || (w == workload.WantCount && rows) {
				break
			}
			rows = rows || w == workload.WantRows
			count = count || w == workload.WantCount
		}
		if err := c.sendRun(ctx, ops, a, b, count); err != nil {
			return err
		}
		a = b
	}
	return nil
}

// sendRun sends statements [a, b) as one text and reads their results.
func (c *pipeConn) sendRun(ctx context.Context, ops []groupOp, a, b int, count bool) error {
	g := &c.g
	q := string(g.text[ops[a].start : ops[b-1].end-1]) // no trailing ';'
	for _, op := range ops[a:b] {
		if op.name == groupBegin || op.name == groupBeginRO {
			g.open = true // from now on, whatever the answer
		}
	}
	dctx, err := c.begin(ctx)
	if err != nil {
		return err
	}
	defer c.end()
	done := a // statements before done have their results
	err = c.c.Raw(func(dc any) error {
		if count {
			res, err := dc.(sqldriver.ExecerContext).ExecContext(dctx, q, nil)
			if err != nil {
				return err
			}
			mr, ok := res.(mysql.Result)
			if !ok {
				return fmt.Errorf("mysql: the driver gives no row count per statement (%T)", res)
			}
			ns := mr.AllRowsAffected()
			if len(ns) != b-a {
				return fmt.Errorf("mysql: %d row counts for %d statements", len(ns), b-a)
			}
			for i, n := range ns {
				g.res[a+i].n, g.res[a+i].err = n, nil
			}
			done = b
			return nil
		}
		drows, err := dc.(sqldriver.QueryerContext).QueryContext(dctx, q, nil)
		if err != nil {
			return err
		}
		defer func() { _ = drows.Close() }()
		next, _ := drows.(sqldriver.RowsNextResultSet)
		first := true
		for k := a; k < b; k++ {
			if ops[k].want != workload.WantRows {
				continue
			}
			if !first {
				if next == nil {
					return errors.New("mysql: the driver reads one result set only")
				}
				if err := next.NextResultSet(); err != nil {
					if errors.Is(err, io.EOF) {
						err = fmt.Errorf("mysql: no result set for %s", ops[k].name)
					}
					return err
				}
			}
			first = false
			if err := g.load(&g.res[k], drows); err != nil {
				return err
			}
			for i := done; i <= k; i++ {
				g.res[i].err = nil
			}
			done = k + 1
		}
		// The statements after the last result set: their errors.
		for next != nil {
			err := next.NextResultSet()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
		}
		for i := done; i < b; i++ {
			g.res[i].err = nil
		}
		done = b
		return nil
	})
	if err != nil {
		return c.groupFail(ops, done, b, err)
	}
	for _, op := range ops[a:b] {
		if op.name == groupCommit {
			g.open = false
		}
	}
	return nil
}

// groupFail names the statements that may have failed (from done, the
// first without its result, to the end of the run: MariaDB stops a
// multi-statement text at its first error and tells no more) and
// classifies err as every call does.
func (c *pipeConn) groupFail(ops []groupOp, done, b int, err error) error {
	name := "group"
	switch {
	case done < b && done == b-1:
		name = ops[done].name
	case done < b:
		name = ops[done].name + " … " + ops[b-1].name
	}
	if done < len(c.g.res) {
		c.g.res[done].err = err
	}
	return c.wrap("pipeline", name, c.interrupted(err))
}

// load copies the current result set's rows.
func (g *group) load(res *groupResult, drows sqldriver.Rows) error {
	res.cols, res.c0 = len(drows.Columns()), len(g.cells)
	if res.cols == 0 {
		return fmt.Errorf("mysql: %s returned no result set", res.name)
	}
	if cap(g.dest) < res.cols {
		g.dest = make([]sqldriver.Value, res.cols)
	}
	dest := g.dest[:res.cols]
	for {
		err := drows.Next(dest)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		for _, v := range dest {
			switch v := v.(type) {
			case nil:
				g.cells = append(g.cells, cell{kind: cellNull})
			case int64:
				g.cells = append(g.cells, cell{kind: cellInt, n: v})
			case float64:
				g.cells = append(g.cells, cell{kind: cellFloat, f: v})
			case float32:
				g.cells = append(g.cells, cell{kind: cellFloat, f: float64(v)})
			case []byte:
				start := len(g.vals)
				g.vals = append(g.vals, v...)
				g.cells = append(g.cells, cell{kind: cellText, start: int32(start), end: int32(len(g.vals))})
			default:
				return fmt.Errorf("mysql: %s: unexpected value %T", res.name, v)
			}
		}
		res.rows++
	}
	return nil
}

// errNotRun is the result of a statement after a failed one.
var errNotRun = errors.New("not run: an earlier statement of its group failed")

func (g *group) result(i int) *groupResult {
	if i < 0 || i >= len(g.res) {
		return &groupResult{err: fmt.Errorf("mysql: no result %d in a group of %d", i, len(g.res)), cur: -1}
	}
	return &g.res[i]
}

// Scan reads the statement's first row.
func (r *groupResult) Scan(dest ...any) error {
	if r.err != nil {
		return &db.OpError{DB: "mysql", Op: "query", Stmt: r.name, Err: r.err, Kind: kind(r.err)}
	}
	if r.rows == 0 {
		return &db.OpError{DB: "mysql", Op: "query", Stmt: r.name, Err: sql.ErrNoRows, Kind: workload.ErrNoRows}
	}
	return r.scanRow(0, dest)
}

func (r *groupResult) scanRow(row int, dest []any) error {
	if len(dest) != r.cols {
		return fmt.Errorf("mysql: %s returns %d columns, scanned into %d", r.name, r.cols, len(dest))
	}
	g := r.g
	for i, d := range dest {
		if err := g.scanCell(g.cells[r.c0+row*r.cols+i], d); err != nil {
			return fmt.Errorf("mysql: %s column %d: %w", r.name, i+1, err)
		}
	}
	return nil
}

// scanCell converts a value into the portable targets: *int64, *float64,
// *string, *int and *any (text for dates and decimals, as the other modes
// give them).
func (g *group) scanCell(c cell, dest any) error {
	text := func() string { return string(g.vals[c.start:c.end]) }
	if p, ok := dest.(*any); ok {
		switch c.kind {
		case cellNull:
			*p = nil
		case cellInt:
			*p = c.n
		case cellFloat:
			*p = c.f
		default:
			*p = text()
		}
		return nil
	}
	if c.kind == cellNull {
		return fmt.Errorf("NULL into %T", dest)
	}
	switch d := dest.(type) {
	case *string:
		switch c.kind {
		case cellInt:
			*d = strconv.FormatInt(c.n, 10)
		case cellFloat:
			*d = strconv.FormatFloat(c.f, 'f', -1, 64)
		default:
			*d = text()
		}
	case *int64:
		switch c.kind {
		case cellInt:
			*d = c.n
		case cellFloat:
			*d = int64(c.f)
		default:
			n, err := strconv.ParseInt(text(), 10, 64)
			if err != nil {
				// A decimal with a fraction of zeros ("12.00").
				f, ferr := strconv.ParseFloat(text(), 64)
				if ferr != nil {
					return fmt.Errorf("not an integer: %q", text())
				}
				n = int64(f)
			}
			*d = n
		}
	case *int:
		var n int64
		if err := g.scanCell(c, &n); err != nil {
			return err
		}
		*d = int(n)
	case *float64:
		switch c.kind {
		case cellInt:
			*d = float64(c.n)
		case cellFloat:
			*d = c.f
		default:
			f, err := strconv.ParseFloat(text(), 64)
			if err != nil {
				return fmt.Errorf("not a number: %q", text())
			}
			*d = f
		}
	default:
		return fmt.Errorf("cannot scan into %T", dest)
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
		return fmt.Errorf("mysql: %s: Scan without a row", r.name)
	}
	return (*groupResult)(r).scanRow(r.cur, dest)
}

func (r *resultRows) Err() error {
	if r.err != nil {
		return &db.OpError{DB: "mysql", Op: "query", Stmt: r.name, Err: r.err, Kind: kind(r.err)}
	}
	return nil
}

func (r *resultRows) Close() error { return nil }
