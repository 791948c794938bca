package db

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Dialect says how quoted text and comments are written, for the scanners
// of block mode (a routine's source turned into an anonymous block).
type Dialect struct {
	// Dollar: PostgreSQL's $tag$…$tag$ quotes.
	Dollar bool
	// MySQL: \ escapes inside '…' and "…", "#" comments, and "--" a
	// comment only when a blank follows it.
	MySQL bool
}

var (
	// PostgresDialect is PostgreSQL's (and PL/pgSQL's) quoting.
	PostgresDialect = Dialect{Dollar: true}
	// MySQLDialect is MariaDB's and MySQL's quoting.
	MySQLDialect = Dialect{MySQL: true}
)

// quoteEnd returns the offset after the quoted run that opens at src[i],
// or -1 when src[i] opens none. Unterminated quotes are errors.
func (d Dialect) quoteEnd(src string, i int) (int, error) {
	switch c := src[i]; {
	case c == '\'' || c == '"' || c == '`':
		j := skipQuoted(src, i+1, c, d.MySQL && c != '`')
		if j < 0 {
			return 0, fmt.Errorf("unterminated %c quote", c)
		}
		return j, nil
	case c == '$' && d.Dollar && (i == 0 || !identByte(src[i-1])):
		tag, ok := dollarTag(src, i)
		if !ok {
			return -1, nil
		}
		k := strings.Index(src[i+len(tag):], tag)
		if k < 0 {
			return 0, fmt.Errorf("unterminated %s quote", tag)
		}
		return i + len(tag) + k + len(tag), nil
	}
	return -1, nil
}

// commentEnd returns the offset after the comment that opens at src[i]
// (a line comment ends before its newline), or -1 when none opens there.
func (d Dialect) commentEnd(src string, i int) (int, error) {
	line := false
	switch {
	case strings.HasPrefix(src[i:], "--"):
		line = !d.MySQL || i+2 == len(src) || strings.IndexByte(" \t\r\n", src[i+2]) >= 0
	case d.MySQL && src[i] == '#':
		line = true
	case strings.HasPrefix(src[i:], "/*"):
		j := strings.Index(src[i+2:], "*/")
		if j < 0 {
			return 0, errors.New("unterminated /* comment")
		}
		return i + 2 + j + 2, nil
	}
	if !line {
		return -1, nil
	}
	if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
		return i + j, nil
	}
	return len(src), nil
}

// CompactSQL returns src without its comments, indentation, blank lines
// and runs of blanks, quoted text left as it is: what an anonymous block
// sends every time, without the bytes only a reader of the source needs.
func CompactSQL(src string, d Dialect) (string, error) {
	var b strings.Builder
	b.Grow(len(src))
	space, newline := false, false // owed before the next token
	for i := 0; i < len(src); {
		c := src[i]
		if c == '\n' {
			newline = b.Len() > 0
			space = false
			i++
			continue
		}
		if c == ' ' || c == '\t' || c == '\r' {
			space = true
			i++
			continue
		}
		j, err := d.commentEnd(src, i)
		if err != nil {
			return "", err
		}
		if j >= 0 {
			space = true
			i = j
			continue
		}
		if newline {
			b.WriteByte('\n')
		} else if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space, newline = false, false
		if j, err = d.quoteEnd(src, i); err != nil {
			return "", err
		}
		if j < 0 {
			j = i + 1
		}
		b.WriteString(src[i:j])
		i = j
	}
	return b.String(), nil
}

// MaskQuoted returns src with every quoted run replaced by '~' and every
// comment by blanks, byte for byte, so that keywords and ';' can be found
// in code only, at the same offsets as in src.
func MaskQuoted(src string, d Dialect) (string, error) {
	out := []byte(src)
	for i := 0; i < len(src); {
		j, err := d.commentEnd(src, i)
		if err != nil {
			return "", err
		}
		fill := byte(' ')
		if j < 0 {
			if j, err = d.quoteEnd(src, i); err != nil {
				return "", err
			}
			fill = '~'
		}
		if j < 0 {
			i++
			continue
		}
		for k := i; k < j; k++ {
			if out[k] != '\n' {
				out[k] = fill
			}
		}
		i = j
	}
	return string(out), nil
}

