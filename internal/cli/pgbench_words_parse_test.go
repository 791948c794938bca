package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Bad scripts, in pgbench 15's words: the kinds of mistakes pgbench's own
// test files make in scripts (002_pgbench_no_server.pl's script cases and
// the cases of 001_pgbench_with_server.pl that end with exit 1 before any
// client runs), each with what pgbench prints, line for line. pgbench
// reads every script before it connects, and so does sledge pgbench: no
// server is needed. Where pgbench is installed, each command line also
// runs through it and the two stderrs must be the same apart from the
// program's name.

// pgbSameWords turns sledge pgbench's stderr into pgbench's: its prefix
// and its --help hint name pgbench, and getopt's complaints (which glibc
// starts with the program's path) too. getopt's complaints lose the
// "error: " that sledge keeps before them (docs/contracts.md: every error
// of sledge pgbench starts "sledge pgbench: error: ").
func pgbSameWords(s string) string {
	s = strings.ReplaceAll(s, `Try "sledge pgbench --help"`, `Try "pgbench --help"`)
	s = regexp.MustCompile(`(?m)^(sledge pgbench|\S*/pgbench): `).ReplaceAllString(s, "pgbench: ")
	return regexp.MustCompile(`(?m)^pgbench: error: ((unrecognized|invalid) option|option )`).ReplaceAllString(s, "pgbench: $1")
}

// caretUnder is pgbench's caret line under the last byte of the last sub
// in line; caretAfter under the byte just after line (an error at the
// newline that ends the command).
func caretUnder(line, sub string) string {
	return strings.Repeat(" ", strings.LastIndex(line, sub)+len(sub)-1) + "^ error found here"
}

func caretAfter(line string) string { return strings.Repeat(" ", len(line)) + "^ error found here" }

