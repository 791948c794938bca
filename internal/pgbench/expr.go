package pgbench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The expression language of \set, \if and \elif: a lexer and a
// precedence-climbing parser equivalent to pgbench's exprscan.l and
// exprparse.y (same tokens, same precedence and associativity, same
// quirks where they are harmless).

type tokKind int

const (
	tEOF tokKind = iota
	tInt
	tMaxIntPlusOne // 9223372036854775808, valid only after a unary minus
	tDouble
	tVar
	tIdent
	tLParen
	tRParen
	tComma
	tPlus
	tMinus
	tStar
	tSlash
	tPercent
	tEq
	tNe
	tLt
	tLe
	tGt
	tGe
	tShl
	tShr
	tAmp
	tPipe
	tHash
	tTilde
	kwAnd
	kwOr
	kwNot
	kwIs
	kwIsnull
	kwNotnull
	kwNull
	kwTrue
	kwFalse
	kwCase
	kwWhen
	kwThen
	kwElse
	kwEnd
)

var keywords = map[string]tokKind{
	"and": kwAnd, "or": kwOr, "not": kwNot, "is": kwIs, "isnull": kwIsnull,
	"notnull": kwNotnull, "null": kwNull, "true": kwTrue, "false": kwFalse,
	"case": kwCase, "when": kwWhen, "then": kwThen, "else": kwElse, "end": kwEnd,
}

type token struct {
	kind tokKind
	pos  int    // byte offset in the expression text
	end  int    // byte offset just after the token
	text string // as written
	i    int64
	f    float64
}

// exprError is a problem found in an expression, at a byte offset of the
// expression text.
type exprError struct {
	pos int
	msg string // what is wrong, with its "expected ..." part

	// pgbench's words for it (exprparse.y, exprscan.l): its message and
	// the "more" it adds in parentheses; end is the offset just after
	// the token where pgbench finds the error (its caret goes under the
	// token's last byte), atEnd when that token is the end of the line.
	pg, more string
	end      int
	atEnd    bool
}

// pgSyntax is pgbench's "syntax error" at token t.
func pgSyntax(t token) (pg string, end int, atEnd bool) {
	return "syntax error", t.end, t.kind == tEOF
}

func (e *exprError) Error() string { return e.msg }

func isAlpha(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isAlnum(c byte) bool { return isAlpha(c) || isDigit(c) }

// isExprSpace is the white space of a backslash command: space, \t, \r,
// \f, \v (a newline ends the command).
func isExprSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
}

