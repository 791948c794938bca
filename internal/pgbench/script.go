package pgbench

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Parse parses one script. name is used in messages and as Script.Name;
// the weight is 1. Errors are one line: "<name>:<line>: <what is wrong>,
// expected <...>", or "<name>: <what is wrong>" for problems of the whole
// script.
//
// The SQL lexing follows psql's lexer as pgbench uses it: a SQL command
// ends at a ';' outside quotes, comments and parentheses (and outside the
// BEGIN ... END body of CREATE FUNCTION/PROCEDURE), or where a
// meta-command starts; "\;" glues queries into one compound command and
// "\:" is a literal ':'.
func Parse(name, text string) (*Script, error) {
	p := &scriptParser{name: name, src: text, metaText: map[*Command]string{}}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			p.newlines = append(p.newlines, i)
		}
	}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return &Script{Name: name, Weight: 1, Commands: p.cmds}, nil
}

// ParseFile reads and parses "FILE[@W]". The part after the last '@' is a
// weight only when it is all digits (an integer >= 0); otherwise the '@'
// belongs to the path. "-" reads standard input.
func ParseFile(spec string) (*Script, error) {
	path, weight, err := splitWeight(spec, false)
	if err != nil {
		return nil, err
	}
	var data []byte
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("could not read file %q: %v", path, err)
	}
	s, err := Parse(path, string(data))
	if err != nil {
		return nil, err
	}
	s.Weight = weight
	return s, nil
}

// splitWeight splits "NAME@W". With strict (builtins, as pgbench), any '@'
// introduces a weight; otherwise only an all-digit suffix does.
func splitWeight(spec string, strict bool) (string, int, error) {
	at := strings.LastIndexByte(spec, '@')
	if at < 0 {
		return spec, 1, nil
	}
	w := spec[at+1:]
	digits := w != "" && strings.Trim(w, "0123456789") == ""
	if !digits {
		if !strict {
			return spec, 1, nil
		}
		return "", 0, fmt.Errorf("invalid weight specification: %s, expected NAME@W with W an integer >= 0", spec[at:])
	}
	n, err := strconv.ParseInt(w, 10, 64)
	if err != nil || n > math.MaxInt32 {
		return "", 0, fmt.Errorf("weight specification out of range (0 .. %d): %s", math.MaxInt32, w)
	}
	return spec[:at], int(n), nil
}

type scriptParser struct {
	name     string
	src      string
	newlines []int // offsets of '\n'
	cmds     []*Command

	// open conditionals, innermost last
	conds []*condFrame
	// cond is the first conditional out of place (\elif without \if, ...),
	// reported once the script is read, as pgbench does.
	cond *ScriptError
	// metaText is each meta-command's line as pgbench shows it.
	metaText map[*Command]string
}

type condFrame struct {
	open     int   // index of the command waiting for its Next (\if or \elif), or -1 after \else
	branches []int // \if, \elif and \else indexes waiting for their End
	sawElse  bool
	line     int
}

// line returns the 1-based line of a byte offset.
func (p *scriptParser) line(off int) int {
	return sort.SearchInts(p.newlines, off) + 1
}

// errAt is an error at offset off in sledge's words; where pgbench has no
// error of its own for it, its lines say the same after FILE:LINE.
func (p *scriptParser) errAt(off int, format string, args ...any) error {
	msg := fmt.Sprintf("%s:%d: %s", p.name, p.line(off), fmt.Sprintf(format, args...))
	return pgFatal(msg, msg)
}

