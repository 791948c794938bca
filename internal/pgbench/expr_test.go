package pgbench

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// sexpr prints a parse tree as an S-expression.
func sexpr(e Expr) string {
	switch x := e.(type) {
	case Const:
		if x.V.K == Double {
			return "d" + x.V.String()
		}
		return x.V.String()
	case VarRef:
		return ":" + x.Name
	case Call:
		parts := []string{x.Fn}
		for _, a := range x.Args {
			parts = append(parts, sexpr(a))
		}
		return "(" + strings.Join(parts, " ") + ")"
	case Case:
		parts := []string{"case"}
		for i := range x.When {
			parts = append(parts, sexpr(x.When[i]), sexpr(x.Then[i]))
		}
		if x.Else != nil {
			parts = append(parts, "else", sexpr(x.Else))
		}
		return "(" + strings.Join(parts, " ") + ")"
	}
	return fmt.Sprintf("?%T", e)
}

// The precedence table of doc section 5.2, and exprparse.y's
// associativity, as parse trees.
func TestExprPrecedence(t *testing.T) {
	tests := []struct{ src, tree string }{
		{"1 or 2 and 3", "(or 1 (and 2 3))"},
		{"1 and 2 or 3", "(or (and 1 2) 3)"},
		{"a() or b()", ""},
		{"not 1 and 2", "(and (not 1) 2)"},
		{"not 1 = 2", "(not (= 1 2))"},
		{"not :x is null", "(not (isnull :x))"},
		{"not not true", "(not (not true))"},
		{"1 = 2 isnull", "(isnull (= 1 2))"},
		{"1 < 2 isnull", "(isnull (< 1 2))"},
		{"1 isnull isnull", "(isnull (isnull 1))"},
		{"1 is null = false", "(= (isnull 1) false)"},
		{"1 is not null", "(isnotnull 1)"},
		{"1 notnull", "(isnotnull 1)"},
		{"1 is true", "(is 1 true)"},
		{"1 is not false", "(not (is 1 false))"},
		{"1 + 2 = 3", "(= (+ 1 2) 3)"},
		{"1 = 2 and 3 <> 4", "(and (= 1 2) (<> 3 4))"},
		{"1 != 2", "(<> 1 2)"},
		{"1 < 2", "(< 1 2)"},
		{"1 <= 2", "(<= 1 2)"},
		{"1 > 2", "(> 1 2)"},
		{"1 >= 2", "(>= 1 2)"},
		{"1 < 2 | 3", "(< 1 (| 2 3))"},
		{"8 | 6 & 3", "(& (| 8 6) 3)"},
		{"1 # 2 << 3 >> 4", "(>> (<< (# 1 2) 3) 4)"},
		{"1 | 2 + 1", "(| 1 (+ 2 1))"},
		{"1 << 2 + 1", "(<< 1 (+ 2 1))"},
		{"~ 1 + 1", "(~ (+ 1 1))"},
		{"~ 1 | 2", "(| (~ 1) 2)"},
		{"3 * ~ 1 + 1", "(* 3 (~ (+ 1 1)))"},
		{"1 + 2 * 3", "(+ 1 (* 2 3))"},
		{"1 - 2 - 3", "(- (- 1 2) 3)"},
		{"1 * 2 / 3 % 4", "(% (/ (* 1 2) 3) 4)"},
		{"- 2 * 3", "(* -2 3)"},
		{"- :x * 3", "(* (unary- :x) 3)"},
		{"- - 2", "2"},
		{"- 1.5", "(unary- d1.5)"},
		{"+ 5", "5"},
		{"-9223372036854775808", "-9223372036854775808"},
		{"- 9223372036854775808", "-9223372036854775808"},
		{"(1 + 2) * 3", "(* (+ 1 2) 3)"},
		{"1 and (2 or 3)", "(and 1 (or 2 3))"},
		{"NULL", "NULL"},
		{"True", "true"},
		{"fAlSe", "false"},
		{"1.5", "d1.5"},
		{"1e3", "d1000"},
		{".5", "d0.5"},
		{"1.", "d1"},
		{":x", ":x"},
		{":1x", ":1x"},
		{":été", ":été"},
		{"Random(1, :max)", "(random 1 :max)"},
		{"pi()", "(pi)"},
		{"abs(, -3)", "(abs -3)"},
		{"hash(1)", "(hash 1 :default_seed)"},
		{"hash_fnv1a(1, 2)", "(hash_fnv1a 1 2)"},
		{"hash_murmur2(1)", "(hash_murmur2 1 :default_seed)"},
		{"permute(1, 10)", "(permute 1 10 :default_seed)"},
		{"permute(1, 10, 3)", "(permute 1 10 3)"},
		{"greatest(1, 2, 3, 4)", "(greatest 1 2 3 4)"},
		{"power(2, 3)", "(power 2 3)"},
		{"case when 1 then 2 end", "(case 1 2)"},
		{"CASE WHEN :a THEN 1 WHEN :b THEN 2 ELSE 3 END", "(case :a 1 :b 2 else 3)"},
		{"case when 1 then 2 end + 1", "(+ (case 1 2) 1)"},
		{"1 \\\n + 2", "(+ 1 2)"},
	}
	for _, tt := range tests {
		if tt.tree == "" {
			continue
		}
		e, err := ParseExpr(tt.src)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", tt.src, err)
			continue
		}
		if got := sexpr(e); got != tt.tree {
			t.Errorf("ParseExpr(%q) = %s, want %s", tt.src, got, tt.tree)
		}
	}
}