// lexExpr splits an expression into tokens. The text is one logical line
// (continuations already turned into spaces).
func lexExpr(s string) ([]token, *exprError) {
	var toks []token
	i := 0
	for i < len(s) {
		c := s[i]
		start := i
		switch {
		case isExprSpace(c) || c == '\n':
			i++
			continue
		case c == '\\' && (strings.HasPrefix(s[i+1:], "\n") || strings.HasPrefix(s[i+1:], "\r\n")):
			// A continuation marker.
			i += 2
			continue
		case c == ':':
			j := i + 1
			for j < len(s) && isAlnum(s[j]) {
				j++
			}
			if j == i+1 {
				return nil, &exprError{pos: i, msg: fmt.Sprintf("unexpected character %q, expected a variable name after \":\"", ":"),
					pg: "unexpected character", more: ":", end: i + 1}
			}
			toks = append(toks, token{kind: tVar, pos: start, end: j, text: s[i+1 : j]})
			i = j
			continue
		case isDigit(c) || c == '.' && i+1 < len(s) && isDigit(s[i+1]):
			t, n, err := lexNumber(s, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i += n
			continue
		case isAlpha(c):
			j := i + 1
			for j < len(s) && isAlnum(s[j]) {
				j++
			}
			w := s[i:j]
			k, ok := keywords[strings.ToLower(w)]
			if !ok {
				k = tIdent
			}
			toks = append(toks, token{kind: k, pos: start, end: j, text: w})
			i = j
			continue
		}
		// Operators and punctuation.
		two := ""
		if i+1 < len(s) {
			two = s[i : i+2]
		}
		var k tokKind
		n := 1
		switch two {
		case "<>", "!=":
			k, n = tNe, 2
		case "<=":
			k, n = tLe, 2
		case ">=":
			k, n = tGe, 2
		case "<<":
			k, n = tShl, 2
		case ">>":
			k, n = tShr, 2
		default:
			switch c {
			case '(':
				k = tLParen
			case ')':
				k = tRParen
			case ',':
				k = tComma
			case '+':
				k = tPlus
			case '-':
				k = tMinus
			case '*':
				k = tStar
			case '/':
				k = tSlash
			case '%':
				k = tPercent
			case '=':
				k = tEq
			case '<':
				k = tLt
			case '>':
				k = tGt
			case '&':
				k = tAmp
			case '|':
				k = tPipe
			case '#':
				k = tHash
			case '~':
				k = tTilde
			default:
				ch := string(c)
				if c >= 0x80 {
					ch = firstRune(s[i:])
				}
				// flex's "." is one byte: pgbench names the byte.
				return nil, &exprError{pos: i, msg: fmt.Sprintf("unexpected character %q in expression", ch),
					pg: "unexpected character", more: s[i : i+1], end: i + 1}
			}
		}
		toks = append(toks, token{kind: k, pos: start, end: i + n, text: s[i : i+n]})
		i += n
	}
	toks = append(toks, token{kind: tEOF, pos: len(s), end: len(s)})
	return toks, nil
}

func firstRune(s string) string {
	for _, r := range s {
		return string(r)
	}
	return ""
}

// lexNumber lexes an integer or a double at s[i:], with flex's longest
// match: digits are an integer unless followed by '.', or an exponent.
func lexNumber(s string, i int) (token, int, *exprError) {
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	isDouble := false
	if j < len(s) && s[j] == '.' {
		isDouble = true
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			isDouble = true
			j = k
		}
	}
	text := s[i:j]
	if !isDouble {
		if text == "9223372036854775808" {
			return token{kind: tMaxIntPlusOne, pos: i, end: j, text: text}, j - i, nil
		}
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return token{}, 0, &exprError{pos: i, msg: fmt.Sprintf("bigint constant overflow (%s), expected an integer between -9223372036854775808 and 9223372036854775807", text),
				pg: "bigint constant overflow", more: text, end: j}
		}
		return token{kind: tInt, pos: i, end: j, text: text, i: v}, j - i, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(f, 0) || underflows(f, text) {
		return token{}, 0, &exprError{pos: i, msg: fmt.Sprintf("double constant overflow (%s), expected a double within the range of 64-bit floating point", text),
			pg: "double constant overflow", more: text, end: j}
	}
	return token{kind: tDouble, pos: i, end: j, text: text, f: f}, j - i, nil
}

// Precedence levels, lowest first, as in exprparse.y.
const (
	levOr = iota + 1
	levAnd
	levNot
	levIs
	levCmp
	levBit
	levAdd
	levMul
	levUnary
)

type binop struct {
	level int
	fn    string
	id    funcID
}

func binaryOp(k tokKind) (binop, bool) {
	switch k {
	case kwOr:
		return binop{levOr, "or", fOr}, true
	case kwAnd:
		return binop{levAnd, "and", fAnd}, true
	case tEq:
		return binop{levCmp, "=", fEq}, true
	case tNe:
		return binop{levCmp, "<>", fNe}, true
	case tLt:
		return binop{levCmp, "<", fLt}, true
	case tLe:
		return binop{levCmp, "<=", fLe}, true
	case tGt:
		return binop{levCmp, ">", fGt}, true
	case tGe:
		return binop{levCmp, ">=", fGe}, true
	case tPipe:
		return binop{levBit, "|", fBitOr}, true
	case tHash:
		return binop{levBit, "#", fBitXor}, true
	case tAmp:
		return binop{levBit, "&", fBitAnd}, true
	case tShl:
		return binop{levBit, "<<", fShl}, true
	case tShr:
		return binop{levBit, ">>", fShr}, true
	case tPlus:
		return binop{levAdd, "+", fAdd}, true
	case tMinus:
		return binop{levAdd, "-", fSub}, true
	case tStar:
		return binop{levMul, "*", fMul}, true
	case tSlash:
		return binop{levMul, "/", fDiv}, true
	case tPercent:
		return binop{levMul, "%", fMod}, true
	}
	return binop{}, false
}

