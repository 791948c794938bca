package pgbench

import (
	"strings"
	"testing"
)

// fuzzEnv defines every variable as an integer derived from its name, so
// that fuzzed expressions get evaluated past their variables.
type fuzzEnv struct{ r *Rand }

func (e *fuzzEnv) Var(name string) (Value, bool) {
	if strings.HasPrefix(name, "u") {
		return Value{}, false
	}
	return IntValue(int64(len(name)) - 3), true
}
func (e *fuzzEnv) Rand() *Rand   { return e.r }
func (e *fuzzEnv) Debug(v Value) {}

// FuzzParse checks that parsing never panics, that errors are one line
// starting with the script's name, and that parsed scripts are consistent
// (and evaluate without panicking).
func FuzzParse(f *testing.F) {
	for _, name := range BuiltinNames() {
		f.Add(BuiltinText(name))
	}
	f.Add("\\if :x\nselect 1;\n\\elif :y > 2\n\\set z case when :a then 1 else 2.5 end\n\\else\n\\sleep 1 ms\n\\endif\n")
	f.Add("select 1 \\; select :a::int \\aset p_\n\\startpipeline\nselect 2;\n\\syncpipeline\n\\endpipeline\n")
	f.Add("\\setshell x echo ::y :z\n\\shell true\n\\set h hash(:x) + permute(:x, 10) - random_zipfian(1, 10, 1.5)\n")
	f.Add("create function f() returns int language sql begin atomic select 1; end;\nselect $$;$$, E'\\';', \"x;\" /* ; */ -- ;\n;")
	f.Add("\\set x 1 + \\\n 2 * (3 - -9223372036854775808) % 4 << 5 | ~6 # 7 & 8 >> 9\n\\set y not :x isnull or true is not false and 1 <> 2.5e3")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse("fuzz.sql", text)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "fuzz.sql:") {
				t.Fatalf("error does not start with the name: %q", msg)
			}
			if strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error is not one line: %q", msg)
			}
			return
		}
		if len(s.Commands) == 0 || s.Name != "fuzz.sql" || s.Weight != 1 {
			t.Fatalf("bad script %+v", s)
		}
		env := &fuzzEnv{r: NewRand(1)}
		for i, c := range s.Commands {
			if strings.ContainsAny(c.Text, "\n\r") {
				t.Fatalf("command %d text is not one line: %q", i, c.Text)
			}
			if c.Line < 1 || c.Line > strings.Count(text, "\n")+1 {
				t.Fatalf("command %d line %d out of range", i, c.Line)
			}
			switch c.Kind {
			case CmdSQL:
				if c.SQL == nil || len(c.SQL.Queries) == 0 {
					t.Fatalf("command %d: SQL without queries", i)
				}
				for _, q := range c.SQL.Queries {
					if len(q.Parts) != len(q.Vars)+1 {
						t.Fatalf("command %d: %d parts for %d vars", i, len(q.Parts), len(q.Vars))
					}
				}
			case CmdIf, CmdElif:
				if c.Next <= i || c.Next > c.End || c.End >= len(s.Commands) || s.Commands[c.End].Kind != CmdEndif {
					t.Fatalf("command %d: next %d end %d", i, c.Next, c.End)
				}
				if k := s.Commands[c.Next].Kind; k != CmdElif && k != CmdElse && k != CmdEndif {
					t.Fatalf("command %d: next is %v", i, k)
				}
			case CmdElse:
				if c.End <= i || s.Commands[c.End].Kind != CmdEndif {
					t.Fatalf("command %d: end %d", i, c.End)
				}
			}
			if c.Expr != nil {
				_, _ = Eval(c.Expr, env)
			}
		}
		_ = s.Vars()
	})
}
