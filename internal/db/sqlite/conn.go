package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// SQLite primary result codes that mean "another connection holds a lock".
const (
	codeBusy   = 5 // SQLITE_BUSY
	codeLocked = 6 // SQLITE_LOCKED
)

// Connect opens one virtual user's session on its own connection.
func (d *DB) Connect(ctx context.Context, w string, m workload.Mode) (workload.Conn, error) {
	if err := d.Supports(w, m); err != nil {
		return nil, err
	}
	text, err := d.statements(w)
	if err != nil {
		return nil, err
	}
	sc, err := d.pool.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: connect: %w", err)
	}
	c := &conn{d: d, c: sc, mode: m, ns: db.NamedStmts{Driver: "sqlite", Workload: w, Text: text, Style: db.QuestionNumbered}}
	if m == workload.ModePrepared || m == workload.ModeBatched {
		c.ns.Prepared = make(map[string]*sql.Stmt, len(text))
	}
	if m == workload.ModeBatched {
		// Only batched statements have repeated groups; other modes skip
		// the lookup.
		if c.ns.Rep, err = d.repeated.Get("sqlite", w, text, db.QuestionNumbered); err != nil {
			_ = sc.Close()
			return nil, err
		}
	}
	return c, nil
}

// conn is one session: a dedicated connection and, in prepared and batched
// modes, its statements, prepared on first use. Every call checks ctx first, so a
// cancelled context fails the same way under both Go drivers (mattn may not
// notice it by itself).
type conn struct {
	d    *DB
	c    *sql.Conn
	mode workload.Mode
	ns   db.NamedStmts // the workload's statements, prepared on first use in prepared and batched modes
	// Transaction control is prepared in both modes: it is the same in
	// both, so the modes differ only by the workload's statements.
	begin, beginRO, commit *sql.Stmt
	inTx                   bool
}

func (c *conn) Mode() workload.Mode { return c.mode }

// timeArgs turns time.Time arguments into the text Load stores, so that
// both modes and both Go drivers store the same thing (modernc would bind
// time.String(), Interpolate writes microseconds).
func timeArgs(args []any) []any {
	for i, a := range args {
		if _, ok := a.(time.Time); !ok {
			continue
		}
		out := slices.Clone(args) // never write to the caller's slice
		for j := i; j < len(out); j++ {
			if t, ok := out[j].(time.Time); ok {
				out[j] = t.UTC().Format(loadTimeLayout)
			}
		}
		return out
	}
	return args
}

func (c *conn) stmt(ctx context.Context, name string, nargs int) (*sql.Stmt, error) {
	return c.ns.Stmt(ctx, c.c, name, nargs, wrap)
}

func (c *conn) literal(name string, args []any) (string, error) { return c.ns.Literal(name, args) }

func (c *conn) Exec(ctx context.Context, name string, args ...any) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, wrap("exec", name, err)
	}
	args = timeArgs(args)
	var (
		res sql.Result
		err error
	)
	if c.ns.Prepared != nil {
		var st *sql.Stmt
		if st, err = c.stmt(ctx, name, len(args)); err != nil {
			return 0, err
		}
		res, err = st.ExecContext(ctx, args...)
	} else {
		var q string
		if q, err = c.literal(name, args); err != nil {
			return 0, err
		}
		res, err = c.c.ExecContext(ctx, q)
	}
	if err != nil {
		return 0, wrap("exec", name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, wrap("exec", name, err)
	}
	return n, nil
}

func (c *conn) QueryRow(ctx context.Context, name string, args ...any) workload.Row {
	if err := ctx.Err(); err != nil {
		return &row{err: wrap("query", name, err)}
	}
	args = timeArgs(args)
	if c.ns.Prepared != nil {
		st, err := c.stmt(ctx, name, len(args))
		if err != nil {
			return &row{err: err}
		}
		return &row{r: st.QueryRowContext(ctx, args...), name: name}
	}
	q, err := c.literal(name, args)
	if err != nil {
		return &row{err: err}
	}
	return &row{r: c.c.QueryRowContext(ctx, q), name: name}
}

func (c *conn) Query(ctx context.Context, name string, args ...any) (workload.Rows, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrap("query", name, err)
	}
	args = timeArgs(args)
	var (
		rs  *sql.Rows
		err error
	)
	if c.ns.Prepared != nil {
		var st *sql.Stmt
		if st, err = c.stmt(ctx, name, len(args)); err != nil {
			return nil, err
		}
		rs, err = st.QueryContext(ctx, args...)
	} else {
		var q string
		if q, err = c.literal(name, args); err != nil {
			return nil, err
		}
		rs, err = c.c.QueryContext(ctx, q)
	}
	if err != nil {
		return nil, wrap("query", name, err)
	}
	return &rows{rs: rs, name: name}, nil
}

// InTx runs fn in a transaction. Writers start with BEGIN IMMEDIATE, which
// takes SQLite's write lock up front (waiting for it, see DB.writer and
// busy_timeout), so a transaction never fails half-way on a lock upgrade;
// readers start with a deferred BEGIN and never wait.
func (c *conn) InTx(ctx context.Context, opts workload.TxOptions, fn func(ctx context.Context) error) error {
	if c.inTx {
		return errors.New("sqlite: InTx called inside a transaction") // would deadlock on the write lock
	}
	begin, err := c.txStmts(ctx, opts.ReadOnly)
	if err != nil {
		return err
	}
	if !opts.ReadOnly {
		if err := c.d.lockWriter(ctx); err != nil {
			return fmt.Errorf("sqlite: begin: %w", err)
		}
		defer c.d.unlockWriter()
	}
	if _, err := begin.ExecContext(ctx); err != nil {
		return wrap("begin", "", err)
	}
	c.inTx = true
	defer func() { c.inTx = false }()
	if err := fn(ctx); err != nil {
		return c.rollback(ctx, err)
	}
	if err := ctx.Err(); err != nil { // mattn would still commit
		return c.rollback(ctx, wrap("commit", "", err))
	}
	if _, err := c.commit.ExecContext(ctx); err != nil {
		return c.rollback(ctx, wrap("commit", "", err))
	}
	return nil
}