func TestPgbenchParseErrorWords(t *testing.T) {
	// 001's options: the cases fail before any -D or -M matters, except
	// -M prepared for the MAX_ARGS case.
	opts001 := []string{"-n", "-t", "1", "-Dfoo=bla", "-Dnull=null", "-Dtrue=true", "-Done=1", "-Dzero=0.0",
		"-Dbadtrue=trueXXX", "-Dmaxint=9223372036854775807", "-Dminint=-9223372036854775808", "-M", "prepared"}
	manyArgs := "SELECT LEAST(" + rep(":i", ", ", 256) + ")"
	cases := []struct {
		name   string
		args   []string // before the -f of each script
		script string   // written to {f}
		want   []string // stderr, line for line, pgbench's prefix; {f} is the script's path
	}{
		// Conditionals: checked once the script is read, numbered by
		// command.
		{"if without endif", nil, `\if 1`, []string{`pgbench: error: condition error in script "{f}" command 2: \if without matching \endif`}},
		{"elif without if", nil, `\elif 1`, []string{`pgbench: error: condition error in script "{f}" command 1: \elif without matching \if`}},
		{"else without if", nil, `\else`, []string{`pgbench: error: condition error in script "{f}" command 1: \else without matching \if`}},
		{"endif without if", nil, `\endif`, []string{`pgbench: error: condition error in script "{f}" command 1: \endif without matching \if`}},
		{"elif after else", nil, "\\if 1\n\\else\n\\elif 0\n\\endif", []string{`pgbench: error: condition error in script "{f}" command 3: \elif after \else`}},
		{"else after else", nil, "\\if 1\n\\else\n\\else\n\\endif", []string{`pgbench: error: condition error in script "{f}" command 3: \else after \else`}},
		{"endif without if after SQL", nil, "SELECT 1;\n-- a comment is no command\nSELECT 2;\n\\endif\n",
			[]string{`pgbench: error: condition error in script "{f}" command 3: \endif without matching \if`}},
		{"a syntax error comes before a condition error", nil, "\\else\n\\set i 1 +\n",
			[]string{`pgbench: error: {f}:2: syntax error in command "set"`, `\set i 1 +`, caretAfter(`\set i 1 +`)}},
		// Expressions: the line, and a caret under where pgbench found the
		// error.
		{"if without expression", nil, "\\if\n\\endif\n", []string{`pgbench: error: {f}:1: syntax error in command "if"`, `\if`, caretAfter(`\if`)}},
		{"elif with half an expression", nil, "\\if 0\n\\elif +\n\\endif\n",
			[]string{`pgbench: error: {f}:2: syntax error in command "elif"`, `\elif +`, caretAfter(`\elif +`)}},
		{"else with an argument", nil, "\\if 0\n\\else BAD\n\\endif\n", []string{`pgbench: error: {f}:2: unexpected argument in command "else"`, `\else BAD`}},
		{"endif with an argument", nil, "\\if 0\n\\endif BAD\n", []string{`pgbench: error: {f}:2: unexpected argument in command "endif"`, `\endif BAD`}},
		{"least of nothing", nil, "\\set i least()\n",
			[]string{`pgbench: error: {f}:1: at least one argument expected (least) in command "set"`, `\set i least()`, caretUnder(`\set i least()`, ")")}},
		{"greatest of nothing", nil, "\\set i greatest()\n",
			[]string{`pgbench: error: {f}:1: at least one argument expected (greatest) in command "set"`, `\set i greatest()`, caretUnder(`\set i greatest()`, ")")}},
		{"hash of nothing", nil, "\\set i hash()\n",
			[]string{`pgbench: error: {f}:1: unexpected number of arguments (hash) in command "set"`, `\set i hash()`, caretUnder(`\set i hash()`, ")")}},
		{"hash of three", nil, "\\set i hash(1,2,3)\n",
			[]string{`pgbench: error: {f}:1: unexpected number of arguments (hash) in command "set"`, `\set i hash(1,2,3)`, caretUnder(`\set i hash(1,2,3)`, ")")}},
		{"permute of one", nil, "\\set i permute(1)\n",
			[]string{`pgbench: error: {f}:1: unexpected number of arguments (permute) in command "set"`, `\set i permute(1)`, caretUnder(`\set i permute(1)`, ")")}},
		{"permute of four", nil, "\\set i permute(1, 2, 3, 4)\n",
			[]string{`pgbench: error: {f}:1: unexpected number of arguments (permute) in command "set"`, `\set i permute(1, 2, 3, 4)`, caretUnder(`\set i permute(1, 2, 3, 4)`, ")")}},
		{"bigint constant overflow", nil, "\\set i 100000000000000000000\n",
			[]string{`pgbench: error: {f}:1: bigint constant overflow (100000000000000000000) in command "set"`, `\set i 100000000000000000000`, caretUnder(`\set i 100000000000000000000`, "100000000000000000000")}},
		{"the minimum integer without its minus", nil, "\\set i 9223372036854775808\n",
			[]string{`pgbench: error: {f}:1: syntax error in command "set"`, `\set i 9223372036854775808`, caretUnder(`\set i 9223372036854775808`, "8")}},
		{"double constant overflow", nil, "\\set d 1.0E309\n",
			[]string{`pgbench: error: {f}:1: double constant overflow (1.0E309) in command "set"`, `\set d 1.0E309`, caretUnder(`\set d 1.0E309`, "9")}},
		{"double constant overflow, leading dot", nil, "\\set d .1E310\n",
			[]string{`pgbench: error: {f}:1: double constant overflow (.1E310) in command "set"`, `\set d .1E310`, caretUnder(`\set d .1E310`, "0")}},
		{"set with half an expression", nil, "\\set i 1 +\n",
			[]string{`pgbench: error: {f}:1: syntax error in command "set"`, `\set i 1 +`, caretAfter(`\set i 1 +`)}},
		{"an error on a later line", nil, "SELECT 1;\n\n  \\set i (2 * 3\n",
			[]string{`pgbench: error: {f}:3: syntax error in command "set"`, `\set i (2 * 3`, caretAfter(`\set i (2 * 3`)}},

		// More of the expression grammar, and a line continued with \.
		{"an error on a continuation line", nil, "\\set x 1 + \\\n  foo(2)\n",
			[]string{`pgbench: error: {f}:1: unexpected function name (foo) in command "set"`, `\set x 1 + \`, `  foo(2)`, `                 ^ error found here`}},
		{"the command's name as written", nil, "\\SET x abs(1, 2)",
			[]string{`pgbench: error: {f}:1: unexpected number of arguments (abs) in command "SET"`, `\SET x abs(1, 2)`, `               ^ error found here`}},
		{"a function name without its arguments", nil, "\\set x abs",
			[]string{`pgbench: error: {f}:1: syntax error in command "set"`, `\set x abs`, `         ^ error found here`}},
		{"comparisons do not associate", nil, "\\set x 1 < 2 < 3\n",
			[]string{`pgbench: error: {f}:1: syntax error in command "set"`, `\set x 1 < 2 < 3`, `             ^ error found here`}},
		{"IS and a number", nil, "\\set x 1 is 5\n",
			[]string{`pgbench: error: {f}:1: syntax error in command "set"`, `\set x 1 is 5`, `            ^ error found here`}},
		{"an argument missing after a comma", nil, "\\set x abs(1,)\n",
			[]string{`pgbench: error: {f}:1: syntax error in command "set"`, `\set x abs(1,)`, `             ^ error found here`}},
		{"a colon without a name", nil, "\\set x :\n",
			[]string{`pgbench: error: {f}:1: unexpected character (:) in command "set"`, `\set x :`, `       ^ error found here`}},
		{"a double too small", nil, "\\set x 1e-400\n",
			[]string{`pgbench: error: {f}:1: double constant overflow (1e-400) in command "set"`, `\set x 1e-400`, `            ^ error found here`}},
		{"CASE without END", nil, "\\set x case when 1 then 2\n",
			[]string{`pgbench: error: {f}:1: syntax error in command "set"`, `\set x case when 1 then 2`, `                         ^ error found here`}},
		{"aset with two prefixes", nil, "SELECT 1;\n\\aset a b\n",
			[]string{`pgbench: error: {f}:2: too many arguments in command "aset"`, `\aset a b`}},
		{"sleep in a number for a unit", nil, "\\sleep 5 5\n",
			[]string{`pgbench: error: {f}:1: unrecognized time unit, must be us, ms or s (5) in command "sleep"`, `\sleep 5 5`, `         ^ error found here`}},
		{"startpipeline with an argument", nil, "\\startpipeline x\n",
			[]string{`pgbench: error: {f}:1: unexpected argument in command "startpipeline"`, `\startpipeline x`}},
		{"an endif too many", nil, "\\if 1\n\\elif 2\n\\else\n\\endif\n\\endif\n",
			[]string{`pgbench: error: condition error in script "{f}" command 5: \endif without matching \if`}},
		{"a parenthesis left open over a continuation", nil, "\\set x (1 + \\\n 2\n",
			[]string{`pgbench: error: {f}:1: syntax error in command "set"`, `\set x (1 + \`, ` 2`, `                ^ error found here`}},
		{"an exclamation mark alone", nil, "\\set x 1 ! 2\n",
			[]string{`pgbench: error: {f}:1: unexpected character (!) in command "set"`, `\set x 1 ! 2`, `         ^ error found here`}},

		// 001's errors that end with exit 1 (its options; no server).
		{"too many variables for -M prepared", opts001, "-- MAX_ARGS=256 for prepared\n\\set i 0\n" + manyArgs,
			[]string{`pgbench: error: statement has too many arguments (maximum is 255): ` + manyArgs}},
		{"shell without command", opts001, `\shell`, []string{`pgbench: error: {f}:1: missing command in command "shell"`, `\shell`}},
		{"shell with 256 arguments", opts001, "-- 256 arguments to \\shell\n\\shell echo " + rep("arg", " ", 255),
			[]string{`pgbench: error: {f}:2: too many arguments in command "shell"`}},
		{"set with half an expression at the end of the file", opts001, `\set i 1 +`,
			[]string{`pgbench: error: {f}:1: syntax error in command "set"`, `\set i 1 +`, caretUnder(`\set i 1 +`, "+")}},
		{"unknown function", opts001, `\set i noSuchFunction()`,
			[]string{`pgbench: error: {f}:1: unexpected function name (noSuchFunction) in command "set"`, `\set i noSuchFunction()`, caretUnder(`\set i noSuchFunction()`, "noSuchFunction")}},
		{"unexpected character", opts001, `\set i ;`,
			[]string{`pgbench: error: {f}:1: unexpected character (;) in command "set"`, `\set i ;`, caretUnder(`\set i ;`, ";")}},
		{"set without expression", opts001, `\set i`,
			[]string{`pgbench: error: {f}:1: syntax error in command "set"`, `\set i`, caretUnder(`\set i`, "i")}},
		{"set without argument", opts001, `\set`, []string{`pgbench: error: {f}:1: missing argument in command "set"`}},
		{"CASE without WHEN", opts001, `\set i CASE TRUE THEN 1 ELSE 0 END`,
			[]string{`pgbench: error: {f}:1: syntax error in command "set"`, `\set i CASE TRUE THEN 1 ELSE 0 END`, caretUnder(`\set i CASE TRUE`, "TRUE")}},
		{"ln of two", opts001, `\set d ln(1.0, 2.0))`,
			[]string{`pgbench: error: {f}:1: unexpected number of arguments (ln) in command "set"`, `\set d ln(1.0, 2.0))`, caretUnder(`\set d ln(1.0, 2.0)`, ")")}},
		{"greatest of nothing, then more", opts001, `\set i greatest())`,
			[]string{`pgbench: error: {f}:1: at least one argument expected (greatest) in command "set"`, `\set i greatest())`, caretUnder(`\set i greatest()`, ")")}},
		{"setshell without command", opts001, `\setshell var`, []string{`pgbench: error: {f}:1: missing argument in command "setshell"`, `\setshell var`}},
		{"sleep with too many arguments", opts001, `\sleep too many args`,
			[]string{`pgbench: error: {f}:1: too many arguments in command "sleep"`, `\sleep too many args`, caretUnder(`\sleep too many a`, "a")}},
		{"sleep without duration", opts001, `\sleep`, []string{`pgbench: error: {f}:1: missing argument in command "sleep"`, `\sleep`}},
		{"sleep in weeks", opts001, `\sleep 1 week`,
			[]string{`pgbench: error: {f}:1: unrecognized time unit, must be us, ms or s (week) in command "sleep"`, `\sleep 1 week`, caretUnder(`\sleep 1 w`, "w")}},
		{"sleep glued to a bad unit", opts001, `\sleep 10min`,
			[]string{`pgbench: error: {f}:1: unrecognized time unit, must be us, ms or s (min) in command "sleep"`, `\sleep 10min`, caretUnder(`\sleep 10m`, "m")}},
		{"sleep not a number", opts001, `\sleep x1 ms`,
			[]string{`pgbench: error: {f}:1: invalid sleep time, must be an integer (x1) in command "sleep"`, `\sleep x1 ms`, caretUnder(`\sleep x`, "x")}},
		{"unknown meta-command", opts001, `\nosuchcommand`, []string{`pgbench: error: {f}:1: invalid command in command "nosuchcommand"`, `\nosuchcommand`}},
		{"empty script", opts001, ``, []string{`pgbench: error: empty command list for script "{f}"`}},
		{"comments only", opts001, "-- nothing\n\n", []string{`pgbench: error: empty command list for script "{f}"`}},
		{"gset first", opts001, `\gset`, []string{`pgbench: error: {f}:1: \gset must follow an SQL command`}},
		{"gset after a meta-command", opts001, "\\set i +1\n\\gset", []string{`pgbench: error: {f}:2: \gset must follow an SQL command (\set i +1)`}},
		{"aset after a meta-command", opts001, "\\sleep 1\n\\aset", []string{`pgbench: error: {f}:2: \gset must follow an SQL command (\sleep 1)`}},
		{"gset with two prefixes", opts001, `SELECT 1 \gset a b`, []string{`pgbench: error: {f}:1: too many arguments in command "gset"`, `\gset a b`}},
		{"gset twice", opts001, "SELECT 1 AS i \\gset\n\\gset", []string{`pgbench: error: {f}:2: \gset must follow an SQL command`}},
	}
	bin := pgbench15Bin(t)
	dir := t.TempDir()
	// Nothing may be reached: a case that got as far as connecting has no
	// parse error.
	vars := map[string]string{"PGHOST": filepath.Join(dir, "nosuchdir"), "PGPORT": "5432", "PGUSER": "nobody", "PGDATABASE": "nodb"}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("script_%d.sql", i))
			if err := os.WriteFile(path, []byte(tc.script), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append(append([]string(nil), tc.args...), "-f", path)
			stdout, stderr, code := sledgePgbench(t, dir, vars, args...)
			if code != 1 || stdout != "" {
				t.Fatalf("exit %d, want 1, with stdout %q (want none)\nstderr:\n%s", code, stdout, stderr)
			}
			want := strings.ReplaceAll(strings.Join(tc.want, "\n")+"\n", "{f}", path)
			if got := pgbSameWords(stderr); got != want {
				t.Errorf("stderr in pgbench's words:\n%s\nwant:\n%s", got, want)
			}
			if bin == "" {
				return
			}
			pout, perr, pcode := runPgbench15(t, bin, vars, args...)
			if pcode != code || pout != "" {
				t.Errorf("pgbench: exit %d, stdout %q; sledge pgbench: exit %d", pcode, pout, code)
			}
			if got, pg := pgbSameWords(stderr), pgbSameWords(perr); got != pg {
				t.Errorf("stderr differs from pgbench's:\nsledge pgbench:\n%s\npgbench:\n%s", got, pg)
			}
		})
	}
}

// The option cases' stderr, line for line against pgbench's (where
// pgbench is installed): TestPgbenchOptionErrors checks their meaning.
func pgbCompareStderr(t *testing.T, args []string, sledge, pgb string) {
	t.Helper()
	if got, want := pgbSameWords(sledge), pgbSameWords(pgb); got != want {
		t.Errorf("%q: stderr differs from pgbench's:\nsledge pgbench:\n%s\npgbench:\n%s", args, got, want)
	}
}
