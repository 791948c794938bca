package mysql

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/evloop"
	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/workload"
)

// binConn is a virtual user's session in procedure and prepared modes on
// sledge's own connection (binproto.go): every statement, CALL included,
// is prepared once per connection and executed with the binary protocol;
// BEGIN, COMMIT and ROLLBACK are COM_QUERY. It runs bound statements
// (workload.StmtConn) without allocating, and Exec, QueryRow and Query
// for the rest.
type binConn struct {
	d       *DB
	p       *proto
	mode    workload.Mode
	w       string
	text    map[string]string // shared by every session; read only
	stmts   map[string]*binStmt
	cols    []column // the current result's columns
	scratch []byte   // a date or time column's text
	inTx    bool
	wire    *metrics.WireCounts // nil: not counted
	wt      db.Watcher
}

type binStmt struct {
	id      uint32
	nparams int
}

var (
	_ workload.Conn      = (*binConn)(nil)
	_ workload.StmtConn  = (*binConn)(nil)
	_ workload.Breakable = (*binConn)(nil)
	_ metrics.Wired      = (*binConn)(nil)
	_ db.ServerSessioner = (*binConn)(nil)
)

// binUsable says why the URL keeps virtual users on go-sql-driver/mysql
// ("" when it does not): TLS, and options of the driver's that sledge's
// session does not implement.
func binUsable(c *config) string {
	switch {
	case c.wire == wireDriver:
		return "wire=driver"
	case c.drv.TLS != nil || (c.drv.TLSConfig != "" && c.drv.TLSConfig != "false"):
		return "tls"
	case c.drv.Collation != "" || c.charset:
		return "charset or collation"
	case c.drv.ReadTimeout != 0 || c.drv.WriteTimeout != 0:
		return "readTimeout or writeTimeout"
	case !c.drv.AllowNativePasswords:
		return "allowNativePasswords=false"
	}
	return ""
}

// PreparesOnFirstUse: procedure mode on sledge's own session prepares
// each CALL the first time a session runs it (testdb.FirstUsePreparer).
func (d *DB) PreparesOnFirstUse(m workload.Mode) bool {
	return m == workload.ModeProcedure && binUsable(d.cfg) == "" && !d.binRefused.Load()
}

// connectBin opens a session on sledge's own connection, dialed like the
// driver's (db.IOMode, wire counting). errUnsupported: the server wants
// what sledge's session does not speak; the caller falls back.
func (d *DB) connectBin(ctx context.Context, w string, m workload.Mode, text map[string]string) (*binConn, error) {
	wire := metrics.WireFrom(ctx)
	p, err := dialProto(ctx, countingDial(wire, d.cfg.io), d.cfg.drv)
	if err != nil {
		if errors.Is(err, errUnsupported) {
			return nil, err
		}
		return nil, d.connErr(err)
	}
	c := &binConn{d: d, p: p, mode: m, w: w, text: text, stmts: make(map[string]*binStmt, len(text)), wire: wire,
		cols: make([]column, 0, 16), scratch: make([]byte, 0, 64)}
	if c.cols, err = p.simple("SET SESSION TRANSACTION ISOLATION LEVEL "+isolations[d.cfg.isolation], c.cols); err != nil {
		_ = c.Close(ctx)
		return nil, fmt.Errorf("mysql: set isolation: %w", d.connErr(c.lost(err)))
	}
	return c, nil
}

func (c *binConn) Mode() workload.Mode                          { return c.mode }
func (c *binConn) Wire() *metrics.WireCounts                    { return c.wire }
func (c *binConn) Broken() bool                                 { return c.p.err != nil }
func (c *binConn) ServerSession(context.Context) (int64, error) { return int64(c.p.id), nil }

// begin starts a call under ctx: the connection's reads wait on ctx's
// event loop, and ctx's cancellation interrupts them. end must follow.
func (c *binConn) begin(ctx context.Context) error {
	if c.p.err != nil {
		return c.p.err
	}
	evloop.Bind(ctx, c.p.nc)
	return c.wt.Begin(ctx, c.p.nc)
}