func (p *scriptParser) parse() error {
	pos := 0
	for {
		sq, err := p.scanSQL(pos)
		if err != nil {
			return err
		}
		if sq.cmd != nil {
			p.cmds = append(p.cmds, sq.cmd)
		}
		if !sq.backslash {
			if sq.end >= len(p.src) {
				break
			}
			pos = sq.end
			continue
		}
		next, err := p.metaCommand(sq.end)
		if err != nil {
			return err
		}
		pos = next
		if pos >= len(p.src) {
			break
		}
	}
	// pgbench's order: an empty script, then the conditionals.
	if len(p.cmds) == 0 {
		return pgFatal(fmt.Sprintf("%s: empty script, expected at least one SQL command or meta-command", p.name),
			fmt.Sprintf("empty command list for script \"%s\"", p.name))
	}
	if p.cond != nil {
		return p.cond
	}
	if n := len(p.conds); n > 0 {
		return pgFatal(fmt.Sprintf("%s: missing \\endif for the \\if at line %d", p.name, p.conds[n-1].line),
			fmt.Sprintf("condition error in script \"%s\" command %d: \\if without matching \\endif", p.name, len(p.cmds)+1))
	}
	return nil
}

// sqlScan is the result of scanning one SQL command.
type sqlScan struct {
	cmd       *Command // nil when there was only white space and comments
	end       int      // offset just after the command (at the backslash when backslash)
	backslash bool     // stopped at a meta-command
}

func isSQLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isIdentStart(c byte) bool { return isAlpha(c) }

func isIdentCont(c byte) bool { return isAlnum(c) || c == '$' }

// scanSQL collects one SQL command from pos, as psql's lexer does for
// pgbench: white space and "--" comments before any content are dropped,
// the rest is kept as written ("\;" becoming ";").
func (p *scriptParser) scanSQL(pos int) (sqlScan, error) {
	src := p.src
	var buf strings.Builder
	var splits []int // buf offsets just after the ';' of each "\;"
	first := -1      // src offset of the first content
	parens, beginDepth := 0, 0
	var idents [4]byte
	nident := 0

	echo := func(from, to int) {
		if first < 0 {
			first = from
		}
		buf.WriteString(src[from:to])
	}
	i := pos
	done := func(end int, backslash bool) (sqlScan, error) {
		res := sqlScan{end: end, backslash: backslash}
		if first >= 0 {
			res.cmd = p.sqlCommand(buf.String(), splits, first, end)
		}
		return res, nil
	}

	for i < len(src) {
		c := src[i]
		switch {
		case isSQLSpace(c):
			if buf.Len() > 0 {
				buf.WriteByte(c)
			}
			i++
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				j = len(src)
			} else {
				j += i
			}
			if buf.Len() > 0 {
				buf.WriteString(src[i:j])
			}
			i = j
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			j, ok := skipBlockComment(src, i)
			if !ok {
				return sqlScan{}, p.errAt(i, "unterminated /* comment, expected */")
			}
			echo(i, j)
			i = j
		case c == '\'':
			j, ok := skipQuoted(src, i, '\'', false)
			if !ok {
				return sqlScan{}, p.errAt(i, "unterminated quoted string, expected a closing '")
			}
			echo(i, j)
			i = j
		case c == '"':
			j, ok := skipQuoted(src, i, '"', false)
			if !ok {
				return sqlScan{}, p.errAt(i, "unterminated quoted identifier, expected a closing \"")
			}
			echo(i, j)
			i = j
		case c == '$':
			if tag, ok := dollarTag(src, i); ok {
				k := strings.Index(src[i+len(tag):], tag)
				if k < 0 {
					return sqlScan{}, p.errAt(i, "unterminated dollar-quoted string, expected a closing %s", tag)
				}
				j := i + len(tag) + k + len(tag)
				echo(i, j)
				i = j
				break
			}
			echo(i, i+1)
			i++
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentCont(src[j]) {
				j++
			}
			word := src[i:j]
			if (word == "e" || word == "E") && j < len(src) && src[j] == '\'' {
				// E'...' string with backslash escapes.
				k, ok := skipQuoted(src, j, '\'', true)
				if !ok {
					return sqlScan{}, p.errAt(i, "unterminated quoted string, expected a closing '")
				}
				echo(i, k)
				i = k
				break
			}
			// psql's heuristic for semicolons inside the body of
			// CREATE [OR REPLACE] FUNCTION|PROCEDURE ... BEGIN ... END.
			if nident == 0 {
				idents = [4]byte{}
			}
			lw := strings.ToLower(word)
			switch lw {
			case "create", "function", "procedure", "or", "replace":
				if nident < len(idents) {
					idents[nident] = lw[0]
				}
			}
			nident++
			if idents[0] == 'c' && (idents[1] == 'f' || idents[1] == 'p' ||
				idents[1] == 'o' && idents[2] == 'r' && (idents[3] == 'f' || idents[3] == 'p')) && parens == 0 {
				switch lw {
				case "begin":
					beginDepth++
				case "case":
					if beginDepth >= 1 {
						beginDepth++
					}
				case "end":
					if beginDepth > 0 {
						beginDepth--
					}
				}
			}
			echo(i, j)
			i = j
		case isDigit(c):
			j := i + 1
			for j < len(src) && (isAlnum(src[j]) || src[j] == '.') {
				j++
			}
			echo(i, j)
			i = j
		case c == '(':
			parens++
			echo(i, i+1)
			i++
		case c == ')':
			if parens > 0 {
				parens--
			}
			echo(i, i+1)
			i++
		case c == ';':
			echo(i, i+1)
			i++
			if parens == 0 && beginDepth == 0 {
				return done(i, false)
			}
		case c == '\\':
			if i+1 < len(src) && (src[i+1] == ';' || src[i+1] == ':') {
				if first < 0 {
					first = i
				}
				buf.WriteByte(src[i+1])
				if src[i+1] == ';' {
					splits = append(splits, buf.Len())
					nident = 0
				}
				i += 2
				break
			}
			return done(i, true)
		default:
			echo(i, i+1)
			i++
		}
	}
	return done(len(src), false)
}

