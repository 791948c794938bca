package postgres

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// Script sessions on sledge's own protocol (pgwire.go), the default
// (api=pgconn keeps them on pgconn, script.go): RunSQL writes the
// protocol's messages itself and reads the results from the read buffer
// in place, as the tpcb and tpcc hot path does. The messages are libpq's
// for pgbench's -M: simple, one Query; extended, an unnamed Parse, Bind,
// Describe (portal), Execute and Sync (PQexecParams); prepared, a named
// Parse and Describe once per session (pgwire.prepare), then Bind, Execute
// and Sync. Parameters and results are text. Pipelines stay on pgconn: the
// first \startpipeline hands the connection back (handBack).

// wireRun is RunSQL on the wire. copied reports a COPY the server
// started, which the caller turns into pgbench's refusal.
func (c *scriptConn) wireRun(ctx context.Context, q *workload.SQLQuery, keep workload.ResultFunc) (copied bool, err error) {
	p := c.pw
	if err := ctx.Err(); err != nil {
		// A run already cancelled says so, even on a broken connection.
		return false, c.wireFail(q.Text, err)
	}
	if c.Proto == workload.ProtoSimple && len(q.Args) > 0 {
		return false, fmt.Errorf("postgres: simple protocol command with %d bound values (they belong in the text)", len(q.Args))
	}
	if err := p.begin(ctx); err != nil {
		return false, c.wireFail(q.Text, err)
	}
	var ws *wireStmt
	switch c.Proto {
	case workload.ProtoSimple:
		p.wb = p.wb[:0]
		at := p.msg('Q')
		p.cstring(q.Text)
		p.fill(at)
	case workload.ProtoExtended:
		p.wb = p.wb[:0]
		at := p.msg('P')
		p.wb = append(p.wb, 0) // the unnamed statement
		p.cstring(q.Text)
		p.int16(0) // parameter types: the server infers them
		p.fill(at)
		if err := c.wireBind("", q.Args); err != nil {
			p.done = true // nothing sent
			_ = p.end()
			return false, err
		}
		at = p.msg('D')
		p.wb = append(p.wb, 'P', 0) // the unnamed portal's columns
		p.fill(at)
		c.wireExecute()
	default:
		name := c.wireStmt(q)
		ws = p.stmts[name]
		if ws == nil {
			// Parse, Describe, Sync, in this call's begin.
			var err error
			if ws, err = p.prepare(name, q.Text); err != nil {
				return false, c.wireFail(q.Text, p.end())
			}
			p.done = false // prepare read its own ReadyForQuery; now the call's
			c.stmts[q.ID] = &scriptStmt{name: name}
		}
		p.wb = p.wb[:0]
		if err := c.wireBind(name, q.Args); err != nil {
			p.done = true
			_ = p.end()
			return false, err
		}
		c.wireExecute()
	}
	if p.flush() {
		copied = c.wireResults(q, ws, keep)
	}
	if err := p.end(); err != nil {
		return copied, c.wireFail(q.Text, err)
	}
	return copied, nil
}

// wireStmt is the name of q's prepared statement, P_<ID> as pgbench
// names it; a name is built once per statement.
func (c *scriptConn) wireStmt(q *workload.SQLQuery) string {
	if st, ok := c.stmts[q.ID]; ok {
		return st.name
	}
	return "P_" + strconv.Itoa(q.ID)
}

// wireBind writes a Bind of statement name to the unnamed portal with args
// as text: integers in decimal, floats in the shortest form that reads
// back exactly, booleans as true/false, nil as NULL (script.go's encode).
func (c *scriptConn) wireBind(name string, args []any) error {
	p := c.pw
	at := p.msg('B')
	p.wb = append(p.wb, 0) // the unnamed portal
	p.cstring(name)
	p.int16(0) // parameter formats: all text
	p.int16(len(args))
	for i, a := range args {
		l := len(p.wb)
		p.wb = append(p.wb, 0, 0, 0, 0)
		switch v := a.(type) {
		case nil:
			p.wb = append(p.wb[:l], 0xff, 0xff, 0xff, 0xff)
			continue
		case int64:
			p.wb = strconv.AppendInt(p.wb, v, 10)
		case float64:
			p.wb = db.AppendFloat(p.wb, v, 64)
		case string:
			p.wb = append(p.wb, v...)
		case bool:
			p.wb = strconv.AppendBool(p.wb, v)
		case int:
			p.wb = strconv.AppendInt(p.wb, int64(v), 10)
		default:
			return fmt.Errorf("postgres: value %d has unsupported type %T", i+1, a)
		}
		binary.BigEndian.PutUint32(p.wb[l:], uint32(len(p.wb)-l-4))
	}
	p.int16(0) // result formats: all text
	p.fill(at)
	return nil
}

// wireExecute writes Execute (the unnamed portal, all rows) and Sync.
func (c *scriptConn) wireExecute() {
	p := c.pw
	p.wb = append(p.wb, 'E', 0, 0, 0, 9, 0, 0, 0, 0, 0)
	p.sync()
}

