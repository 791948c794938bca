package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// SQL text sessions (workload.SQLConn) run SQL a workload renders itself
// (TPC-H) on one pinned connection of the pool, so that session PRAGMAs
// (case_sensitive_like) stick. Transactions go as a simple-protocol
// script session's do (script.go): the text's BEGIN takes the writer
// queue and becomes BEGIN IMMEDIATE, so a writing transaction never meets
// SQLITE_BUSY half-way and a second writer waits for the first; a write
// outside a transaction queues for its one statement; reads never wait
// (WAL).

var (
	_ db.SQLDB         = (*DB)(nil)
	_ workload.SQLConn = (*sqlConn)(nil)
)

// Dialect is "sqlite".
func (d *DB) Dialect() string { return "sqlite" }

// ConnectSQL opens a SQL text session on its own connection of the pool,
// tuned like every other (the URL's PRAGMAs).
func (d *DB) ConnectSQL(ctx context.Context) (workload.SQLConn, error) {
	sc, err := d.pool.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: connect: %w", err)
	}
	return &sqlConn{
		SQLOnly: db.SQLOnly{DB: "sqlite"},
		row:     db.TextValues{Time: appendDate},
		s: &scriptConn{
			ScriptOnly: db.ScriptOnly{DB: "sqlite", Proto: workload.ProtoSimple},
			d:          d,
			c:          sc,
			stmts:      map[int]*sql.Stmt{},
		},
	}, nil
}

// sqlConn is one SQL text session: a simple-protocol script session for
// the statements' transaction handling, and buffers for the rows' text.
// Not safe for concurrent use.
type sqlConn struct {
	db.SQLOnly // Mode, and the named-statement methods refused
	s          *scriptConn
	row        db.TextValues
}

// ExecSQL runs one statement; its rows, if any, are stepped through unread.
func (c *sqlConn) ExecSQL(ctx context.Context, text string) error {
	if err := ctx.Err(); err != nil { // mattn may not notice by itself
		return c.fail(ctx, "exec", text, err)
	}
	if err := c.s.statement(ctx, &workload.SQLQuery{Text: text}, text, 0, nil); err != nil {
		var se *scriptError
		if errors.As(err, &se) {
			err = se.Err
		}
		return c.fail(ctx, "exec", text, err)
	}
	return nil
}

// QuerySQL runs one statement and calls row with every row's values as
// text (db.TextValues): integers in decimal, reals as strconv's shortest
// 'g' form, text and blobs as they are, dates (which mattn reads into a
// time from a DATE column) as YYYY-MM-DD, nil for NULL.
func (c *sqlConn) QuerySQL(ctx context.Context, text string, row func(vals [][]byte) error) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, c.fail(ctx, "query", text, err)
	}
	switch kind := classifyStatement(text); {
	case kind == stBegin || kind == stCommit || kind == stRollback:
		return 0, c.ExecSQL(ctx, text)
	case kind != stRead && !c.s.inTx:
		if err := c.s.d.lockWriter(ctx); err != nil {
			return 0, c.fail(ctx, "query", text, err)
		}
		defer c.s.d.unlockWriter()
	}
	return db.QueryText(ctx, c.s.c, &c.row, text, row, func(err error) error { return c.fail(ctx, "query", text, err) })
}

// Close ends an open transaction (leaving the writer queue) and returns
// the connection.
func (c *sqlConn) Close(ctx context.Context) error { return c.s.Close(ctx) }

// fail names the operation and the statement's first line, classified
// (ErrNoSchema for a missing table, ErrRetry for SQLITE_BUSY); a
// statement cancelled by ctx matches ctx's error.
func (c *sqlConn) fail(ctx context.Context, op, text string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("interrupted: %w (%w)", cerr, err)
	}
	return &scriptError{db.OpError{DB: "sqlite", Op: op, Stmt: db.FirstLine(strings.TrimSpace(text)), Err: err, Kind: kind(err)}}
}

// appendDate writes what mattn read from a DATE, DATETIME or TIMESTAMP
// column into a time: a date as it was written (YYYY-MM-DD), anything
// else as SQLite stores a time.
func appendDate(b []byte, t time.Time) []byte {
	if h, m, s := t.Clock(); h == 0 && m == 0 && s == 0 && t.Nanosecond() == 0 {
		return t.AppendFormat(b, time.DateOnly)
	}
	return appendTime(b, t)
}
