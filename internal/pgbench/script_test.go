package pgbench

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// queries renders a SQL command's queries as "text|text" with :vars.
func queries(c *Command) string {
	var qs []string
	for _, q := range c.SQL.Queries {
		qs = append(qs, q.Text())
	}
	return strings.Join(qs, "|")
}

func TestParseSQL(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		want   []string // per command: Text, then "=> queries" for SQL
		lines  []int
		remark string
	}{
		{
			name:  "one command per semicolon, comments and blank lines ignored",
			text:  "-- a comment\n\nSELECT 1;\n  -- another\nSELECT 2; SELECT 3;\n",
			want:  []string{"SELECT 1; => SELECT 1;", "SELECT 2; => SELECT 2;", "SELECT 3; => SELECT 3;"},
			lines: []int{3, 5, 5},
		},
		{
			name:  "commands span lines; the last may omit its semicolon",
			text:  "SELECT\n  1\n  + 2;\nSELECT 4\n",
			want:  []string{"SELECT 1 + 2; => SELECT\n  1\n  + 2;", "SELECT 4 => SELECT 4"},
			lines: []int{1, 4},
		},
		{
			name:  "comment inside a command is kept",
			text:  "select 4 -- c\n;\n",
			want:  []string{"select 4 -- c ; => select 4 -- c\n;"},
			lines: []int{1},
		},
		{
			name:  "semicolons in quotes, identifiers, dollar quotes, comments and parentheses",
			text:  "select ';', \"a;b\", $$ ; $$, $t$ ; $t$, E'\\' ;', /* ; /* ; */ ; */ (1\n;2);\nselect 2;",
			want:  []string{"select ';', \"a;b\", $$ ; $$, $t$ ; $t$, E'\\' ;', /* ; /* ; */ ; */ (1 ;2); => select ';', \"a;b\", $$ ; $$, $t$ ; $t$, E'\\' ;', /* ; /* ; */ ; */ (1\n;2);", "select 2; => select 2;"},
			lines: []int{1, 3},
		},
		{
			name: "standard strings keep backslashes; doubled quotes",
			text: "select 'a\\', 'it''s;';select 2;",
			want: []string{"select 'a\\', 'it''s;'; => select 'a\\', 'it''s;';", "select 2; => select 2;"},
		},
		{
			name: "identifiers with $ and positional parameters are not dollar quotes",
			text: "select a$b$, $1;select 2;",
			want: []string{"select a$b$, $1; => select a$b$, $1;", "select 2; => select 2;"},
		},
		{
			name: "CREATE FUNCTION ... BEGIN ATOMIC body keeps its semicolons",
			text: "create or replace function f() returns int language sql begin atomic select 1; select case when true then 2 end; end;\nselect f();\ncreate procedure p() language sql begin atomic select 1; end;\nbegin;\nend;",
			want: []string{
				"create or replace function f() returns int language sql begin atomic select 1; select case when true then 2 end; end; => create or replace function f() returns int language sql begin atomic select 1; select case when true then 2 end; end;",
				"select f(); => select f();",
				"create procedure p() language sql begin atomic select 1; end; => create procedure p() language sql begin atomic select 1; end;",
				"begin; => begin;",
				"end; => end;",
			},
		},
		{
			name:  "compound queries: \\; splits, the ; belongs to each query",
			text:  "SELECT 1 \\; SELECT 2 \\;\n  select 3;\n",
			want:  []string{"SELECT 1 \\; SELECT 2 \\; select 3; => SELECT 1 ;|SELECT 2 ;|select 3;"},
			lines: []int{1},
		},
		{
			name: "empty statements of a compound are dropped",
			text: "select 1 \\; \\; -- nothing\n select 2 \\;\n",
			want: []string{"select 1 \\; \\; -- nothing select 2 \\; => select 1 ;|select 2 ;"},
		},
		{
			name: "\\: is a literal colon (then substituted as pgbench does)",
			text: "select :a\\:b;",
			want: []string{"select :a\\:b; => select :a:b;"},
		},
		{
			name: "a SQL command directly followed by a meta-command needs no semicolon",
			text: "SELECT 1 \\set x 2\nSELECT 3",
			want: []string{"SELECT 1 => SELECT 1", "\\set x 2", "SELECT 3 => SELECT 3"},
		},
		{
			name: "a lone semicolon is an (empty) command",
			text: "select 1;;",
			want: []string{"select 1; => select 1;", "; => ;"},
		},
		{
			name: "comment only at the end",
			text: "select 1; -- bye",
			want: []string{"select 1; => select 1;"},
		},
	}
	for _, tt := range tests {
		s, err := Parse("t.sql", tt.text)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		var got []string
		for _, c := range s.Commands {
			g := c.Text
			if c.Kind == CmdSQL {
				g += " => " + queries(c)
			}
			got = append(got, g)
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s:\ngot  %q\nwant %q", tt.name, got, tt.want)
		}
		for i, l := range tt.lines {
			if i < len(s.Commands) && s.Commands[i].Line != l {
				t.Errorf("%s: command %d line %d, want %d", tt.name, i, s.Commands[i].Line, l)
			}
		}
	}
}

