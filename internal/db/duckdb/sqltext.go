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

// SQL text sessions (workload.SQLConn) run SQL a workload renders itself
// (TPC-H, CH-benCHmark's analytic queries) on one pinned connection of the
// pool; the text's BEGIN, COMMIT and ROLLBACK are DuckDB's own.

var (
	_ db.SQLDB         = (*DB)(nil)
	_ workload.SQLConn = (*sqlConn)(nil)
)

// Dialect is "duckdb".
func (d *DB) Dialect() string { return "duckdb" }

// ConnectSQL opens a SQL text session on its own connection of the pool.
func (d *DB) ConnectSQL(ctx context.Context) (workload.SQLConn, error) {
	sc, err := d.pool.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("duckdb: connect: %w", err)
	}
	return &sqlConn{
		SQLOnly: db.SQLOnly{DB: "duckdb"},
		c:       sc,
		row:     db.TextValues{Time: appendTime, Other: appendOther},
	}, nil
}

// sqlConn is one SQL text session. Not safe for concurrent use.
type sqlConn struct {
	db.SQLOnly // Mode, and the named-statement methods refused
	c          *sql.Conn
	row        db.TextValues
	inTx       bool
}

// ExecSQL runs one statement; its rows, if any, are dropped.
func (c *sqlConn) ExecSQL(ctx context.Context, text string) error {
	if _, err := c.c.ExecContext(ctx, text); err != nil {
		return c.fail(ctx, "exec", text, err)
	}
	switch strings.ToUpper(firstWord(text)) {
	case "BEGIN", "START":
		c.inTx = true
	case "COMMIT", "ROLLBACK", "END", "ABORT":
		c.inTx = false
	}
	return nil
}

// QuerySQL runs one statement and calls row with every row's values as
// text (db.TextValues): integers in decimal, DECIMAL as its digits
// (trailing zeros of the fraction left out: 12.50 is 12.5), doubles as
// strconv's shortest 'g' form, dates as YYYY-MM-DD, timestamps as
// YYYY-MM-DD HH:MM:SS[.ffffff], nil for NULL.
func (c *sqlConn) QuerySQL(ctx context.Context, text string, row func(vals [][]byte) error) (int64, error) {
	return db.QueryText(ctx, c.c, &c.row, text, row, func(err error) error { return c.fail(ctx, "query", text, err) })
}

// Close ends an open transaction and returns the connection.
func (c *sqlConn) Close(ctx context.Context) error {
	var err error
	if c.inTx {
		_, err = c.c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		c.inTx = false
	}
	return errors.Join(err, c.c.Close())
}

// fail names the operation and the statement's first line, classified
// (ErrNoSchema for a missing table, ErrRetry for a conflict); a statement
// cancelled by ctx matches ctx's error.
func (c *sqlConn) fail(ctx context.Context, op, text string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("interrupted: %w (%w)", cerr, err)
	}
	return &db.OpError{DB: "duckdb", Op: op, Stmt: db.FirstLine(strings.TrimSpace(text)), Err: err, Kind: kind(err)}
}

// firstWord is the statement's first keyword.
func firstWord(text string) string {
	text = strings.TrimSpace(text)
	if i := strings.IndexAny(text, " \t\r\n;"); i >= 0 {
		return text[:i]
	}
	return text
}