func (c *binConn) end() { c.wt.End() }

// lost marks an error of a connection that is gone as the driver's
// ErrInvalidConn (lostConnection) unless the server said why.
func (c *binConn) lost(err error) error {
	if c.p.err == nil || err == nil {
		return err
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) || errors.Is(err, mysql.ErrInvalidConn) {
		return err
	}
	return fmt.Errorf("%w: %w", mysql.ErrInvalidConn, err)
}

// fail names the operation and classifies err. A call that ctx's
// cancellation interrupted left its statement running on the server,
// which is told to KILL the session (the connection is given up).
func (c *binConn) fail(op, name string, err error) error {
	err = c.lost(err)
	if werr := c.wt.Interrupted(); werr != nil && c.p.err != nil {
		c.kill()
		if !errors.Is(err, werr) {
			err = fmt.Errorf("interrupted: %w (%w)", werr, err)
		}
	}
	return c.d.wrapErr(c.w, op, name, err)
}

// kill ends the session on the server through the shared pool, on a
// goroutine of its own: the virtual user returns at once, whether or not
// the server answers (a server that stopped answering would hold it for
// killTimeout).
func (c *binConn) kill() {
	if c.p.id == 0 {
		return
	}
	q := "KILL " + strconv.FormatUint(uint64(c.p.id), 10)
	c.p.id = 0
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
		defer cancel()
		_, _ = c.d.pool.ExecContext(ctx, q)
	}()
}

func (c *binConn) unknown(name string) error {
	return fmt.Errorf("mysql: no statement %q for workload %s", name, c.w)
}

// stmt returns name's prepared statement, preparing it on first use.
func (c *binConn) stmt(name string) (*binStmt, error) {
	if st, ok := c.stmts[name]; ok {
		return st, nil
	}
	text, ok := c.text[name]
	if !ok {
		return nil, c.unknown(name)
	}
	p := c.p
	p.start(comStmtPrepare)
	p.wb = append(p.wb, text...)
	if err := p.send(); err != nil {
		return nil, err
	}
	pkt, err := p.readPacket()
	if err != nil {
		return nil, err
	}
	if pkt[0] == 0xff {
		return nil, parseErr(pkt)
	}
	if pkt[0] != 0 || len(pkt) < 12 {
		return nil, p.fail(errMalformed)
	}
	st := &binStmt{id: binary.LittleEndian.Uint32(pkt[1:])}
	ncols := int(binary.LittleEndian.Uint16(pkt[5:]))
	st.nparams = int(binary.LittleEndian.Uint16(pkt[7:]))
	// Parameter and column definitions, each block ended by an EOF: the
	// columns are read again from every execution's result.
	for _, n := range []int{st.nparams, ncols} {
		if n == 0 {
			continue
		}
		for range n + 1 {
			if _, err := p.readPacket(); err != nil {
				return nil, err
			}
		}
	}
	c.stmts[name] = st
	return st, nil
}

// execute sends COM_STMT_EXECUTE of st with args, every argument typed
// and written in binary, in one write.
func (c *binConn) execute(st *binStmt, name string, args []any) error {
	if len(args) != st.nparams {
		return fmt.Errorf("mysql: statement %s takes %d arguments, got %d", name, st.nparams, len(args))
	}
	p := c.p
	p.start(comStmtExecute)
	p.wb = binary.LittleEndian.AppendUint32(p.wb, st.id)
	p.wb = append(p.wb, 0, 1, 0, 0, 0) // no cursor, one iteration
	if n := len(args); n > 0 {
		nulls := len(p.wb)
		for range (n + 7) / 8 {
			p.wb = append(p.wb, 0)
		}
		p.wb = append(p.wb, 1) // types follow
		types := len(p.wb)
		for range n {
			p.wb = append(p.wb, 0, 0)
		}
		for i, a := range args {
			var typ byte
			var unsigned, null bool
			var err error
			if p.wb, typ, unsigned, null, err = appendParam(p.wb, a, c.d.cfg.drv.Loc); err != nil {
				return fmt.Errorf("mysql: statement %s argument %d: %w", name, i+1, err)
			}
			if null {
				p.wb[nulls+i/8] |= 1 << (i & 7)
				typ = typeNull
			}
			p.wb[types+2*i] = typ
			if unsigned {
				p.wb[types+2*i+1] = 0x80
			}
		}
	}
	return p.send()
}