func TestExprSyntaxErrors(t *testing.T) {
	tests := []struct{ src, err string }{
		{"", `missing expression, expected an expression`},
		{"1 +", `syntax error at end of expression: expected an operand`},
		{"1 +)", `syntax error in expression at ")": expected an operand`},
		{"(1 + 2", `syntax error at end of expression: expected an operator or ")"`},
		{"(1 + 2 3)", `syntax error in expression at "3)": expected an operator or ")"`},
		{")", `syntax error in expression at ")": expected an operand`},
		{"1 2", `syntax error in expression at "2": expected an operator or the end of the expression`},
		{"1 < 2 < 3", `syntax error in expression at "< 3": comparison operators do not associate, expected parentheses`},
		{"1 < 2 = true", `syntax error in expression at "= true": comparison operators do not associate, expected parentheses`},
		{"1 is 2", `syntax error in expression at "2": expected NULL, TRUE, FALSE or NOT after IS`},
		{"1 is not 5", `syntax error in expression at "5": expected NULL, TRUE or FALSE after IS NOT`},
		{"1 is", `syntax error at end of expression: expected NULL, TRUE, FALSE or NOT after IS`},
		{"AND", `syntax error in expression at "AND": expected an operand`},
		{"1 and", `syntax error at end of expression: expected an operand`},
		{"not", `syntax error at end of expression: expected an operand`},
		{"~", `syntax error at end of expression: expected an operand`},
		{"case 1 when 2 then 3 end", `syntax error in expression at "1 when 2 then 3 end": expected WHEN after CASE`},
		{"case when 1 then 2", `syntax error at end of expression: expected an operator, WHEN, ELSE or END`},
		{"case when 1 2 end", `syntax error in expression at "2 end": expected an operator or THEN`},
		{"case when 1 then 2 else 3", `syntax error at end of expression: expected an operator or END`},
		{"case end", `syntax error in expression at "end": expected WHEN after CASE`},
		{"foo", `syntax error in expression at "foo": expected a function call such as foo(...), a :variable, a number, TRUE, FALSE or NULL`},
		{"foo(1)", `unknown function "foo", expected one of ` + strings.Join(FunctionNames(), ", ")},
		{"random(1", `syntax error at end of expression: expected "," or ")" in the arguments of random()`},
		{"random(1 2)", `syntax error in expression at "2)": expected "," or ")" in the arguments of random()`},
		{"abs(,)", `syntax error in expression at ")": expected an operand`},
		{"random(1)", `random() called with 1 argument, expected 2 arguments`},
		{"random(1, 2, 3)", `random() called with 3 arguments, expected 2 arguments`},
		{"random_exponential(1, 2)", `random_exponential() called with 2 arguments, expected 3 arguments`},
		{"random_gaussian(1, 2)", `random_gaussian() called with 2 arguments, expected 3 arguments`},
		{"random_zipfian(1, 2, 3, 4)", `random_zipfian() called with 4 arguments, expected 3 arguments`},
		{"pi(1)", `pi() called with 1 argument, expected 0 arguments`},
		{"abs()", `abs() called with 0 arguments, expected 1 argument`},
		{"abs(1, 2)", `abs() called with 2 arguments, expected 1 argument`},
		{"debug()", `debug() called with 0 arguments, expected 1 argument`},
		{"double(1, 2)", `double() called with 2 arguments, expected 1 argument`},
		{"int()", `int() called with 0 arguments, expected 1 argument`},
		{"exp()", `exp() called with 0 arguments, expected 1 argument`},
		{"ln()", `ln() called with 0 arguments, expected 1 argument`},
		{"sqrt(1, 2)", `sqrt() called with 2 arguments, expected 1 argument`},
		{"pow(1)", `pow() called with 1 argument, expected 2 arguments`},
		{"power(1, 2, 3)", `power() called with 3 arguments, expected 2 arguments`},
		{"mod(1)", `mod() called with 1 argument, expected 2 arguments`},
		{"greatest()", `greatest() called with 0 arguments, expected at least 1 argument`},
		{"least()", `least() called with 0 arguments, expected at least 1 argument`},
		{"hash()", `hash() called with 0 arguments, expected 1 or 2 arguments`},
		{"hash(1, 2, 3)", `hash() called with 3 arguments, expected 1 or 2 arguments`},
		{"hash_murmur2()", `hash_murmur2() called with 0 arguments, expected 1 or 2 arguments`},
		{"hash_fnv1a(1, 2, 3)", `hash_fnv1a() called with 3 arguments, expected 1 or 2 arguments`},
		{"permute(1)", `permute() called with 1 argument, expected 2 or 3 arguments`},
		{"permute(1, 2, 3, 4)", `permute() called with 4 arguments, expected 2 or 3 arguments`},
		{"1 $ 2", `unexpected character "$" in expression`},
		{"'x'", `unexpected character "'" in expression`},
		{"1 @ 2", `unexpected character "@" in expression`},
		{"1 ≠ 2", `syntax error in expression at "≠ 2": expected an operator or the end of the expression`},
		{":", `unexpected character ":", expected a variable name after ":"`},
		{": x", `unexpected character ":", expected a variable name after ":"`},
		{"9223372036854775808", `bigint constant overflow (9223372036854775808), expected an integer between -9223372036854775808 and 9223372036854775807`},
		{"1 - 9223372036854775808", `bigint constant overflow (9223372036854775808), expected an integer between -9223372036854775808 and 9223372036854775807`},
		{"99999999999999999999", `bigint constant overflow (99999999999999999999), expected an integer between -9223372036854775808 and 9223372036854775807`},
		{"1e400", `double constant overflow (1e400), expected a double within the range of 64-bit floating point`},
		{"1e-400", `double constant overflow (1e-400), expected a double within the range of 64-bit floating point`},
		{"1e-320", `double constant overflow (1e-320), expected a double within the range of 64-bit floating point`},
		{"x(1) + (2 * ((3 + 4) - 5)) + y", `unknown function "x", expected one of ` + strings.Join(FunctionNames(), ", ")},
		{"1 + (2 * ((3 + 4) - 5)) + 6 + + )", `syntax error in expression at ")": expected an operand`},
		{"1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 11 12 13 14 15 16", `syntax error in expression at "12 13 14 15 16": expected an operator or the end of the expression`},
		{"1 + 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", `syntax error in expression at "3 4 5 6 7 8 9 10 11 12 13 1...": expected an operator or the end of the expression`},
	}
	for _, tt := range tests {
		_, err := ParseExpr(tt.src)
		if err == nil || err.Error() != tt.err {
			t.Errorf("ParseExpr(%q) error = %v\nwant %s", tt.src, err, tt.err)
		}
	}
}

