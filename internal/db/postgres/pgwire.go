package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/evloop"
	"github.com/sledge-bench/sledge/internal/workload"
)

// pgwire is sledge's own reader and writer of PostgreSQL's protocol for a
// virtual user's hot path (issue 26), on a connection pgconn opened
// (authentication, TLS, startup parameters) and handed over (Hijack) in
// procedure, prepared and client modes. Each statement is parsed once per
// connection (Parse, Describe); a call is then one write, Bind, Execute
// and Sync, with the parameters as text written straight into the write
// buffer, and its response is parsed from the read buffer in place: a
// DataRow's columns go into the caller's destinations without a copy of
// the message, CommandComplete's row count is read without allocating.
// Client mode sends its interpolated text as a simple Query. pgx's
// message reading (chunkReader, a value per message) and pgconn's
// per-call objects cost a visible part of the client's CPU
// (docs/cost.md). The connection is the one pgconn dialled, so its I/O
// stays what db.IOMode, metrics.CountConn and db.Watcher make it.
type pgwire struct {
	nc     net.Conn
	pc     *pgconn.PgConn // hijacked; kept only for CancelRequest (its address, PID and secret key)
	simple bool           // client mode: simple Query with the values written in
	stmts  map[string]*wireStmt
	rb     []byte // read buffer: unread bytes rb[rs:re]
	rs, re int
	wb     []byte // the call's request
	tx     byte   // transaction status of the last ReadyForQuery: 'I', 'T' or 'E'
	broken bool   // the connection is closed: a read or write failed, or a FATAL error
	w      db.Watcher

	// The call in progress.
	oids  []uint32 // its result's column types
	qoids []uint32 // a simple Query's column types (oids), reused
	cols  []string // their names, for errors; nil in client mode
	row   []byte   // the current DataRow's body, in rb
	n     int64    // rows affected (CommandComplete)
	err   error    // the call's first error
	done  bool     // ReadyForQuery read, or the connection failed

	rows wireRows // Query's result, reused
}

// wireStmt is a statement parsed on the connection.
type wireStmt struct {
	oids []uint32
	cols []string
}

const wireBufSize = 8192

func newPgwire(pc *pgconn.PgConn, hc *pgconn.HijackedConn, simple bool) *pgwire {
	p := &pgwire{nc: hc.Conn, pc: pc, simple: simple, stmts: map[string]*wireStmt{},
		rb: make([]byte, wireBufSize), wb: make([]byte, 0, 1024), tx: hc.TxStatus}
	p.rows.p = p
	return p
}

// errWireClosed is a call on a connection that failed before.
var errWireClosed = fmt.Errorf("postgres: connection closed after an earlier failure: %w", pgconn.ErrConnClosed)

// begin starts a call under ctx: the VU's context is watched (a
// cancellation interrupts the call's I/O) and the connection waits on the
// VU's event loop, if it has one.
func (p *pgwire) begin(ctx context.Context) error {
	if p.broken {
		return errWireClosed
	}
	if err := p.w.Begin(ctx, p.nc); err != nil {
		return err
	}
	evloop.Bind(ctx, p.nc)
	p.row, p.n, p.err, p.done = nil, 0, nil, false
	return nil
}

// end ends the call and returns its error.
func (p *pgwire) end() error {
	for !p.done { // a caller that stopped reading early
		p.next()
	}
	p.w.End()
	if p.err == nil {
		return nil
	}
	if werr := p.w.Interrupted(); werr != nil && !errors.Is(p.err, werr) {
		return fmt.Errorf("interrupted: %w (%w)", werr, p.err)
	}
	return p.err
}

// fail ends the call on an I/O or protocol error: the connection is
// closed (a half-read response cannot be resynchronised). A call the VU's
// context interrupted also asks the server to cancel the statement, which
// it would otherwise run to its end.
func (p *pgwire) fail(err error) {
	if p.err == nil {
		p.err = err
	}
	p.done = true
	if p.broken {
		return
	}
	p.broken = true
	_ = p.nc.Close()
	if p.w.Interrupted() != nil {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = p.pc.CancelRequest(ctx)
		}()
	}
}

// serverError takes an ErrorResponse: the call's first error; a FATAL or
// PANIC one also ends the connection, which the server closes.
func (p *pgwire) serverError(body []byte) {
	pe := pgError(body)
	if p.err == nil {
		p.err = pe
	}
	if pe.Severity == "FATAL" || pe.Severity == "PANIC" {
		p.fail(pe)
	}
}

// ready takes ReadyForQuery: the transaction status, and the call's end.
func (p *pgwire) ready(body []byte) {
	if len(body) > 0 {
		p.tx = body[0]
	}
	p.done = true
}

