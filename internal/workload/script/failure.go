package script

import (
	"errors"
	"fmt"

	"github.com/sledge-bench/sledge/internal/pgbench"
)

// Failure is a script's failed transaction as pgbench 15 names it: where
// (the script and command, numbered from 0 as pgbench's messages number
// them) and pgbench's words for what went wrong. sledge's own error, the
// one `sledge run` prints, is Err; `sledge pgbench` prints Lines.
type Failure struct {
	Script  int // the script's number in the run, from 0
	Command int // the command's number in its script, from 0; -1: the end of the script
	// Meta is the meta-command's name as pgbench writes it in its
	// message ("set", "shell", "startpipeline", "gset", …); "" for SQL.
	Meta string
	// Query is the statement of a compound SQL command (\;), from 0,
	// where known (a \gset or \aset result); else 0.
	Query int
	// SQL is the failed SQL command's text as sent: with the values
	// pasted (simple protocol) or with placeholders; "" for meta-commands.
	SQL string
	// Result: a \gset or \aset could not store the result.
	Result bool
	// Words are pgbench's lines for the error itself, before its closing
	// line; Closing is the closing line's end ("evaluation of
	// meta-command failed"), "" when the last of Words is it.
	Words   []string
	Closing string
	Err     error
}

// AsFailure finds a script's failure in err.
func AsFailure(err error) (*Failure, bool) {
	var e *cmdError
	if errors.As(err, &e) {
		return &e.f, true
	}
	return nil, false
}

// Lines are pgbench 15's error lines for the failure of client vu, without
// pgbench's "pgbench: error: " (each line is one pg_log_error; the last is
// the one that says the client was aborted, except after a \gset or \aset
// that failed, where pgbench says no more). server renders a database
// error as the database's client library prints it (libpq's
// "ERROR:  …" with its DETAIL, HINT and CONTEXT lines), false when err is
// not one.
func (f *Failure) Lines(vu int, server func(err error, sql string) (string, bool)) []string {
	switch {
	case f.Command < 0:
		return []string{fmt.Sprintf("client %d aborted: %s", vu, f.Words[0])}
	case f.Result:
		n := len(f.Words)
		lines := append([]string(nil), f.Words[:n-1]...)
		return append(lines, fmt.Sprintf("client %d script %d command %d query %d: %s", vu, f.Script, f.Command, f.Query, f.Words[n-1]))
	case f.Meta == "":
		msg, ok := server(f.Err, f.SQL)
		if !ok {
			msg = f.Err.Error()
		}
		return []string{fmt.Sprintf("client %d script %d aborted in command %d query %d: %s", vu, f.Script, f.Command, f.Query, msg)}
	case f.Closing == "":
		n := len(f.Words)
		lines := append([]string(nil), f.Words[:n-1]...)
		return append(lines, fmt.Sprintf("client %d aborted in command %d (%s) of script %d; %s", vu, f.Command, f.Meta, f.Script, f.Words[n-1]))
	}
	lines := append([]string(nil), f.Words...)
	return append(lines, fmt.Sprintf("client %d aborted in command %d (%s) of script %d; %s", vu, f.Command, f.Meta, f.Script, f.Closing))
}

// metaName is a meta-command's name as pgbench's messages write it.
var metaName = map[pgbench.CmdKind]string{
	pgbench.CmdSet: "set", pgbench.CmdSleep: "sleep", pgbench.CmdSetShell: "setshell", pgbench.CmdShell: "shell",
	pgbench.CmdIf: "if", pgbench.CmdElif: "elif", pgbench.CmdElse: "else", pgbench.CmdEndif: "endif",
	pgbench.CmdStartPipeline: "startpipeline", pgbench.CmdSyncPipeline: "syncpipeline", pgbench.CmdEndPipeline: "endpipeline",
}

// said is an error with pgbench's words for it, which differ from
// sledge's (Error): pgbench's lines and, for a meta-command, the end of
// its closing line ("" when the last line is it).
type said struct {
	err     error
	words   []string
	closing string
	meta    string // the command pgbench names, when not the failed command's kind (gset)
	result  bool   // a \gset or \aset result (Failure.Result)
	query   int
}

func (e *said) Error() string { return e.err.Error() }
func (e *said) Unwrap() error { return e.err }

// saying gives err pgbench's words.
func saying(err error, closing string, words ...string) error {
	return &said{err: err, words: words, closing: closing}
}

// failure is the failure of command k of script cs with err, in
// pgbench's terms; sql is the SQL command's text as sent.
func failure(cs *compiled, k *cmd, sql string, err error) Failure {
	f := Failure{Script: cs.idx, Command: k.num - 1, Err: err}
	var s *said
	if k.kind != pgbench.CmdSQL {
		f.Meta = metaName[k.kind]
		f.Words, f.Closing = []string{err.Error()}, "execution of meta-command failed"
		switch k.kind {
		case pgbench.CmdSet, pgbench.CmdIf, pgbench.CmdElif:
			f.Closing = "evaluation of meta-command failed"
		case pgbench.CmdStartPipeline, pgbench.CmdSyncPipeline, pgbench.CmdEndPipeline:
			f.Closing = ""
		}
	} else {
		f.SQL = sql
	}
	if errors.As(err, &s) {
		f.Words, f.Closing, f.Result, f.Query = s.words, s.closing, s.result, s.query
		if s.meta != "" {
			f.Meta = s.meta
		}
	}
	if k.kind == pgbench.CmdEndPipeline && s == nil {
		// An error read at \endpipeline is a pipelined command's: the
		// server's, as pgbench reports it for the command it reads at.
		f.Meta = ""
	}
	return f
}

// endFailure is a failure at the end of script cs: pgbench's "client N
// aborted: " and words.
func endFailure(cs *compiled, words string) error {
	err := fmt.Errorf("script %s: %s", cs.s.Name, words)
	return &cmdError{err: err, f: Failure{Script: cs.idx, Command: -1, Words: []string{words}, Err: err}, plain: true}
}
