package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

const (
	// maxVars is SQLite's limit on parameters per statement
	// (SQLITE_MAX_VARIABLE_NUMBER, 32766 since 3.32 in both drivers).
	maxVars = 32766
	// maxRowsPerInsert caps a multi-row INSERT: a few hundred rows already
	// amortise the per-statement cost; more only grows the statement.
	maxRowsPerInsert = 500
	// loadTimeLayout is how a loaded time.Time is stored (UTC): the shape of
	// SQLite's CURRENT_TIMESTAMP, written as text so both drivers store the
	// same thing (left to themselves they format times differently).
	loadTimeLayout = "2006-01-02 15:04:05"
)

// loader is the build's one writing connection. SQLite has a single writer,
// so build workers take turns (DB.writer) and share it, with its prepared
// INSERTs.
type loader struct {
	pool  *sql.DB // one connection, synchronous=OFF
	conn  *sql.Conn
	stmts map[loadKey]*sql.Stmt
	args  []any // reused argument buffer
}

type loadKey struct {
	table string
	rows  int
}

// Load inserts rows into table t in one transaction on the load connection,
// with prepared multi-row INSERTs. Concurrent callers take turns.
func (d *DB) Load(ctx context.Context, t *workload.Table, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	if n := len(t.Columns); n == 0 || n > maxVars {
		return fmt.Errorf("sqlite: load %s: table has %d columns", t.Name, n)
	}
	// Checked here and before each statement: mattn does not always notice
	// a cancelled context by itself.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: load %s: %w", t.Name, err)
	}
	if err := d.lockWriter(ctx); err != nil {
		return fmt.Errorf("sqlite: load %s: %w", t.Name, err)
	}
	defer d.unlockWriter()
	if err := d.loadTx(ctx, t, rows); err != nil {
		return fmt.Errorf("sqlite: load %s: %w", t.Name, classify(err))
	}
	return nil
}

func (d *DB) loadTx(ctx context.Context, t *workload.Table, rows [][]any) error {
	l := &d.load
	if l.conn == nil {
		set := slices.Clone(d.set)
		for i := range set {
			if set[i].name == "synchronous" {
				set[i].value = loadSynchronous
			}
		}
		l.pool = sql.OpenDB(newConnector(d.path, set))
		l.pool.SetMaxOpenConns(1)
		c, err := l.pool.Conn(ctx)
		if err != nil {
			l.pool.Close()
			l.pool = nil
			return err
		}
		l.conn, l.stmts = c, map[loadKey]*sql.Stmt{}
	}
	if _, err := l.conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	err := l.insert(ctx, t, rows)
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		_, err = l.conn.ExecContext(ctx, "COMMIT")
	}
	if err != nil {
		// Without cancel: a cancelled build must still release the lock.
		l.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	return nil
}

// insert sends rows in statements of as many rows as fit, then the rest.
func (l *loader) insert(ctx context.Context, t *workload.Table, rows [][]any) error {
	ncol := len(t.Columns)
	per := min(maxRowsPerInsert, maxVars/ncol)
	defer func() { clear(l.args) }() // do not keep the batch's strings alive
	for len(rows) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(per, len(rows))
		st, err := l.stmt(ctx, t, n)
		if err != nil {
			return err
		}
		args := l.args[:0]
		for _, r := range rows[:n] {
			if len(r) != ncol {
				return fmt.Errorf("row has %d values for %d columns", len(r), ncol)
			}
			for _, v := range r {
				if tv, ok := v.(time.Time); ok {
					v = tv.UTC().Format(loadTimeLayout)
				}
				args = append(args, v)
			}
		}
		l.args = args
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// stmt returns the prepared INSERT of n rows into t.
func (l *loader) stmt(ctx context.Context, t *workload.Table, n int) (*sql.Stmt, error) {
	k := loadKey{t.Name, n}
	if st, ok := l.stmts[k]; ok {
		return st, nil
	}
	st, err := l.conn.PrepareContext(ctx, insertSQL(t.Name, t.Columns, n))
	if err != nil {
		return nil, err
	}
	l.stmts[k] = st
	return st, nil
}

// insertSQL is INSERT INTO t (c1, c2) VALUES (?,?),(?,?)… for n rows.
func insertSQL(table string, cols []string, n int) string {
	return db.InsertSQL(table, cols, n, quoteIdent)
}

// quoteIdent quotes a table or column name as a SQL identifier.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func (l *loader) close() error {
	if l.pool == nil {
		return nil
	}
	var errs []error
	for _, st := range l.stmts {
		errs = append(errs, st.Close())
	}
	errs = append(errs, l.conn.Close(), l.pool.Close())
	l.pool, l.conn, l.stmts = nil, nil, nil
	return errors.Join(errs...)
}
