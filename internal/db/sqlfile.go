package db

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// ParseNamed reads a statements file: each section starts at a line
// "-- name: <name>" and its SQL runs to the next such line. Comment-only
// lines, surrounding whitespace and one trailing ';' are removed, so the
// text can be prepared as is. Errors name the line.
func ParseNamed(src string) (map[string]string, error) {
	out := map[string]string{}
	var (
		name      string // current section; "" before the first
		nameLine  int
		body      strings.Builder
		lineNo    int
		haveFirst bool
	)
	flush := func() error {
		if !haveFirst {
			return nil
		}
		sql := strings.TrimSpace(body.String())
		sql = strings.TrimSpace(strings.TrimSuffix(sql, ";"))
		if sql == "" {
			return fmt.Errorf("line %d: statement %q is empty", nameLine, name)
		}
		out[name] = sql
		body.Reset()
		return nil
	}
	for rest := src; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		lineNo++
		t := strings.TrimSpace(line)
		if n, ok := sectionName(t); ok {
			if err := flush(); err != nil {
				return nil, err
			}
			if n == "" || strings.ContainsAny(n, " \t") {
				return nil, fmt.Errorf("line %d: bad section name %q: use \"-- name: <name>\"", lineNo, n)
			}
			if _, dup := out[n]; dup {
				return nil, fmt.Errorf("line %d: statement %q defined twice", lineNo, n)
			}
			name, nameLine, haveFirst = n, lineNo, true
			continue
		}
		if t == "" || strings.HasPrefix(t, "--") {
			continue // comment-only lines never reach the server
		}
		if !haveFirst {
			return nil, fmt.Errorf("line %d: SQL before the first \"-- name:\" line", lineNo)
		}
		body.WriteString(strings.TrimRight(line, "\r"))
		body.WriteByte('\n')
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// sectionName recognises "-- name: x" (spacing after "--" is free).
func sectionName(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, "--")
	if !ok {
		return "", false
	}
	rest, ok = strings.CutPrefix(strings.TrimSpace(rest), "name:")
	if !ok {
		return "", false
	}
	return strings.TrimSpace(rest), true
}

// SplitScript splits a SQL script into statements on ';' outside quotes
// ('…', "…", `…`), comments (--, /* */) and PostgreSQL dollar quotes
// ($$…$$, $tag$…$tag$). A line "DELIMITER xx" (the MySQL client's command)
// between statements makes xx the separator until the next DELIMITER line;
// those lines are not statements. Leading comments are dropped from each
// statement, and statements with no SQL are left out. A quote inside quotes
// is written twice; backslash is not an escape (standard SQL, not MySQL).
func SplitScript(src string) ([]string, error) {
	var (
		out   []string
		delim = ";"
		start = -1 // first significant byte of the current statement
		line  = 1
	)
	emit := func(end int) {
		if start >= 0 {
			if s := strings.TrimSpace(src[start:end]); s != "" {
				out = append(out, s)
			}
		}
		start = -1
	}
	atLineStart := true
	for i := 0; i < len(src); {
		c := src[i]
		// Like the mysql client, DELIMITER is a command only where a
		// statement could start.
		if atLineStart && start < 0 {
			if d, next, ok := delimiterLine(src, i); ok {
				if d == "" {
					return nil, fmt.Errorf("line %d: DELIMITER needs a value", line)
				}
				delim = d
				i = next
				continue
			}
		}
		atLineStart = false
		if c == '\n' {
			line++
			atLineStart = true
			i++
			continue
		}
		if strings.HasPrefix(src[i:], delim) {
			emit(i)
			i += len(delim)
			continue
		}
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				i = len(src)
			} else {
				i += j // the newline is handled above
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return nil, fmt.Errorf("line %d: unterminated /* comment", line)
			}
			line += strings.Count(src[i:i+2+j], "\n")
			i += 2 + j + 2
			continue
		}
		if start < 0 {
			start = i
		}
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := closeQuote(src, i+1, c)
			if j < 0 {
				return nil, fmt.Errorf("line %d: unterminated %c quote", line, c)
			}
			line += strings.Count(src[i:j], "\n")
			i = j
		case c == '$' && delim == ";" && (i == 0 || !identByte(src[i-1])):
			tag, ok := dollarTag(src, i)
			if !ok {
				i++
				continue
			}
			j := strings.Index(src[i+len(tag):], tag)
			if j < 0 {
				return nil, fmt.Errorf("line %d: unterminated %s quote", line, tag)
			}
			end := i + len(tag) + j + len(tag)
			line += strings.Count(src[i:end], "\n")
			i = end
		default:
			i++
		}
	}
	emit(len(src))
	return out, nil
}