// flush writes the request.
func (p *pgwire) flush() bool {
	if _, err := p.nc.Write(p.wb); err != nil {
		p.fail(fmt.Errorf("postgres: write: %w", err))
		return false
	}
	return true
}

// read returns the next message's type and body; the body stays valid
// until the next read.
func (p *pgwire) read() (byte, []byte, error) {
	for {
		if avail := p.re - p.rs; avail >= 5 {
			n := int(binary.BigEndian.Uint32(p.rb[p.rs+1:]))
			if n < 4 {
				return 0, nil, fmt.Errorf("postgres: message %q of length %d", p.rb[p.rs], n)
			}
			if avail >= 1+n {
				t, body := p.rb[p.rs], p.rb[p.rs+5:p.rs+1+n]
				p.rs += 1 + n
				return t, body, nil
			}
			if 1+n > len(p.rb) { // a message larger than the buffer
				nb := make([]byte, max(1+n, 2*len(p.rb)))
				p.re = copy(nb, p.rb[p.rs:p.re])
				p.rs, p.rb = 0, nb
			}
		}
		if p.rs > 0 { // the rest of a message to the front
			p.re = copy(p.rb, p.rb[p.rs:p.re])
			p.rs = 0
		}
		n, err := p.nc.Read(p.rb[p.re:])
		p.re += n
		if err != nil && n == 0 {
			if err == io.EOF && p.re > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, nil, fmt.Errorf("postgres: read: %w", err)
		}
	}
}

// next reads the call's response up to its next row (true; p.row holds
// it) or to its end (false). Rows after an error are skipped.
func (p *pgwire) next() bool {
	for !p.done {
		t, body, err := p.read()
		if err != nil {
			p.fail(err)
			return false
		}
		switch t {
		case 'D': // DataRow
			if p.err == nil {
				p.row = body
				return true
			}
		case 'C': // CommandComplete
			p.n = rowsAffected(body)
		case 'T': // RowDescription (simple Query)
			if err := p.describe(body, nil); err != nil {
				p.fail(err)
			}
		case 'E': // ErrorResponse
			p.serverError(body)
		case 'Z': // ReadyForQuery
			p.ready(body)
		case '1', '2', '3', 'n', 't', 'I', 'N', 'S', 'A', 's':
			// ParseComplete, BindComplete, CloseComplete, NoData,
			// ParameterDescription, EmptyQueryResponse, NoticeResponse,
			// ParameterStatus, NotificationResponse, PortalSuspended.
		default:
			p.fail(fmt.Errorf("postgres: unexpected message %q on the hot path", t))
		}
	}
	return false
}

// describe reads a RowDescription's column types: into ws (a parsed
// statement's, with the names) or, for a simple Query's result, into the
// connection's own slice.
func (p *pgwire) describe(body []byte, ws *wireStmt) error {
	if len(body) < 2 {
		return errors.New("postgres: short RowDescription")
	}
	n := int(binary.BigEndian.Uint16(body))
	oids := p.qoids[:0]
	if ws != nil {
		oids = make([]uint32, 0, n)
	}
	pos := 2
	for range n {
		end := pos
		for end < len(body) && body[end] != 0 {
			end++
		}
		if end+19 > len(body) {
			return errors.New("postgres: short RowDescription")
		}
		if ws != nil {
			ws.cols = append(ws.cols, string(body[pos:end]))
		}
		oids = append(oids, binary.BigEndian.Uint32(body[end+7:]))
		pos = end + 19
	}
	if ws != nil {
		ws.oids = oids
		return nil
	}
	p.qoids, p.oids, p.cols = oids, oids, nil
	return nil
}

// pgError decodes an ErrorResponse into pgconn's error value, so that
// classification (SQLSTATE, severity) and messages are pgconn's.
func pgError(body []byte) *pgconn.PgError {
	var er pgproto3.ErrorResponse
	if err := er.Decode(body); err != nil {
		return &pgconn.PgError{Severity: "ERROR", Message: "undecodable ErrorResponse: " + err.Error()}
	}
	return pgconn.ErrorResponseToPgError(&er)
}

// rowsAffected reads the count at the end of a command tag ("UPDATE 3",
// "INSERT 0 1"); 0 for tags without one.
func rowsAffected(tag []byte) int64 {
	if len(tag) > 0 && tag[len(tag)-1] == 0 {
		tag = tag[:len(tag)-1]
	}
	i := len(tag)
	for i > 0 && tag[i-1] >= '0' && tag[i-1] <= '9' {
		i--
	}
	if i == len(tag) || i == 0 || tag[i-1] != ' ' {
		return 0
	}
	var n int64
	for _, c := range tag[i:] {
		n = n*10 + int64(c-'0')
	}
	return n
}

