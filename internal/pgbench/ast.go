// Package pgbench is pgbench's custom-script language: the parser of script
// files (SQL commands and meta-commands), the expression language of \set,
// \if and \elif with all of pgbench's functions, and pgbench's builtin
// scripts. It runs nothing: internal/workload/script interprets a parsed
// Script against a database session. Reference: pgbench's documentation
// (PostgreSQL 15), "Custom Scripts" and "Built-in Operators/Functions";
// docs/pgbench.md.
package pgbench

import "time"

// Script is one parsed script file or builtin.
type Script struct {
	// Name is the file name as given, or the builtin's description
	// ("<builtin: TPC-B (sort of)>").
	Name     string
	Weight   int // from FILE@W; 1 when not given
	Commands []*Command
}

// CmdKind is what a command does.
type CmdKind int

const (
	CmdSQL           CmdKind = iota + 1 // a SQL command (SQL set)
	CmdSet                              // \set Var Expr
	CmdSleep                            // \sleep Sleep SleepUnit
	CmdSetShell                         // \setshell Var Args...
	CmdShell                            // \shell Args...
	CmdIf                               // \if Expr
	CmdElif                             // \elif Expr
	CmdElse                             // \else
	CmdEndif                            // \endif
	CmdStartPipeline                    // \startpipeline
	CmdSyncPipeline                     // \syncpipeline
	CmdEndPipeline                      // \endpipeline
)

// Command is one command of a script.
type Command struct {
	Kind CmdKind
	Line int    // 1-based line of the file where the command starts
	Text string // the command as written, on one line (for reports: pgbench -r)

	SQL *SQL // CmdSQL

	Var  string // CmdSet, CmdSetShell: the variable assigned
	Expr Expr   // CmdSet, CmdIf, CmdElif

	// CmdSleep: the duration is Sleep's value (an integer constant or a
	// :var) times SleepUnit (time.Second, time.Millisecond or
	// time.Microsecond).
	Sleep     Arg
	SleepUnit time.Duration

	Args []Arg // CmdShell, CmdSetShell: the command and its arguments

	// Conditionals, as indexes into Script.Commands resolved by the
	// parser: for CmdIf and CmdElif, Next is the matching CmdElif, CmdElse
	// or CmdEndif to jump to when the condition is false; for CmdIf,
	// CmdElif and CmdElse, End is the matching CmdEndif (where a taken
	// branch continues when it reaches the next CmdElif or CmdElse).
	Next, End int
}

// Arg is a meta-command argument: literal text, or a :var reference
// (Var set). "::text" is the literal ":text".
type Arg struct {
	Var string
	Lit string
}

// StoreKind is what a SQL command does with its result rows.
type StoreKind int

const (
	StoreNone StoreKind = iota
	StoreGset           // \gset: the last query must return exactly one row
	StoreAset           // \aset: every query's last row, if any
)

// SQL is one SQL command: one query, or several glued with \; (compound).
type SQL struct {
	Queries []Query
	Store   StoreKind
	Prefix  string // variable name prefix of \gset / \aset
	// Raw is the command's text as pgbench keeps it, from its first
	// character (after white space and -- comments) to its end, for
	// pgbench's messages about it.
	Raw string
}

// Query is one query's text split at its :var references:
// Parts[0] Vars[0] Parts[1] … Vars[n-1] Parts[n], so len(Parts) ==
// len(Vars)+1. "::" is literal text, never a reference. Substitution does
// not respect quotes, as in pgbench.
type Query struct {
	Parts []string
	Vars  []string
}

// Expr is a node of an expression tree: Const, VarRef, Call or Case.
type Expr interface{ expr() }

// Const is a literal: integer, double, boolean or NULL.
type Const struct{ V Value }

// VarRef is :name.
type VarRef struct{ Name string }

// Call is a function or an operator applied to its arguments. Operators use
// their symbol or keyword as Fn: "+", "-", "*", "/", "%", "unary-", "&",
// "|", "#", "~", "<<", ">>", "=", "<>", "<", "<=", ">", ">=", "and", "or",
// "not", "is" (second argument a Const), "isnotnull", "isnull"... Functions
// use their lower-case name ("random_zipfian").
type Call struct {
	Fn   string
	Args []Expr

	id funcID // resolved by the parser; 0 in a hand-built Call (Fn is looked up)
}

// Case is CASE WHEN c1 THEN r1 … [ELSE e] END; Else is nil without ELSE
// (then the value is NULL).
type Case struct {
	When, Then []Expr
	Else       Expr
}

func (Const) expr()  {}
func (VarRef) expr() {}
func (Call) expr()   {}
func (Case) expr()   {}

// Kind is a Value's type.
type Kind int

const (
	Null Kind = iota
	Bool
	Int
	Double
)

// Value is an expression's value.
type Value struct {
	K Kind
	B bool
	I int64
	F float64
}