func TestSplitVars(t *testing.T) {
	tests := []struct {
		q     string
		parts string
		vars  string
	}{
		{"select :a, :b_2, :_c", "select |, |, |", "a,b_2,_c"},
		{"select :x::int", "select |::int", "x"},
		{"select x::int, 'a::b'", "select x::int, 'a::b'", ""},
		{"select ':v', \":v\"", "select '|', \"|\"", "v,v"},
		{"select :1x, : y, :", "select :1x, : y, :", ""},
		{"select :::x", "select :::x", ""},
		{"select :été+:ß", "select |+|", "été,ß"},
		{"select :a:b", "select ||", "a,b"},
		{":a", "|", "a"},
		{"select $1", "select $1", ""},
	}
	for _, tt := range tests {
		q := splitVars(tt.q)
		if strings.Join(q.Parts, "|") != tt.parts || strings.Join(q.Vars, ",") != tt.vars || len(q.Parts) != len(q.Vars)+1 {
			t.Errorf("splitVars(%q) = %q %q", tt.q, q.Parts, q.Vars)
		}
		if q.Text() != tt.q {
			t.Errorf("splitVars(%q).Text() = %q", tt.q, q.Text())
		}
	}
}

func TestParseMetaCommands(t *testing.T) {
	s := mustParse(t, "m.sql", `\set x 1 + :y
\SET  Ünï   2
\sleep 10
\sleep 10 ms
\sleep 25ms
\sleep 7 US
\sleep :t s
\sleep +5 S
\sleep -3
\setshell out echo :x ::lit plain
\shell touch /tmp/:name
\startpipeline
SELECT 1;
\syncpipeline
SELECT 2;
\endpipeline
SELECT :x AS a \gset
SELECT 1 AS b \gset pre_
SELECT 1 \; SELECT 2 \aset
SELECT 3 \aset q_
`)
	want := []struct {
		kind CmdKind
		text string
		line int
	}{
		{CmdSet, `\set x 1 + :y`, 1},
		{CmdSet, `\SET  Ünï   2`, 2},
		{CmdSleep, `\sleep 10`, 3},
		{CmdSleep, `\sleep 10 ms`, 4},
		{CmdSleep, `\sleep 25ms`, 5},
		{CmdSleep, `\sleep 7 US`, 6},
		{CmdSleep, `\sleep :t s`, 7},
		{CmdSleep, `\sleep +5 S`, 8},
		{CmdSleep, `\sleep -3`, 9},
		{CmdSetShell, `\setshell out echo :x ::lit plain`, 10},
		{CmdShell, `\shell touch /tmp/:name`, 11},
		{CmdStartPipeline, `\startpipeline`, 12},
		{CmdSQL, `SELECT 1;`, 13},
		{CmdSyncPipeline, `\syncpipeline`, 14},
		{CmdSQL, `SELECT 2;`, 15},
		{CmdEndPipeline, `\endpipeline`, 16},
		{CmdSQL, `SELECT :x AS a`, 17},
		{CmdSQL, `SELECT 1 AS b`, 18},
		{CmdSQL, `SELECT 1 \; SELECT 2`, 19},
		{CmdSQL, `SELECT 3`, 20},
	}
	if len(s.Commands) != len(want) {
		t.Fatalf("%d commands, want %d: %v", len(s.Commands), len(want), kinds(s))
	}
	for i, w := range want {
		c := s.Commands[i]
		if c.Kind != w.kind || c.Text != w.text || c.Line != w.line {
			t.Errorf("command %d = %v %q line %d, want %v %q line %d", i, c.Kind, c.Text, c.Line, w.kind, w.text, w.line)
		}
	}
	c := s.Commands
	if c[0].Var != "x" || sexpr(c[0].Expr) != "(+ 1 :y)" {
		t.Errorf("\\set: %q %s", c[0].Var, sexpr(c[0].Expr))
	}
	if c[1].Var != "Ünï" || sexpr(c[1].Expr) != "2" {
		t.Errorf("\\SET: %q %s", c[1].Var, sexpr(c[1].Expr))
	}
	sleeps := []struct {
		arg  Arg
		unit time.Duration
	}{
		{Arg{Lit: "10"}, time.Second},
		{Arg{Lit: "10"}, time.Millisecond},
		{Arg{Lit: "25"}, time.Millisecond},
		{Arg{Lit: "7"}, time.Microsecond},
		{Arg{Var: "t"}, time.Second},
		{Arg{Lit: "5"}, time.Second},
		{Arg{Lit: "-3"}, time.Second},
	}
	for i, w := range sleeps {
		if got := c[2+i]; got.Sleep != w.arg || got.SleepUnit != w.unit {
			t.Errorf("%s: %+v %v, want %+v %v", got.Text, got.Sleep, got.SleepUnit, w.arg, w.unit)
		}
	}
	if c[9].Var != "out" || len(c[9].Args) != 4 || c[9].Args[0] != (Arg{Lit: "echo"}) || c[9].Args[1] != (Arg{Var: "x"}) ||
		c[9].Args[2] != (Arg{Lit: ":lit"}) || c[9].Args[3] != (Arg{Lit: "plain"}) {
		t.Errorf("\\setshell: %q %+v", c[9].Var, c[9].Args)
	}
	if len(c[10].Args) != 2 || c[10].Args[1] != (Arg{Lit: "/tmp/:name"}) {
		t.Errorf("\\shell: %+v", c[10].Args)
	}
	stores := []struct {
		i      int
		store  StoreKind
		prefix string
		q      string
	}{
		{12, StoreNone, "", "SELECT 1;"},
		{16, StoreGset, "", "SELECT :x AS a"},
		{17, StoreGset, "pre_", "SELECT 1 AS b"},
		{18, StoreAset, "", "SELECT 1 ;|SELECT 2"},
		{19, StoreAset, "q_", "SELECT 3"},
	}
	for _, w := range stores {
		sq := c[w.i].SQL
		if sq.Store != w.store || sq.Prefix != w.prefix || queries(c[w.i]) != w.q {
			t.Errorf("command %d: store %v prefix %q queries %q", w.i, sq.Store, sq.Prefix, queries(c[w.i]))
		}
	}
	if !s.HasPipeline() || !s.HasCompound() || !s.HasShell() {
		t.Errorf("HasPipeline %v HasCompound %v HasShell %v", s.HasPipeline(), s.HasCompound(), s.HasShell())
	}
	if got := strings.Join(s.Vars(), ","); got != "t,x,y" {
		t.Errorf("Vars = %s", got)
	}
	if got := strings.Join(s.Assigned(), ","); got != "out,x,Ünï" {
		t.Errorf("Assigned = %s", got)
	}
}