// wireResults reads the call's response to its ReadyForQuery: one result
// per statement (several for a compound simple Query), each given to keep
// as script.go's result does; ws describes a prepared statement's
// columns. The first error is the call's; the results before it were
// kept. It reports whether the server started a COPY, which it refused
// as copyguard.go does.
func (c *scriptConn) wireResults(q *workload.SQLQuery, ws *wireStmt, keep workload.ResultFunc) (copied bool) {
	p := c.pw
	stmt, rows, fields := 0, 0, false
	if ws != nil {
		fields = len(ws.cols) > 0
		if keep != nil {
			c.cols = append(c.cols[:0], ws.cols...)
		}
	}
	for !p.done {
		t, body, err := p.read()
		if err != nil {
			p.fail(err)
			break
		}
		switch t {
		case 'D': // DataRow
			if p.err == nil {
				rows++
				if keep != nil {
					c.keepWireRow(body)
				}
			}
		case 'T': // RowDescription
			fields = true
			rows = 0
			if keep != nil {
				if err := c.wireCols(body); err != nil {
					p.fail(err)
				}
			}
		case 'n': // NoData: a command without rows
			fields = false
		case 'C', 'I': // CommandComplete, EmptyQueryResponse: a result's end
			if keep != nil && p.err == nil && (fields || selectTag(body)) {
				// A command without rows (INSERT) gets no call, so \gset
				// says it expected one row; a SELECT of no columns has rows
				// with nothing to store, as pgbench takes it.
				var last []any
				if rows > 0 {
					last = c.lastRow()
				}
				if !fields {
					c.cols = c.cols[:0]
				}
				keep(stmt, c.cols, last, rows)
			}
			stmt, rows = stmt+1, 0
			if ws == nil {
				fields = false
			}
		case 'E': // ErrorResponse
			p.serverError(body)
		case 'Z': // ReadyForQuery
			p.ready(body)
		case 'G': // CopyInResponse: fail the COPY, the session goes on
			copied = true
			p.wb = append(p.wb[:0], copyFail...)
			if c.Proto != workload.ProtoSimple {
				// The Sync sent with the call was ignored in copy-in mode.
				p.wb = append(p.wb, syncMsg...)
			}
			p.flush()
		case 'H', 'W': // CopyOutResponse, CopyBothResponse
			copied = true
		case 'd', 'c', '1', '2', '3', 't', 's', 'N', 'S', 'A':
			// CopyData, CopyDone, ParseComplete, BindComplete,
			// CloseComplete, ParameterDescription, PortalSuspended,
			// NoticeResponse, ParameterStatus, NotificationResponse.
		default:
			p.fail(fmt.Errorf("postgres: unexpected message %q in a script command's response", t))
		}
	}
	return copied
}

// selectTag reports whether a CommandComplete's tag is a SELECT's.
func selectTag(tag []byte) bool {
	return len(tag) >= 6 && string(tag[:6]) == "SELECT" && (len(tag) == 6 || tag[6] == ' ' || tag[6] == 0)
}

// wireCols reads a RowDescription's column names into c.cols, reusing the
// strings of the previous call's when they are the same.
func (c *scriptConn) wireCols(body []byte) error {
	if len(body) < 2 {
		return fmt.Errorf("postgres: short RowDescription")
	}
	n := int(binary.BigEndian.Uint16(body))
	pos := 2
	for i := range n {
		end := pos
		for end < len(body) && body[end] != 0 {
			end++
		}
		if end+19 > len(body) {
			return fmt.Errorf("postgres: short RowDescription")
		}
		name := body[pos:end]
		if i < len(c.cols) {
			if c.cols[i] != string(name) {
				c.cols[i] = string(name)
			}
		} else {
			c.cols = append(c.cols, string(name))
		}
		pos = end + 19
	}
	c.cols = c.cols[:n]
	return nil
}

// keepWireRow copies a DataRow's values (text format) into c.row, as
// keepRow does with pgconn's.
func (c *scriptConn) keepWireRow(b []byte) {
	c.row, c.ends = c.row[:0], c.ends[:0]
	if len(b) < 2 {
		return
	}
	n := int(binary.BigEndian.Uint16(b))
	pos := 2
	for range n {
		if pos+4 > len(b) {
			return
		}
		l := int(int32(binary.BigEndian.Uint32(b[pos:])))
		pos += 4
		if l < 0 {
			c.ends = append(c.ends, -1)
			continue
		}
		if pos+l > len(b) {
			return
		}
		c.row = append(c.row, b[pos:pos+l]...)
		c.ends = append(c.ends, len(c.row))
		pos += l
	}
}

// wireFail is fail for the wire: pgwire.end already says when the VU's
// context interrupted the call.
func (c *scriptConn) wireFail(text string, err error) error {
	return &db.OpError{DB: "postgres", Op: "exec", Stmt: db.FirstLine(strings.TrimSpace(text)), Err: err, Kind: scriptKind(err)}
}

// handBack returns the connection from pgwire to pgconn for the rest of
// the session (pgconn.Construct, the inverse of Hijack): pipelines run on
// pgconn's Pipeline, which is not worth restating for a mode pgbench's
// builtins do not use. The statements prepared on the wire stay known by
// name (pgconn runs them with ExecPrepared). The connection is idle:
// ReadyForQuery was read; whole messages the server sent since
// (notices) are read first, so that pgconn starts on a message boundary.
func (c *scriptConn) handBack() error {
	p := c.pw
	if p.broken {
		return errWireClosed
	}
	for p.rs < p.re {
		if _, _, err := p.read(); err != nil {
			p.fail(err)
			return err
		}
	}
	p.w.Close()
	c.hc.TxStatus = p.tx
	pc, err := pgconn.Construct(c.hc)
	if err != nil {
		p.fail(err)
		return err
	}
	c.pc, c.pw, c.hc = pc, nil, nil
	return nil
}
