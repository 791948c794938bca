package pgbench

import (
	"math"
	"os"
	"strings"
	"testing"
)

// testEnv is a client for tests: variables, a random state and the
// values debug() printed.
type testEnv struct {
	vars   map[string]Value
	r      *Rand
	debugs []Value
}

func newEnv(vars map[string]Value) *testEnv {
	if vars == nil {
		vars = map[string]Value{}
	}
	return &testEnv{vars: vars, r: NewRand(1)}
}

func (e *testEnv) Var(n string) (Value, bool) { v, ok := e.vars[n]; return v, ok }
func (e *testEnv) Rand() *Rand                { return e.r }
func (e *testEnv) Debug(v Value)              { e.debugs = append(e.debugs, v) }

// evalString parses and evaluates an expression.
func evalString(t *testing.T, src string, env Env) (Value, error) {
	t.Helper()
	e, err := ParseExpr(src)
	if err != nil {
		t.Fatalf("ParseExpr(%q): %v", src, err)
	}
	return Eval(e, env)
}

// mustParse parses a script or fails the test.
func mustParse(t *testing.T, name, text string) *Script {
	t.Helper()
	s, err := Parse(name, text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	return s
}

// kinds returns the kinds of a script's commands.
func kinds(s *Script) []CmdKind {
	var ks []CmdKind
	for _, c := range s.Commands {
		ks = append(ks, c.Kind)
	}
	return ks
}

func oneLineErr(t *testing.T, err error, prefix string) {
	t.Helper()
	if err == nil {
		t.Fatalf("expected an error starting with %q", prefix)
	}
	if strings.ContainsAny(err.Error(), "\n\r") {
		t.Errorf("error is not one line: %q", err)
	}
	if !strings.HasPrefix(err.Error(), prefix) {
		t.Errorf("error %q does not start with %q", err, prefix)
	}
}

func negZero() float64 { return math.Copysign(0, -1) }
func posInf() float64  { return math.Inf(1) }
func nan() float64     { return math.NaN() }

func writeFile(path, text string) error { return os.WriteFile(path, []byte(text), 0o644) }