func TestParseGsetFollowsSemicolon(t *testing.T) {
	// As in pgbench, \gset may follow a command already ended by ';'.
	s := mustParse(t, "g.sql", "select 6 as six;\\gset\nselect 7 as seven;\n\\aset p\n")
	if len(s.Commands) != 2 || s.Commands[0].SQL.Store != StoreGset || s.Commands[1].SQL.Store != StoreAset || s.Commands[1].SQL.Prefix != "p" {
		t.Errorf("commands %v", kinds(s))
	}
}

func TestParseContinuations(t *testing.T) {
	s := mustParse(t, "c.sql", "\\set x 1 + \\\n   2 \\\r\n * 3\n\\shell echo \\\n  a\\\nb\n\\sleep \\\n 5 \\\n ms\nselect :x;\n")
	if len(s.Commands) != 4 {
		t.Fatalf("commands %v", kinds(s))
	}
	if c := s.Commands[0]; c.Text != `\set x 1 + 2 * 3` || sexpr(c.Expr) != "(+ 1 (* 2 3))" || c.Line != 1 {
		t.Errorf("\\set: %q %s line %d", c.Text, sexpr(c.Expr), c.Line)
	}
	if c := s.Commands[1]; c.Text != `\shell echo a b` || len(c.Args) != 3 || c.Args[1].Lit != "a" || c.Args[2].Lit != "b" || c.Line != 4 {
		t.Errorf("\\shell: %q %+v line %d", c.Text, c.Args, c.Line)
	}
	if c := s.Commands[2]; c.Sleep.Lit != "5" || c.SleepUnit != time.Millisecond || c.Line != 7 {
		t.Errorf("\\sleep: %+v %v line %d", c.Sleep, c.SleepUnit, c.Line)
	}
	if c := s.Commands[3]; c.Line != 10 {
		t.Errorf("select line %d", c.Line)
	}
}

