package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// fast runs a session's named statements on pgconn directly (batched
// mode, and every mode with api=pgconn; procedure, prepared and client
// sessions speak the protocol themselves by default, pgwire.go), the way
// libpq-based tools do: parameters and results travel as text, each
// statement is prepared once per connection under its own name (prepared
// and procedure modes) or sent with its values written in (client mode),
// and nothing is decoded that the caller does not scan. pgx's typed layer
// (statement cache, type planning, per-call context watching) cost about
// as much client CPU as the round trip's system calls (docs/benchmarks.md).
// Statements with arguments the text encoding does not cover fall back to
// pgx.
type fast struct {
	pc       *pgconn.PgConn
	simple   bool // client mode: values written into the text, simple protocol
	prepared map[string]bool
	params   [][]byte   // reused per call
	buf      []byte     // backing store of params, reused
	w        db.Watcher // cancellation of the VU's context
}

func newFast(pc *pgconn.PgConn, simple bool) *fast {
	return &fast{pc: pc, simple: simple, prepared: map[string]bool{}}
}

func (f *fast) close() { f.w.Close() }

// encodable reports whether every argument has a text form here.
func encodable(args []any) bool {
	for _, a := range args {
		switch a.(type) {
		case nil, int64, int, int32, float64, string, bool:
		default:
			return false
		}
	}
	return true
}

// encode writes args as text parameters into f.params.
func (f *fast) encode(args []any) {
	f.buf = f.buf[:0]
	f.params = f.params[:0]
	for _, a := range args {
		start := len(f.buf)
		switch v := a.(type) {
		case nil:
			f.params = append(f.params, nil)
			continue
		case int64:
			f.buf = strconv.AppendInt(f.buf, v, 10)
		case int:
			f.buf = strconv.AppendInt(f.buf, int64(v), 10)
		case int32:
			f.buf = strconv.AppendInt(f.buf, int64(v), 10)
		case float64:
			f.buf = strconv.AppendFloat(f.buf, v, 'f', -1, 64)
		case string:
			f.buf = append(f.buf, v...)
		case bool:
			f.buf = strconv.AppendBool(f.buf, v)
		}
		// Slices of the old array stay valid if a later append moves buf.
		f.params = append(f.params, f.buf[start:len(f.buf):len(f.buf)])
	}
}

// run sends statement name (text q) with args and returns its result;
// mrr is set in client mode (simple protocol), where it must be closed
// after rr to finish the exchange.
func (f *fast) run(ctx context.Context, name, q string, args []any) (rr *pgconn.ResultReader, mrr *pgconn.MultiResultReader, err error) {
	ctx = context.Background() // the caller's context is watched (begin)
	if f.simple {
		text, err := db.Interpolate(q, db.Dollar, args)
		if err != nil {
			return nil, nil, err
		}
		mrr := f.pc.Exec(ctx, text)
		if !mrr.NextResult() {
			return nil, nil, mrr.Close()
		}
		return mrr.ResultReader(), mrr, nil
	}
	if !f.prepared[name] {
		if _, err := f.pc.Prepare(ctx, name, q, nil); err != nil {
			return nil, nil, err
		}
		f.prepared[name] = true
	}
	f.encode(args)
	return f.pc.ExecPrepared(ctx, name, f.params, nil, nil), nil, nil
}

// end closes a result and, in client mode, the exchange around it.
func end(rr *pgconn.ResultReader, mrr *pgconn.MultiResultReader) (pgconn.CommandTag, error) {
	tag, err := rr.Close()
	if mrr != nil {
		if merr := mrr.Close(); err == nil {
			err = merr
		}
	}
	return tag, err
}

// exec runs a statement that returns no rows and reports the rows it
// affected.
func (f *fast) exec(ctx context.Context, name, q string, args []any) (int64, error) {
	if err := f.w.Begin(ctx, f.pc.Conn()); err != nil {
		return 0, err
	}
	defer f.w.End()
	rr, mrr, err := f.run(ctx, name, q, args)
	if err != nil {
		return 0, f.interrupted(err)
	}
	tag, err := end(rr, mrr)
	if err != nil {
		return 0, f.interrupted(err)
	}
	return tag.RowsAffected(), nil
}

// query runs a statement whose rows the caller reads.
func (f *fast) query(ctx context.Context, name, q string, args []any) (*fastRows, error) {
	if err := f.w.Begin(ctx, f.pc.Conn()); err != nil {
		return nil, err
	}
	rr, mrr, err := f.run(ctx, name, q, args)
	if err != nil {
		f.w.End()
		return nil, f.interrupted(err)
	}
	return &fastRows{f: f, rr: rr, mrr: mrr, name: name}, nil
}