// skipBlockComment returns the offset after the (nested) /* comment at i.
func skipBlockComment(s string, i int) (int, bool) {
	depth := 0
	for i < len(s)-1 {
		switch {
		case s[i] == '/' && s[i+1] == '*':
			depth++
			i += 2
		case s[i] == '*' && s[i+1] == '/':
			depth--
			i += 2
			if depth == 0 {
				return i, true
			}
		default:
			i++
		}
	}
	return len(s), false
}

// skipQuoted returns the offset after the quoted text opening at i with
// quote q; a doubled quote stands for itself, and with escapes a backslash
// escapes the next character.
func skipQuoted(s string, i int, q byte, escapes bool) (int, bool) {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			if escapes {
				j++
			}
		case q:
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1, true
		}
	}
	return len(s), false
}

// dollarTag returns the $tag$ delimiter at s[i] ('$'), if any.
func dollarTag(s string, i int) (string, bool) {
	j := i + 1
	if j < len(s) && s[j] == '$' {
		return "$$", true
	}
	if j >= len(s) || !isIdentStart(s[j]) {
		return "", false
	}
	for j < len(s) && isAlnum(s[j]) {
		j++
	}
	if j < len(s) && s[j] == '$' {
		return s[i : j+1], true
	}
	return "", false
}

// sqlCommand builds a SQL command from psql's buffer text.
func (p *scriptParser) sqlCommand(text string, splits []int, first, end int) *Command {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	var queries []Query
	prev := 0
	segs := append(splits, len(text))
	for i, cut := range segs {
		seg := text[prev:cut]
		prev = cut
		if i > 0 {
			seg = skipLeadingComments(seg)
		}
		if i == len(segs)-1 {
			seg = strings.TrimRight(seg, " \t\n\r\f\v")
		}
		if len(segs) > 1 && isEmptyStatement(seg) {
			continue
		}
		queries = append(queries, splitVars(seg))
	}
	if len(queries) == 0 {
		queries = append(queries, splitVars(strings.TrimSpace(text)))
	}
	return &Command{
		Kind: CmdSQL,
		Line: p.line(first),
		Text: oneLine(p.src[first:end]),
		SQL:  &SQL{Queries: queries, Raw: p.src[first:end]},
	}
}

