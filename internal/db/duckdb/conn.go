//go:build cgo

package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
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
		return nil, fmt.Errorf("duckdb: connect: %w", err)
	}
	c := &conn{c: sc, mode: m, ns: db.NamedStmts{Driver: "duckdb", Workload: w, Text: text, Style: db.Dollar}}
	if m == workload.ModePrepared || m == workload.ModeBatched {
		c.ns.Prepared = make(map[string]*sql.Stmt, len(text))
	}
	if m == workload.ModeBatched {
		// Only batched statements have repeated groups; other modes skip
		// the lookup.
		if c.ns.Rep, err = d.repeated.Get("duckdb", w, text, db.Dollar); err != nil {
			_ = sc.Close()
			return nil, err
		}
	}
	return c, nil
}

// conn is one session: a dedicated connection and, in prepared and
// batched modes, its statements, prepared on first use.
type conn struct {
	c    *sql.Conn
	mode workload.Mode
	ns   db.NamedStmts // the workload's statements, prepared on first use in prepared and batched modes
	inTx bool
}

func (c *conn) Mode() workload.Mode { return c.mode }

func (c *conn) stmt(ctx context.Context, name string, nargs int) (*sql.Stmt, error) {
	return c.ns.Stmt(ctx, c.c, name, nargs, wrap)
}

func (c *conn) literal(name string, args []any) (string, error) { return c.ns.Literal(name, args) }

func (c *conn) Exec(ctx context.Context, name string, args ...any) (int64, error) {
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
	rs, err := c.Query(ctx, name, args...)
	if err != nil {
		return &row{err: err}
	}
	return &row{rs: rs.(*rows), name: name}
}

func (c *conn) Query(ctx context.Context, name string, args ...any) (workload.Rows, error) {
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

// InTx runs fn in a transaction. DuckDB's concurrency is optimistic: two
// transactions that write the same row conflict, and the second to write
// (or to commit) fails; that failure is workload.ErrRetry, so the
// transaction is retried or counted as a failure, as the run decides.
func (c *conn) InTx(ctx context.Context, opts workload.TxOptions, fn func(ctx context.Context) error) error {
	if c.inTx {
		return errors.New("duckdb: InTx called inside a transaction")
	}
	if _, err := c.c.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return wrap("begin", "", err)
	}
	c.inTx = true
	defer func() { c.inTx = false }()
	if err := fn(ctx); err != nil {
		return c.rollback(ctx, err)
	}
	if err := ctx.Err(); err != nil {
		return c.rollback(ctx, wrap("commit", "", err))
	}
	if _, err := c.c.ExecContext(ctx, "COMMIT"); err != nil {
		return c.rollback(ctx, wrap("commit", "", err))
	}
	return nil
}

// rollback ends the transaction after err and returns err. It runs without
// ctx's cancellation: a cancelled run must still end its transaction.
func (c *conn) rollback(ctx context.Context, err error) error {
	_, rerr := c.c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	if rerr != nil && !strings.Contains(rerr.Error(), "no transaction is active") {
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
	errs = append(errs, c.c.Close())
	return errors.Join(errs...)
}

// row is a single-row result: the first row of a query, the rest dropped.
type row struct {
	rs   *rows
	name string
	err  error
}

func (r *row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rs.Close()
	if !r.rs.Next() {
		if err := r.rs.Err(); err != nil {
			return err
		}
		return wrap("query", r.name, sql.ErrNoRows)
	}
	if err := r.rs.Scan(dest...); err != nil {
		return err
	}
	return r.rs.Close()
}

type rows struct {
	rs   *sql.Rows
	name string
	buf  [16]any
	vals [16]value
}

func (r *rows) Next() bool { return r.rs.Next() }

// Scan reads the row through value, which gives DuckDB's DECIMAL, HUGEINT
// and narrow integers to the Go types workloads scan into.
func (r *rows) Scan(dest ...any) error {
	targets := r.buf[:0]
	for i, d := range dest {
		if i < len(r.vals) {
			r.vals[i] = value{dest: d}
			targets = append(targets, &r.vals[i])
		} else {
			targets = append(targets, &value{dest: d})
		}
	}
	if err := r.rs.Scan(targets...); err != nil {
		return wrap("query", r.name, err)
	}
	return nil
}

func (r *rows) Err() error {
	if err := r.rs.Err(); err != nil {
		return wrap("query", r.name, err)
	}
	return nil
}

func (r *rows) Close() error { return r.rs.Close() }

// wrap names the operation and classifies err. The message is built only
// when read, so an expected outcome (no rows) costs one small allocation.
func wrap(op, stmt string, err error) error {
	return &db.OpError{DB: "duckdb", Op: op, Stmt: stmt, Err: err, Kind: kind(err)}
}

// kind is the workload sentinel for a DuckDB error, or nil: a write-write
// conflict of the optimistic concurrency control is ErrRetry, a missing
// table ErrNoSchema.
func kind(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return workload.ErrNoRows
	}
	if conflict(err) {
		return workload.ErrRetry
	}
	msg := err.Error()
	if strings.Contains(msg, "Catalog Error") && strings.Contains(msg, "does not exist") {
		return workload.ErrNoSchema
	}
	return nil
}

// classify adds the workload sentinel err matches, if any, keeping its
// message.
func classify(err error) error { return db.Classify(err, kind(err)) }

// FailClass sorts a failed transaction's error into pgbench's classes
// (db.FailClasser): a write-write conflict of DuckDB's optimistic
// concurrency is a serialization failure, as PostgreSQL's 40001 is.
func (d *DB) FailClass(err error) workload.FailClass {
	if conflict(err) {
		return workload.FailSerialization
	}
	return workload.FailOther
}

var _ db.FailClasser = (*DB)(nil)
