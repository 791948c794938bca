package postgres

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/workload"
)

// Load copies rows into table t with COPY … FROM STDIN in one transaction
// of its own. Concurrent build workers each take their own connection, so
// they load in parallel.
//
// The rows are written in COPY's text format by hand rather than through
// pgx CopyFrom: pgx looks up an encode plan for every value, which made
// the client, not the server, the bottleneck of a build (about two thirds
// of its CPU). The server parses the text as it would parse the literals.
func (d *DB) Load(ctx context.Context, t *workload.Table, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	buf := copyBufs.Get().(*bytes.Buffer)
	defer copyBufs.Put(buf)
	buf.Reset()
	if err := appendCopyText(buf, rows, len(t.Columns), t.PlainText); err != nil {
		return fmt.Errorf("postgres: load %s: %w", t.Name, err)
	}
	c, err := d.getAdmin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: load %s: %w", t.Name, err)
	}
	_, err = c.PgConn().CopyFrom(ctx, buf, copySQL(t))
	d.putAdmin(c, err)
	if err != nil {
		return fmt.Errorf("postgres: load %s: %w", t.Name, classify(err))
	}
	return nil
}

var copyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// LoadStream copies a worker's share of table t with one COPY … FROM
// STDIN (db.StreamLoader), formatting batch after batch while pgconn sends
// what is formatted: the server parses one long stream, as from a file,
// and never waits for a statement to start. An error from next fails the
// COPY, which then commits nothing.
func (d *DB) LoadStream(ctx context.Context, t *workload.Table, next func() ([][]any, error)) error {
	c, err := d.getAdmin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: load %s: %w", t.Name, err)
	}
	r := &copyReader{next: next, t: t}
	_, err = c.PgConn().CopyFrom(ctx, r, copySQL(t))
	d.putAdmin(c, err)
	if err != nil {
		return fmt.Errorf("postgres: load %s: %w", t.Name, classify(err))
	}
	return nil
}

// copyReader is a COPY's data: the rows next gives, in COPY's text
// format. It formats row by row straight into pgconn's buffer (a row that
// does not fit waits in a small one), so that the text is written once
// and copied from cache, not from a batch-sized buffer.
type copyReader struct {
	next func() ([][]any, error)
	t    *workload.Table
	rows [][]any // the batch being written, and the next row of it
	i    int
	row  bytes.Buffer // the current row's text, and how much of it went out
	off  int
	done bool
}

func (r *copyReader) Read(p []byte) (n int, err error) {
	for n < len(p) {
		if r.off < r.row.Len() {
			c := copy(p[n:], r.row.Bytes()[r.off:])
			n += c
			r.off += c
			continue
		}
		if r.i == len(r.rows) {
			if r.done || n > 0 {
				break // send what there is before waiting for the next batch
			}
			rows, err := r.next()
			if err != nil {
				return n, err
			}
			if rows == nil {
				r.done = true
				break
			}
			r.rows, r.i = rows, 0
			continue
		}
		r.row.Reset()
		r.off = 0
		if err := appendCopyText(&r.row, r.rows[r.i:r.i+1], len(r.t.Columns), r.t.PlainText); err != nil {
			return n, err
		}
		r.i++
	}
	if n == 0 && r.done {
		return 0, io.EOF
	}
	return n, nil
}

// copySQL is COPY "t" ("c1", "c2") FROM STDIN.
func copySQL(t *workload.Table) string {
	var b strings.Builder
	b.WriteString("COPY ")
	b.WriteString(pgx.Identifier{t.Name}.Sanitize())
	b.WriteString(" (")
	for i, c := range t.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pgx.Identifier{c}.Sanitize())
	}
	b.WriteString(") FROM STDIN")
	return b.String()
}

// copyTimeLayout writes a time.Time so that timestamptz reads it exactly,
// whatever the session's TimeZone.
const copyTimeLayout = "2006-01-02 15:04:05.999999Z07:00"

// appendCopyText writes rows in COPY's text format: tab-separated columns,
// \N for NULL, one line per row. plain: the table's text needs no escape
// (workload.Table.PlainText).
func appendCopyText(buf *bytes.Buffer, rows [][]any, ncol int, plain bool) error {
	var scratch [64]byte
	for _, r := range rows {
		if len(r) != ncol {
			return fmt.Errorf("row has %d values for %d columns", len(r), ncol)
		}
		for i, v := range r {
			if i > 0 {
				buf.WriteByte('\t')
			}
			switch x := v.(type) {
			case nil:
				buf.WriteString(`\N`)
			case int64:
				buf.Write(strconv.AppendInt(scratch[:0], x, 10))
			case int:
				buf.Write(strconv.AppendInt(scratch[:0], int64(x), 10))
			case int32:
				buf.Write(strconv.AppendInt(scratch[:0], int64(x), 10))
			case float64:
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return fmt.Errorf("column %d: %v is not a number a table can store", i+1, x)
				}
				buf.Write(appendFloat(scratch[:0], x))
			case string:
				if plain {
					buf.WriteString(x)
				} else {
					appendCopyString(buf, x)
				}
			case time.Time:
				buf.Write(x.AppendFormat(scratch[:0], copyTimeLayout))
			case bool:
				buf.Write(strconv.AppendBool(scratch[:0], x))
			default:
				return fmt.Errorf("column %d: cannot load a %T", i+1, v)
			}
		}
		buf.WriteByte('\n')
	}
	return nil
}

// appendFloat writes x as text that reads back as x. A whole number of
// hundredths (money: cents/100, the workloads' decimals) is written as its
// exact decimal with integer arithmetic, two places; any other value in
// strconv's shortest form, which costs several times more.
func appendFloat(dst []byte, x float64) []byte {
	if c := math.Round(x * 100); math.Abs(c) < 1<<53 && c/100 == x {
		n := int64(c)
		if n < 0 {
			dst = append(dst, '-')
			n = -n
		}
		dst = strconv.AppendInt(dst, n/100, 10)
		r := n % 100
		return append(dst, '.', byte('0'+r/10), byte('0'+r%10))
	}
	return strconv.AppendFloat(dst, x, 'f', -1, 64)
}

// plainCopy reports whether s needs no escape: no backslash and no
// control character (the ones COPY escapes are among those). It tests 8
// bytes at a time: the escape scan was half of a TPC-H build's client CPU
// with strings.ContainsAny (docs/benchmarks.md, TPC-H build).
func plainCopy(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		y := x ^ (ones * '\\')
		// A byte below 0x20, or a zero byte of y (a backslash in x).
		if (x-ones*0x20)&^x&highs != 0 || (y-ones)&^y&highs != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < ' ' || c == '\\' {
			return false
		}
	}
	return true
}

// appendCopyString writes s with COPY's backslash escapes.
func appendCopyString(buf *bytes.Buffer, s string) {
	if plainCopy(s) {
		buf.WriteString(s)
		return
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			buf.WriteString(`\\`)
		case '\t':
			buf.WriteString(`\t`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		default:
			buf.WriteByte(c)
		}
	}
}