type exprParser struct {
	src  string
	toks []token
	p    int
}

// ParseExpr parses one expression, as written after \set name, \if or
// \elif. Errors are one line.
func ParseExpr(s string) (Expr, error) {
	e, err := parseExpr(s)
	if err != nil {
		return nil, err
	}
	return e, nil
}

func parseExpr(s string) (Expr, *exprError) {
	toks, lerr := lexExpr(s)
	if lerr != nil {
		return nil, lerr
	}
	ps := &exprParser{src: s, toks: toks}
	if t := ps.peek(); t.kind == tEOF {
		pg, end, atEnd := pgSyntax(t)
		return nil, &exprError{pos: len(s), msg: "missing expression, expected an expression", pg: pg, end: end, atEnd: atEnd}
	}
	e, err := ps.expr(levOr)
	if err != nil {
		return nil, err
	}
	if t := ps.peek(); t.kind != tEOF {
		return nil, ps.syntax(t, "expected an operator or the end of the expression")
	}
	return e, nil
}

func (ps *exprParser) peek() token { return ps.toks[ps.p] }

func (ps *exprParser) next() token {
	t := ps.toks[ps.p]
	if t.kind != tEOF {
		ps.p++
	}
	return t
}

// syntax makes a syntax error at token t, quoting the rest of the
// expression from there.
func (ps *exprParser) syntax(t token, expected string) *exprError {
	pg, end, atEnd := pgSyntax(t)
	if t.kind == tEOF {
		return &exprError{pos: t.pos, msg: "syntax error at end of expression: " + expected, pg: pg, end: end, atEnd: atEnd}
	}
	rest := strings.TrimSpace(ps.src[t.pos:])
	if len(rest) > 30 {
		cut := 27
		for cut > 0 && rest[cut]&0xC0 == 0x80 {
			cut--
		}
		rest = rest[:cut] + "..."
	}
	return &exprError{pos: t.pos, msg: fmt.Sprintf("syntax error in expression at %q: %s", rest, expected), pg: pg, end: end}
}

const expectOperand = "expected an operand"

// expr parses an expression whose binary operators all have a level >=
// min.
func (ps *exprParser) expr(min int) (Expr, *exprError) {
	lhs, err := ps.unary()
	if err != nil {
		return nil, err
	}
	last := 0 // level of the last binary operator applied in this loop
	for {
		t := ps.peek()
		switch t.kind {
		case kwIsnull, kwNotnull, kwIs:
			if levIs < min {
				return lhs, nil
			}
			ps.next()
			lhs, err = ps.isTest(t, lhs)
			if err != nil {
				return nil, err
			}
			last = levIs
			continue
		}
		op, ok := binaryOp(t.kind)
		if !ok || op.level < min {
			return lhs, nil
		}
		if op.level == levCmp && last == levCmp {
			return nil, ps.syntax(t, "comparison operators do not associate, expected parentheses")
		}
		ps.next()
		rhs, err := ps.expr(op.level + 1)
		if err != nil {
			return nil, err
		}
		lhs = Call{Fn: op.fn, Args: []Expr{lhs, rhs}, id: op.id}
		last = op.level
	}
}

