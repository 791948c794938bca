package mysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"net"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"github.com/go-sql-driver/mysql"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/evloop"
	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/workload"
)

// Server error numbers sledge reacts to.
const (
	erDBAccessDenied  = 1044 // ER_DBACCESS_DENIED_ERROR
	erAccessDenied    = 1045 // ER_ACCESS_DENIED_ERROR
	erBadDB           = 1049 // ER_BAD_DB_ERROR
	erNoSuchTable     = 1146 // ER_NO_SUCH_TABLE
	erLockWaitTimeout = 1205 // ER_LOCK_WAIT_TIMEOUT
	erLockDeadlock    = 1213 // ER_LOCK_DEADLOCK
	erSPDoesNotExist  = 1305 // ER_SP_DOES_NOT_EXIST

	// Raised by sql/tpcc/procedures.sql with SIGNAL … SET MYSQL_ERRNO.
	erItemNotValid          = 5001 // neword: unused item, the 1% rollback (§2.4.2.3)
	erDeliveredConcurrently = 5002 // delivery: another Delivery took the order
)

// Connect opens one virtual user's session on its own connection.
func (d *DB) Connect(ctx context.Context, w string, m workload.Mode) (workload.Conn, error) {
	if err := d.Supports(w, m); err != nil {
		return nil, err
	}
	if err := d.flavor(ctx); err != nil {
		return nil, err
	}
	text, err := d.statements(w)
	if err != nil {
		return nil, err
	}
	if (m == workload.ModeProcedure || m == workload.ModePrepared) && binUsable(d.cfg) == "" && !d.binRefused.Load() {
		// sledge's own connection and binary protocol (binconn.go); the
		// driver's when the server wants what it does not speak.
		if m == workload.ModeProcedure {
			if err := d.checkProcedures(ctx, d.pool, w, text); err != nil {
				return nil, err
			}
		}
		bc, err := d.connectBin(ctx, w, m, text)
		if err == nil {
			return bc, nil
		}
		if !errors.Is(err, errUnsupported) {
			return nil, err
		}
		d.binRefused.Store(true)
	}
	sc, own, wire, dialed, err := d.sessionConn(ctx, m == workload.ModePipeline) // wire.go
	if err != nil {
		return nil, d.connErr(err)
	}
	c := &conn{d: d, c: sc, mode: m, w: w, own: own, wire: wire, dialed: dialed,
		ns: db.NamedStmts{Driver: "mysql", Workload: w, Text: text, Style: db.Question}}
	if m == workload.ModePrepared || m == workload.ModeBatched {
		c.ns.Prepared = make(map[string]*sql.Stmt, len(text))
	}
	if m == workload.ModeBatched {
		// Only batched statements have repeated groups; other modes skip
		// the lookup.
		if c.ns.Rep, err = d.repeated.Get("mysql", w, text, db.Question); err != nil {
			_ = c.Close(ctx)
			return nil, err
		}
	}
	if _, err := sc.ExecContext(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL "+isolations[d.cfg.isolation]); err != nil {
		_ = c.Close(ctx)
		return nil, fmt.Errorf("mysql: set isolation: %w", d.connErr(err))
	}
	if m == workload.ModeBlock {
		if err := c.startBlocks(ctx); err != nil {
			_ = c.Close(ctx)
			return nil, err
		}
	}
	if m == workload.ModeProcedure {
		if err := c.d.checkProcedures(ctx, c.c, c.w, c.ns.Text); err != nil {
			_ = c.Close(ctx)
			return nil, err
		}
	}
	if m == workload.ModePipeline {
		return &pipeConn{conn: c}, nil // pipeline.go
	}
	return c, nil
}

// callName finds the routine a "<tx>.call" statement calls.
var callName = regexp.MustCompile(`(?i)^\s*CALL\s+([A-Za-z0-9_]+)`)