func TestEvalSemantics(t *testing.T) {
	vars := map[string]Value{
		"i": IntValue(7), "d": DoubleValue(2.5), "t": BoolValue(true), "f": BoolValue(false),
		"n": NullValue(), "zero": IntValue(0), "default_seed": IntValue(5432),
	}
	tests := []struct {
		src  string
		want Value
		err  string
	}{
		{src: ":i + :d", want: DoubleValue(9.5)},
		{src: ":i + :i", want: IntValue(14)},
		{src: ":i / 2.0", want: DoubleValue(3.5)},
		{src: ":d % 2", want: IntValue(0)},
		{src: "mod(:i, 4)", want: IntValue(3)},
		{src: ":n + 1", want: NullValue()},
		{src: "random(:n, 1/0)", err: "division by zero"},
		{src: "random(:n, 10)", want: NullValue()},
		{src: "abs(:n)", want: NullValue()},
		{src: "hash(:n)", want: NullValue()},
		{src: "hash(10)", want: IntValue(-5817877081768721676)},
		{src: "hash_fnv1a(10)", want: IntValue(-7793829335365542153)},
		{src: ":t and :f", want: BoolValue(false)},
		{src: ":t or :n", want: BoolValue(true)},
		{src: ":f or :n", want: NullValue()},
		{src: ":f or :t", want: BoolValue(true)},
		{src: ":n and 1/0", want: NullValue()},
		{src: ":f and 1/0", want: BoolValue(false)},
		{src: ":t or 1/0", want: BoolValue(true)},
		{src: ":t and 1/0", err: "division by zero"},
		{src: ":t and 1", err: "cannot coerce int to boolean"},
		{src: ":d or :t", err: "cannot coerce double to boolean"},
		{src: "not :i", err: "cannot coerce int to boolean"},
		{src: "not :n", want: NullValue()},
		{src: ":n is null", want: BoolValue(true)},
		{src: ":n is not null", want: BoolValue(false)},
		{src: ":i isnull", want: BoolValue(false)},
		{src: ":t is true", want: BoolValue(true)},
		{src: ":n is true", want: BoolValue(false)},
		{src: ":i is true", want: BoolValue(false)},
		{src: ":f is not true", want: BoolValue(true)},
		{src: ":i = 7.0", want: BoolValue(true)},
		{src: ":i > :d", want: BoolValue(true)},
		{src: ":t = :t", err: "cannot coerce boolean to int"},
		{src: ":t < 1.5", err: "cannot coerce boolean to double"},
		{src: ":undefined + 1", err: `undefined variable "undefined"`},
		{src: "case when :zero then 1 when :d then 2 end", want: IntValue(2)},
		{src: "case when :n then 1 end", want: NullValue()},
		{src: "case when :zero then 1 end", want: NullValue()},
		{src: "case when :t then 1 else 1/0 end", want: IntValue(1)},
		{src: "case when :f then 1/0 else 2 end", want: IntValue(2)},
		{src: "case when 1/0 then 1 end", err: "division by zero"},
		{src: "~ :d", want: IntValue(-3)},
		{src: "~ :t", err: "cannot coerce boolean to int"},
		{src: "-:i", want: IntValue(-7)},
		{src: "-:d", want: DoubleValue(-2.5)},
		{src: "-:t", err: "cannot coerce boolean to int"},
		{src: "- (-9223372036854775807 - 1)", err: "bigint sub out of range"},
		{src: "-(-9223372036854775808)", err: "bigint sub out of range"}, // pgbench: 0 - c, when it runs
		{src: "-(9223372036854775807)", want: IntValue(-math.MaxInt64)},
		{src: "1 << 63", want: IntValue(math.MinInt64)},
		{src: "1 << -1", want: IntValue(math.MinInt64)},
		{src: "-1 >> 70", want: IntValue(-1)},
		{src: "abs(-9223372036854775807 - 1)", want: IntValue(math.MinInt64)},
		{src: "abs(:t)", err: "cannot coerce boolean to double"},
		{src: "int(-0.5)", want: IntValue(0)},
		{src: "int(1.5)", want: IntValue(2)},
		{src: "int(9.3e18)", err: "double to int overflow for 9300000000000000000.000000"},
		{src: "int(-9223372036854775808.0)", want: IntValue(math.MinInt64)},
		{src: "int(9223372036854775807.0)", err: "double to int overflow for 9223372036854775808.000000"},
		{src: "int(ln(-1))", err: "double to int overflow for NaN"},
		{src: "int(:n)", want: NullValue()},
		{src: "double(:i)", want: DoubleValue(7)},
		{src: "least(3, :d, 1)", want: DoubleValue(1)},
		{src: "greatest(3, :i, 1)", want: IntValue(7)},
		{src: "greatest(:t)", err: "cannot coerce boolean to int"},
		{src: "permute(:i, 10)", want: IntValue(Permute(7, 10, 5432))},
		{src: "permute(1, 2, :t)", err: "cannot coerce boolean to int"},
		{src: "hash(1, :d)", want: IntValue(HashMurmur2(1, 2))},
		{src: "random(1, :d)", want: IntValue(1)},
		{src: "random(:t, 2)", err: "cannot coerce boolean to int"},
		{src: "random_exponential(1, 10, :t)", err: "cannot coerce boolean to double"},
		{src: "random_exponential(1, 10, ln(-1))", err: "exponential parameter must be greater than zero (not NaN)"},
		{src: "random_gaussian(1, 10, ln(-1))", err: "gaussian parameter must be at least 2.000000 (not NaN)"},
		{src: "random_gaussian(1, 10, exp(1000))", err: "gaussian parameter must be at least 2.000000 (not Infinity)"},
		{src: "random_zipfian(1, 10, ln(-1))", err: "zipfian parameter must be in range [1.001, 1000] (not NaN)"},
		{src: "random(-9223372036854775807 - 1, -1)", err: "random range is too large"},
		{src: "least(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,1/0)", err: "too many function arguments, maximum is 16"},
		{src: "least(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,1/0,17)", err: "division by zero"},
	}
	for _, tt := range tests {
		env := newEnv(vars)
		v, err := evalString(t, tt.src, env)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%s = %v, %v; want error %s", tt.src, v, err, tt.err)
			}
			continue
		}
		if err != nil || !sameValue(v, tt.want) {
			t.Errorf("%s = %#v, %v; want %#v", tt.src, v, err, tt.want)
		}
	}
}

