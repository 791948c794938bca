package db

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Placeholder is how a SQL dialect writes bind parameters in statement text.
type Placeholder int

const (
	// QuestionNumbered is SQLite's ?NNN: ?1 is the first argument and may
	// appear more than once. A bare ? is one more than the largest number
	// seen so far, as SQLite numbers it.
	QuestionNumbered Placeholder = iota + 1
	// Dollar is PostgreSQL's $1, $2…; a number may appear more than once.
	Dollar
	// Question is MySQL/MariaDB's ?, taken in order. Backslash is an escape
	// character inside MySQL strings (the default sql_mode), so string
	// literals for this style also double backslashes.
	Question
)

// TimeLayout is how Interpolate writes a time.Time (in UTC): a literal every
// supported database reads as a timestamp.
const TimeLayout = "2006-01-02 15:04:05.000000"

// special marks the bytes Interpolate must look at; everything else is
// copied in bulk.
var special = [256]bool{'\'': true, '"': true, '`': true, '-': true, '/': true, '[': true, '?': true, '$': true}

// Interpolate writes args into query as SQL literals in place of its
// placeholders: what "--mode client" sends, so the server parses every
// statement with its values. Placeholders inside quotes and comments are
// left alone. Arguments may be int, int32, int64, float64, string, bool,
// []byte, time.Time or nil; the number of arguments must match the
// placeholders (for numbered styles, the largest number).
//
// It is on the hot path of client mode: one pass, one allocation for the
// result in the common case, no regexp.
func Interpolate(query string, style Placeholder, args []any) (string, error) {
	if style != QuestionNumbered && style != Dollar && style != Question {
		return "", fmt.Errorf("interpolate: unknown placeholder style %d", int(style))
	}
	var b strings.Builder
	b.Grow(estimate(query, args))
	last := 0 // query[last:i] is not written yet
	maxN := 0 // numbered styles: largest number seen; Question: arguments used
	for i := 0; i < len(query); {
		for i < len(query) && !special[query[i]] {
			i++
		}
		if i >= len(query) {
			break
		}
		c := query[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := skipQuoted(query, i+1, c, style == Question && c != '`')
			if j < 0 {
				return "", fmt.Errorf("interpolate: unterminated %c quote", c)
			}
			i = j
		case c == '-' && i+1 < len(query) && query[i+1] == '-':
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				i = len(query)
			} else {
				i += j + 1
			}
		case c == '/' && i+1 < len(query) && query[i+1] == '*':
			j := strings.Index(query[i+2:], "*/")
			if j < 0 {
				return "", errors.New("interpolate: unterminated /* comment")
			}
			i += 2 + j + 2
		case c == '[' && style == QuestionNumbered: // SQLite [identifier]
			j := strings.IndexByte(query[i:], ']')
			if j < 0 {
				return "", errors.New("interpolate: unterminated [ identifier")
			}
			i += j + 1
		case c == '?' && style != Dollar:
			j := i + 1
			var n int
			if style == Question {
				maxN++
				n = maxN
			} else {
				for j < len(query) && query[j] >= '0' && query[j] <= '9' {
					n = n*10 + int(query[j]-'0')
					j++
					if n > len(args) {
						break // the check below reports it; avoids overflow
					}
				}
				if j == i+1 {
					n = maxN + 1 // bare ?: SQLite's numbering
				}
				maxN = max(maxN, n)
			}
			if err := writeArg(&b, query, last, i, n, style, args); err != nil {
				return "", err
			}
			i, last = j, j
		case c == '$' && style == Dollar && (i == 0 || !identByte(query[i-1])):
			j := i + 1
			if j < len(query) && query[j] >= '0' && query[j] <= '9' {
				n := 0
				for j < len(query) && query[j] >= '0' && query[j] <= '9' {
					n = n*10 + int(query[j]-'0')
					j++
					if n > len(args) {
						break
					}
				}
				maxN = max(maxN, n)
				if err := writeArg(&b, query, last, i, n, style, args); err != nil {
					return "", err
				}
				i, last = j, j
				continue
			}
			if tag, ok := dollarTag(query, i); ok {
				k := strings.Index(query[i+len(tag):], tag)
				if k < 0 {
					return "", fmt.Errorf("interpolate: unterminated %s quote", tag)
				}
				i += len(tag) + k + len(tag)
				continue
			}
			i++
		default:
			i++
		}
	}
	if maxN != len(args) {
		return "", fmt.Errorf("interpolate: statement takes %d arguments, got %d", maxN, len(args))
	}
	if last == 0 {
		return query, nil // no placeholders: no copy
	}
	b.WriteString(query[last:])
	return b.String(), nil
}

