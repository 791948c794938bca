package pgbench

import (
	"strings"
	"testing"
	"time"
)

// The builtin scripts as pgbench 15.18 prints them with --show-script (doc
// section 3), without the "-- name: description" header.
func TestBuiltinTextsMatchPgbench(t *testing.T) {
	common := `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
`
	want := map[string]string{
		"tpcb-like": common + `UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`,
		"simple-update": common + `INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`,
		"select-only": `\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
`,
	}
	if got := strings.Join(BuiltinNames(), ","); got != "tpcb-like,simple-update,select-only" {
		t.Errorf("BuiltinNames = %s", got)
	}
	for name, text := range want {
		if got := BuiltinText(name); got != text {
			t.Errorf("BuiltinText(%s) =\n%s\nwant\n%s", name, got, text)
		}
	}
	if BuiltinText("nope") != "" {
		t.Error("BuiltinText of an unknown name is not empty")
	}
}

func TestBuiltinParse(t *testing.T) {
	tests := []struct {
		spec, name string
		weight     int
		ncmds      int
	}{
		{"tpcb-like", "<builtin: TPC-B (sort of)>", 1, 11},
		{"t", "<builtin: TPC-B (sort of)>", 1, 11},
		{"simple-update@3", "<builtin: simple update>", 3, 9},
		{"simple", "<builtin: simple update>", 1, 9},
		{"se@0", "<builtin: select only>", 0, 2},
		{"select-only", "<builtin: select only>", 1, 2},
	}
	for _, tt := range tests {
		s, err := Builtin(tt.spec)
		if err != nil {
			t.Fatalf("Builtin(%q): %v", tt.spec, err)
		}
		if s.Name != tt.name || s.Weight != tt.weight || len(s.Commands) != tt.ncmds {
			t.Errorf("Builtin(%q) = %q weight %d, %d commands; want %q, %d, %d", tt.spec, s.Name, s.Weight, len(s.Commands), tt.name, tt.weight, tt.ncmds)
		}
	}

	s, _ := Builtin("tpcb-like")
	wantKinds := []CmdKind{CmdSet, CmdSet, CmdSet, CmdSet, CmdSQL, CmdSQL, CmdSQL, CmdSQL, CmdSQL, CmdSQL, CmdSQL}
	if got := kinds(s); !equalKinds(got, wantKinds) {
		t.Errorf("tpcb-like kinds = %v", got)
	}
	upd := s.Commands[5]
	if upd.Text != "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;" || upd.Line != 6 {
		t.Errorf("command 5 = %q line %d", upd.Text, upd.Line)
	}
	q := upd.SQL.Queries[0]
	if strings.Join(q.Parts, "|") != "UPDATE pgbench_accounts SET abalance = abalance + | WHERE aid = |;" || strings.Join(q.Vars, ",") != "delta,aid" {
		t.Errorf("parts %q vars %q", q.Parts, q.Vars)
	}
	if s.Commands[0].Text != `\set aid random(1, 100000 * :scale)` || s.Commands[0].Var != "aid" {
		t.Errorf("command 0 = %q var %q", s.Commands[0].Text, s.Commands[0].Var)
	}
	if got := strings.Join(s.Vars(), ","); got != "aid,bid,delta,scale,tid" {
		t.Errorf("Vars = %s", got)
	}
	if got := strings.Join(s.Assigned(), ","); got != "aid,bid,delta,tid" {
		t.Errorf("Assigned = %s", got)
	}
	if s.HasPipeline() || s.HasCompound() || s.HasShell() {
		t.Error("tpcb-like has a pipeline, compound or shell")
	}
}

func TestBuiltinErrors(t *testing.T) {
	tests := []struct{ spec, err string }{
		{"xx", `no builtin script found for name "xx", expected one of tpcb-like, simple-update, select-only`},
		{"s", `ambiguous builtin name: 2 builtin scripts found for prefix "s", expected one of tpcb-like, simple-update, select-only`},
		{"", `ambiguous builtin name: 3 builtin scripts found for prefix "", expected one of tpcb-like, simple-update, select-only`},
		{"list", `no builtin script found for name "list", expected one of tpcb-like, simple-update, select-only`},
		{"tpcb-like@x", `invalid weight specification: @x, expected NAME@W with W an integer >= 0`},
		{"tpcb-like@-1", `invalid weight specification: @-1, expected NAME@W with W an integer >= 0`},
		{"tpcb-like@2147483648", `weight specification out of range (0 .. 2147483647): 2147483648`},
	}
	for _, tt := range tests {
		_, err := Builtin(tt.spec)
		if err == nil || err.Error() != tt.err {
			t.Errorf("Builtin(%q) error = %v, want %s", tt.spec, err, tt.err)
		}
	}
}