func sameValue(a, b Value) bool {
	if a.K != b.K {
		return false
	}
	switch a.K {
	case Bool:
		return a.B == b.B
	case Int:
		return a.I == b.I
	case Double:
		return a.F == b.F || math.IsNaN(a.F) && math.IsNaN(b.F)
	}
	return true
}

// debug() calls Env.Debug and returns its argument; evaluation order
// follows pgbench (a > b evaluates b first; AND, OR and CASE are lazy).
func TestEvalDebugAndOrder(t *testing.T) {
	tests := []struct {
		src    string
		debugs string
	}{
		{"debug(1) + debug(2.5)", "int 1,double 2.5"},
		{"debug(1) < debug(2)", "int 1,int 2"},
		{"debug(1) > debug(2)", "int 2,int 1"},
		{"debug(1) >= debug(2)", "int 2,int 1"},
		{"debug(false) and debug(true)", "boolean false"},
		{"debug(true) or debug(true)", "boolean true"},
		{"debug(null) and debug(true)", "null"},
		{"case when debug(0) then debug(1) when debug(2) then debug(3) else debug(4) end", "int 0,int 2,int 3"},
		{"debug(debug(7) * 2)", "int 7,int 14"},
	}
	for _, tt := range tests {
		env := newEnv(nil)
		if _, err := evalString(t, tt.src, env); err != nil {
			t.Errorf("%s: %v", tt.src, err)
		}
		var got []string
		for _, v := range env.debugs {
			got = append(got, v.debugString())
		}
		if strings.Join(got, ",") != tt.debugs {
			t.Errorf("%s: debug calls %q, want %q", tt.src, strings.Join(got, ","), tt.debugs)
		}
	}
	env := newEnv(nil)
	v, err := evalString(t, "debug(5) * 2", env)
	if err != nil || v.I != 10 || len(env.debugs) != 1 || env.debugs[0].I != 5 {
		t.Errorf("debug(5) * 2 = %v, %v, debugs %v", v, err, env.debugs)
	}
}