// appendParam writes one argument's binary value: a bound pointer
// (workload.Stmt) or a value (Exec's arguments).
func appendParam(b []byte, a any, loc *time.Location) (_ []byte, typ byte, unsigned, null bool, err error) {
	switch v := a.(type) {
	case nil:
		return b, typeNull, false, true, nil
	case *int64:
		return binary.LittleEndian.AppendUint64(b, uint64(*v)), typeLongLong, false, false, nil
	case int64:
		return binary.LittleEndian.AppendUint64(b, uint64(v)), typeLongLong, false, false, nil
	case int:
		return binary.LittleEndian.AppendUint64(b, uint64(v)), typeLongLong, false, false, nil
	case int32:
		return binary.LittleEndian.AppendUint64(b, uint64(v)), typeLongLong, false, false, nil
	case uint64:
		return binary.LittleEndian.AppendUint64(b, v), typeLongLong, true, false, nil
	case *float64:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(*v)), typeDouble, false, false, nil
	case float64:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v)), typeDouble, false, false, nil
	case float32:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(v))), typeDouble, false, false, nil
	case *string:
		return append(appendLenenc(b, uint64(len(*v))), *v...), typeString, false, false, nil
	case string:
		return append(appendLenenc(b, uint64(len(v))), v...), typeString, false, false, nil
	case *[]byte:
		return append(appendLenenc(b, uint64(len(*v))), *v...), typeString, false, false, nil
	case []byte:
		if v == nil {
			return b, typeNull, false, true, nil
		}
		return append(appendLenenc(b, uint64(len(v))), v...), typeString, false, false, nil
	case *bool:
		return append(b, boolByte(*v)), typeTiny, false, false, nil
	case bool:
		return append(b, boolByte(v)), typeTiny, false, false, nil
	case *workload.NullInt64:
		if !v.Valid {
			return b, typeNull, false, true, nil
		}
		return binary.LittleEndian.AppendUint64(b, uint64(v.V)), typeLongLong, false, false, nil
	case workload.NullInt64:
		return appendParam(b, &v, loc)
	case time.Time:
		if loc != nil {
			v = v.In(loc)
		}
		b = append(b, 11)
		b = binary.LittleEndian.AppendUint16(b, uint16(v.Year()))
		b = append(b, byte(v.Month()), byte(v.Day()), byte(v.Hour()), byte(v.Minute()), byte(v.Second()))
		return binary.LittleEndian.AppendUint32(b, uint32(v.Nanosecond()/1000)), typeDatetime, false, false, nil
	}
	return b, 0, false, false, fmt.Errorf("%T is not a type sledge's MariaDB session sends", a)
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// run starts a call of name with args: it prepares name on first use,
// executes it and reads the result's header. end must follow.
func (c *binConn) run(ctx context.Context, name string, args []any) (ncols int, affected int64, err error) {
	if err := c.begin(ctx); err != nil {
		return 0, 0, err
	}
	st, err := c.stmt(name)
	if err != nil {
		return 0, 0, err
	}
	if err := c.execute(st, name, args); err != nil {
		return 0, 0, err
	}
	ncols, affected, c.cols, err = c.p.header(c.cols)
	return ncols, affected, err
}