// simpleExec sends a statement without arguments (BEGIN, COMMIT) by the
// simple protocol.
func (f *fast) simpleExec(ctx context.Context, q string) error {
	if err := f.w.Begin(ctx, f.pc.Conn()); err != nil {
		return err
	}
	defer f.w.End()
	return f.interrupted(f.pc.Exec(context.Background(), q).Close())
}

// interrupted says so when the watched context's cancellation caused err.
func (f *fast) interrupted(err error) error {
	if werr := f.w.Interrupted(); werr != nil && !errors.Is(err, werr) {
		return fmt.Errorf("interrupted: %w (%w)", werr, err)
	}
	return err
}

// fastRows reads a result's rows as text and scans them into the portable
// targets: *int64, *float64, *string and *any.
type fastRows struct {
	f      *fast
	rr     *pgconn.ResultReader
	mrr    *pgconn.MultiResultReader
	name   string
	err    error
	closed bool
}

func (r *fastRows) Next() bool {
	if r.err != nil || r.closed {
		return false
	}
	if r.rr.NextRow() {
		return true
	}
	r.finish()
	return false
}

func (r *fastRows) finish() {
	if r.closed {
		return
	}
	r.closed = true
	defer r.f.w.End() // the call began in query
	if _, err := end(r.rr, r.mrr); err != nil && r.err == nil {
		r.err = wrap("query", r.name, r.f.interrupted(err))
	}
}

func (r *fastRows) Scan(dest ...any) error {
	vals := r.rr.Values()
	fds := r.rr.FieldDescriptions()
	if len(vals) != len(dest) {
		return fmt.Errorf("postgres: %s returns %d columns, scanned into %d", r.name, len(vals), len(dest))
	}
	for i, d := range dest {
		if err := scanText(vals[i], fds[i].DataTypeOID, d); err != nil {
			return fmt.Errorf("postgres: %s column %s: %w", r.name, fds[i].Name, err)
		}
	}
	return nil
}

func (r *fastRows) Err() error { return r.err }

func (r *fastRows) Close() error {
	r.finish()
	return nil
}

// fastRow is QueryRow's result: the first row, then the rest is drained.
type fastRow struct {
	rows *fastRows
	err  error
}

func (r *fastRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.finish()
	if !r.rows.Next() {
		if r.rows.err != nil {
			return r.rows.err
		}
		return &db.OpError{DB: "postgres", Op: "query", Stmt: r.rows.name, Err: errNoRow, Kind: workload.ErrNoRows}
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.finish()
	return r.rows.err
}

var errNoRow = errors.New("no rows in result set")

// str views b as a string for parsing, without copying.
func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// scanText converts one text-format value of type oid into dest.
func scanText(b []byte, oid uint32, dest any) error {
	switch d := dest.(type) {
	case *any:
		*d = anyValue(b, oid)
		return nil
	case *string:
		if b == nil {
			return errors.New("NULL into a string")
		}
		if isTime(oid) {
			*d = timeText(str(b))
			return nil
		}
		*d = string(b)
		return nil
	case *int64:
		if b == nil {
			return errors.New("NULL into an integer")
		}
		n, err := strconv.ParseInt(str(b), 10, 64)
		if err != nil {
			// A numeric with a fraction of zeros ("12.00").
			f, ferr := strconv.ParseFloat(str(b), 64)
			if ferr != nil {
				return fmt.Errorf("not an integer: %q", b)
			}
			n = int64(f)
		}
		*d = n
		return nil
	case *float64:
		if b == nil {
			return errors.New("NULL into a number")
		}
		v, err := strconv.ParseFloat(str(b), 64)
		if err != nil {
			return fmt.Errorf("not a number: %q", b)
		}
		*d = v
		return nil
	case *int:
		var n int64
		if err := scanText(b, oid, &n); err != nil {
			return err
		}
		*d = int(n)
		return nil
	}
	return fmt.Errorf("cannot scan into %T", dest)
}

// anyValue is what a *any target gets, as the pgx path gives it: integers
// as int64, numerics as float64, times as UTC text, NULL as nil.
func anyValue(b []byte, oid uint32) any {
	if b == nil {
		return nil
	}
	s := str(b)
	switch oid {
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID:
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	case pgtype.NumericOID, pgtype.Float4OID, pgtype.Float8OID:
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			return v
		}
	case pgtype.BoolOID:
		return s == "t"
	}
	if isTime(oid) {
		return timeText(s)
	}
	return string(b)
}

func isTime(oid uint32) bool {
	return oid == pgtype.TimestamptzOID || oid == pgtype.TimestampOID
}

// timeText turns PostgreSQL's text for a timestamp ("2026-11-22
// 05:00:00.123+00") into sledge's portable form (readTimeLayout, UTC).
func timeText(s string) string {
	for _, layout := range []string{"2006-01-02 15:04:05.999999-07", "2006-01-02 15:04:05.999999-07:00", "2006-01-02 15:04:05.999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Format(readTimeLayout)
		}
	}
	return strings.TrimSpace(s)
}