// Calls built by hand (Fn only, no parser-resolved id) and pointer nodes
// evaluate the same.
func TestEvalHandBuilt(t *testing.T) {
	env := newEnv(map[string]Value{"x": IntValue(4)})
	tests := []struct {
		e    Expr
		want string
	}{
		{Call{Fn: "+", Args: []Expr{Const{V: IntValue(1)}, VarRef{Name: "x"}}}, "5"},
		{&Call{Fn: "*", Args: []Expr{&Const{V: IntValue(3)}, &VarRef{Name: "x"}}}, "12"},
		{Call{Fn: "unary-", Args: []Expr{VarRef{Name: "x"}}}, "-4"},
		{Call{Fn: ">", Args: []Expr{VarRef{Name: "x"}, Const{V: IntValue(3)}}}, "true"},
		{Call{Fn: "isnotnull", Args: []Expr{VarRef{Name: "x"}}}, "true"},
		{Call{Fn: "RANDOM", Args: []Expr{Const{V: IntValue(2)}, Const{V: IntValue(2)}}}, "2"},
		{Call{Fn: "greatest", Args: []Expr{Const{V: IntValue(2)}, Const{V: IntValue(9)}}}, "9"},
		{Case{When: []Expr{Const{V: BoolValue(false)}}, Then: []Expr{Const{V: IntValue(1)}}}, "NULL"},
		{&Case{When: []Expr{Const{V: IntValue(3)}}, Then: []Expr{Const{V: IntValue(1)}}, Else: Const{V: IntValue(2)}}, "1"},
		{Call{Fn: "nope"}, `ERR: unknown function "nope"`},
		{Call{Fn: "+", Args: []Expr{Const{V: IntValue(1)}}}, "ERR: + called with 1 arguments, expected 2"},
		{Call{Fn: "random", Args: []Expr{Const{V: IntValue(1)}}}, "ERR: random called with 1 arguments, expected 2"},
		{nil, "ERR: missing expression"},
	}
	for i, tt := range tests {
		got := ""
		if v, err := Eval(tt.e, env); err != nil {
			got = "ERR: " + err.Error()
		} else {
			got = v.String()
		}
		if got != tt.want {
			t.Errorf("%d: %s = %s, want %s", i, sexprSafe(tt.e), got, tt.want)
		}
	}
}