// finish reads the rest of the response (the current result's rows when
// inRows, a CALL's further results).
func (c *binConn) finish(inRows bool, affected int64) (int64, error) {
	var err error
	affected, c.cols, err = c.p.finish(inRows, affected, c.cols)
	return affected, err
}

// ExecStmt runs s and returns the rows it affected (a CALL's: its final
// OK's).
func (c *binConn) ExecStmt(ctx context.Context, s *workload.Stmt) (int64, error) {
	return c.exec(ctx, s.Name, s.Args)
}

func (c *binConn) exec(ctx context.Context, name string, args []any) (int64, error) {
	defer c.end()
	n, affected, err := c.run(ctx, name, args)
	if err == nil {
		affected, err = c.finish(n > 0, affected)
	}
	if err != nil {
		return 0, c.fail("exec", name, err)
	}
	return affected, nil
}

// QueryRowStmt runs s and writes its first row into s.Dest.
func (c *binConn) QueryRowStmt(ctx context.Context, s *workload.Stmt) error {
	defer c.end()
	if err := c.queryRow(ctx, s.Name, s.Args, s.Dest, nil); err != nil {
		return c.fail("query", s.Name, err)
	}
	return nil
}

// queryRow runs name, then writes its first row into dest, or copies it
// into *keep for a later Scan (with the columns in *keepCols).
func (c *binConn) queryRow(ctx context.Context, name string, args, dest []any, keep *heldRow) error {
	n, _, err := c.run(ctx, name, args)
	if err != nil {
		return err
	}
	if n == 0 {
		if _, err := c.finish(false, 0); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	r, err := c.p.row()
	if err != nil {
		return err
	}
	if r == nil {
		if _, err := c.finish(false, 0); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	var serr error
	if keep != nil {
		keep.buf = append(keep.buf[:0], r...)
		keep.cols = append(keep.cols[:0], c.cols...)
	} else {
		serr = c.storeRow(r, c.cols, dest)
	}
	if _, err := c.finish(true, 0); err != nil {
		return err
	}
	return serr
}

// QueryStmt runs s and writes each row into s.Dest, then calls row.
func (c *binConn) QueryStmt(ctx context.Context, s *workload.Stmt, row func() error) error {
	defer c.end()
	n, _, err := c.run(ctx, s.Name, s.Args)
	if err != nil {
		return c.fail("query", s.Name, err)
	}
	if n == 0 {
		if _, err := c.finish(false, 0); err != nil {
			return c.fail("query", s.Name, err)
		}
		return nil
	}
	for {
		r, err := c.p.row()
		if err != nil {
			return c.fail("query", s.Name, err)
		}
		if r == nil {
			break
		}
		if err := c.storeRow(r, c.cols, s.Dest); err != nil {
			_, _ = c.finish(true, 0)
			return c.fail("query", s.Name, err)
		}
		if err := row(); err != nil {
			_, _ = c.finish(true, 0) // the session stays usable
			return err
		}
	}
	if _, err := c.finish(false, 0); err != nil {
		return c.fail("query", s.Name, err)
	}
	return nil
}

// Exec, QueryRow and Query run statements with their arguments as values,
// for workloads not (yet) on bound statements.

func (c *binConn) Exec(ctx context.Context, name string, args ...any) (int64, error) {
	return c.exec(ctx, name, args)
}

// heldRow is QueryRow's first row, copied for its Scan.
type heldRow struct {
	c    *binConn
	name string
	err  error
	buf  []byte
	cols []column
}

func (c *binConn) QueryRow(ctx context.Context, name string, args ...any) workload.Row {
	r := &heldRow{c: c, name: name}
	err := c.queryRow(ctx, name, args, nil, r)
	c.end()
	if err != nil {
		r.err = c.fail("query", name, err)
	}
	return r
}

func (r *heldRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	if err := r.c.storeRow(r.buf, r.cols, dest); err != nil {
		return r.c.d.wrapErr(r.c.w, "query", r.name, err)
	}
	return nil
}

func (c *binConn) Query(ctx context.Context, name string, args ...any) (workload.Rows, error) {
	n, _, err := c.run(ctx, name, args)
	if err != nil {
		c.end()
		return nil, c.fail("query", name, err)
	}
	return &binRows{c: c, name: name, inRows: n > 0, open: true}, nil
}

// binRows reads a result's rows as Next asks for them; the call ends with
// the last row or Close.
type binRows struct {
	c      *binConn
	name   string
	cur    []byte
	inRows bool // the result set's rows are not all read
	open   bool
	err    error
}

func (r *binRows) Next() bool {
	if !r.open {
		return false
	}
	if r.inRows {
		row, err := r.c.p.row()
		if err == nil && row != nil {
			r.cur = row
			return true
		}
		r.inRows = false
		if err != nil {
			r.err = r.c.fail("query", r.name, err)
			r.done()
			return false
		}
	}
	if _, err := r.c.finish(false, 0); err != nil {
		r.err = r.c.fail("query", r.name, err)
	}
	r.done()
	return false
}

func (r *binRows) done() {
	if r.open {
		r.open = false
		r.cur = nil
		r.c.end()
	}
}

func (r *binRows) Scan(dest ...any) error {
	if r.cur == nil {
		return fmt.Errorf("mysql: Scan of %s without a row", r.name)
	}
	if err := r.c.storeRow(r.cur, r.c.cols, dest); err != nil {
		return r.c.d.wrapErr(r.c.w, "query", r.name, err)
	}
	return nil
}

func (r *binRows) Err() error { return r.err }

func (r *binRows) Close() error {
	if r.open {
		if _, err := r.c.finish(r.inRows, 0); err != nil && r.err == nil {
			r.err = r.c.fail("query", r.name, err)
		}
		r.inRows = false
		r.done()
	}
	return r.err
}

// InTx runs fn between BEGIN and COMMIT (COM_QUERY). Readers start a READ
// ONLY transaction.
func (c *binConn) InTx(ctx context.Context, opts workload.TxOptions, fn func(ctx context.Context) error) error {
	if c.inTx {
		return errors.New("mysql: InTx called inside a transaction")
	}
	begin := "BEGIN"
	if opts.ReadOnly {
		begin = "START TRANSACTION READ ONLY"
	}
	if err := c.simple(ctx, begin); err != nil {
		return c.fail("begin", "", err)
	}
	c.inTx = true
	defer func() { c.inTx = false }()
	if err := fn(ctx); err != nil {
		return c.rollback(err)
	}
	if err := c.simple(ctx, "COMMIT"); err != nil {
		return c.rollback(c.fail("commit", "", err))
	}
	return nil
}

func (c *binConn) simple(ctx context.Context, q string) error {
	defer c.end()
	if err := c.begin(ctx); err != nil {
		return err
	}
	var err error
	c.cols, err = c.p.simple(q, c.cols)
	return err
}

// rollback ends the transaction after err and returns err, without
// ctx's cancellation: a cancelled run must still release its locks. A
// connection that is gone needs none: the server rolls back.
func (c *binConn) rollback(err error) error {
	if c.p.err != nil {
		return err
	}
	if rerr := c.simple(context.Background(), "ROLLBACK"); rerr != nil && c.p.err == nil {
		return fmt.Errorf("%w (and rollback failed: %w)", err, classify(rerr))
	}
	return err
}

// Close says goodbye and closes the connection (the server rolls back an
// open transaction and frees its statements).
func (c *binConn) Close(context.Context) error {
	c.wt.Close()
	if c.p.err != nil {
		return nil
	}
	c.p.start(comQuit)
	if c.p.send() != nil {
		return nil // closed by the failed write
	}
	err := c.p.nc.Close()
	c.p.err = errSessionClosed
	return err
}

// errSessionClosed marks a session closed by Close.
var errSessionClosed = errors.New("mysql: session closed")

// storeRow writes a binary result row's columns into dest.
func (c *binConn) storeRow(row []byte, cols []column, dest []any) error {
	if len(dest) != len(cols) {
		return fmt.Errorf("mysql: %d columns into %d destinations", len(cols), len(dest))
	}
	nb := (len(cols) + 9) / 8
	if len(row) < 1+nb {
		return errMalformed
	}
	pos := 1 + nb
	for i, col := range cols {
		if row[1+(i+2)/8]&(1<<((i+2)&7)) != 0 {
			if err := storeNull(dest[i], i); err != nil {
				return err
			}
			continue
		}
		var v value
		var err error
		if v, pos, c.scratch, err = decode(row, pos, col, c.scratch); err != nil {
			return err
		}
		if err := store(dest[i], v, i); err != nil {
			return err
		}
	}
	return nil
}

func storeNull(d any, i int) error {
	switch p := d.(type) {
	case *[]byte:
		*p = (*p)[:0]
	case *any:
		*p = nil
	case *workload.NullInt64:
		*p = workload.NullInt64{}
	case *bool:
		*p = false
	case sql.Scanner:
		return p.Scan(nil)
	default:
		return fmt.Errorf("column %d is NULL: converting NULL to %T is unsupported", i, d)
	}
	return nil
}

func store(d any, v value, i int) error {
	switch p := d.(type) {
	case *int64:
		x, err := v.int(i)
		*p = x
		return err
	case *int:
		x, err := v.int(i)
		*p = int(x)
		return err
	case *int32:
		x, err := v.int(i)
		*p = int32(x)
		return err
	case *float64:
		x, err := v.float(i)
		*p = x
		return err
	case *[]byte:
		*p = v.append((*p)[:0])
	case *string:
		if v.kind == 'b' {
			*p = string(v.b)
		} else {
			*p = string(v.append(nil))
		}
	case *bool:
		switch v.kind {
		case 'i':
			*p = v.i != 0
		case 'f':
			*p = v.f != 0
		default:
			x, err := strconv.ParseBool(bytesString(v.b))
			if err != nil {
				return fmt.Errorf("column %d: %q is not a boolean", i, v.b)
			}
			*p = x
		}
	case *workload.NullInt64:
		x, err := v.int(i)
		*p = workload.NullInt64{V: x, Valid: true}
		return err
	case *any:
		switch v.kind {
		case 'i':
			*p = v.i
		case 'f':
			*p = v.f
		default:
			*p = string(v.b)
		}
	case sql.Scanner:
		switch v.kind {
		case 'i':
			return p.Scan(v.i)
		case 'f':
			return p.Scan(v.f)
		default:
			return p.Scan(string(v.b))
		}
	default:
		return fmt.Errorf("column %d: cannot scan into %T", i, d)
	}
	return nil
}

func (v value) int(i int) (int64, error) {
	switch v.kind {
	case 'i':
		return v.i, nil
	case 'f':
		if v.f == math.Trunc(v.f) && math.Abs(v.f) < 1<<63 {
			return int64(v.f), nil
		}
		return 0, fmt.Errorf("column %d: %v is not an integer", i, v.f)
	}
	x, err := strconv.ParseInt(strings.TrimSpace(bytesString(v.b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("column %d: %q is not an integer", i, v.b)
	}
	return x, nil
}

func (v value) float(i int) (float64, error) {
	switch v.kind {
	case 'i':
		return float64(v.i), nil
	case 'f':
		return v.f, nil
	}
	x, err := strconv.ParseFloat(bytesString(v.b), 64)
	if err != nil {
		return 0, fmt.Errorf("column %d: %q is not a number", i, v.b)
	}
	return x, nil
}

// append writes v as text.
func (v value) append(b []byte) []byte {
	switch v.kind {
	case 'i':
		return strconv.AppendInt(b, v.i, 10)
	case 'f':
		return strconv.AppendFloat(b, v.f, 'g', -1, 64)
	}
	return append(b, v.b...)
}
