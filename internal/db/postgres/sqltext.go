package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/workload"
)

// SQL text sessions (workload.SQLConn) run SQL a workload renders itself
// (TPC-H) straight on pgconn: every call one simple-protocol Query message,
// results in text, no pgx type map.

var (
	_ db.SQLDB         = (*DB)(nil)
	_ workload.SQLConn = (*sqlConn)(nil)
	_ metrics.Wired    = (*sqlConn)(nil)
)

// cancelDeadline is how long a cancelled statement has to end by the
// server's cancel request before the connection is closed under it.
const cancelDeadline = 5 * time.Second

// Dialect is "postgres".
func (d *DB) Dialect() string { return "postgres" }

// ConnectSQL opens a SQL text session on its own connection, dialed like
// Connect's (same URL options, TLS, timeouts, messages, wire counting),
// with DateStyle ISO so that dates come back as YYYY-MM-DD. A cancelled
// context cancels the statement in flight with a cancel request, as psql
// does on ^C, so the server stops working on it and the session stays
// usable; the connection is closed only when the server does not answer
// within cancelDeadline.
func (d *DB) ConnectSQL(ctx context.Context) (workload.SQLConn, error) {
	cfg := d.cfg.Copy()
	cfg.RuntimeParams["DateStyle"] = "ISO, MDY"
	cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: cancelDeadline}
	}
	c, err := d.connect(ctx, cfg, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, err
	}
	return &sqlConn{
		SQLOnly: db.SQLOnly{DB: "postgres"},
		c:       c,
		pc:      c.PgConn(),
		wire:    metrics.WireFrom(ctx),
	}, nil
}

// sqlConn is one SQL text session. Not safe for concurrent use.
type sqlConn struct {
	db.SQLOnly           // Mode, and the named-statement methods refused
	c          *pgx.Conn // owns pc; only used to close it
	pc         *pgconn.PgConn
	wire       *metrics.WireCounts // the dial counted into it; nil: not counted
}

func (c *sqlConn) Wire() *metrics.WireCounts { return c.wire }

// Broken reports a connection pgconn has closed (connlost.go): lost, or
// cancelled without an answer from the server within cancelDeadline.
func (c *sqlConn) Broken() bool { return c.pc.IsClosed() }

// ServerSession is the session's backend PID.
func (c *sqlConn) ServerSession(context.Context) (int64, error) { return int64(c.pc.PID()), nil }

// ExecSQL sends text as one Query message and reads its results unread.
func (c *sqlConn) ExecSQL(ctx context.Context, text string) error {
	if err := c.pc.Exec(ctx, text).Close(); err != nil {
		return c.fail(ctx, "exec", text, err)
	}
	return nil
}

// QuerySQL sends text as one Query message and calls row with the text
// values of every row (pgconn's buffers: nil for NULL, valid until the
// next row). After an error from row the rest of the result is read and
// dropped, so the session stays in step.
func (c *sqlConn) QuerySQL(ctx context.Context, text string, row func(vals [][]byte) error) (int64, error) {
	mrr := c.pc.Exec(ctx, text)
	var n int64
	var rowErr error
	for rowErr == nil && mrr.NextResult() {
		rr := mrr.ResultReader()
		for rr.NextRow() {
			if rowErr = row(rr.Values()); rowErr != nil {
				break
			}
			n++
		}
		if _, err := rr.Close(); err != nil {
			_ = mrr.Close()
			if rowErr != nil {
				return n, rowErr
			}
			return n, c.fail(ctx, "query", text, err)
		}
	}
	if err := mrr.Close(); err != nil && rowErr == nil {
		return n, c.fail(ctx, "query", text, err)
	}
	return n, rowErr
}

// Close closes the connection (the server ends an open transaction).
func (c *sqlConn) Close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return c.c.Close(ctx)
}

// fail names the operation and the statement's first line and classifies
// err like a script command's (ErrNoSchema for an undefined table,
// ErrConnLost, ErrRetry for serialization failures and deadlocks). A
// statement cancelled by ctx says so and matches ctx's error.
func (c *sqlConn) fail(ctx context.Context, op, text string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("interrupted: %w (%w)", cerr, err)
	}
	return &db.OpError{DB: "postgres", Op: op, Stmt: db.FirstLine(strings.TrimSpace(text)), Err: err, Kind: scriptKind(err)}
}