// txStmts prepares BEGIN, BEGIN IMMEDIATE and COMMIT once per session.
func (c *conn) txStmts(ctx context.Context, readOnly bool) (*sql.Stmt, error) {
	if c.commit == nil {
		for _, p := range []struct {
			st   **sql.Stmt
			text string
		}{{&c.begin, "BEGIN IMMEDIATE"}, {&c.beginRO, "BEGIN"}, {&c.commit, "COMMIT"}} {
			st, err := c.c.PrepareContext(ctx, p.text)
			if err != nil {
				return nil, wrap("prepare", p.text, err)
			}
			*p.st = st
		}
	}
	if readOnly {
		return c.beginRO, nil
	}
	return c.begin, nil
}

// rollback ends the transaction after err and returns err. It runs without
// ctx's cancellation: a cancelled run must still release the write lock.
func (c *conn) rollback(ctx context.Context, err error) error {
	_, rerr := c.c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	if rerr != nil && !strings.Contains(rerr.Error(), "no transaction is active") {
		// SQLite may already have rolled back (an interrupted statement);
		// anything else leaves the session unusable, so say it.
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
	for _, st := range []*sql.Stmt{c.begin, c.beginRO, c.commit} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	c.ns.Prepared = nil
	errs = append(errs, c.c.Close())
	return errors.Join(errs...)
}

// row is a single-row result whose Scan maps errors like every call.
type row struct {
	r    *sql.Row
	name string
	err  error
	buf  [8]any // scan targets, without another allocation
}

func (r *row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	if err := r.r.Scan(fixDest(dest, r.buf[:0])...); err != nil {
		return wrap("query", r.name, err)
	}
	normalize(dest)
	return nil
}

type rows struct {
	rs   *sql.Rows
	name string
	buf  [8]any
}

func (r *rows) Next() bool { return r.rs.Next() }

func (r *rows) Scan(dest ...any) error {
	if err := r.rs.Scan(fixDest(dest, r.buf[:0])...); err != nil {
		return wrap("query", r.name, err)
	}
	normalize(dest)
	return nil
}

func (r *rows) Err() error {
	if err := r.rs.Err(); err != nil {
		return wrap("query", r.name, err)
	}
	return nil
}

func (r *rows) Close() error { return r.rs.Close() }

// Both Go drivers turn TEXT of DATE/DATETIME/TIMESTAMP columns into
// time.Time (and mattn INTEGER of BOOLEAN columns into bool), which
// database/sql would give to a *string as RFC 3339. sledge reads back what
// SQLite stores, the same under both drivers: fixDest wraps *string
// targets before a scan and normalize fixes *any targets after it.

// fixDest returns dest with each *string replaced by a textDest, in buf
// when it fits.
func fixDest(dest, buf []any) []any {
	for i, d := range dest {
		if _, ok := d.(*string); ok {
			out := append(buf, dest...)
			for j := i; j < len(out); j++ {
				if p, ok := out[j].(*string); ok {
					out[j] = textDest{p}
				}
			}
			return out
		}
	}
	return dest
}

// textDest scans like database/sql into *string, except for times.
type textDest struct{ p *string }

func (t textDest) Scan(src any) error {
	switch v := src.(type) {
	case string:
		*t.p = v
	case []byte:
		*t.p = string(v)
	case time.Time:
		*t.p = v.UTC().Format(readTimeLayout)
	case int64:
		*t.p = strconv.FormatInt(v, 10)
	case float64:
		*t.p = strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		*t.p = strconv.FormatBool(v)
	case nil:
		return errors.New("converting NULL to string is unsupported")
	default:
		return fmt.Errorf("unsupported type %T for a string", src)
	}
	return nil
}

// normalize gives *any targets text for times and integers for booleans.
func normalize(dest []any) {
	for _, d := range dest {
		p, ok := d.(*any)
		if !ok {
			continue
		}
		switch v := (*p).(type) {
		case time.Time:
			*p = v.UTC().Format(readTimeLayout)
		case bool:
			*p = int64(0)
			if v {
				*p = int64(1)
			}
		}
	}
}

// readTimeLayout gives back a stored "YYYY-MM-DD HH:MM:SS[.fff]" unchanged.
const readTimeLayout = "2006-01-02 15:04:05.999999999"

// wrap names the operation and classifies err. The message is built only
// when read, so an expected outcome (no rows) costs one small allocation.
func wrap(op, stmt string, err error) error {
	return &db.OpError{DB: "sqlite", Op: op, Stmt: stmt, Err: err, Kind: kind(err)}
}

// kind is the workload sentinel for a SQLite error, or nil.
func kind(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return workload.ErrNoRows
	}
	if code, ok := resultCode(err); ok && (code == codeBusy || code == codeLocked) {
		return workload.ErrRetry
	}
	if strings.Contains(err.Error(), "no such table") {
		return workload.ErrNoSchema
	}
	return nil
}

// classify adds the workload sentinel err matches, if any, keeping its
// message.
func classify(err error) error { return db.Classify(err, kind(err)) }