// isTest parses what follows IS, or applies ISNULL / NOTNULL.
func (ps *exprParser) isTest(t token, lhs Expr) (Expr, *exprError) {
	switch t.kind {
	case kwIsnull:
		return Call{Fn: "isnull", Args: []Expr{lhs}, id: fIsNull}, nil
	case kwNotnull:
		return Call{Fn: "isnotnull", Args: []Expr{lhs}, id: fIsNotNull}, nil
	}
	negate := false
	if ps.peek().kind == kwNot {
		ps.next()
		negate = true
	}
	u := ps.next()
	var e Expr
	switch u.kind {
	case kwNull:
		if negate {
			return Call{Fn: "isnotnull", Args: []Expr{lhs}, id: fIsNotNull}, nil
		}
		return Call{Fn: "isnull", Args: []Expr{lhs}, id: fIsNull}, nil
	case kwTrue, kwFalse:
		e = Call{Fn: "is", Args: []Expr{lhs, Const{V: BoolValue(u.kind == kwTrue)}}, id: fIs}
	default:
		if negate {
			return nil, ps.syntax(u, "expected NULL, TRUE or FALSE after IS NOT")
		}
		return nil, ps.syntax(u, "expected NULL, TRUE, FALSE or NOT after IS")
	}
	if negate {
		e = Call{Fn: "not", Args: []Expr{e}, id: fNot}
	}
	return e, nil
}

// unary parses a prefix operator and its operand, or a primary.
func (ps *exprParser) unary() (Expr, *exprError) {
	t := ps.peek()
	switch t.kind {
	case tPlus:
		ps.next()
		return ps.expr(levUnary)
	case tMinus:
		ps.next()
		if n := ps.peek(); n.kind == tMaxIntPlusOne {
			ps.next()
			return Const{V: IntValue(math.MinInt64)}, nil
		}
		e, err := ps.expr(levUnary)
		if err != nil {
			return nil, err
		}
		if c, ok := e.(Const); ok && c.V.K == Int && c.V.I != math.MinInt64 {
			// 0 - c cannot overflow here. INT64_MIN comes only in
			// parentheses, -(-9223372036854775808): pgbench's 0 - c then
			// fails when it runs (bigint sub out of range).
			return Const{V: IntValue(-c.V.I)}, nil
		}
		return Call{Fn: "unary-", Args: []Expr{e}, id: fNeg}, nil
	case tTilde:
		ps.next()
		e, err := ps.expr(levBit + 1)
		if err != nil {
			return nil, err
		}
		return Call{Fn: "~", Args: []Expr{e}, id: fBitNot}, nil
	case kwNot:
		ps.next()
		e, err := ps.expr(levNot)
		if err != nil {
			return nil, err
		}
		return Call{Fn: "not", Args: []Expr{e}, id: fNot}, nil
	}
	return ps.primary()
}

func (ps *exprParser) primary() (Expr, *exprError) {
	t := ps.next()
	switch t.kind {
	case tInt:
		return Const{V: IntValue(t.i)}, nil
	case tDouble:
		return Const{V: DoubleValue(t.f)}, nil
	case kwNull:
		return Const{V: NullValue()}, nil
	case kwTrue:
		return Const{V: BoolValue(true)}, nil
	case kwFalse:
		return Const{V: BoolValue(false)}, nil
	case tVar:
		return VarRef{Name: t.text}, nil
	case tLParen:
		e, err := ps.expr(levOr)
		if err != nil {
			return nil, err
		}
		if c := ps.next(); c.kind != tRParen {
			return nil, ps.syntax(c, "expected an operator or \")\"")
		}
		return e, nil
	case tIdent:
		if ps.peek().kind != tLParen {
			e := &exprError{pos: t.pos, msg: fmt.Sprintf("syntax error in expression at %q: expected a function call such as %s(...), a :variable, a number, TRUE, FALSE or NULL", t.text, strings.ToLower(t.text))}
			// pgbench looks the name up as soon as it has read it, then
			// wants a "(".
			if _, ok := functions[strings.ToLower(t.text)]; !ok {
				e.pg, e.more, e.end = "unexpected function name", t.text, t.end
			} else {
				e.pg, e.end, e.atEnd = pgSyntax(ps.peek())
			}
			return nil, e
		}
		return ps.call(t)
	case kwCase:
		return ps.caseExpr()
	case tMaxIntPlusOne:
		return nil, &exprError{pos: t.pos, msg: fmt.Sprintf("bigint constant overflow (%s), expected an integer between -9223372036854775808 and 9223372036854775807", t.text),
			pg: "syntax error", end: t.end} // pgbench's grammar has it only after a minus
	}
	return nil, ps.syntax(t, expectOperand)
}