// rowQuerier is a session or the pool.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// checkProcedures fails with one line when the schema is built but its
// procedures are missing (dropped by hand, or a build stopped before them),
// rather than at the first CALL. Without a schema it says nothing: the
// workload reports that itself.
func (d *DB) checkProcedures(ctx context.Context, q rowQuerier, w string, text map[string]string) error {
	if _, ok := d.procsOK.Load(w); ok {
		return nil
	}
	var names []string
	for name, text := range text {
		if strings.HasSuffix(name, ".call") {
			if m := callName.FindStringSubmatch(text); m != nil {
				names = append(names, strings.ToLower(m[1]))
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	var n int
	sq := "SELECT COUNT(*) FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_type = 'PROCEDURE' AND LOWER(routine_name) IN ('" +
		strings.Join(names, "', '") + "')"
	if err := q.QueryRowContext(ctx, sq).Scan(&n); err != nil {
		return fmt.Errorf("mysql: look for the %s procedures: %w", w, d.connErr(err))
	}
	if n == len(names) {
		d.procsOK.Store(w, true)
		return nil
	}
	// Is the schema built? The workload's "schema.built" statement, or for
	// workloads without one (tpcc) the rows of sledge_meta, which its
	// build loads last.
	built, ok := text["schema.built"]
	if !ok {
		built = "SELECT COUNT(*) FROM sledge_meta"
	}
	var rows int
	err := q.QueryRowContext(ctx, built).Scan(&rows)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == erNoSuchTable {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mysql: look for the %s schema: %w", w, d.connErr(err))
	}
	if rows == 0 {
		return nil // an unfinished build: build starts over, run says so
	}
	return d.missingProcedures(w)
}

func (d *DB) missingProcedures(w string) error {
	return fmt.Errorf("the %s procedures are missing in %s: run `sledge drop` and `sledge build` again", w, d.cfg.drv.DBName)
}

// conn is one session on go-sql-driver/mysql (procedure and prepared
// modes are binConn's unless the URL or the server keeps them here): a
// dedicated connection and, in prepared mode, its statements, prepared on
// first use. In client and procedure modes the driver writes the arguments
// into the statement text (interpolateParams), so every call is one round
// trip of the text protocol.
type conn struct {
	d    *DB
	c    *sql.Conn
	mode workload.Mode
	w    string
	ns   db.NamedStmts // the workload's statements; Prepared in prepared and batched modes
	inTx bool
	own  *sql.DB             // the session's own pool when counted (wire.go)
	wire *metrics.WireCounts // nil: not counted
	// dialed is own's network connection; with it, the caller's context
	// is watched here (db.Watcher) and the driver gets one it need not
	// watch: go-sql-driver/mysql hands every call's cancellable context to
	// a goroutine of its own, and database/sql starts one for every result
	// set, a scheduler hand-off or two per statement.
	dialed *dialedConn
	wt     db.Watcher
	blk    *blockConn // block mode's blocks (block.go); nil in other modes
}

// begin starts a driver call under ctx and returns the context to give
// the driver; end must follow.
func (c *conn) begin(ctx context.Context) (context.Context, error) {
	if c.dialed == nil {
		return ctx, nil
	}
	nc := c.dialed.get()
	if nc == nil {
		return ctx, nil
	}
	evloop.Bind(ctx, nc) // io=loop: wait on the calling virtual user's loop
	if err := c.wt.Begin(ctx, nc); err != nil {
		return nil, err
	}
	return context.Background(), nil
}

func (c *conn) end() {
	if c.dialed != nil {
		c.wt.End()
	}
}

// interrupted says so when the watched context's cancellation caused err.
func (c *conn) interrupted(err error) error {
	if werr := c.wt.Interrupted(); werr != nil && err != nil && !errors.Is(err, werr) {
		return fmt.Errorf("interrupted: %w (%w)", werr, err)
	}
	return err
}

func (c *conn) Mode() workload.Mode { return c.mode }

// stmt returns the prepared statement name for nargs arguments, preparing
// it on first use (db.NamedStmts).
func (c *conn) stmt(ctx context.Context, name string, nargs int) (*sql.Stmt, error) {
	return c.ns.Stmt(ctx, c.c, name, nargs, c.wrap)
}

func (c *conn) Exec(ctx context.Context, name string, args ...any) (int64, error) {
	ctx, err := c.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer c.end()
	var res sql.Result
	if c.ns.Prepared != nil {
		var st *sql.Stmt
		if st, err = c.stmt(ctx, name, len(args)); err != nil {
			return 0, err
		}
		res, err = st.ExecContext(ctx, args...)
	} else {
		text, ok := c.ns.Text[name]
		if !ok {
			return 0, c.ns.Unknown(name)
		}
		res, err = c.c.ExecContext(ctx, text, args...)
	}
	if err != nil {
		return 0, c.wrap("exec", name, c.interrupted(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, c.wrap("exec", name, err)
	}
	return n, nil
}

func (c *conn) QueryRow(ctx context.Context, name string, args ...any) workload.Row {
	if c.blk != nil {
		if k := c.blk.blocks[name]; k != nil {
			return c.blockRow(ctx, name, k, args)
		}
	}
	ctx, err := c.begin(ctx)
	if err != nil {
		return &row{err: err}
	}
	// The row is read in Scan, which ends the call.
	if c.ns.Prepared != nil {
		st, err := c.stmt(ctx, name, len(args))
		if err != nil {
			c.end()
			return &row{err: err}
		}
		return &row{r: st.QueryRowContext(ctx, args...), name: name, c: c, open: true}
	}
	text, ok := c.ns.Text[name]
	if !ok {
		c.end()
		return &row{err: c.ns.Unknown(name)}
	}
	return &row{r: c.c.QueryRowContext(ctx, text, args...), name: name, c: c, open: true}
}

func (c *conn) Query(ctx context.Context, name string, args ...any) (workload.Rows, error) {
	ctx, err := c.begin(ctx)
	if err != nil {
		return nil, err
	}
	var rs *sql.Rows
	if c.ns.Prepared != nil {
		var st *sql.Stmt
		if st, err = c.stmt(ctx, name, len(args)); err != nil {
			c.end()
			return nil, err
		}
		rs, err = st.QueryContext(ctx, args...)
	} else {
		text, ok := c.ns.Text[name]
		if !ok {
			c.end()
			return nil, c.ns.Unknown(name)
		}
		rs, err = c.c.QueryContext(ctx, text, args...)
	}
	if err != nil {
		c.end()
		return nil, c.wrap("query", name, c.interrupted(err))
	}
	return &rows{rs: rs, name: name, c: c, open: true}, nil
}

// InTx runs fn between BEGIN and COMMIT on the session's connection (no
// database/sql Tx: the connection is pinned already). Readers start a READ
// ONLY transaction, which InnoDB runs without a transaction id.
func (c *conn) InTx(ctx context.Context, opts workload.TxOptions, fn func(ctx context.Context) error) error {
	if c.inTx {
		return errors.New("mysql: InTx called inside a transaction")
	}
	begin := "BEGIN"
	if opts.ReadOnly {
		begin = "START TRANSACTION READ ONLY"
	}
	if err := c.simple(ctx, begin); err != nil {
		return c.wrap("begin", "", err)
	}
	c.inTx = true
	defer func() { c.inTx = false }()
	if err := fn(ctx); err != nil {
		return c.rollback(ctx, err)
	}
	if err := c.simple(ctx, "COMMIT"); err != nil {
		return c.rollback(ctx, c.wrap("commit", "", err))
	}
	return nil
}

// simple sends a statement without arguments, watched like the others.
func (c *conn) simple(ctx context.Context, q string) error {
	dctx, err := c.begin(ctx)
	if err != nil {
		return err
	}
	defer c.end()
	_, err = c.c.ExecContext(dctx, q)
	return c.interrupted(err)
}

// rollback ends the transaction after err and returns err. It runs without
// ctx's cancellation: a cancelled run must still release its locks. A
// connection the driver gave up on needs none: the server rolls back when
// it goes away.
func (c *conn) rollback(ctx context.Context, err error) error {
	_, rerr := c.c.ExecContext(context.Background(), "ROLLBACK") // unwatched: it must run
	if rerr != nil && !errors.Is(rerr, sqldriver.ErrBadConn) && !errors.Is(rerr, mysql.ErrInvalidConn) && !errors.Is(rerr, sql.ErrConnDone) {
		return fmt.Errorf("%w (and rollback failed: %w)", err, classify(rerr))
	}
	return err
}

// Close closes the session's statements and returns its connection.
func (c *conn) Close(ctx context.Context) error {
	var errs []error
	for _, st := range c.ns.Prepared {
		errs = append(errs, st.Close())
	}
	c.ns.Prepared = nil
	c.wt.Close()
	errs = append(errs, c.c.Close())
	if c.own != nil {
		errs = append(errs, c.own.Close())
	}
	return errors.Join(errs...)
}

type row struct {
	r    *sql.Row
	name string
	c    *conn
	err  error
	open bool // the call begun in QueryRow, ended by Scan
}

func (r *row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	err := r.r.Scan(dest...)
	if r.open {
		r.open = false
		r.c.end()
	}
	if err != nil {
		return r.c.wrap("query", r.name, r.c.interrupted(err))
	}
	normalize(dest)
	return nil
}

type rows struct {
	rs   *sql.Rows
	name string
	c    *conn
	open bool // the call begun in Query, ended when the rows are done
}

func (r *rows) Next() bool {
	if r.rs.Next() {
		return true
	}
	r.done()
	return false
}

func (r *rows) done() {
	if r.open {
		r.open = false
		r.c.end()
	}
}

func (r *rows) Scan(dest ...any) error {
	if err := r.rs.Scan(dest...); err != nil {
		return r.c.wrap("query", r.name, err)
	}
	normalize(dest)
	return nil
}

func (r *rows) Err() error {
	if err := r.rs.Err(); err != nil {
		return r.c.wrap("query", r.name, r.c.interrupted(err))
	}
	return nil
}

func (r *rows) Close() error {
	err := r.rs.Close()
	r.done()
	return err
}

// normalize gives *any targets text instead of the driver's []byte (dates
// and decimals arrive as text with parseTime off).
func normalize(dest []any) {
	for _, d := range dest {
		if p, ok := d.(*any); ok {
			if b, ok := (*p).([]byte); ok {
				*p = string(b)
			}
		}
	}
}

// wrap names the operation and classifies err. Errors that are about the
// connection or the schema rather than the statement become one line that
// says what to do.
func (c *conn) wrap(op, stmt string, err error) error { return c.d.wrapErr(c.w, op, stmt, err) }

// wrapErr is wrap for a session of workload w.
func (d *DB) wrapErr(w, op, stmt string, err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == erSPDoesNotExist {
		return d.missingProcedures(w)
	}
	if isNetErr(err) && !lostConnection(err) { // connlost.go
		return d.connErr(err)
	}
	return &db.OpError{DB: "mysql", Op: op, Stmt: stmt, Err: err, Kind: kind(err)}
}

// kind is the workload sentinel for a server error, or nil.
func kind(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return workload.ErrNoRows
	}
	if lostConnection(err) { // connlost.go
		return workload.ErrConnLost
	}
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return nil
	}
	switch me.Number {
	case erLockDeadlock, erLockWaitTimeout, erDeliveredConcurrently:
		return workload.ErrRetry
	case erNoSuchTable:
		return workload.ErrNoSchema
	case erItemNotValid:
		return workload.ErrUserAbort
	}
	return nil
}

// isNetErr reports whether err is about reaching the server.
func isNetErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}

// connErr turns errors of reaching or logging in to the server into one
// line that says what is wrong, without the password; other errors are
// classified and prefixed.
func (d *DB) connErr(err error) error {
	where, user, dbName := d.cfg.where, d.cfg.drv.User, d.cfg.drv.DBName
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case erAccessDenied:
			return fmt.Errorf("MariaDB/MySQL at %s refused user %s: wrong password or unknown user (%s)", where, user, me.Message)
		case erDBAccessDenied:
			return fmt.Errorf("user %s has no access to database %s at %s: GRANT it as an administrator", user, dbName, where)
		case erBadDB:
			return fmt.Errorf("database %s does not exist at %s: run `sledge build` to create it: %w", dbName, where, workload.ErrNoSchema)
		}
		return fmt.Errorf("mysql: %w", classify(err))
	}
	var ne net.Error
	if errors.As(err, &ne) {
		why := err.Error()
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			why = "connection refused"
		case errors.Is(err, syscall.ENOENT):
			why = "no socket file there"
		case errors.Is(err, syscall.EACCES):
			why = "permission denied"
		case ne.Timeout():
			why = fmt.Sprintf("no answer within %s", d.cfg.drv.Timeout)
		default:
			var oe *net.OpError
			if errors.As(err, &oe) && oe.Err != nil {
				why = oe.Err.Error()
			}
		}
		return fmt.Errorf("cannot reach MariaDB/MySQL at %s: %s", where, why)
	}
	return fmt.Errorf("mysql: %w", classify(err))
}

// FailClass is err's pgbench failure class (db.FailClasser): a deadlock
// (1213, SQLSTATE 40001 though it is) is a deadlock; the snapshot-isolation
// conflict (1020) and any other SQLSTATE 40001 a serialization failure. A
// lock wait timeout (1205) is neither: pgbench retries and classifies only
// those two.
func (*DB) FailClass(err error) workload.FailClass {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch {
		case me.Number == erLockDeadlock:
			return workload.FailDeadlock
		case me.Number == erCheckRead || string(me.SQLState[:]) == "40001":
			return workload.FailSerialization
		}
	}
	return workload.FailOther
}

// classify adds the workload sentinel err matches, if any, keeping its
// message.
func classify(err error) error { return db.Classify(err, kind(err)) }