// SplitTop splits s at each sep outside parentheses (a parameter list
// whose types may hold commas: NUMERIC(12,2)).
func SplitTop(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// Routine is a stored routine's source, as block mode reads it from a
// procedures.sql: its name, parameters in order, and what follows the
// parameter list (the characteristics and the body).
type Routine struct {
	Name   string // lower case
	Params []Param
	Rest   string
}

// Param is one parameter of a routine.
type Param struct{ Name, Type string }

// createRoutine matches the start of CREATE [OR REPLACE] FUNCTION|PROCEDURE
// name(.
var createRoutine = regexp.MustCompile(`(?is)^CREATE\s+(?:OR\s+REPLACE\s+)?(FUNCTION|PROCEDURE)\s+([a-z_][a-z0-9_]*)\s*\(`)

// ParseRoutine reads stmt when it creates a routine of the given kind
// (FUNCTION or PROCEDURE); ok is false for any other statement. Only input
// parameters without defaults are accepted: a block declares each one as a
// variable holding the call's argument.
func ParseRoutine(stmt, kind string) (r Routine, ok bool, err error) {
	m := createRoutine.FindStringSubmatchIndex(stmt)
	if m == nil || !strings.EqualFold(stmt[m[2]:m[3]], kind) {
		return Routine{}, false, nil
	}
	r.Name = strings.ToLower(stmt[m[4]:m[5]])
	open := m[1] - 1
	depth, end := 0, -1
	for i := open; i < len(stmt) && end < 0; i++ {
		switch stmt[i] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				end = i
			}
		}
	}
	if end < 0 {
		return Routine{}, true, fmt.Errorf("%s: unclosed parameter list", r.Name)
	}
	if list := strings.TrimSpace(stmt[open+1 : end]); list != "" {
		for _, p := range SplitTop(list, ',') {
			f := strings.Fields(p)
			if len(f) > 0 && strings.EqualFold(f[0], "IN") {
				f = f[1:]
			}
			if len(f) < 2 {
				return Routine{}, true, fmt.Errorf("%s: cannot read parameter %q", r.Name, strings.TrimSpace(p))
			}
			switch strings.ToUpper(f[0]) {
			case "OUT", "INOUT", "VARIADIC":
				return Routine{}, true, fmt.Errorf("%s: parameter %q is not a plain input", r.Name, strings.TrimSpace(p))
			}
			typ := strings.Join(f[1:], " ")
			if u := strings.ToUpper(typ); strings.Contains(u, "DEFAULT") || strings.Contains(u, "=") {
				return Routine{}, true, fmt.Errorf("%s: parameter %q has a default", r.Name, strings.TrimSpace(p))
			}
			r.Params = append(r.Params, Param{Name: f[0], Type: typ})
		}
	}
	r.Rest = stmt[end+1:]
	return r, true, nil
}

// callStmt matches a "<tx>.call" statement: SELECT name(args) or CALL
// name(args).
var callStmt = regexp.MustCompile(`(?is)^\s*(?:SELECT|CALL)\s+([a-z_][a-z0-9_]*)\s*\(([^()]*)\)\s*;?\s*$`)

// CallTarget returns the routine a "<tx>.call" statement calls and checks
// that its arguments are the statement's parameters in order, each once
// ($1, $2… or ?, ?…), so that the call's i-th argument is the routine's
// i-th parameter.
func CallTarget(call string, style Placeholder) (routine string, nargs int, err error) {
	m := callStmt.FindStringSubmatch(call)
	if m == nil {
		return "", 0, fmt.Errorf("not a call of one routine: %q", FirstLine(call))
	}
	if strings.TrimSpace(m[2]) != "" {
		for i, a := range strings.Split(m[2], ",") {
			want := "?"
			if style == Dollar {
				want = "$" + strconv.Itoa(i+1)
			}
			if strings.TrimSpace(a) != want {
				return "", 0, fmt.Errorf("%s: argument %d is %q, want %s", m[1], i+1, strings.TrimSpace(a), want)
			}
			nargs++
		}
	}
	return strings.ToLower(m[1]), nargs, nil
}

// CallBlocks derives the block of every "<tx>.call" statement in text: it
// finds the routine of kind ("FUNCTION", "PROCEDURE") the call names among
// stmts (a procedures.sql), checks the number of arguments, and converts
// the routine with conv, the database's own form of a block.
func CallBlocks[B any](stmts []string, text map[string]string, kind string, style Placeholder, conv func(Routine) (B, error)) (map[string]B, error) {
	routines := map[string]Routine{}
	for _, s := range stmts {
		r, ok, err := ParseRoutine(s, kind)
		if err != nil {
			return nil, err
		}
		if ok {
			routines[r.Name] = r
		}
	}
	out := map[string]B{}
	for name, q := range text {
		if !strings.HasSuffix(name, ".call") {
			continue
		}
		routine, n, err := CallTarget(q, style)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		r, ok := routines[routine]
		if !ok {
			return nil, fmt.Errorf("%s calls %s, which procedures.sql does not define as a %s", name, routine, strings.ToLower(kind))
		}
		if n != len(r.Params) {
			return nil, fmt.Errorf("%s passes %d arguments to %s, which takes %d", name, n, routine, len(r.Params))
		}
		k, err := conv(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", routine, err)
		}
		out[name] = k
	}
	if len(out) == 0 {
		return nil, errors.New("no <tx>.call statements")
	}
	return out, nil
}