func equalKinds(a, b []CmdKind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Random sequences observed with pgbench 15.18 and --random-seed: client i's
// state is seeded with the (i+1)th draw of the base sequence seeded with
// the random seed.
func TestRandMatchesPgbench(t *testing.T) {
	tests := []struct {
		seed uint64
		want [][5]int64 // random(1,1e9), random_exponential(1,1e6,3), random_gaussian(1,1e6,2.5), random_zipfian(1,1e6,1.5), random(-5,5)
	}{
		{1, [][5]int64{{844374174, 312216, 517581, 1, 5}, {44361492, 63821, 375468, 11, -3}, {980923182, 669138, 417024, 4, 5}}},
		{12345, [][5]int64{{463926666, 203370, 488825, 3, -1}, {737767850, 95403, 529748, 2, 2}}},
	}
	script := `random(1, 1000000000)|random_exponential(1, 1000000, 3.0)|random_gaussian(1, 1000000, 2.5)|random_zipfian(1, 1000000, 1.5)|random(-5, 5)`
	for _, tt := range tests {
		env := newEnv(nil)
		env.r = NewRand(NewRand(tt.seed).Uint64())
		for _, row := range tt.want {
			for i, src := range strings.Split(script, "|") {
				v, err := evalString(t, src, env)
				if err != nil || v.K != Int || v.I != row[i] {
					t.Errorf("seed %d: %s = %v, %v; want %d", tt.seed, src, v, err, row[i])
				}
			}
		}
	}
	// Clients 1 and 2 of -c 3 with --random-seed=1.
	base := NewRand(1)
	base.Uint64()
	for _, want := range []int64{224645818, 589216788} {
		r := NewRand(base.Uint64())
		if got := r.Int64Range(1, 1000000000); got != want {
			t.Errorf("next client's first random(1, 1000000000) = %d, want %d", got, want)
		}
	}
	// :default_seed is the draw after the clients' (-c 1: the second).
	if got := int64(base.Uint64()); got != -3060036491186211434 {
		t.Errorf("draw 3 of seed 1 = %d", got)
	}
}

func TestEvalCore(t *testing.T) {
	env := newEnv(map[string]Value{"scale": IntValue(10), "x": IntValue(7), "d": DoubleValue(2.5)})
	tests := []struct {
		src  string
		want Value
	}{
		{"1 + 2 * 3", IntValue(7)},
		{":x * 6", IntValue(42)},
		{":x / 2", IntValue(3)},
		{"-7 / 2", IntValue(-3)},
		{"-7 % 3", IntValue(-1)},
		{":d * 2", DoubleValue(5)},
		{"(1 + 2) * 3", IntValue(9)},
		{"100000 * :scale", IntValue(1000000)},
	}
	for _, tt := range tests {
		v, err := evalString(t, tt.src, env)
		if err != nil || v != tt.want {
			t.Errorf("%s = %v (%v), %v; want %v", tt.src, v, v.K, err, tt.want)
		}
	}
	for i := 0; i < 1000; i++ {
		v, err := evalString(t, "random(1, 100000 * :scale)", env)
		if err != nil || v.K != Int || v.I < 1 || v.I > 1000000 {
			t.Fatalf("random = %v, %v", v, err)
		}
	}
}

func TestValueString(t *testing.T) {
	tests := []struct {
		v    Value
		want string
	}{
		{IntValue(42), "42"},
		{IntValue(-9223372036854775808), "-9223372036854775808"},
		{DoubleValue(1.0 / 3), "0.333333333333333"},
		{DoubleValue(1e20), "1e+20"},
		{DoubleValue(100000), "100000"},
		{DoubleValue(1e-5), "1e-05"},
		{DoubleValue(2.5e15), "2.5e+15"},
		{DoubleValue(0.1 + 0.2), "0.3"},
		{DoubleValue(123456789012345678), "1.23456789012346e+17"},
		{DoubleValue(2.5), "2.5"},
		{DoubleValue(0), "0"},
		{DoubleValue(negZero()), "-0"},
		{DoubleValue(posInf()), "Infinity"},
		{DoubleValue(-posInf()), "-Infinity"},
		{DoubleValue(nan()), "NaN"},
		{BoolValue(true), "true"},
		{BoolValue(false), "false"},
		{NullValue(), "NULL"},
	}
	for _, tt := range tests {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestParseValue(t *testing.T) {
	tests := []struct {
		in   string
		want Value
		err  string
	}{
		{"null", NullValue(), ""},
		{"NULL", NullValue(), ""},
		{"t", BoolValue(true), ""},
		{"TRUE", BoolValue(true), ""},
		{"tru", BoolValue(true), ""},
		{"y", BoolValue(true), ""},
		{"yes", BoolValue(true), ""},
		{"on", BoolValue(true), ""},
		{"ON", BoolValue(true), ""},
		{"f", BoolValue(false), ""},
		{"fals", BoolValue(false), ""},
		{"n", BoolValue(false), ""},
		{"no", BoolValue(false), ""},
		{"of", BoolValue(false), ""},
		{"off", BoolValue(false), ""},
		{"42", IntValue(42), ""},
		{"-42", IntValue(-42), ""},
		{"+42", IntValue(42), ""},
		{"  7", IntValue(7), ""},
		{"007", IntValue(7), ""},
		{"9223372036854775807", IntValue(9223372036854775807), ""},
		{"-9223372036854775808", IntValue(-9223372036854775808), ""},
		{"2.5", DoubleValue(2.5), ""},
		{"1e3", DoubleValue(1000), ""},
		{".5", DoubleValue(0.5), ""},
		{"-1.5E-3", DoubleValue(-0.0015), ""},
		{"9223372036854775808", Value{}, `value "9223372036854775808" is out of range for type bigint`},
		{"", Value{}, `malformed variable value: ""`},
		{"abc", Value{}, `malformed variable value: "abc"`},
		{"o", Value{}, `malformed variable value: "o"`},
		{"truex", Value{}, `malformed variable value: "truex"`},
		{"nul", Value{}, `malformed variable value: "nul"`},
		{"1.5x", Value{}, `malformed variable value: "1.5x"`},
		{"1e999", Value{}, `malformed variable value: "1e999"`},
		{"1e-400", Value{}, `malformed variable value: "1e-400"`},
		{"42 ", Value{}, `malformed variable value: "42 "`},
	}
	for _, tt := range tests {
		v, err := ParseValue(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseValue(%q) = %v, %v; want error %s", tt.in, v, err, tt.err)
			}
			continue
		}
		if err != nil || v != tt.want {
			t.Errorf("ParseValue(%q) = %#v, %v; want %#v", tt.in, v, err, tt.want)
		}
	}
}

func TestParseFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := dir + "/" + name
		if err := writeFile(p, text); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.sql", "SELECT 1;\n")
	at := write("odd@name.sql", "\\sleep 10 ms\n")
	digits := write("v@2", "SELECT 2\n")

	s, err := ParseFile(a + "@5")
	if err != nil || s.Weight != 5 || s.Name != a || len(s.Commands) != 1 {
		t.Fatalf("ParseFile(a@5) = %+v, %v", s, err)
	}
	s, err = ParseFile(a)
	if err != nil || s.Weight != 1 {
		t.Fatalf("ParseFile(a) = %+v, %v", s, err)
	}
	s, err = ParseFile(at)
	if err != nil || s.Name != at || s.Commands[0].Kind != CmdSleep || s.Commands[0].SleepUnit != time.Millisecond {
		t.Fatalf("ParseFile(odd@name) = %+v, %v", s, err)
	}
	// "v@2" is read as file "v" weighted 2: '@' + digits at the end is a weight.
	if _, err := ParseFile(digits); err == nil || !strings.Contains(err.Error(), "could not read file") {
		t.Errorf("ParseFile(v@2) error = %v", err)
	}
	if s, err := ParseFile(digits + "@0"); err != nil || s.Weight != 0 || s.Name != digits {
		t.Errorf("ParseFile(v@2@0) = %+v, %v", s, err)
	}
	_, err = ParseFile(dir + "/missing.sql")
	oneLineErr(t, err, `could not read file "`+dir+`/missing.sql": no such file or directory`)
	_, err = ParseFile(a + "@99999999999")
	oneLineErr(t, err, `weight specification out of range (0 .. 2147483647): 99999999999`)
	bad := write("bad.sql", "SELECT 1;\n\\set x\n")
	_, err = ParseFile(bad)
	oneLineErr(t, err, bad+`:2: \set needs a variable name and an expression`)
}