func TestParseConditionals(t *testing.T) {
	s := mustParse(t, "if.sql", `\if :a
  select 1;
\elif :b
  \if :c
    select 2;
  \else
    select 3;
  \endif
\elif :d
  select 4;
\else
  select 5;
\endif
\if :e
  select 6;
\endif
`)
	type nx struct {
		kind      CmdKind
		next, end int
	}
	want := []nx{
		{CmdIf, 2, 12},   // 0 \if :a
		{CmdSQL, 0, 0},   // 1
		{CmdElif, 8, 12}, // 2 \elif :b
		{CmdIf, 5, 7},    // 3 \if :c
		{CmdSQL, 0, 0},   // 4
		{CmdElse, 0, 7},  // 5
		{CmdSQL, 0, 0},   // 6
		{CmdEndif, 0, 0}, // 7
		{CmdElif, 10, 12},
		{CmdSQL, 0, 0},
		{CmdElse, 0, 12},
		{CmdSQL, 0, 0},
		{CmdEndif, 0, 0}, // 12
		{CmdIf, 15, 15},  // 13
		{CmdSQL, 0, 0},
		{CmdEndif, 0, 0}, // 15
	}
	if len(s.Commands) != len(want) {
		t.Fatalf("commands %v", kinds(s))
	}
	for i, w := range want {
		c := s.Commands[i]
		if c.Kind != w.kind || c.Next != w.next || c.End != w.end {
			t.Errorf("command %d %q: kind %v next %d end %d, want %v %d %d", i, c.Text, c.Kind, c.Next, c.End, w.kind, w.next, w.end)
		}
	}
	if sexpr(s.Commands[0].Expr) != ":a" || sexpr(s.Commands[2].Expr) != ":b" {
		t.Error("conditions not parsed")
	}
}