// call parses a function call; name is the function's token, the next
// token is "(".
func (ps *exprParser) call(name token) (Expr, *exprError) {
	fn := strings.ToLower(name.text)
	def, ok := functions[fn]
	if !ok {
		return nil, &exprError{pos: name.pos, msg: fmt.Sprintf("unknown function %q, expected one of %s", name.text, functionList()),
			pg: "unexpected function name", more: name.text, end: name.end}
	}
	ps.next() // (
	var args []Expr
	rparen := ps.peek()
	if rparen.kind == tRParen {
		ps.next()
	} else {
		// pgbench's grammar accepts one leading comma: f(, x) is f(x),
		// and f(,) fails at the ")".
		if ps.peek().kind == tComma {
			ps.next()
		}
		for {
			a, err := ps.expr(levOr)
			if err != nil {
				return nil, err
			}
			args = append(args, a)
			t := ps.next()
			if t.kind == tRParen {
				rparen = t
				break
			}
			if t.kind != tComma {
				return nil, ps.syntax(t, "expected \",\" or \")\" in the arguments of "+fn+"()")
			}
		}
	}
	n := len(args)
	if n < def.min || def.max >= 0 && n > def.max {
		var want string
		switch {
		case def.max < 0:
			want = fmt.Sprintf("at least %d", def.min)
		case def.min == def.max:
			want = strconv.Itoa(def.min)
		default:
			want = fmt.Sprintf("%d or %d", def.min, def.max)
		}
		plural := "s"
		if want == "1" || want == "at least 1" {
			plural = ""
		}
		// pgbench counts the arguments when it has read the ")".
		pg := "unexpected number of arguments"
		if def.max < 0 {
			pg = "at least one argument expected"
		}
		return nil, &exprError{pos: name.pos, msg: fmt.Sprintf("%s() called with %d argument%s, expected %s argument%s", fn, n, pluralS(n), want, plural),
			pg: pg, more: fn, end: rparen.end}
	}
	if def.seedArg > 0 && n == def.seedArg {
		// The optional seed defaults to :default_seed, as in pgbench.
		args = append(args, VarRef{Name: "default_seed"})
	}
	return Call{Fn: fn, Args: args, id: def.id}, nil
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (ps *exprParser) caseExpr() (Expr, *exprError) {
	var c Case
	if t := ps.peek(); t.kind != kwWhen {
		return nil, ps.syntax(t, "expected WHEN after CASE")
	}
	for ps.peek().kind == kwWhen {
		ps.next()
		w, err := ps.expr(levOr)
		if err != nil {
			return nil, err
		}
		if t := ps.next(); t.kind != kwThen {
			return nil, ps.syntax(t, "expected an operator or THEN")
		}
		r, err := ps.expr(levOr)
		if err != nil {
			return nil, err
		}
		c.When = append(c.When, w)
		c.Then = append(c.Then, r)
	}
	if ps.peek().kind == kwElse {
		ps.next()
		e, err := ps.expr(levOr)
		if err != nil {
			return nil, err
		}
		c.Else = e
		if t := ps.next(); t.kind != kwEnd {
			return nil, ps.syntax(t, "expected an operator or END")
		}
		return c, nil
	}
	if t := ps.next(); t.kind != kwEnd {
		return nil, ps.syntax(t, "expected an operator, WHEN, ELSE or END")
	}
	return c, nil
}
