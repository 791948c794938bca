package pgbench

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Env is what evaluation needs from the running client.
type Env interface {
	// Var returns the value of :name; false when it is undefined.
	Var(name string) (Value, bool)
	// Rand returns the client's random state.
	Rand() *Rand
	// Debug is called by debug(x) with x's value.
	Debug(v Value)
}

// funcID identifies a function or an operator.
type funcID int

const (
	fNone funcID = iota
	fAdd
	fSub
	fMul
	fDiv
	fMod
	fNeg
	fBitAnd
	fBitOr
	fBitXor
	fBitNot
	fShl
	fShr
	fEq
	fNe
	fLt
	fLe
	fGt
	fGe
	fAnd
	fOr
	fNot
	fIs
	fIsNull
	fIsNotNull
	fAbs
	fDebug
	fDouble
	fInt
	fExp
	fLn
	fSqrt
	fPow
	fGreatest
	fLeast
	fPi
	fHashMurmur2
	fHashFNV1a
	fPermute
	fRandom
	fRandomExponential
	fRandomGaussian
	fRandomZipfian
)

// funcDef describes a function callable by name in expressions.
type funcDef struct {
	id       funcID
	min, max int // argument count; max -1 = no limit
	seedArg  int // when called with exactly seedArg arguments, :default_seed is appended
}

// functions are the functions of pgbench's expression language (doc
// section 5.3), by lower-case name.
var functions = map[string]funcDef{
	"abs":                {fAbs, 1, 1, 0},
	"debug":              {fDebug, 1, 1, 0},
	"double":             {fDouble, 1, 1, 0},
	"exp":                {fExp, 1, 1, 0},
	"greatest":           {fGreatest, 1, -1, 0},
	"hash":               {fHashMurmur2, 1, 2, 1},
	"hash_fnv1a":         {fHashFNV1a, 1, 2, 1},
	"hash_murmur2":       {fHashMurmur2, 1, 2, 1},
	"int":                {fInt, 1, 1, 0},
	"least":              {fLeast, 1, -1, 0},
	"ln":                 {fLn, 1, 1, 0},
	"mod":                {fMod, 2, 2, 0},
	"permute":            {fPermute, 2, 3, 2},
	"pi":                 {fPi, 0, 0, 0},
	"pow":                {fPow, 2, 2, 0},
	"power":              {fPow, 2, 2, 0},
	"random":             {fRandom, 2, 2, 0},
	"random_exponential": {fRandomExponential, 3, 3, 0},
	"random_gaussian":    {fRandomGaussian, 3, 3, 0},
	"random_zipfian":     {fRandomZipfian, 3, 3, 0},
	"sqrt":               {fSqrt, 1, 1, 0},
}

// operators maps the Fn of operator Calls (see ast.go) to their id, for
// Calls not built by the parser.
var operators = map[string]funcID{
	"+": fAdd, "-": fSub, "*": fMul, "/": fDiv, "%": fMod, "unary-": fNeg,
	"&": fBitAnd, "|": fBitOr, "#": fBitXor, "~": fBitNot, "<<": fShl, ">>": fShr,
	"=": fEq, "<>": fNe, "!=": fNe, "<": fLt, "<=": fLe, ">": fGt, ">=": fGe,
	"and": fAnd, "or": fOr, "not": fNot, "is": fIs, "isnull": fIsNull, "isnotnull": fIsNotNull,
}