// writeArg writes query[last:at] and then argument n (1-based) as a literal.
func writeArg(b *strings.Builder, query string, last, at, n int, style Placeholder, args []any) error {
	if n < 1 || n > len(args) {
		return fmt.Errorf("interpolate: placeholder %d out of range: %d arguments", n, len(args))
	}
	b.WriteString(query[last:at])
	// "-" followed by a negative number would read as a "--" comment.
	prevMinus := at > last && query[at-1] == '-' || at == last && b.Len() > 0 && b.String()[b.Len()-1] == '-'
	if err := appendLiteral(b, args[n-1], style, prevMinus); err != nil {
		return fmt.Errorf("interpolate: argument %d: %w", n, err)
	}
	return nil
}

// appendLiteral writes v as a SQL literal.
func appendLiteral(b *strings.Builder, v any, style Placeholder, prevMinus bool) error {
	var buf [64]byte
	switch v := v.(type) {
	case nil:
		b.WriteString("NULL")
	case int64:
		if v < 0 && prevMinus {
			b.WriteByte(' ')
		}
		b.Write(strconv.AppendInt(buf[:0], v, 10))
	case int:
		if v < 0 && prevMinus {
			b.WriteByte(' ')
		}
		b.Write(strconv.AppendInt(buf[:0], int64(v), 10))
	case int32:
		if v < 0 && prevMinus {
			b.WriteByte(' ')
		}
		b.Write(strconv.AppendInt(buf[:0], int64(v), 10))
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%v has no SQL literal", v)
		}
		if math.Signbit(v) && prevMinus {
			b.WriteByte(' ')
		}
		b.Write(strconv.AppendFloat(buf[:0], v, 'f', -1, 64))
	case string:
		return appendString(b, v, style)
	case bool:
		switch {
		case style == Dollar && v: // PostgreSQL has no implicit int→boolean cast
			b.WriteString("TRUE")
		case style == Dollar:
			b.WriteString("FALSE")
		case v:
			b.WriteByte('1')
		default:
			b.WriteByte('0')
		}
	case []byte:
		const hex = "0123456789abcdef"
		if style == Dollar {
			b.WriteString(`'\x`) // bytea hex input; X'…' would be a bit string
		} else {
			b.WriteString("X'")
		}
		for _, c := range v {
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		}
		b.WriteByte('\'')
	case time.Time:
		b.WriteByte('\'')
		b.Write(v.UTC().AppendFormat(buf[:0], TimeLayout))
		b.WriteByte('\'')
	default:
		return fmt.Errorf("unsupported type %T", v)
	}
	return nil
}

// appendString writes s quoted, doubling quotes (and, for MySQL,
// backslashes). NUL cannot be sent in SQL text.
func appendString(b *strings.Builder, s string, style Placeholder) error {
	if strings.IndexByte(s, 0) >= 0 {
		return errors.New("string contains a NUL byte")
	}
	b.WriteByte('\'')
	for {
		j := strings.IndexByte(s, '\'')
		if style == Question {
			if k := strings.IndexByte(s, '\\'); k >= 0 && (j < 0 || k < j) {
				j = k
			}
		}
		if j < 0 {
			break
		}
		b.WriteString(s[:j+1])
		b.WriteByte(s[j])
		s = s[j+1:]
	}
	b.WriteString(s)
	b.WriteByte('\'')
	return nil
}

// skipQuoted returns the offset after the quote q closing a run that starts
// at s[i:], or -1. A doubled quote is an escaped one; with backslash set
// (MySQL), so is \q.
func skipQuoted(s string, i int, q byte, backslash bool) int {
	if !backslash {
		return closeQuote(s, i, q)
	}
	for i < len(s) {
		switch s[i] {
		case '\\':
			i += 2
		case q:
			if i+1 < len(s) && s[i+1] == q {
				i += 2
				continue
			}
			return i + 1
		default:
			i++
		}
	}
	return -1
}

// estimate sizes the result so that it is allocated once.
func estimate(query string, args []any) int {
	n := len(query)
	for _, a := range args {
		switch a := a.(type) {
		case string:
			n += len(a) + 4
		case []byte:
			n += 2*len(a) + 4
		case time.Time:
			n += len(TimeLayout) + 2
		default:
			n += 20
		}
	}
	return n
}

// AppendLiteral writes v to b as the SQL literal Interpolate would write
// for it in style's dialect: for callers that build a statement's text
// themselves (block mode's anonymous blocks).
func AppendLiteral(b *strings.Builder, v any, style Placeholder) error {
	return appendLiteral(b, v, style, false)
}
