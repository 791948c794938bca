package db

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

// Helpers shared by the database packages' script sessions (pgbench
// scripts, workload.ScriptConn).

// ScriptOnly is embedded in a script session to provide the
// workload.Conn methods such a session answers by itself: Mode from the
// protocol, and Exec, QueryRow, Query and InTx refused, since a script's
// SQL (its BEGIN and COMMIT too) goes through RunSQL.
type ScriptOnly struct {
	DB    string            // for messages: "mysql", "postgres", "sqlite"
	Proto workload.Protocol // the session's protocol
}

// Mode is client for the simple protocol (values in the text), prepared
// otherwise (values bound).
func (s ScriptOnly) Mode() workload.Mode {
	if s.Proto == workload.ProtoSimple {
		return workload.ModeClient
	}
	return workload.ModePrepared
}

// Exec refuses: named statements are not available in a script session.
func (s ScriptOnly) Exec(context.Context, string, ...any) (int64, error) {
	return 0, s.errNamed()
}

// QueryRow refuses: its row's Scan says named statements are not
// available in a script session.
func (s ScriptOnly) QueryRow(context.Context, string, ...any) workload.Row {
	return errRow{s.errNamed()}
}

// Query refuses: named statements are not available in a script session.
func (s ScriptOnly) Query(context.Context, string, ...any) (workload.Rows, error) {
	return nil, s.errNamed()
}

// InTx refuses: the script's BEGIN and COMMIT go through RunSQL.
func (s ScriptOnly) InTx(context.Context, workload.TxOptions, func(context.Context) error) error {
	return errors.New(s.DB + ": InTx is not available in a script session: the script's BEGIN and COMMIT go through RunSQL")
}

func (s ScriptOnly) errNamed() error {
	return errors.New(s.DB + ": named statements are not available in a script session")
}

// errRow is a row whose Scan returns err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// RowKeeper scans rows into buffers of its own, so the last row of a
// result is still there when the rows are done, without an allocation
// per row. The zero value is ready; set Time before the first Targets.
type RowKeeper struct {
	// Time writes a time.Time value as the database prints it; nil: such
	// a value is an error.
	Time func(b []byte, t time.Time) []byte

	cells []TextCell
	dest  []any // &cells[i]
	n     int   // columns of the current result
	out   []any
}

// Targets returns n scan targets (*TextCell) for the rows of a result.
func (k *RowKeeper) Targets(n int) []any {
	if len(k.cells) < n {
		k.cells = make([]TextCell, n)
		k.dest = make([]any, n)
		for i := range k.cells {
			k.cells[i].Time = k.Time
			k.dest[i] = &k.cells[i]
		}
	}
	k.n = n
	return k.dest[:n]
}

// Last returns the last row scanned as strings (nil for NULL); nil when
// there were no rows. The slice is reused by the next call.
func (k *RowKeeper) Last(rows int) []any {
	if rows == 0 {
		return nil
	}
	k.out = k.out[:0]
	for i := range k.n {
		if s, ok := k.cells[i].Text(); ok {
			k.out = append(k.out, s)
		} else {
			k.out = append(k.out, nil)
		}
	}
	return k.out[:len(k.out):len(k.out)]
}

// TextCell is a sql.Scanner that keeps one value as text, written the way
// PostgreSQL would print it: integers in decimal, floats as AppendFloat
// writes them, booleans as 1 or 0 (what MySQL and SQLite store), text and
// bytes as they are, times by Time.
type TextCell struct {
	// Time writes a time.Time value; nil: such a value is an error.
	Time func(b []byte, t time.Time) []byte

	b    []byte
	null bool
}

// Scan keeps src as text.
func (c *TextCell) Scan(src any) error {
	c.b, c.null = c.b[:0], false
	switch v := src.(type) {
	case nil:
		c.null = true
	case []byte:
		c.b = append(c.b, v...)
	case string:
		c.b = append(c.b, v...)
	case int64:
		c.b = strconv.AppendInt(c.b, v, 10)
	case uint64:
		c.b = strconv.AppendUint(c.b, v, 10)
	case float64:
		c.b = AppendFloat(c.b, v, 64)
	case float32:
		c.b = AppendFloat(c.b, float64(v), 32)
	case bool:
		if v {
			c.b = append(c.b, '1')
		} else {
			c.b = append(c.b, '0')
		}
	case time.Time:
		if c.Time == nil {
			return fmt.Errorf("unsupported value type %T", src)
		}
		c.b = c.Time(c.b, v)
	default:
		return fmt.Errorf("unsupported value type %T", src)
	}
	return nil
}

// Text returns the value scanned last; ok is false for NULL.
func (c *TextCell) Text() (s string, ok bool) {
	if c.null {
		return "", false
	}
	return string(c.b), true
}

// AppendFloat writes f as PostgreSQL prints a float8 (bits 64) or float4
// (32) with extra_float_digits 1, the default since PostgreSQL 12: the
// shortest digits that read back exactly, in fixed notation from 1e-4 up
// to 1e15 (float4: 1e6), in exponent notation outside.
func AppendFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	limit := 1e15
	if bits == 32 {
		limit = 1e6
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-4 && a < limit) {
		return strconv.AppendFloat(b, f, 'f', -1, bits)
	}
	return strconv.AppendFloat(b, f, 'e', -1, bits)
}

// MayBeCompound reports whether text has a ';' before its end, so more
// than one statement (or a ';' in a literal or a comment: a caller that
// must know splits it with SplitScript).
func MayBeCompound(text string) bool {
	return strings.IndexByte(strings.TrimRight(text, " \t\r\n;"), ';') >= 0
}

// SkipSpace returns the offset of the first byte from s[i:] that is
// neither a space nor in a comment: -- to the end of the line, /* */, and
// with hash also # to the end of the line (MySQL's; SQLite and PostgreSQL
// have none). An unterminated comment runs to the end.
func SkipSpace(s string, i int, hash bool) int {
	for i < len(s) {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case hash && c == '#' || c == '-' && i+1 < len(s) && s[i+1] == '-':
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return len(s)
			}
			i += j
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return len(s)
			}
			i += j + 4
		default:
			return i
		}
	}
	return i
}

// NextWord returns the word (IsWordByte bytes) at s[i:] after spaces and
// comments (SkipSpace), and the offset after it; "" when something else
// comes first.
func NextWord(s string, i int, hash bool) (string, int) {
	i = SkipSpace(s, i, hash)
	j := i
	for j < len(s) && IsWordByte(s[j]) {
		j++
	}
	return s[i:j], j
}

// IsWordByte reports an ASCII letter, digit or '_'.
func IsWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// SupportsWithoutPipelines is ScriptSupports for a database that runs every
// protocol but cannot pipeline (everything but PostgreSQL).
func SupportsWithoutPipelines(dbName string, p workload.Protocol, pipelines bool) error {
	switch p {
	case workload.ProtoSimple, workload.ProtoExtended, workload.ProtoPrepared:
	default:
		return fmt.Errorf("%s: unknown protocol %d: use simple, extended or prepared", dbName, int(p))
	}
	if pipelines {
		return errors.New("pipelines (\\startpipeline) work only on PostgreSQL")
	}
	return nil
}
