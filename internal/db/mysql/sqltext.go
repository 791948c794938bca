package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/workload"
)

// SQL text sessions (workload.SQLConn) run SQL a workload renders itself
// (TPC-H) on one connection of their own, every statement one COM_QUERY of
// the text protocol: no placeholders, so the driver neither prepares nor
// interpolates. BEGIN, COMMIT and ROLLBACK as text work as on any session.

var (
	_ db.SQLDB           = (*DB)(nil)
	_ workload.SQLConn   = (*sqlConn)(nil)
	_ metrics.Wired      = (*sqlConn)(nil)
	_ workload.Breakable = (*sqlConn)(nil)
	_ db.ServerSessioner = (*sqlConn)(nil)
)

// killTimeout bounds the KILL that stops a cancelled statement's work on
// the server.
const killTimeout = 5 * time.Second

// Dialect is "mysql" (MariaDB and MySQL).
func (d *DB) Dialect() string { return "mysql" }

// ConnectSQL opens a SQL text session on a connection of its own, dialed
// like ConnectScript's (same URL options, TLS, timeouts, isolation,
// messages and wire counting), one statement per query.
func (d *DB) ConnectSQL(ctx context.Context) (workload.SQLConn, error) {
	wire := metrics.WireFrom(ctx)
	own, sc, err := d.ownConn(ctx, wire, func(cfg *mysql.Config) {
		cfg.MultiStatements = false
		cfg.InterpolateParams = false
		cfg.ParseTime = false // dates as the server writes them
	})
	if err != nil {
		return nil, err
	}
	c := &sqlConn{SQLOnly: db.SQLOnly{DB: "mysql"}, d: d, c: sc, own: own, wire: wire}
	if _, err := sc.ExecContext(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL "+isolations[d.cfg.isolation]); err != nil {
		_ = c.Close(ctx)
		return nil, fmt.Errorf("mysql: set isolation: %w", d.connErr(err))
	}
	if c.id, err = sessionID(ctx, sc); err != nil { // server.go
		_ = c.Close(ctx)
		return nil, err
	}
	return c, nil
}

// sqlConn is one SQL text session. Not safe for concurrent use.
type sqlConn struct {
	db.SQLOnly // Mode, and the named-statement methods refused
	d          *DB
	c          *sql.Conn
	own        *sql.DB
	wire       *metrics.WireCounts // nil: not counted
	id         int64               // the server's connection id, for KILL
	row        db.TextValues
}

func (c *sqlConn) Wire() *metrics.WireCounts { return c.wire }

// Broken reports whether the session's connection is unusable (connlost.go):
// after a cancelled statement, whose connection the driver closes.
func (c *sqlConn) Broken() bool { return !sessionUsable(c.c) }

// ServerSession is the session's connection id.
func (c *sqlConn) ServerSession(context.Context) (int64, error) { return c.id, nil }

// ExecSQL runs one statement and reads its result, if any, unconverted.
func (c *sqlConn) ExecSQL(ctx context.Context, text string) error {
	// As a query: rows are drained by the driver, and an OK packet gives
	// no rows.
	rs, err := c.c.QueryContext(ctx, text)
	if err == nil {
		err = drain(rs) // script.go
	}
	if err != nil {
		return c.fail(ctx, "exec", text, err)
	}
	return nil
}

// QuerySQL runs one statement and calls row with every row's values as
// the text protocol carries them (db.TextValues: the driver's bytes;
// integers and floats, which the driver parses, written back in decimal
// and in strconv's shortest form), nil for NULL. After an error from row,
// closing the result reads and drops its remaining rows.
func (c *sqlConn) QuerySQL(ctx context.Context, text string, row func(vals [][]byte) error) (int64, error) {
	return db.QueryText(ctx, c.c, &c.row, text, row, func(err error) error { return c.fail(ctx, "query", text, err) })
}

// Close closes the connection (the server rolls back an open
// transaction).
func (c *sqlConn) Close(context.Context) error {
	return errors.Join(c.c.Close(), c.own.Close())
}

// fail names the operation and the statement's first line, classified
// like a script command's (ErrNoSchema for a missing table, ErrConnLost,
// ErrRetry for a deadlock). A statement cancelled by ctx matches ctx's
// error; the driver has closed the connection under it, and the server,
// which would run it to its end, is told to KILL it.
func (c *sqlConn) fail(ctx context.Context, op, text string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		c.kill(ctx)
		if !errors.Is(err, cerr) {
			err = fmt.Errorf("interrupted: %w (%w)", cerr, err)
		}
	} else if isNetErr(err) && !lostConnection(err) { // connlost.go
		return c.d.connErr(err)
	}
	return &scriptError{db.OpError{DB: "mysql", Op: op, Stmt: db.FirstLine(strings.TrimSpace(text)), Err: err, Kind: scriptKind(err)}}
}

// kill ends the session's connection on the server, once the driver has
// given up on it, through a connection of the shared pool.
func (c *sqlConn) kill(ctx context.Context) {
	if c.id == 0 || sessionUsable(c.c) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killTimeout)
	defer cancel()
	_, _ = c.d.pool.ExecContext(ctx, "KILL "+strconv.FormatInt(c.id, 10))
	c.id = 0
}