// delimiterLine recognises "DELIMITER xx" at src[i:] (the start of a line,
// leading blanks allowed) and returns xx and the offset after the line.
func delimiterLine(src string, i int) (string, int, bool) {
	j := i
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	const kw = "delimiter"
	if len(src)-j < len(kw) || !strings.EqualFold(src[j:j+len(kw)], kw) {
		return "", 0, false
	}
	j += len(kw)
	if j < len(src) && src[j] != ' ' && src[j] != '\t' && src[j] != '\n' && src[j] != '\r' {
		return "", 0, false // an identifier such as delimiters
	}
	end := strings.IndexByte(src[j:], '\n')
	next := len(src)
	if end >= 0 {
		next = j + end // leave the newline to the caller's line count
		end = j + end
	} else {
		end = len(src)
	}
	return strings.TrimSpace(src[j:end]), next, true
}

// closeQuote returns the offset just after the quote q that closes a quoted
// run starting at src[i:], treating a doubled quote as an escaped one, or
// -1 when it is not closed.
func closeQuote(src string, i int, q byte) int {
	for {
		j := strings.IndexByte(src[i:], q)
		if j < 0 {
			return -1
		}
		i += j + 1
		if i < len(src) && src[i] == q {
			i++
			continue
		}
		return i
	}
}

// dollarTag returns "$tag$" when src[i:] opens a PostgreSQL dollar quote.
// A tag is empty or an identifier that does not start with a digit ($1 is a
// parameter, not a quote).
func dollarTag(src string, i int) (string, bool) {
	j := i + 1
	if j < len(src) && src[j] >= '0' && src[j] <= '9' {
		return "", false
	}
	for j < len(src) && identByte(src[j]) {
		j++
	}
	if j < len(src) && src[j] == '$' {
		return src[i : j+1], true
	}
	return "", false
}

// identByte reports whether c can be part of an unquoted identifier.
func identByte(c byte) bool {
	return c == '_' || c >= 0x80 || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// SQLFiles reads a database package's embedded SQL: sql/<workload>/<name>.sql.
// Dirs lists where to look, in order, first found wins (default "sql"); a
// dialect overlays the generic files this way, e.g. MariaDB with
// Dirs: []string{"sql/mariadb", "sql"}.
type SQLFiles struct {
	FS   fs.FS
	Dirs []string
}

func (f SQLFiles) dirs() []string {
	if len(f.Dirs) == 0 {
		return []string{"sql"}
	}
	return f.Dirs
}

// Named returns the named statements of a workload: the sections of
// statements.sql and checks.sql (a missing file has none). With several
// Dirs, each name comes from the first dir that defines it; within one dir a
// name defined in both files is an error.
func (f SQLFiles) Named(workload string) (map[string]string, error) {
	out := map[string]string{}
	for _, dir := range f.dirs() {
		here := map[string]string{}
		for _, file := range []string{"statements.sql", "checks.sql"} {
			p := path.Join(dir, workload, file)
			src, err := fs.ReadFile(f.FS, p)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", p, err)
			}
			m, err := ParseNamed(string(src))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			for name, sql := range m {
				if _, dup := here[name]; dup {
					return nil, fmt.Errorf("%s: statement %q is also defined in another file of %s", p, name, path.Join(dir, workload))
				}
				here[name] = sql
			}
		}
		for name, sql := range here {
			if _, seen := out[name]; !seen {
				out[name] = sql
			}
		}
	}
	return out, nil
}

// Script returns the statements of sql/<workload>/<name>.sql from the first
// dir that has the file; ok is false when none has it.
func (f SQLFiles) Script(workload, name string) (stmts []string, ok bool, err error) {
	for _, dir := range f.dirs() {
		p := path.Join(dir, workload, name+".sql")
		src, err := fs.ReadFile(f.FS, p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("read %s: %w", p, err)
		}
		stmts, err := SplitScript(string(src))
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", p, err)
		}
		return stmts, true, nil
	}
	return nil, false, nil
}

// InsertSQL is INSERT INTO t (c1, c2) VALUES (?,?),(?,?)… for n rows, with
// identifiers quoted by the database's quote function.
func InsertSQL(table string, cols []string, n int, quote func(string) string) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(quote(table))
	b.WriteString(" (")
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(c))
	}
	b.WriteString(") VALUES ")
	row := "(" + strings.Repeat("?,", len(cols)-1) + "?)"
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row)
	}
	return b.String()
}
