package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

// SQLOnly is embedded in a workload.SQLConn to provide the workload.Conn
// methods such a session answers by itself: Mode is client (the values
// are literals in the text), and Exec, QueryRow, Query and InTx refuse,
// since the workload's SQL (its BEGIN and COMMIT too) goes through
// ExecSQL and QuerySQL.
type SQLOnly struct {
	DB string // for messages: "mysql", "postgres", "sqlite"
}

// Mode is client: the text carries its values.
func (SQLOnly) Mode() workload.Mode { return workload.ModeClient }

// Exec refuses: named statements are not available in a SQL text session.
func (s SQLOnly) Exec(context.Context, string, ...any) (int64, error) {
	return 0, s.errNamed()
}

// QueryRow refuses: its row's Scan says named statements are not
// available in a SQL text session.
func (s SQLOnly) QueryRow(context.Context, string, ...any) workload.Row {
	return errRow{s.errNamed()}
}

// Query refuses: named statements are not available in a SQL text session.
func (s SQLOnly) Query(context.Context, string, ...any) (workload.Rows, error) {
	return nil, s.errNamed()
}

// InTx refuses: the workload's BEGIN and COMMIT go through ExecSQL.
func (s SQLOnly) InTx(context.Context, workload.TxOptions, func(context.Context) error) error {
	return errors.New(s.DB + ": InTx is not available in a SQL text session: BEGIN and COMMIT go through ExecSQL")
}

func (s SQLOnly) errNamed() error {
	return errors.New(s.DB + ": named statements are not available in a SQL text session")
}

// TextValues scans the rows of a database/sql result as the text of each
// value, into buffers it reuses: no allocation per row beyond the
// driver's. The zero value is ready; set Time before the first Targets.
type TextValues struct {
	// Time writes a time.Time value; nil: such a value is an error.
	Time func(b []byte, t time.Time) []byte
	// Other writes a value of a type of the driver's own (DuckDB's
	// decimals) and reports whether it knew it; nil: none.
	Other func(b []byte, v any) ([]byte, bool)

	cells []textValue
	dest  []any // &cells[i]
	vals  [][]byte
}

// Targets returns n scan targets for the rows of a result.
func (tv *TextValues) Targets(n int) []any {
	if len(tv.cells) < n {
		tv.cells = make([]textValue, n)
		tv.dest = make([]any, n)
		tv.vals = make([][]byte, n)
		for i := range tv.cells {
			tv.cells[i].time = tv.Time
			tv.cells[i].other = tv.Other
			tv.dest[i] = &tv.cells[i]
		}
	}
	tv.vals = tv.vals[:n]
	return tv.dest[:n]
}

// Values returns the row scanned last: each value's text, nil for NULL.
// They are valid until the next Scan (a []byte value is the driver's).
func (tv *TextValues) Values() [][]byte {
	for i := range tv.vals {
		tv.vals[i] = tv.cells[i].v
	}
	return tv.vals
}

// notNull is the value of an empty text or blob: empty, not NULL.
var notNull = []byte{}

// textValue is a sql.Scanner that keeps one value as text: integers in
// decimal, floats in strconv's shortest 'g' form, booleans as true or
// false, text as it is in a buffer of its own, bytes by reference (the
// driver's, valid until the next row), times by time.
type textValue struct {
	time  func(b []byte, t time.Time) []byte
	other func(b []byte, v any) ([]byte, bool)
	buf   []byte
	v     []byte // nil: NULL
}

func (c *textValue) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		c.v = nil
		return nil
	case []byte:
		c.v = v
		if v == nil {
			c.v = notNull
		}
		return nil
	case int64:
		c.buf = strconv.AppendInt(c.buf[:0], v, 10)
	case uint64:
		c.buf = strconv.AppendUint(c.buf[:0], v, 10)
	case float64:
		c.buf = strconv.AppendFloat(c.buf[:0], v, 'g', -1, 64)
	case float32:
		c.buf = strconv.AppendFloat(c.buf[:0], float64(v), 'g', -1, 32)
	case string:
		c.buf = append(c.buf[:0], v...)
	case bool:
		c.buf = strconv.AppendBool(c.buf[:0], v)
	case time.Time:
		if c.time == nil {
			return fmt.Errorf("unsupported value type %T", src)
		}
		c.buf = c.time(c.buf[:0], v)
	default:
		b, ok := []byte(nil), false
		if c.other != nil {
			b, ok = c.other(c.buf[:0], src)
		}
		if !ok {
			return fmt.Errorf("unsupported value type %T", src)
		}
		c.buf = b
	}
	c.v = c.buf
	if c.v == nil {
		c.v = notNull
	}
	return nil
}

// QueryText runs text on a database/sql connection and calls row for
// every row as tv's text values (workload.SQLConn's QuerySQL). Errors of
// the database come back through fail (the session's classification,
// with the operation and the statement); an error of row is returned as
// it is, once the rest of the result was read and dropped.
func QueryText(ctx context.Context, c *sql.Conn, tv *TextValues, text string, row func([][]byte) error, fail func(error) error) (int64, error) {
	rs, err := c.QueryContext(ctx, text)
	if err != nil {
		return 0, fail(err)
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return 0, fail(err)
	}
	dest := tv.Targets(len(cols))
	var n int64
	for rs.Next() {
		if err := rs.Scan(dest...); err != nil {
			return n, fail(err)
		}
		if err := row(tv.Values()); err != nil {
			if cerr := rs.Close(); cerr != nil {
				return n, errors.Join(err, fail(cerr))
			}
			return n, err
		}
		n++
	}
	if err := rs.Err(); err != nil {
		return n, fail(err)
	}
	if err := rs.Close(); err != nil {
		return n, fail(err)
	}
	return n, nil
}