// skipLeadingComments drops leading white space and "--" comments, as
// pgbench's skip_sql_comments.
func skipLeadingComments(s string) string {
	for len(s) > 0 {
		switch {
		case isSQLSpace(s[0]):
			s = s[1:]
		case strings.HasPrefix(s, "--"):
			j := strings.IndexByte(s, '\n')
			if j < 0 {
				return ""
			}
			s = s[j:]
		default:
			return s
		}
	}
	return s
}

// isEmptyStatement reports whether a query of a compound holds nothing but
// white space, "--" comments and semicolons.
func isEmptyStatement(s string) bool {
	for len(s) > 0 {
		switch {
		case isSQLSpace(s[0]) || s[0] == ';':
			s = s[1:]
		case strings.HasPrefix(s, "--"):
			j := strings.IndexByte(s, '\n')
			if j < 0 {
				return true
			}
			s = s[j:]
		default:
			return false
		}
	}
	return true
}

// oneLine collapses white space runs that contain a line break into one
// space, and trims the ends.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\n\r") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if isSQLSpace(s[i]) {
			j := i
			nl := false
			for j < len(s) && isSQLSpace(s[j]) {
				nl = nl || s[j] == '\n' || s[j] == '\r'
				j++
			}
			if nl {
				b.WriteByte(' ')
			} else {
				b.WriteString(s[i:j])
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// splitVars splits a query at its :name references, as pgbench's
// parseVariable: a ':' followed by a letter (or any non-ASCII byte) or '_'
// starts a reference; other runs of ':' ("::" casts) are literal.
func splitVars(q string) Query {
	var out Query
	last := 0
	for i := 0; i < len(q); {
		if q[i] != ':' {
			i++
			continue
		}
		if i+1 < len(q) && isAlpha(q[i+1]) {
			j := i + 2
			for j < len(q) && isAlnum(q[j]) {
				j++
			}
			out.Parts = append(out.Parts, q[last:i])
			out.Vars = append(out.Vars, q[i+1:j])
			last = j
			i = j
			continue
		}
		for i < len(q) && q[i] == ':' {
			i++
		}
	}
	out.Parts = append(out.Parts, q[last:])
	return out
}

// ValidVarName reports whether name is a valid variable name: letters
// (any non-ASCII byte counts as one), digits and '_', not starting with a
// digit.
func ValidVarName(name string) bool {
	if name == "" || !isAlpha(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !isAlnum(name[i]) {
			return false
		}
	}
	return true
}

// word is a white-space separated word of a meta-command's logical line.
type word struct {
	s          string
	start, end int
}

func splitWords(s string) []word {
	var ws []word
	for i := 0; i < len(s); {
		if isExprSpace(s[i]) || s[i] == '\n' {
			i++
			continue
		}
		j := i
		for j < len(s) && !isExprSpace(s[j]) && s[j] != '\n' {
			j++
		}
		ws = append(ws, word{s[i:j], i, j})
		i = j
	}
	return ws
}

// metaCommands lists the meta-commands, for messages.
const metaCommands = `\set, \sleep, \setshell, \shell, \if, \elif, \else, \endif, \gset, \aset, \startpipeline, \syncpipeline, \endpipeline`

// metaLine is the meta-command being parsed, for its errors: where its
// backslash and its end are, its line as pgbench prints it (from the
// backslash to the end of the command, continuations included) and its
// name as written.
type metaLine struct {
	b, e int
	text string
	name string
}

// col is pgbench's column (0-based, from the backslash) of an offset of
// the command's logical line, which starts just after the backslash.
func (m *metaLine) col(off int) int { return off + 1 }

// endCol is pgbench's column when the error is at the end of the command:
// the newline that ends it, or the script's last byte when none does.
func (m *metaLine) endCol(srcLen int) int {
	if m.e < srcLen {
		return m.e - m.b
	}
	return m.e - 1 - m.b
}

// metaErr is an error in meta-command m, in sledge's words (format, args)
// and pgbench's (syntax_error's msg and more; the command's line when
// withLine, with a caret under col when col >= 0).
func (p *scriptParser) metaErr(m *metaLine, withLine bool, msg, more string, col int, format string, args ...any) error {
	lineno := p.line(m.b)
	sledge := fmt.Sprintf("%s:%d: %s", p.name, lineno, fmt.Sprintf(format, args...))
	line := ""
	if withLine {
		line = m.text
	}
	return pgSyntaxError(sledge, p.name, lineno, line, m.name, msg, more, col)
}

// exprErr is an error in the expression of meta-command m, which starts
// at offset off of the command's logical line.
func (p *scriptParser) exprErr(m *metaLine, off int, err *exprError) error {
	col := m.col(off + err.end - 1)
	if err.atEnd {
		col = m.endCol(len(p.src))
	}
	return p.metaErr(m, true, err.pg, err.more, col, "%s", err.msg)
}

// condErr records pgbench's error for a conditional out of place: pgbench
// checks them once the whole script is read (after its other errors), and
// numbers the command from 1.
func (p *scriptParser) condErr(b int, what string) {
	if p.cond != nil {
		return
	}
	p.cond = pgFatal(fmt.Sprintf("%s:%d: %s", p.name, p.line(b), what),
		fmt.Sprintf("condition error in script \"%s\" command %d: %s", p.name, len(p.cmds)+1, what))
}

// metaCommand parses the meta-command whose backslash is at b and returns
// the offset where SQL scanning resumes.
func (p *scriptParser) metaCommand(b int) (int, error) {
	src := p.src
	// The command runs to the first newline not preceded by a backslash.
	e := b + 1
	for e < len(src) {
		if src[e] == '\n' && !continued(src, b, e) {
			break
		}
		e++
	}
	next := e + 1
	raw := src[b+1 : e]
	// Continuations become blanks of the same length, so that offsets in
	// the logical line are offsets in the source too.
	logical := strings.NewReplacer("\\\r\n", "   ", "\\\n", "  ").Replace(raw)
	text := oneLine(`\` + collapseContinuations(raw))
	words := splitWords(logical)
	if len(words) == 0 {
		return 0, p.errAt(b, `missing command name after "\", expected a meta-command (%s)`, metaCommands)
	}
	name := strings.ToLower(words[0].s)
	m := &metaLine{b: b, e: e, text: strings.TrimRight(src[b:e], "\r\n"), name: words[0].s}
	cmd := &Command{Line: p.line(b), Text: text}
	args := words[1:]
	noArgs := func() error {
		if len(args) > 0 {
			return p.metaErr(m, true, "unexpected argument", "", -1, `\%s takes no argument, got %q`, name, args[0].s)
		}
		return nil
	}
	switch name {
	case "set", "if", "elif":
	default:
		// pgbench reads the words of the other commands into MAX_ARGS
		// slots before it looks at them.
		if err := p.maxArgs(m, name, words); err != nil {
			return 0, err
		}
	}

	switch name {
	case "set":
		if len(args) == 0 {
			return 0, p.metaErr(m, false, "missing argument", "", -1, `\set needs a variable name and an expression`)
		}
		if len(args) == 1 {
			return 0, p.metaErr(m, true, "syntax error", "", m.endCol(len(src)), `\set needs a variable name and an expression`)
		}
		// An invalid name (ValidVarName) fails when the command runs, as
		// in pgbench.
		cmd.Kind = CmdSet
		cmd.Var = args[0].s
		ex, err := parseExpr(logical[args[0].end:])
		if err != nil {
			return 0, p.exprErr(m, args[0].end, err)
		}
		cmd.Expr = ex

	case "if", "elif":
		if len(args) == 0 {
			return 0, p.metaErr(m, true, "syntax error", "", m.endCol(len(src)), `\%s needs an expression`, name)
		}
		ex, err := parseExpr(logical[words[0].end:])
		if err != nil {
			return 0, p.exprErr(m, words[0].end, err)
		}
		cmd.Expr = ex
		if name == "if" {
			cmd.Kind = CmdIf
			p.conds = append(p.conds, &condFrame{open: len(p.cmds), branches: []int{len(p.cmds)}, line: cmd.Line})
		} else {
			cmd.Kind = CmdElif
			if f := p.branch(b, name); f != nil {
				p.cmds[f.open].Next = len(p.cmds)
				f.open = len(p.cmds)
				f.branches = append(f.branches, len(p.cmds))
			}
		}

	case "else":
		if err := noArgs(); err != nil {
			return 0, err
		}
		cmd.Kind = CmdElse
		if f := p.branch(b, name); f != nil {
			p.cmds[f.open].Next = len(p.cmds)
			f.open = -1
			f.sawElse = true
			f.branches = append(f.branches, len(p.cmds))
		}

	case "endif":
		if err := noArgs(); err != nil {
			return 0, err
		}
		cmd.Kind = CmdEndif
		n := len(p.conds)
		if n == 0 {
			p.condErr(b, `\endif without matching \if`)
			break
		}
		f := p.conds[n-1]
		p.conds = p.conds[:n-1]
		idx := len(p.cmds)
		if f.open >= 0 {
			p.cmds[f.open].Next = idx
		}
		for _, i := range f.branches {
			p.cmds[i].End = idx
		}

	case "sleep":
		if err := p.sleep(m, cmd, args); err != nil {
			return 0, err
		}

	case "setshell":
		if len(args) < 2 {
			return 0, p.metaErr(m, true, "missing argument", "", -1, `\setshell needs a variable name and a command`)
		}
		cmd.Kind = CmdSetShell // an invalid name fails when it runs
		cmd.Var = args[0].s
		for _, w := range args[1:] {
			a, err := p.shellArg(b, name, w.s)
			if err != nil {
				return 0, err
			}
			cmd.Args = append(cmd.Args, a)
		}

	case "shell":
		if len(args) < 1 {
			return 0, p.metaErr(m, true, "missing command", "", -1, `\shell needs a command`)
		}
		cmd.Kind = CmdShell
		for _, w := range args {
			a, err := p.shellArg(b, name, w.s)
			if err != nil {
				return 0, err
			}
			cmd.Args = append(cmd.Args, a)
		}

	case "gset", "aset":
		if len(args) > 1 {
			return 0, p.metaErr(m, true, "too many arguments", "", -1, `\%s takes at most one argument (a variable name prefix), got %d`, name, len(args))
		}
		var prev *Command
		if n := len(p.cmds); n > 0 {
			prev = p.cmds[n-1]
		}
		if prev == nil || prev.Kind != CmdSQL || prev.SQL.Store != StoreNone {
			// pgbench's words name \gset for \aset too, and add the line
			// of a meta-command before it (SQL's is not known yet then).
			more := ""
			if prev != nil && prev.Kind != CmdSQL {
				more = p.metaText[prev]
			}
			lineno := p.line(b)
			return 0, pgSyntaxError(fmt.Sprintf("%s:%d: \\%s must follow an SQL command, expected a query before it", p.name, lineno, name),
				p.name, lineno, "", "", `\gset must follow an SQL command`, more, -1)
		}
		prev.SQL.Store = StoreGset
		if name == "aset" {
			prev.SQL.Store = StoreAset
		}
		if len(args) == 1 {
			prev.SQL.Prefix = args[0].s
		}
		return next, nil // merged into the SQL command

	case "startpipeline":
		if err := noArgs(); err != nil {
			return 0, err
		}
		// pgbench checks the pipeline's state when the command runs
		// (already in pipeline mode, not in pipeline mode, \gset in a
		// pipeline, a pipeline left open): so does the interpreter.
		cmd.Kind = CmdStartPipeline

	case "syncpipeline":
		if err := noArgs(); err != nil {
			return 0, err
		}
		cmd.Kind = CmdSyncPipeline

	case "endpipeline":
		if err := noArgs(); err != nil {
			return 0, err
		}
		cmd.Kind = CmdEndPipeline

	default:
		return 0, p.metaErr(m, true, "invalid command", "", -1, `invalid command \%s, expected one of %s`, words[0].s, metaCommands)
	}
	p.metaText[cmd] = m.text
	p.cmds = append(p.cmds, cmd)
	return next, nil
}

// branch returns the innermost open conditional for an \elif or \else,
// or nil when there is none or it already had its \else (an error
// pgbench reports once the script is read: condErr).
func (p *scriptParser) branch(b int, name string) *condFrame {
	n := len(p.conds)
	if n == 0 {
		p.condErr(b, fmt.Sprintf(`\%s without matching \if`, name))
		return nil
	}
	f := p.conds[n-1]
	if f.sawElse {
		p.condErr(b, fmt.Sprintf(`\%s after \else`, name))
		return nil
	}
	return f
}

// sleep parses \sleep n [us|ms|s], n an integer constant (possibly glued to
// its unit, as "10ms") or a :variable.
func (p *scriptParser) sleep(m *metaLine, cmd *Command, args []word) error {
	if len(args) == 0 {
		return p.metaErr(m, true, "missing argument", "", -1, `\sleep needs a duration, expected \sleep n [us|ms|s]`)
	}
	if len(args) > 2 {
		return p.metaErr(m, true, "too many arguments", "", m.col(args[2].start), `\sleep has too many arguments (%q), expected \sleep n [us|ms|s]`, args[2].s)
	}
	cmd.Kind = CmdSleep
	n := args[0].s
	unit, unitCol := "", 0
	if len(args) == 2 {
		unit, unitCol = args[1].s, m.col(args[1].start)
	}
	if strings.HasPrefix(n, ":") {
		if !ValidVarName(n[1:]) {
			return p.errAt(m.b, `invalid variable reference %q in \sleep, expected :name`, n)
		}
		cmd.Sleep = Arg{Var: n[1:]}
	} else {
		i := 0
		if i < len(n) && (n[i] == '+' || n[i] == '-') {
			i++
		}
		j := i
		for j < len(n) && isDigit(n[j]) {
			j++
		}
		if j == i || j < len(n) && (len(args) == 2) {
			return p.metaErr(m, true, "invalid sleep time, must be an integer", n, m.col(args[0].start),
				`invalid sleep time %q, expected an integer or a :variable`, n)
		}
		if j < len(n) {
			unit, unitCol = n[j:], m.col(args[0].start+j)
		}
		v, err := strconv.ParseInt(n[:j], 10, 64)
		if err != nil {
			return p.errAt(m.b, `sleep time %q is out of range, expected a 64-bit integer`, n[:j])
		}
		cmd.Sleep = Arg{Lit: strconv.FormatInt(v, 10)}
	}
	switch strings.ToLower(unit) {
	case "", "s":
		cmd.SleepUnit = time.Second
	case "ms":
		cmd.SleepUnit = time.Millisecond
	case "us":
		cmd.SleepUnit = time.Microsecond
	default:
		return p.metaErr(m, true, "unrecognized time unit, must be us, ms or s", unit, unitCol,
			`unrecognized time unit %q in \sleep, expected us, ms or s`, unit)
	}
	return nil
}

// maxMetaWords is pgbench's MAX_ARGS: the most words a meta-command's line
// may have, its name included.
const maxMetaWords = 256

// maxArgs refuses a meta-command of more than maxMetaWords words, as
// pgbench does when it reads the script (before it has the line to show).
func (p *scriptParser) maxArgs(m *metaLine, name string, words []word) error {
	if len(words) > maxMetaWords {
		return p.metaErr(m, false, "too many arguments", "", -1,
			`too many arguments in command "%s": %d words, expected at most %d with the command's name`, name, len(words), maxMetaWords)
	}
	return nil
}

// shellArg parses an argument of \shell or \setshell: text, :var, or ::text
// for the literal ":text".
func (p *scriptParser) shellArg(b int, name, w string) (Arg, error) {
	switch {
	case !strings.HasPrefix(w, ":"):
		return Arg{Lit: w}, nil
	case strings.HasPrefix(w, "::"):
		return Arg{Lit: w[1:]}, nil
	case !ValidVarName(w[1:]):
		return Arg{}, p.errAt(b, `invalid variable reference %q in \%s, expected :name (or ::text for a literal ":text")`, w, name)
	}
	return Arg{Var: w[1:]}, nil
}

// continued reports whether the newline at e, in the meta-command whose
// backslash is at b, is escaped by a backslash (optionally before a \r).
func continued(src string, b, e int) bool {
	k := e - 1
	if k > b && src[k] == '\r' {
		k--
	}
	return k > b && src[k] == '\\'
}

// collapseContinuations joins continued lines of a meta-command with one
// space.
func collapseContinuations(raw string) string {
	raw = strings.ReplaceAll(raw, "\\\r\n", "\\\n")
	parts := strings.Split(raw, "\\\n")
	for i := range parts {
		if i > 0 {
			parts[i] = strings.TrimLeft(parts[i], " \t\r\f\v")
		}
		if i < len(parts)-1 {
			parts[i] = strings.TrimRight(parts[i], " \t\r\f\v")
		}
	}
	return strings.TrimRight(strings.Join(parts, " "), " \t\r\f\v")
}

// Vars lists, sorted and without duplicates, every variable the script
// reads: :name in SQL, in expressions (including the :default_seed implied
// by hash functions and permute without a seed), and in \sleep, \shell and
// \setshell arguments.
func (s *Script) Vars() []string {
	seen := map[string]bool{}
	for _, c := range s.Commands {
		if c.SQL != nil {
			for _, q := range c.SQL.Queries {
				for _, v := range q.Vars {
					seen[v] = true
				}
			}
		}
		if c.Expr != nil {
			exprVars(c.Expr, seen)
		}
		if c.Kind == CmdSleep && c.Sleep.Var != "" {
			seen[c.Sleep.Var] = true
		}
		for _, a := range c.Args {
			if a.Var != "" {
				seen[a.Var] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func exprVars(e Expr, seen map[string]bool) {
	switch x := e.(type) {
	case VarRef:
		seen[x.Name] = true
	case *VarRef:
		seen[x.Name] = true
	case Call:
		for _, a := range x.Args {
			exprVars(a, seen)
		}
	case *Call:
		for _, a := range x.Args {
			exprVars(a, seen)
		}
	case Case:
		exprCaseVars(x.When, x.Then, x.Else, seen)
	case *Case:
		exprCaseVars(x.When, x.Then, x.Else, seen)
	}
}

func exprCaseVars(when, then []Expr, els Expr, seen map[string]bool) {
	for _, w := range when {
		exprVars(w, seen)
	}
	for _, t := range then {
		exprVars(t, seen)
	}
	if els != nil {
		exprVars(els, seen)
	}
}

// Assigned lists, sorted and without duplicates, the variables the script
// assigns by \set and \setshell (\gset and \aset assign names known only
// from the result columns).
func (s *Script) Assigned() []string {
	seen := map[string]bool{}
	for _, c := range s.Commands {
		if c.Kind == CmdSet || c.Kind == CmdSetShell {
			seen[c.Var] = true
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// HasPipeline reports whether the script uses \startpipeline.
func (s *Script) HasPipeline() bool {
	for _, c := range s.Commands {
		if c.Kind == CmdStartPipeline {
			return true
		}
	}
	return false
}

// HasCompound reports whether a SQL command glues several queries with \;.
func (s *Script) HasCompound() bool {
	for _, c := range s.Commands {
		if c.SQL != nil && len(c.SQL.Queries) > 1 {
			return true
		}
	}
	return false
}

// HasShell reports whether the script runs shell commands (\shell or
// \setshell).
func (s *Script) HasShell() bool {
	for _, c := range s.Commands {
		if c.Kind == CmdShell || c.Kind == CmdSetShell {
			return true
		}
	}
	return false
}

// Text returns the query as written, with its :name references.
func (q Query) Text() string {
	var b strings.Builder
	for i, part := range q.Parts {
		b.WriteString(part)
		if i < len(q.Vars) {
			b.WriteByte(':')
			b.WriteString(q.Vars[i])
		}
	}
	return b.String()
}