func sexprSafe(e Expr) string {
	if e == nil {
		return "<nil>"
	}
	return sexpr(e)
}

func TestTruthyAndAsInt(t *testing.T) {
	truthy := []struct {
		v    Value
		want bool
	}{
		{NullValue(), false}, {BoolValue(true), true}, {BoolValue(false), false},
		{IntValue(0), false}, {IntValue(2), true}, {IntValue(-1), true},
		{DoubleValue(0), false}, {DoubleValue(2.5), true}, {DoubleValue(negZero()), false}, {DoubleValue(nan()), true},
	}
	for _, tt := range truthy {
		if got, err := tt.v.Truthy(); err != nil || got != tt.want {
			t.Errorf("%#v.Truthy() = %v, %v", tt.v, got, err)
		}
	}
	asInt := []struct {
		v    Value
		want int64
		err  string
	}{
		{v: IntValue(5), want: 5},
		{v: DoubleValue(2.5), want: 2},
		{v: DoubleValue(3.5), want: 4},
		{v: DoubleValue(-2.5), want: -2},
		{v: DoubleValue(1e19), err: "double to int overflow for 10000000000000000000.000000"},
		{v: DoubleValue(posInf()), err: "double to int overflow for Infinity"},
		{v: BoolValue(true), err: "cannot coerce boolean to int"},
		{v: NullValue(), err: "cannot coerce null to int"},
	}
	for _, tt := range asInt {
		got, err := tt.v.AsInt()
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%#v.AsInt() = %d, %v; want error %s", tt.v, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%#v.AsInt() = %d, %v; want %d", tt.v, got, err, tt.want)
		}
	}
}

