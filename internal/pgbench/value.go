package pgbench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Constructors for Values.

// NullValue is the NULL value.
func NullValue() Value { return Value{K: Null} }

// BoolValue makes a boolean Value.
func BoolValue(b bool) Value { return Value{K: Bool, B: b} }

// IntValue makes an integer Value.
func IntValue(i int64) Value { return Value{K: Int, I: i} }

// DoubleValue makes a double Value.
func DoubleValue(f float64) Value { return Value{K: Double, F: f} }

// String returns the text pgbench substitutes into SQL for the value:
// integers in decimal, doubles as C's "%.15g" (with PostgreSQL's spelling
// of the special values: "NaN", "Infinity", "-Infinity"), booleans "true" or
// "false", and NULL as "NULL" (pgbench pastes the word NULL in simple mode
// and binds the text "NULL" in extended mode).
func (v Value) String() string {
	switch v.K {
	case Null:
		return "NULL"
	case Bool:
		if v.B {
			return "true"
		}
		return "false"
	case Int:
		return strconv.FormatInt(v.I, 10)
	case Double:
		return formatDouble(v.F)
	}
	return fmt.Sprintf("<invalid value kind %d>", int(v.K))
}

// formatDouble is C's printf("%.15g") as PostgreSQL's snprintf does it.
func formatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', 15, 64)
}

// typeName is the type name pgbench uses in its messages.
func (v Value) typeName() string {
	switch v.K {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Int:
		return "int"
	case Double:
		return "double"
	}
	return "none"
}

// debugString is the text debug() prints: "<type> <value>".
func (v Value) debugString() string {
	if v.K == Null {
		return "null"
	}
	return v.typeName() + " " + v.String()
}

// Truthy is the truth of a value for \if, \elif and CASE WHEN: booleans as
// they are, non-zero numbers true, zero and NULL false. It never fails for a
// valid Value.
func (v Value) Truthy() (bool, error) {
	switch v.K {
	case Null:
		return false, nil
	case Bool:
		return v.B, nil
	case Int:
		return v.I != 0, nil
	case Double:
		return v.F != 0, nil
	}
	return false, fmt.Errorf("cannot coerce %s to boolean", v.typeName())
}

// AsInt coerces a value to an integer as pgbench does for function
// arguments: doubles are rounded to the nearest integer (half to even, C's
// rint) and must fit in 64 bits; booleans and NULL are errors.
func (v Value) AsInt() (int64, error) {
	switch v.K {
	case Int:
		return v.I, nil
	case Double:
		d := math.RoundToEven(v.F)
		// Fits when -2^63 <= d < 2^63.
		if math.IsNaN(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0 {
			return 0, fmt.Errorf("double to int overflow for %s", cFormatF(d))
		}
		return int64(d), nil
	}
	return 0, fmt.Errorf("cannot coerce %s to int", v.typeName())
}

// asDouble coerces a number to a double; booleans and NULL are errors.
func (v Value) asDouble() (float64, error) {
	switch v.K {
	case Double:
		return v.F, nil
	case Int:
		return float64(v.I), nil
	}
	return 0, fmt.Errorf("cannot coerce %s to double", v.typeName())
}

// asBool coerces a value to a boolean for the logical operators, which
// accept booleans only.
func (v Value) asBool() (bool, error) {
	if v.K == Bool {
		return v.B, nil
	}
	return false, fmt.Errorf("cannot coerce %s to boolean", v.typeName())
}

// cFormatF is C's printf("%f") with PostgreSQL's special values.
func cFormatF(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'f', 6, 64)
}

// ParseValue converts a variable's text (from -D, \gset, \aset or
// \setshell) to a Value as pgbench's makeVariableValue does: "null" (any
// case) is NULL; prefixes of "true" and "yes", and "on", are TRUE;
// prefixes of "false" and "no", and "off" or "of", are FALSE; text of the
// form [space][sign]digits is an integer (an error if it overflows);
// anything else must be a double, or it is "malformed variable value".
func ParseValue(s string) (Value, error) {
	if s == "" {
		return Value{}, fmt.Errorf("malformed variable value: %q", s)
	}
	if strings.EqualFold(s, "null") {
		return NullValue(), nil
	}
	if isPrefixFold(s, "true") || isPrefixFold(s, "yes") || strings.EqualFold(s, "on") {
		return BoolValue(true), nil
	}
	if isPrefixFold(s, "false") || isPrefixFold(s, "no") || strings.EqualFold(s, "off") || strings.EqualFold(s, "of") {
		return BoolValue(false), nil
	}
	if looksLikeInt(s) {
		i, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimLeft(s, cSpaces), "+"), 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return Value{}, fmt.Errorf("value %q is out of range for type bigint", s)
			}
			return Value{}, fmt.Errorf("malformed variable value: %q", s)
		}
		return IntValue(i), nil
	}
	f, ok := parseCDouble(s)
	if !ok {
		return Value{}, fmt.Errorf("malformed variable value: %q", s)
	}
	return DoubleValue(f), nil
}

// cSpaces are the characters C's isspace accepts.
const cSpaces = " \t\n\v\f\r"

// isPrefixFold reports whether s is a (non-empty) case-insensitive prefix
// of word.
func isPrefixFold(s, word string) bool {
	return len(s) <= len(word) && strings.EqualFold(s, word[:len(s)])
}

// looksLikeInt is pgbench's is_an_int: ^\s*[-+]?[0-9]+$ (an empty digit run
// is accepted at the end of the text, as in pgbench, and then fails later).
func looksLikeInt(s string) bool {
	i := 0
	for i < len(s) && strings.IndexByte(cSpaces, s[i]) >= 0 {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if i < len(s) && !isDigit(s[i]) {
		return false
	}
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i == len(s)
}

// parseCDouble parses a whole string as C's strtod would, rejecting
// out-of-range values (overflow and underflow), as pgbench's strtodouble.
func parseCDouble(s string) (float64, bool) {
	t := strings.TrimLeft(s, cSpaces)
	if t == "" || strings.ContainsRune(t, '_') {
		return 0, false
	}
	body := strings.TrimLeft(t, "+-")
	if len(t)-len(body) > 1 {
		return 0, false
	}
	// C accepts hexadecimal floats without a binary exponent.
	if len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') && !strings.ContainsAny(body, "pP") {
		t += "p0"
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, false
	}
	if underflows(f, body) {
		return 0, false
	}
	return f, true
}

// underflows reports whether a parsed finite value underflowed: a
// subnormal result, or zero from a text with a non-zero digit (glibc's
// strtod reports ERANGE in both cases).
func underflows(f float64, text string) bool {
	if f != 0 {
		return math.Abs(f) < 0x1p-1022 && !math.IsInf(f, 0)
	}
	mant := text
	if len(mant) > 2 && mant[0] == '0' && (mant[1] == 'x' || mant[1] == 'X') {
		mant = mant[2:]
		if i := strings.IndexAny(mant, "pP"); i >= 0 {
			mant = mant[:i]
		}
		return strings.ContainsAny(mant, "123456789abcdefABCDEF")
	}
	if i := strings.IndexAny(mant, "eE"); i >= 0 {
		mant = mant[:i]
	}
	return strings.ContainsAny(mant, "123456789")
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