// FunctionNames lists the functions usable in expressions, sorted.
func FunctionNames() []string {
	names := make([]string, 0, len(functions))
	for n := range functions {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func functionList() string { return strings.Join(FunctionNames(), ", ") }

// maxFuncArgs is pgbench's limit on evaluated function arguments.
const maxFuncArgs = 16

// Parameter limits of the random distributions.
const (
	minGaussianParam = 2.0
	minZipfianParam  = 1.001
	maxZipfianParam  = 1000.0
)

var (
	errDivByZero = errors.New("division by zero")
	errAddRange  = errors.New("bigint add out of range")
	errSubRange  = errors.New("bigint sub out of range")
	errMulRange  = errors.New("bigint mul out of range")
	errDivRange  = errors.New("bigint div out of range")
)

// Eval evaluates an expression for a client. Errors are one line, worded as
// pgbench's (e.g. "division by zero", "cannot coerce boolean to int",
// `undefined variable "x"`).
func Eval(e Expr, env Env) (Value, error) {
	switch x := e.(type) {
	case Const:
		return x.V, nil
	case VarRef:
		return evalVar(x.Name, env)
	case Call:
		return evalCall(x.Fn, x.id, x.Args, env)
	case Case:
		return evalCase(x.When, x.Then, x.Else, env)
	case *Const:
		return x.V, nil
	case *VarRef:
		return evalVar(x.Name, env)
	case *Call:
		return evalCall(x.Fn, x.id, x.Args, env)
	case *Case:
		return evalCase(x.When, x.Then, x.Else, env)
	case nil:
		return Value{}, errors.New("missing expression")
	}
	return Value{}, fmt.Errorf("unexpected expression node %T", e)
}

func evalVar(name string, env Env) (Value, error) {
	v, ok := env.Var(name)
	if !ok {
		return Value{}, fmt.Errorf("undefined variable %q", name)
	}
	return v, nil
}

func evalCase(when, then []Expr, els Expr, env Env) (Value, error) {
	for i, w := range when {
		c, err := Eval(w, env)
		if err != nil {
			return Value{}, err
		}
		if t, _ := c.Truthy(); t {
			return Eval(then[i], env)
		}
	}
	if els == nil {
		return NullValue(), nil
	}
	return Eval(els, env)
}

func lookupFunc(fn string) funcID {
	if id, ok := operators[fn]; ok {
		return id
	}
	if d, ok := functions[strings.ToLower(fn)]; ok {
		return d.id
	}
	return fNone
}

// evalLogic is AND and OR: lazy, NULL on a NULL first operand, booleans
// only.
func evalLogic(id funcID, args []Expr, env Env) (Value, error) {
	a, err := Eval(args[0], env)
	if err != nil {
		return Value{}, err
	}
	if a.K == Null {
		return NullValue(), nil
	}
	ba, err := a.asBool()
	if err != nil {
		return Value{}, err
	}
	if id == fAnd && !ba {
		return BoolValue(false), nil
	}
	if id == fOr && ba {
		return BoolValue(true), nil
	}
	b, err := Eval(args[1], env)
	if err != nil {
		return Value{}, err
	}
	if b.K == Null {
		return NullValue(), nil
	}
	bb, err := b.asBool()
	if err != nil {
		return Value{}, err
	}
	return BoolValue(bb), nil
}

// arity is the argument count each operator id needs when the Call was
// built by hand; functions are checked by the parser.
func checkArity(fn string, id funcID, n int) error {
	want := -1
	switch id {
	case fNeg, fBitNot, fNot, fIsNull, fIsNotNull, fAbs, fDebug, fDouble, fInt, fExp, fLn, fSqrt:
		want = 1
	case fPi:
		want = 0
	case fGreatest, fLeast:
		if n >= 1 {
			return nil
		}
		want = 1
	case fHashMurmur2, fHashFNV1a:
		want = 2
	case fPermute, fRandomExponential, fRandomGaussian, fRandomZipfian:
		want = 3
	default:
		want = 2
	}
	if n != want {
		return fmt.Errorf("%s called with %d arguments, expected %d", fn, n, want)
	}
	return nil
}

func evalCall(fn string, id funcID, args []Expr, env Env) (Value, error) {
	if id == fNone {
		if id = lookupFunc(fn); id == fNone {
			return Value{}, fmt.Errorf("unknown function %q", fn)
		}
		if err := checkArity(fn, id, len(args)); err != nil {
			return Value{}, err
		}
	}
	if id == fAnd || id == fOr {
		return evalLogic(id, args, env)
	}

	// Evaluate every argument first, as pgbench does: errors in any
	// argument win over NULL propagation.
	n := len(args)
	if n > maxFuncArgs {
		for _, a := range args[:maxFuncArgs] {
			if _, err := Eval(a, env); err != nil {
				return Value{}, err
			}
		}
		return Value{}, fmt.Errorf("too many function arguments, maximum is %d", maxFuncArgs)
	}
	if n <= 3 {
		var small [3]Value
		return evalArgsApply(fn, id, args, small[:n], env)
	}
	var big [maxFuncArgs]Value
	return evalArgsApply(fn, id, args, big[:n], env)
}

// evalArgsApply evaluates args into a (same length) and applies the
// function.
func evalArgsApply(fn string, id funcID, args []Expr, a []Value, env Env) (Value, error) {
	n := len(args)
	hasNull := false
	if id == fGt || id == fGe {
		// a > b is evaluated as b < a: right operand first.
		for i := n - 1; i >= 0; i-- {
			v, err := Eval(args[i], env)
			if err != nil {
				return Value{}, err
			}
			a[i] = v
			hasNull = hasNull || v.K == Null
		}
	} else {
		for i, e := range args {
			v, err := Eval(e, env)
			if err != nil {
				return Value{}, err
			}
			a[i] = v
			hasNull = hasNull || v.K == Null
		}
	}
	if hasNull && id != fIs && id != fIsNull && id != fIsNotNull && id != fDebug {
		return NullValue(), nil
	}

	switch id {
	case fAdd, fSub, fMul, fDiv, fMod, fEq, fNe, fLt, fLe, fGt, fGe:
		l, r := a[0], a[1]
		switch id {
		case fGt:
			id, l, r = fLt, r, l
		case fGe:
			id, l, r = fLe, r, l
		}
		return arith(id, l, r)

	case fNeg:
		return arith(fSub, IntValue(0), a[0])

	case fBitAnd, fBitOr, fBitXor, fShl, fShr:
		l, err := a[0].AsInt()
		if err != nil {
			return Value{}, err
		}
		r, err := a[1].AsInt()
		if err != nil {
			return Value{}, err
		}
		switch id {
		case fBitAnd:
			return IntValue(l & r), nil
		case fBitOr:
			return IntValue(l | r), nil
		case fBitXor:
			return IntValue(l ^ r), nil
		case fShl:
			// The shift count is taken modulo 64, as x86-64 does.
			return IntValue(l << (uint64(r) & 63)), nil
		default:
			return IntValue(l >> (uint64(r) & 63)), nil
		}

	case fBitNot:
		x, err := a[0].AsInt()
		if err != nil {
			return Value{}, err
		}
		return IntValue(^x), nil

	case fNot:
		b, err := a[0].asBool()
		if err != nil {
			return Value{}, err
		}
		return BoolValue(!b), nil

	case fIs:
		x, y := a[0], a[1]
		if x.K != y.K {
			return BoolValue(false), nil
		}
		switch x.K {
		case Bool:
			return BoolValue(x.B == y.B), nil
		case Int:
			return BoolValue(x.I == y.I), nil
		case Double:
			return BoolValue(x.F == y.F), nil
		}
		return BoolValue(true), nil

	case fIsNull:
		return BoolValue(a[0].K == Null), nil

	case fIsNotNull:
		return BoolValue(a[0].K != Null), nil

	case fPi:
		return DoubleValue(math.Pi), nil

	case fAbs:
		switch a[0].K {
		case Int:
			if a[0].I < 0 {
				return IntValue(-a[0].I), nil
			}
			return a[0], nil
		case Double:
			if a[0].F < 0 {
				return DoubleValue(-a[0].F), nil
			}
			return a[0], nil
		}
		return Value{}, fmt.Errorf("cannot coerce %s to double", a[0].typeName())

	case fDebug:
		env.Debug(a[0])
		return a[0], nil

	case fDouble, fSqrt, fLn, fExp:
		d, err := a[0].asDouble()
		if err != nil {
			return Value{}, err
		}
		switch id {
		case fSqrt:
			d = math.Sqrt(d)
		case fLn:
			d = math.Log(d)
		case fExp:
			d = math.Exp(d)
		}
		return DoubleValue(d), nil

	case fInt:
		i, err := a[0].AsInt()
		if err != nil {
			return Value{}, err
		}
		return IntValue(i), nil

	case fLeast, fGreatest:
		return extremum(id, a[:n])

	case fPow:
		x, err := a[0].asDouble()
		if err != nil {
			return Value{}, err
		}
		y, err := a[1].asDouble()
		if err != nil {
			return Value{}, err
		}
		return DoubleValue(math.Pow(x, y)), nil

	case fHashMurmur2, fHashFNV1a:
		v, err := a[0].AsInt()
		if err != nil {
			return Value{}, err
		}
		seed, err := a[1].AsInt()
		if err != nil {
			return Value{}, err
		}
		if id == fHashMurmur2 {
			return IntValue(HashMurmur2(v, seed)), nil
		}
		return IntValue(HashFNV1a(v, seed)), nil

	case fPermute:
		v, err := a[0].AsInt()
		if err != nil {
			return Value{}, err
		}
		size, err := a[1].AsInt()
		if err != nil {
			return Value{}, err
		}
		seed, err := a[2].AsInt()
		if err != nil {
			return Value{}, err
		}
		if size <= 0 {
			return Value{}, errors.New("permute size parameter must be greater than zero")
		}
		return IntValue(Permute(v, size, seed)), nil

	case fRandom, fRandomExponential, fRandomGaussian, fRandomZipfian:
		return random(id, a[:n], env)
	}
	return Value{}, fmt.Errorf("unexpected function %q", fn)
}

// arith is the overloaded arithmetic and comparison operators: doubles if
// either operand is a double (except %), else 64-bit integers with overflow
// checks.
func arith(id funcID, l, r Value) (Value, error) {
	if (l.K == Double || r.K == Double) && id != fMod {
		x, err := l.asDouble()
		if err != nil {
			return Value{}, err
		}
		y, err := r.asDouble()
		if err != nil {
			return Value{}, err
		}
		switch id {
		case fAdd:
			return DoubleValue(x + y), nil
		case fSub:
			return DoubleValue(x - y), nil
		case fMul:
			return DoubleValue(x * y), nil
		case fDiv:
			return DoubleValue(x / y), nil
		case fEq:
			return BoolValue(x == y), nil
		case fNe:
			return BoolValue(x != y), nil
		case fLt:
			return BoolValue(x < y), nil
		case fLe:
			return BoolValue(x <= y), nil
		}
		return Value{}, fmt.Errorf("unexpected operator %d", id)
	}
	x, err := l.AsInt()
	if err != nil {
		return Value{}, err
	}
	y, err := r.AsInt()
	if err != nil {
		return Value{}, err
	}
	switch id {
	case fAdd:
		s := x + y
		if (s > x) != (y > 0) {
			return Value{}, errAddRange
		}
		return IntValue(s), nil
	case fSub:
		d := x - y
		if (d < x) != (y > 0) {
			return Value{}, errSubRange
		}
		return IntValue(d), nil
	case fMul:
		p, ok := mul64(x, y)
		if !ok {
			return Value{}, errMulRange
		}
		return IntValue(p), nil
	case fEq:
		return BoolValue(x == y), nil
	case fNe:
		return BoolValue(x != y), nil
	case fLt:
		return BoolValue(x < y), nil
	case fLe:
		return BoolValue(x <= y), nil
	case fDiv, fMod:
		if y == 0 {
			return Value{}, errDivByZero
		}
		if y == -1 {
			if id == fMod {
				return IntValue(0), nil
			}
			if x == math.MinInt64 {
				return Value{}, errDivRange
			}
			return IntValue(-x), nil
		}
		if id == fDiv {
			return IntValue(x / y), nil
		}
		return IntValue(x % y), nil
	}
	return Value{}, fmt.Errorf("unexpected operator %d", id)
}

// mul64 multiplies with an overflow check.
func mul64(x, y int64) (int64, bool) {
	if x == 0 || y == 0 {
		return 0, true
	}
	if x == int64(int32(x)) && y == int64(int32(y)) {
		return x * y, true // cannot overflow
	}
	p := x * y
	if (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) || p/y != x {
		return 0, false
	}
	return p, true
}

// extremum is least() and greatest(): doubles if any argument is a double.
func extremum(id funcID, args []Value) (Value, error) {
	double := false
	for _, v := range args {
		if v.K == Double {
			double = true
			break
		}
	}
	if double {
		m, err := args[0].asDouble()
		if err != nil {
			return Value{}, err
		}
		for _, v := range args[1:] {
			d, err := v.asDouble()
			if err != nil {
				return Value{}, err
			}
			// C's Min/Max macros, NaN included.
			if id == fLeast {
				if !(m < d) {
					m = d
				}
			} else if !(m > d) {
				m = d
			}
		}
		return DoubleValue(m), nil
	}
	m, err := args[0].AsInt()
	if err != nil {
		return Value{}, err
	}
	for _, v := range args[1:] {
		i, err := v.AsInt()
		if err != nil {
			return Value{}, err
		}
		if id == fLeast {
			if i < m {
				m = i
			}
		} else if i > m {
			m = i
		}
	}
	return IntValue(m), nil
}

// random is random(), random_exponential(), random_gaussian() and
// random_zipfian().
func random(id funcID, args []Value, env Env) (Value, error) {
	lb, err := args[0].AsInt()
	if err != nil {
		return Value{}, err
	}
	ub, err := args[1].AsInt()
	if err != nil {
		return Value{}, err
	}
	if lb > ub {
		return Value{}, errors.New("empty range given to random")
	}
	if d := ub - lb; d < 0 || d == math.MaxInt64 {
		// ub - lb + 1 must fit in an int64.
		return Value{}, errors.New("random range is too large")
	}
	r := env.Rand()
	if r == nil {
		return Value{}, errors.New("no random state for this client")
	}
	if id == fRandom {
		return IntValue(r.Int64Range(lb, ub)), nil
	}
	p, err := args[2].asDouble()
	if err != nil {
		return Value{}, err
	}
	// pgbench lets NaN through its checks and then loops forever or
	// returns garbage; NaN (and an infinite gaussian parameter) are
	// rejected with the same messages.
	nan := math.IsNaN(p)
	switch id {
	case fRandomGaussian:
		if p < minGaussianParam || nan || math.IsInf(p, 1) {
			return Value{}, fmt.Errorf("gaussian parameter must be at least %s (not %s)", cFormatF(minGaussianParam), cFormatF(p))
		}
		return IntValue(r.Gaussian(lb, ub, p)), nil
	case fRandomZipfian:
		if p < minZipfianParam || p > maxZipfianParam || nan {
			return Value{}, fmt.Errorf("zipfian parameter must be in range [%.3f, %.0f] (not %s)", minZipfianParam, maxZipfianParam, cFormatF(p))
		}
		return IntValue(r.Zipfian(lb, ub, p)), nil
	default:
		if p <= 0 || nan {
			return Value{}, fmt.Errorf("exponential parameter must be greater than zero (not %s)", cFormatF(p))
		}
		return IntValue(r.Exponential(lb, ub, p)), nil
	}
}