// Hash and permute values observed with pgbench 15.18.
func TestHashAndPermuteMatchPgbench(t *testing.T) {
	if got := HashMurmur2(10, 5432); got != -5817877081768721676 {
		t.Errorf("hash(10, 5432) = %d", got)
	}
	if got := HashFNV1a(10, 5432); got != -7793829335365542153 {
		t.Errorf("hash_fnv1a(10, 5432) = %d", got)
	}
	// With -D default_seed=42.
	env := newEnv(map[string]Value{"default_seed": IntValue(42)})
	for src, want := range map[string]int64{
		"hash(10)":            -3562774314593256714,
		"hash_fnv1a(10)":      -3931898588792031835,
		"permute(10, 100)":    41,
		"hash_murmur2(-1, 0)": 4219408603045787357,
		"hash_fnv1a(-1, 0)":   -8289690350564177859,
		"hash(0)":             7729525510718446440,
		"hash_fnv1a(9223372036854775807, -9223372036854775807 - 1)": 933822423779008957,
	} {
		v, err := evalString(t, src, env)
		if err != nil || v.I != want {
			t.Errorf("%s = %v, %v; want %d", src, v, err, want)
		}
	}
	perms := []struct{ v, size, seed, want int64 }{
		{0, 1, 5, 0},
		{0, 2, 0, 0},
		{1, 2, 0, 1},
		{0, 3, 5, 0},
		{1, 3, 5, 1},
		{2, 3, 5, 2},
		{3, 10, 5, 9},
		{-1, 10, 5, 1},
		{12, 10, 5, 8},
		{7, 10, -1, 6},
		{999, 1000, 123456789, 994},
		{0, 1000, 123456789, 744},
		{500, 1000, 42, 653},
		{123456, 1099511627783, 7, 843887092714},
		{-5, 1099511627783, 7, 471896840431},
		{math.MaxInt64, math.MaxInt64, math.MinInt64, 9061925603549356191},
		{1, math.MaxInt64, 0, 1409427443184838618},
		{31, 32, 17, 28},
		{16, 17, 99, 7},
	}
	for _, p := range perms {
		if got := Permute(p.v, p.size, p.seed); got != p.want {
			t.Errorf("permute(%d, %d, %d) = %d, want %d", p.v, p.size, p.seed, got, p.want)
		}
	}
}

func TestPermuteIsABijection(t *testing.T) {
	sizes := []int64{1, 2, 3, 4, 5, 7, 8, 9, 10, 16, 17, 31, 32, 33, 100, 127, 128, 129, 1000, 1023, 1024, 1025, 4099}
	seeds := []int64{0, 1, -1, 5432, math.MaxInt64, math.MinInt64, 123456789}
	for _, size := range sizes {
		for _, seed := range seeds {
			seen := make([]bool, size)
			identity := true
			for i := int64(0); i < size; i++ {
				p := Permute(i, size, seed)
				if p < 0 || p >= size || seen[p] {
					t.Fatalf("permute(%d, %d, %d) = %d: out of range or repeated", i, size, seed, p)
				}
				seen[p] = true
				identity = identity && p == i
				// Values outside [0, size) wrap modulo size (as uint64).
				if q := Permute(i+size, size, seed); size < 1<<40 && q != p {
					t.Fatalf("permute(%d, %d, %d) = %d, want %d (i + size)", i+size, size, seed, q, p)
				}
			}
			if size > 16 && identity {
				t.Errorf("permute(·, %d, %d) is the identity", size, seed)
			}
		}
	}
}