// msg starts a message of type t in the write buffer; fill writes its
// length.
func (p *pgwire) msg(t byte) int {
	at := len(p.wb)
	p.wb = append(p.wb, t, 0, 0, 0, 0)
	return at
}

func (p *pgwire) fill(at int) {
	binary.BigEndian.PutUint32(p.wb[at+1:], uint32(len(p.wb)-at-1))
}

func (p *pgwire) cstring(s string) { p.wb = append(append(p.wb, s...), 0) }

func (p *pgwire) int16(n int) { p.wb = binary.BigEndian.AppendUint16(p.wb, uint16(n)) }

func (p *pgwire) sync() { p.wb = append(p.wb, 'S', 0, 0, 0, 4) }

// prepare parses statement name (text q) on the connection and learns its
// result's column types: Parse, Describe, Sync.
func (p *pgwire) prepare(name, q string) (*wireStmt, error) {
	p.wb = p.wb[:0]
	at := p.msg('P')
	p.cstring(name)
	p.cstring(q)
	p.int16(0) // parameter types: the server infers them
	p.fill(at)
	at = p.msg('D')
	p.wb = append(p.wb, 'S')
	p.cstring(name)
	p.fill(at)
	p.sync()
	if !p.flush() {
		return nil, p.err
	}
	ws := &wireStmt{}
	for !p.done {
		t, body, err := p.read()
		if err != nil {
			p.fail(err)
			break
		}
		switch t {
		case 'T':
			if err := p.describe(body, ws); err != nil {
				p.fail(err)
			}
		case 'E': // ErrorResponse
			p.serverError(body)
		case 'Z': // ReadyForQuery
			p.ready(body)
		case '1', 't', 'n', 'N', 'S', 'A':
		default:
			p.fail(fmt.Errorf("postgres: unexpected message %q after Parse", t))
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	p.stmts[name] = ws
	return ws, nil
}

// send writes a call of statement name (text q) with args: Bind, Execute,
// Sync, or in client mode a Query with the values written into q. args
// are values (Conn.Exec's) or bound pointers (workload.Stmt's).
func (p *pgwire) send(name, q string, args []any, bound bool) error {
	if p.simple {
		vals := args
		if bound {
			vals = workload.ArgValues(args)
		}
		text, err := db.Interpolate(q, db.Dollar, vals)
		if err != nil {
			p.done = true // nothing sent
			return err
		}
		p.wb = p.wb[:0]
		at := p.msg('Q')
		p.cstring(text)
		p.fill(at)
		p.oids, p.cols = nil, nil
		p.flush()
		return nil
	}
	ws := p.stmts[name]
	if ws == nil {
		var err error
		if ws, err = p.prepare(name, q); err != nil {
			return err
		}
		p.done = false // prepare read its own ReadyForQuery; now the call's
	}
	p.oids, p.cols = ws.oids, ws.cols
	p.wb = p.wb[:0]
	at := p.msg('B')
	p.wb = append(p.wb, 0) // the unnamed portal
	p.cstring(name)
	p.int16(0) // parameter formats: all text
	p.int16(len(args))
	for i, a := range args {
		if err := p.arg(a); err != nil {
			p.done = true // nothing sent
			return fmt.Errorf("postgres: %s argument %d: %w", name, i+1, err)
		}
	}
	p.int16(0) // result formats: all text
	p.fill(at)
	p.wb = append(p.wb, 'E', 0, 0, 0, 9, 0, 0, 0, 0, 0) // Execute the unnamed portal, all rows
	p.sync()
	p.flush()
	return nil
}

// arg writes one parameter as text: a length, then the bytes.
func (p *pgwire) arg(a any) error {
	at := len(p.wb)
	p.wb = append(p.wb, 0, 0, 0, 0)
	switch v := a.(type) {
	case nil:
		return p.null(at)
	case *int64:
		p.wb = strconv.AppendInt(p.wb, *v, 10)
	case int64:
		p.wb = strconv.AppendInt(p.wb, v, 10)
	case int:
		p.wb = strconv.AppendInt(p.wb, int64(v), 10)
	case int32:
		p.wb = strconv.AppendInt(p.wb, int64(v), 10)
	case *float64:
		p.wb = strconv.AppendFloat(p.wb, *v, 'f', -1, 64)
	case float64:
		p.wb = strconv.AppendFloat(p.wb, v, 'f', -1, 64)
	case *string:
		p.wb = append(p.wb, *v...)
	case string:
		p.wb = append(p.wb, v...)
	case *[]byte:
		p.wb = append(p.wb, *v...)
	case []byte:
		if v == nil {
			return p.null(at)
		}
		p.wb = append(p.wb, v...)
	case *bool:
		p.wb = strconv.AppendBool(p.wb, *v)
	case bool:
		p.wb = strconv.AppendBool(p.wb, v)
	case *workload.NullInt64:
		if !v.Valid {
			return p.null(at)
		}
		p.wb = strconv.AppendInt(p.wb, v.V, 10)
	case time.Time:
		p.wb = v.AppendFormat(p.wb, "2006-01-02 15:04:05.999999Z07:00")
	default:
		return fmt.Errorf("a %T has no text form here", a)
	}
	binary.BigEndian.PutUint32(p.wb[at:], uint32(len(p.wb)-at-4))
	return nil
}

func (p *pgwire) null(at int) error {
	p.wb = append(p.wb[:at], 0xff, 0xff, 0xff, 0xff)
	return nil
}

// call begins a call of statement name and sends it.
func (p *pgwire) call(ctx context.Context, name, q string, args []any, bound bool) error {
	if err := p.begin(ctx); err != nil {
		return err
	}
	if err := p.send(name, q, args, bound); err != nil {
		if p.err == nil {
			p.err = err
		}
		return p.end()
	}
	return nil
}

// exec runs a statement and returns the rows it affected; rows it returns
// are read and discarded.
func (p *pgwire) exec(ctx context.Context, name, q string, args []any, bound bool) (int64, error) {
	if err := p.call(ctx, name, q, args, bound); err != nil {
		return 0, err
	}
	for p.next() {
	}
	if err := p.end(); err != nil {
		return 0, err
	}
	return p.n, nil
}

// simpleExec sends a statement without arguments (BEGIN, COMMIT) as a
// simple Query.
func (p *pgwire) simpleExec(ctx context.Context, q string) error {
	if err := p.begin(ctx); err != nil {
		return err
	}
	p.wb = p.wb[:0]
	at := p.msg('Q')
	p.cstring(q)
	p.fill(at)
	p.oids, p.cols = nil, nil
	if p.flush() {
		for p.next() {
		}
	}
	return p.end()
}

// queryRow runs a statement, scans its first row into dest and discards
// the rest; errNoRow when there is none.
func (p *pgwire) queryRow(ctx context.Context, name, q string, args, dest []any, bound bool) error {
	if err := p.call(ctx, name, q, args, bound); err != nil {
		return err
	}
	found := false
	var serr error
	if p.next() {
		found = true
		serr = p.scan(name, dest)
	}
	if err := p.end(); err != nil {
		return err
	}
	if serr != nil {
		return serr
	}
	if !found {
		return errNoRow
	}
	return nil
}

// query runs a statement and calls row after scanning each row into dest;
// the first error stops the scanning, the response is read to its end.
// An error of row's own comes back as rowErr, untouched.
func (p *pgwire) query(ctx context.Context, name, q string, args, dest []any, row func() error) (err, rowErr error) {
	if err := p.call(ctx, name, q, args, true); err != nil {
		return err, nil
	}
	var serr error
	for p.next() {
		if serr == nil && rowErr == nil {
			if serr = p.scan(name, dest); serr == nil {
				rowErr = row()
			}
		}
	}
	if err := p.end(); err != nil {
		return err, nil
	}
	return serr, rowErr
}

// scan decodes the current row's text columns into dest: bound
// destinations (workload.Stmt's) or Row.Scan's portable targets.
func (p *pgwire) scan(name string, dest []any) error {
	b := p.row
	if len(b) < 2 {
		return fmt.Errorf("postgres: %s: short DataRow", name)
	}
	n := int(binary.BigEndian.Uint16(b))
	if n != len(dest) {
		return fmt.Errorf("postgres: %s returns %d columns, scanned into %d", name, n, len(dest))
	}
	pos := 2
	for i, d := range dest {
		if pos+4 > len(b) {
			return fmt.Errorf("postgres: %s: short DataRow", name)
		}
		l := int(int32(binary.BigEndian.Uint32(b[pos:])))
		pos += 4
		var v []byte
		if l >= 0 {
			if pos+l > len(b) {
				return fmt.Errorf("postgres: %s: short DataRow", name)
			}
			v = b[pos : pos+l : pos+l]
			pos += l
		}
		var oid uint32
		if i < len(p.oids) {
			oid = p.oids[i]
		}
		if err := scanInto(v, oid, d); err != nil {
			col := strconv.Itoa(i + 1)
			if i < len(p.cols) {
				col = p.cols[i]
			}
			return fmt.Errorf("postgres: %s column %s: %w", name, col, err)
		}
	}
	return nil
}

// scanInto converts one text value (nil: NULL) into a bound destination
// or a portable target, in place.
func scanInto(b []byte, oid uint32, dest any) error {
	switch d := dest.(type) {
	case *[]byte:
		if b == nil {
			*d = (*d)[:0]
		} else if isTime(oid) {
			*d = append((*d)[:0], timeText(str(b))...)
		} else {
			*d = append((*d)[:0], b...)
		}
		return nil
	case *bool:
		switch {
		case b == nil:
			*d = false
		case oid == pgtype.BoolOID || str(b) == "t" || str(b) == "f":
			*d = str(b) == "t"
		default:
			n, err := strconv.ParseInt(str(b), 10, 64)
			if err != nil {
				return fmt.Errorf("not a boolean: %q", b)
			}
			*d = n != 0
		}
		return nil
	case *workload.NullInt64:
		if b == nil {
			*d = workload.NullInt64{}
			return nil
		}
		var n int64
		if err := scanText(b, oid, &n); err != nil {
			return err
		}
		*d = workload.NullInt64{V: n, Valid: true}
		return nil
	}
	return scanText(b, oid, dest) // fast.go: *int64, *float64, *string, *any, *int
}

// close ends the session (Terminate) and closes the connection.
func (p *pgwire) close() {
	p.w.Close()
	if !p.broken {
		p.broken = true
		_ = p.nc.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = p.nc.Write([]byte{'X', 0, 0, 0, 4})
		_ = p.nc.Close()
	}
}

// wireRows is a Query result read from the connection as the caller asks.
type wireRows struct {
	p       *pgwire
	name    string
	err     error
	pending bool // the first row, read ahead by start
	closed  bool
}

// start reads up to the first row, so that an error before it (an
// undefined table in client mode) is Query's, as with pgconn.
func (r *wireRows) start() error {
	if r.p.next() {
		r.pending = true
		return nil
	}
	r.closed = true
	return r.p.end()
}

func (r *wireRows) Next() bool {
	if r.closed {
		return false
	}
	if r.pending {
		r.pending = false
		return true
	}
	if r.p.next() {
		return true
	}
	r.finish()
	return false
}

func (r *wireRows) finish() {
	if r.closed {
		return
	}
	r.closed = true
	if err := r.p.end(); err != nil {
		r.err = wrap("query", r.name, err)
	}
}

func (r *wireRows) Scan(dest ...any) error { return r.p.scan(r.name, dest) }

func (r *wireRows) Err() error { return r.err }

func (r *wireRows) Close() error {
	r.finish()
	return nil
}

// wireRow is QueryRow's result on the wire: the call runs when scanned.
type wireRow struct {
	p          *pgwire
	ctx        context.Context
	name, prep string
	q          string
	args       []any
}

func (r *wireRow) Scan(dest ...any) error {
	if err := r.p.queryRow(r.ctx, r.prep, r.q, r.args, dest, false); err != nil {
		return wrap("query", r.name, err)
	}
	return nil
}

// stmtConn is a session that speaks the protocol itself (pgwire): conn's
// calls plus the hot path's typed ones (workload.StmtConn), which read
// their arguments through the Stmt's pointers and write each column into
// its destinations, allocating nothing.
type stmtConn struct{ *conn }

var _ workload.StmtConn = (*stmtConn)(nil)

func (c *stmtConn) ExecStmt(ctx context.Context, s *workload.Stmt) (int64, error) {
	prep, q, err := c.sql(s.Name, len(s.Args))
	if err != nil {
		return 0, err
	}
	n, err := c.pw.exec(ctx, prep, q, s.Args, true)
	if err != nil {
		return 0, wrap("exec", s.Name, err)
	}
	return n, nil
}

func (c *stmtConn) QueryRowStmt(ctx context.Context, s *workload.Stmt) error {
	prep, q, err := c.sql(s.Name, len(s.Args))
	if err != nil {
		return err
	}
	if err := c.pw.queryRow(ctx, prep, q, s.Args, s.Dest, true); err != nil {
		return wrap("query", s.Name, err)
	}
	return nil
}

func (c *stmtConn) QueryStmt(ctx context.Context, s *workload.Stmt, row func() error) error {
	prep, q, err := c.sql(s.Name, len(s.Args))
	if err != nil {
		return err
	}
	err, rowErr := c.pw.query(ctx, prep, q, s.Args, s.Dest, row)
	if err != nil {
		return wrap("query", s.Name, err)
	}
	return rowErr
}
