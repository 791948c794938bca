package pgbench

import (
	"fmt"
	"strings"
)

// ScriptError is a mistake in a script's text, found when it is parsed.
// Error() is sledge's one line (what is wrong and what was expected);
// PgbenchLines is what pgbench 15 prints for the same mistake, so that
// `sledge pgbench` can say it in pgbench's words.
type ScriptError struct {
	sledge string
	pg     []string
}

func (e *ScriptError) Error() string { return e.sledge }

// PgbenchLines are pgbench 15's lines for the error: the first is its
// message (pgbench prints it after "pgbench: error: "); the others, when
// there are any, are printed as they are: the command's line and a caret
// under where the error was found ("   ^ error found here").
func (e *ScriptError) PgbenchLines() []string { return e.pg }

// pgSyntaxError is pgbench's syntax_error(): "SOURCE:LINENO: MSG (MORE)
// at column N in command "CMD"", then the command's line and a caret
// under column (0-based) when they are known. The column is in the
// message only when the line is not printed; more, command and line are
// left out when empty, column when negative.
func pgSyntaxError(sledge, source string, lineno int, line, command, msg, more string, column int) *ScriptError {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d: %s", source, lineno, msg)
	if more != "" {
		fmt.Fprintf(&b, " (%s)", more)
	}
	if column >= 0 && line == "" {
		fmt.Fprintf(&b, " at column %d", column+1)
	}
	if command != "" {
		fmt.Fprintf(&b, " in command \"%s\"", command)
	}
	pg := []string{b.String()}
	if line != "" {
		pg = append(pg, line)
		if column >= 0 {
			pg = append(pg, strings.Repeat(" ", column)+"^ error found here")
		}
	}
	return &ScriptError{sledge: sledge, pg: pg}
}

// pgFatal is an error pgbench reports in one line of its own (an empty
// script, a conditional out of place).
func pgFatal(sledge, line string) *ScriptError {
	return &ScriptError{sledge: sledge, pg: []string{line}}
}