// \if :x takes numbers as truth values: 0 takes the \else, 2.5 the branch
// (doc section 4.3, observed on 15.18).
func TestIfTruthiness(t *testing.T) {
	s := mustParse(t, "if.sql", "\\if :x\nselect 1;\n\\else\nselect 0;\n\\endif\n")
	for _, tt := range []struct {
		x    string
		want bool
	}{{"0", false}, {"2.5", true}, {"1", true}, {"true", true}, {"off", false}, {"null", false}, {"0.0", false}} {
		v, err := ParseValue(tt.x)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Eval(s.Commands[0].Expr, newEnv(map[string]Value{"x": v}))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := c.Truthy(); got != tt.want {
			t.Errorf("\\if :x with x = %s: %v", tt.x, got)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ text, err string }{
		// \set
		{"\\set", `bad.sql:1: \set needs a variable name and an expression`},
		{"select 1;\n\n\\set x", `bad.sql:3: \set needs a variable name and an expression`},
		{"\\set x 1 +)", `bad.sql:1: syntax error in expression at ")": expected an operand`},
		{"\n\n\n\n\\set x 1 *+)", `bad.sql:5: syntax error in expression at ")": expected an operand`},
		{"\\set x 1 +\n", `bad.sql:1: syntax error at end of expression: expected an operand`},
		{"\\set x foo(1)", `bad.sql:1: unknown function "foo", expected one of ` + strings.Join(FunctionNames(), ", ")},
		{"\\set x random(1)", `bad.sql:1: random() called with 1 argument, expected 2 arguments`},
		// \if, \elif, \else, \endif
		{"\\if", `bad.sql:1: \if needs an expression`},
		{"\\if 1\n\\elif\n\\endif", `bad.sql:2: \elif needs an expression`},
		{"\\if (1\n\\endif", `bad.sql:1: syntax error at end of expression: expected an operator or ")"`},
		{"select 1;\n\\else", `bad.sql:2: \else without matching \if`},
		{"\\elif 1", `bad.sql:1: \elif without matching \if`},
		{"\\endif", `bad.sql:1: \endif without matching \if`},
		{"\\if 1\n\\else\n\\else\n\\endif", `bad.sql:3: \else after \else`},
		{"\\if 1\n\\else\n\\elif 2\n\\endif", `bad.sql:3: \elif after \else`},
		{"\\if 1\n\\else x\n\\endif", `bad.sql:2: \else takes no argument, got "x"`},
		{"\\if 1\n\\endif x", `bad.sql:2: \endif takes no argument, got "x"`},
		{"\\if 1\nselect 1;\n\\if 2\n\\endif\n", `bad.sql: missing \endif for the \if at line 1`},
		{"select 1;\n\\if 1\n", `bad.sql: missing \endif for the \if at line 2`},
		// \sleep
		{"\\sleep", `bad.sql:1: \sleep needs a duration, expected \sleep n [us|ms|s]`},
		{"\\sleep 1 ms x", `bad.sql:1: \sleep has too many arguments ("x"), expected \sleep n [us|ms|s]`},
		{"\\sleep abc", `bad.sql:1: invalid sleep time "abc", expected an integer or a :variable`},
		{"\\sleep 5x ms", `bad.sql:1: invalid sleep time "5x", expected an integer or a :variable`},
		{"\\sleep +", `bad.sql:1: invalid sleep time "+", expected an integer or a :variable`},
		{"\\sleep 5 m", `bad.sql:1: unrecognized time unit "m" in \sleep, expected us, ms or s`},
		{"\\sleep 5min", `bad.sql:1: unrecognized time unit "min" in \sleep, expected us, ms or s`},
		{"\\sleep :", `bad.sql:1: invalid variable reference ":" in \sleep, expected :name`},
		{"\\sleep :1x", `bad.sql:1: invalid variable reference ":1x" in \sleep, expected :name`},
		{"\\sleep 99999999999999999999", `bad.sql:1: sleep time "99999999999999999999" is out of range, expected a 64-bit integer`},
		// \setshell, \shell
		{"\\setshell", `bad.sql:1: \setshell needs a variable name and a command`},
		{"\\setshell x", `bad.sql:1: \setshell needs a variable name and a command`},
		{"\\setshell x echo :", `bad.sql:1: invalid variable reference ":" in \setshell, expected :name (or ::text for a literal ":text")`},
		{"\\shell", `bad.sql:1: \shell needs a command`},
		{"\\shell echo :-x", `bad.sql:1: invalid variable reference ":-x" in \shell, expected :name (or ::text for a literal ":text")`},
		// pgbench's MAX_ARGS: 256 words with the command's name
		{"\\shell echo " + strings.Repeat("a ", 255), `bad.sql:1: too many arguments in command "shell": 257 words, expected at most 256 with the command's name`},
		{"\\setshell v echo \\\n" + strings.Repeat("1 ", 254), `bad.sql:1: too many arguments in command "setshell": 257 words, expected at most 256 with the command's name`},
		// \gset, \aset
		{"\\gset", `bad.sql:1: \gset must follow an SQL command, expected a query before it`},
		{"\\set x 1\n\\gset", `bad.sql:2: \gset must follow an SQL command, expected a query before it`},
		{"select 1 \\gset\n\\gset", `bad.sql:2: \gset must follow an SQL command, expected a query before it`},
		{"select 1 \\aset a b", `bad.sql:1: \aset takes at most one argument (a variable name prefix), got 2`},
		// pipelines
		{"\\startpipeline x", `bad.sql:1: \startpipeline takes no argument, got "x"`},
		{"\\startpipeline\n\\syncpipeline 1", `bad.sql:2: \syncpipeline takes no argument, got "1"`},
		{"\\startpipeline\n\\endpipeline 1", `bad.sql:2: \endpipeline takes no argument, got "1"`},
		// unknown meta-commands, lone backslash
		{"select 1;\n\\foo bar", `bad.sql:2: invalid command \foo, expected one of ` + metaCommands},
		{"\\set(x) 1", `bad.sql:1: invalid command \set(x), expected one of ` + metaCommands},
		{"select 1 \\\n", `bad.sql:1: missing command name after "\", expected a meta-command (` + metaCommands + `)`},
		// whole script
		{"", `bad.sql: empty script, expected at least one SQL command or meta-command`},
		{"-- only a comment\n\n", `bad.sql: empty script, expected at least one SQL command or meta-command`},
		// unterminated SQL
		{"select 'abc;\n\\set x 1", `bad.sql:1: unterminated quoted string, expected a closing '`},
		{"select 1;\nselect E'\\';", `bad.sql:2: unterminated quoted string, expected a closing '`},
		{"select \"x;", `bad.sql:1: unterminated quoted identifier, expected a closing "`},
		{"select $a$ x;", `bad.sql:1: unterminated dollar-quoted string, expected a closing $a$`},
		{"select 1 /* /* */;", `bad.sql:1: unterminated /* comment, expected */`},
	}
	for _, tt := range tests {
		_, err := Parse("bad.sql", tt.text)
		if err == nil || err.Error() != tt.err {
			t.Errorf("Parse(%q) error:\n got %v\nwant %s", tt.text, err, tt.err)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\r\n") {
			t.Errorf("Parse(%q) error is not one line: %q", tt.text, err)
		}
	}
}

// What pgbench checks only when the command runs parses: an invalid
// variable name to assign, and the pipeline's state (already in a
// pipeline, not in one, \gset inside one, one left open).
func TestParseLeavesRunTimeErrors(t *testing.T) {
	for _, text := range []string{
		"\\set 1x 2", "\\set x= 2", "\\setshell 9 echo 1",
		"\\startpipeline\nselect 1 \\gset\n\\endpipeline", "\\startpipeline\nselect 1 \\; select 2 \\aset\n\\endpipeline",
		"\\startpipeline\n\\startpipeline", "\\endpipeline", "\\syncpipeline", "select 0;\n\\startpipeline\nselect 1;\n",
	} {
		if _, err := Parse("ok.sql", text); err != nil {
			t.Errorf("Parse(%q): %v", text, err)
		}
	}
}

// A \shell or \setshell line of 256 words, the command's name included,
// is pgbench's most.
func TestParseShellMaxWords(t *testing.T) {
	for _, text := range []string{"\\shell echo " + strings.Repeat("a ", 254), "\\setshell v echo " + strings.Repeat("1 ", 253)} {
		s, err := Parse("ok.sql", text)
		if err != nil {
			t.Fatalf("%d words: %v", len(strings.Fields(text)), err)
		}
		if n := len(s.Commands[0].Args); n != 255 && n != 254 {
			t.Errorf("%d arguments", n)
		}
	}
}

// "::" casts stay literal, in SQL and in \shell arguments.
func TestCasts(t *testing.T) {
	s := mustParse(t, "cast.sql", "select :x::int, 1::text, '2'::bigint;\n\\shell echo ::x\n")
	q := s.Commands[0].SQL.Queries[0]
	if strings.Join(q.Vars, ",") != "x" || strings.Join(q.Parts, "|") != "select |::int, 1::text, '2'::bigint;" {
		t.Errorf("parts %q vars %q", q.Parts, q.Vars)
	}
	if a := s.Commands[1].Args[1]; a != (Arg{Lit: ":x"}) {
		t.Errorf("\\shell arg %+v", a)
	}
}

// The same errors in pgbench 15's words (ScriptError.PgbenchLines), which
// sledge pgbench prints: the caret's column counts from the backslash,
// continuation lines included.
func TestParseErrorsPgbenchLines(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"\\set x 1 +)", []string{`bad.sql:1: syntax error in command "set"`, `\set x 1 +)`, `          ^ error found here`}},
		{"SELECT 1;\n  \\set x 1 +\n", []string{`bad.sql:2: syntax error in command "set"`, `\set x 1 +`, `          ^ error found here`}},
		{"\\set x 1 + \\\n  foo(2)\n", []string{`bad.sql:1: unexpected function name (foo) in command "set"`, "\\set x 1 + \\\n  foo(2)", `                 ^ error found here`}},
		{"\\SET x abs(1, 2)", []string{`bad.sql:1: unexpected number of arguments (abs) in command "SET"`, `\SET x abs(1, 2)`, `               ^ error found here`}},
		{"\\set x abs", []string{`bad.sql:1: syntax error in command "set"`, `\set x abs`, `         ^ error found here`}},
		{"\\set x 1 @ 2", []string{`bad.sql:1: unexpected character (@) in command "set"`, `\set x 1 @ 2`, `         ^ error found here`}},
		{"\\sleep 5 m", []string{`bad.sql:1: unrecognized time unit, must be us, ms or s (m) in command "sleep"`, `\sleep 5 m`, `         ^ error found here`}},
		{"\\startpipeline x", []string{`bad.sql:1: unexpected argument in command "startpipeline"`, `\startpipeline x`}},
		{"\\shell echo " + strings.Repeat("a ", 255), []string{`bad.sql:1: too many arguments in command "shell"`}},
		{"select 1;\n\\if 1\n", []string{`condition error in script "bad.sql" command 3: \if without matching \endif`}},
		{"\\if 1\n\\else\n\\else\n\\set x 1 +\n", []string{`bad.sql:4: syntax error in command "set"`, `\set x 1 +`, `          ^ error found here`}},
		{"select 1 \\aset\n\\aset", []string{`bad.sql:2: \gset must follow an SQL command`}},
		{"select 'abc;\n", []string{`bad.sql:1: unterminated quoted string, expected a closing '`}},
	}
	for _, tt := range tests {
		_, err := Parse("bad.sql", tt.text)
		var se *ScriptError
		if !errors.As(err, &se) {
			t.Errorf("%q: %v, want a *ScriptError", tt.text, err)
			continue
		}
		if got := se.PgbenchLines(); !slices.Equal(got, tt.want) {
			t.Errorf("%q:\n got %q\nwant %q", tt.text, got, tt.want)
		}
	}
}
