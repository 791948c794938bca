package script

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/db"
	_ "github.com/sledge-bench/sledge/internal/db/sqlite"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/pgbench"
	"github.com/sledge-bench/sledge/internal/workload"
)

var protocols = []workload.Protocol{workload.ProtoSimple, workload.ProtoExtended, workload.ProtoPrepared}

// env is a SQLite database in a temporary directory, which is also the
// working directory, so that script names are short ("x.sql").
type env struct {
	t   *testing.T
	dir string
	db  db.DB
	sdb db.ScriptDB
	c   workload.ScriptConn // for setting up and reading back
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	d, err := db.Open(t.Context(), "sqlite://"+filepath.Join(dir, "test.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	sdb, ok := d.(db.ScriptDB)
	if !ok {
		t.Fatalf("%T does not implement db.ScriptDB", d)
	}
	c, err := sdb.ConnectScript(t.Context(), workload.ProtoSimple)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	e := &env{t: t, dir: dir, db: d, sdb: sdb, c: c}
	e.exec("create table out(k text, v)")
	return e
}

func (e *env) exec(sql string) {
	e.t.Helper()
	if err := e.c.RunSQL(e.t.Context(), &workload.SQLQuery{ID: -1, Text: sql}, nil); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
}

// one returns the first column of the last row of sql, "<null>" for NULL.
func (e *env) one(sql string) string {
	e.t.Helper()
	got := "<no row>"
	err := e.c.RunSQL(e.t.Context(), &workload.SQLQuery{ID: -2, Text: sql}, func(_ int, _ []string, last []any, rows int) {
		if rows > 0 {
			if last[0] == nil {
				got = "<null>"
			} else {
				got = fmt.Sprint(last[0])
			}
		}
	})
	if err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
	return got
}

// out is the content of table out: "k=v,…" ordered by k then v.
func (e *env) out() string {
	e.t.Helper()
	s := e.one("select coalesce(group_concat(k || '=' || coalesce(v, '<null>'), ','), '') from (select k, v from out order by k, v)")
	return s
}

func (e *env) write(name, text string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.dir, name), []byte(text), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// opts is one run.
type opts struct {
	proto      workload.Protocol
	vus, iters int
	seed       uint64
	defines    []string
	scale      int
	builtins   []string
	perCmd     bool
	maxRetries int
	stderr     *bytes.Buffer
	// wrap replaces each VU's session (to inject failures or record).
	wrap func(vu int, c workload.ScriptConn) workload.Conn
}

// run runs files (names in the working directory) through the engine as
// the CLI would: New, the setters, Attach on a session of its own, then
// engine.Run with one session and one terminal per VU.
func (e *env) run(files []string, o opts) (*Workload, *engine.Result, error) {
	e.t.Helper()
	ctx := e.t.Context()
	if o.proto == 0 {
		o.proto = workload.ProtoSimple
	}
	if o.vus == 0 {
		o.vus = 1
	}
	if o.iters == 0 {
		o.iters = 1
	}
	if o.seed == 0 {
		o.seed = 42
	}
	w, err := New(Config{Files: files, Defines: o.defines, Scale: o.scale, Seed: o.seed})
	if err != nil {
		return nil, nil, err
	}
	if err := w.AddBuiltins(o.builtins); err != nil {
		return nil, nil, err
	}
	w.SetProtocol(o.proto)
	w.SetPerCommand(o.perCmd)
	if o.stderr != nil {
		w.SetStderr(o.stderr)
	}
	if err := w.Validate(); err != nil {
		return nil, nil, err
	}
	if err := w.CheckProtocol(o.proto); err != nil {
		return nil, nil, err
	}
	if err := e.sdb.ScriptSupports(o.proto, w.NeedsPipelines()); err != nil {
		return nil, nil, err
	}
	ac, err := e.sdb.ConnectScript(ctx, o.proto)
	if err != nil {
		return nil, nil, err
	}
	err = w.Attach(ctx, ac)
	ac.Close(ctx)
	if err != nil {
		return nil, nil, err
	}
	p := &engine.Plan{
		VUs: o.vus, Iterations: o.iters, Seed: o.seed, Mix: w.Mix(), MaxRetries: o.maxRetries,
		Connect: func(ctx context.Context, vu int) (workload.Conn, error) {
			c, err := e.sdb.ConnectScript(ctx, o.proto)
			if err != nil || o.wrap == nil {
				return c, err
			}
			return o.wrap(vu, c), nil
		},
		Terminal: func(vu int) workload.Terminal { return w.NewTerminal(vu, o.vus, o.seed) },
	}
	res, err := engine.Run(ctx, p, nil)
	return w, res, err
}

// errorsOf is a run's error messages with their counts, one per line.
func errorsOf(res *engine.Result) string {
	var b strings.Builder
	for _, ec := range res.Errors {
		fmt.Fprintf(&b, "%d× %s\n", ec.Count, ec.Message)
	}
	return b.String()
}

func TestMetaCommands(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name    string
		script  string
		defines []string
		vus     int
		iters   int
		protos  []workload.Protocol // default: all three
		want    string              // table out afterwards
		err     string              // every transaction fails with an error containing this
		check   func(t *testing.T, stderr string)
	}{
		{
			name: "set arithmetic and functions, read back with gset",
			script: `\set a 5 * 3 + 2
\set b greatest(1, 2.5, 2)
\set c mod(54, 32)
\set d abs(-7) + int(5.4 + 3.8)
\set e hash(10, 5432)
\set f -7 / 2
\set g case when :a > 10 then 1 else 0 end
select :a * 2 as a2, :c + 1 as c1 \gset
\set h :a2 + :c1
insert into out values ('a', :a), ('b', :b), ('c', :c), ('d', :d), ('e', :e), ('f', :f), ('g', :g), ('h', :h);
`,
			want: "a=17,b=2.5,c=22,d=16,e=-5817877081768721676,f=-3,g=1,h=57",
		},
		{
			name: "if elif else, nested",
			vus:  3,
			script: `\if :client_id = 0
insert into out values ('c' || :client_id, 'if');
\elif :client_id = 1
  \if 2.5
insert into out values ('c' || :client_id, 'elif');
  \else
insert into out values ('c' || :client_id, 'wrong');
  \endif
\else
  \set z 0
  \if :z
insert into out values ('c' || :client_id, 'wrong');
  \elif :z = 1
insert into out values ('c' || :client_id, 'wrong');
  \else
insert into out values ('c' || :client_id, 'else');
  \endif
\endif
`,
			want: "c0=if,c1=elif,c2=else",
		},
		{
			name: "setshell and shell",
			script: `\setshell x echo 42
\setshell y echo :x
\shell echo :y shell > shell.out
\shell echo to stderr
insert into out values ('x', :x + 0), ('y', :y);
`,
			protos: []workload.Protocol{workload.ProtoSimple},
			want:   "x=42,y=42",
			check: func(t *testing.T, stderr string) {
				b, err := os.ReadFile("shell.out")
				if err != nil || string(b) != "42 shell\n" {
					t.Errorf("shell.out = %q, %v; want \"42 shell\\n\"", b, err)
				}
				if !strings.Contains(stderr, "to stderr\n") {
					t.Errorf("stderr %q lacks the \\shell output", stderr)
				}
			},
		},
		{
			name:   "setshell needs an integer",
			script: "\\setshell x echo abc\n",
			protos: []workload.Protocol{workload.ProtoSimple},
			err:    `script x.sql command 1 (line 1): \setshell: shell command must return an integer (not "abc")`,
		},
		{
			// pgbench checks the name when it assigns: after the
			// expression or the shell command.
			name:   "set invalid variable name",
			script: "insert into out values ('a', 1);\n\\set 1x 1 + 1\n",
			protos: []workload.Protocol{workload.ProtoSimple},
			err:    `script x.sql command 2 (line 2): \set: invalid variable name "1x"`,
			want:   "a=1",
		},
		{
			name:   "set invalid variable name, its expression first",
			script: "\\set x. 1 / 0\n",
			protos: []workload.Protocol{workload.ProtoSimple},
			err:    `script x.sql command 1 (line 1): division by zero`,
		},
		{
			name:   "setshell invalid variable name",
			script: "\\setshell 9 echo 1\n",
			protos: []workload.Protocol{workload.ProtoSimple},
			err:    `script x.sql command 1 (line 1): \setshell: invalid variable name "9"`,
		},
		{
			name:   "shell command failure",
			script: "select 1;\n\\shell exit 3\n",
			protos: []workload.Protocol{workload.ProtoSimple},
			err:    `script x.sql command 2 (line 2): \shell: command "exit 3" failed: exit status 3`,
		},
		{
			name:   "gset with no row",
			script: "select 1 as x where 0 \\gset\n",
			err:    "script x.sql command 1 (line 1): expected one row, got 0",
		},
		{
			name:   "gset with two rows",
			script: "select 1 as x union all select 2 \\gset\n",
			err:    "script x.sql command 1 (line 1): expected one row, got 2",
		},
		{
			name:   "gset on a command without rows",
			script: "insert into out values ('z', 1) \\gset\n",
			err:    "script x.sql command 1 (line 1): expected one row, got 0",
			want:   "z=1", // the insert ran: autocommit, as with pgbench
		},
		{
			// pgbench stores libpq's text of a NULL, the empty string.
			name: "gset prefix, NULL bound as empty text",
			script: `select 5 as v, null as n \gset p_
insert into out values ('v', :p_v), ('n', '<' || coalesce(:p_n, 'null') || '>');
`,
			protos: []workload.Protocol{workload.ProtoExtended, workload.ProtoPrepared},
			want:   "n=<>,v=5",
		},
		{
			name: "gset NULL pasted as empty text",
			script: `select 5 as v, null as n \gset p_
insert into out values ('v', :p_v), ('n', '<:p_n>');
`,
			protos: []workload.Protocol{workload.ProtoSimple},
			want:   "n=<>,v=5",
		},
		{
			name: "aset over a compound command",
			script: `select 1 as a \; select 2 as b \; select 3 as a where 0 \aset
insert into out values ('a', :a), ('b', :b);
`,
			protos: []workload.Protocol{workload.ProtoSimple},
			want:   "a=1,b=2",
		},
		{
			name: "aset keeps the last row",
			script: `select 1 as a union all select 7 \aset
insert into out values ('a', :a);
`,
			want: "a=7",
		},
		{
			name:    "define overrides the automatic variables",
			defines: []string{"client_id=99", "scale=7", "myvar=21"},
			script: `\set myv :myvar * 2
insert into out values ('client_id', :client_id), ('scale', :scale), ('myv', :myv);
`,
			want: "client_id=99,myv=42,scale=7",
		},
		{
			name:    "define text pasted as written",
			defines: []string{"word=abc", "num=007"},
			script:  "insert into out values ('w', ':word'), ('n', ':num');\n",
			protos:  []workload.Protocol{workload.ProtoSimple},
			want:    "n=007,w=abc",
		},
		{
			name:   "client_id per VU",
			vus:    3,
			script: "insert into out values ('c' || :client_id, :client_id);\n",
			want:   "c0=0,c1=1,c2=2",
		},
		{
			name:   "undefined variable sent unchanged with the simple protocol",
			script: "insert into out values ('u', ':nope');\n",
			protos: []workload.Protocol{workload.ProtoSimple},
			want:   "u=:nope",
		},
		{
			name:   "undefined variable bound as NULL",
			script: "insert into out values ('u', coalesce(:nope, 'null'));\n",
			protos: []workload.Protocol{workload.ProtoExtended, workload.ProtoPrepared},
			want:   "u=null",
		},
		{
			name:   "undefined variable in an expression",
			script: "\n\\set x :nope + 1\n",
			err:    `script x.sql command 1 (line 2): undefined variable "nope"`,
		},
		{
			name:    "malformed variable in an expression",
			defines: []string{"word=abc"},
			script:  "\\set x :word + 1\n",
			err:     `script x.sql command 1 (line 1): malformed variable "word" value: "abc"`,
		},
		{
			name:   "end of script inside a transaction",
			iters:  2,
			script: "BEGIN;\ninsert into out values ('t', 1);\n",
			err:    "script x.sql: end of script reached without completing the last transaction",
		},
		{
			name:   "an error rolls back the open transaction",
			iters:  2,
			script: "BEGIN;\ninsert into out values ('t', 1);\nselect * from nosuchtable;\nEND;\n",
			err:    "script x.sql command 3 (line 3): ",
		},
		{
			name:   "debug",
			script: "\\set x 1\n\\set y debug(:x + 4)\n\\set z debug(2.5 * 2)\n",
			check: func(t *testing.T, stderr string) {
				want := "debug(script=0,command=2): int 5\ndebug(script=0,command=3): double 5\n"
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr = %q, want %q", stderr, want)
				}
			},
		},
	}
	for _, c := range cases {
		protos := c.protos
		if protos == nil {
			protos = protocols
		}
		for _, p := range protos {
			t.Run(c.name+"/"+p.String(), func(t *testing.T) {
				e.t = t
				e.exec("delete from out")
				e.write("x.sql", c.script)
				vus, iters := max(c.vus, 1), max(c.iters, 1)
				var stderr bytes.Buffer
				_, res, err := e.run([]string{"x.sql"}, opts{proto: p, vus: vus, iters: iters, defines: c.defines, stderr: &stderr})
				if err != nil {
					t.Fatal(err)
				}
				if c.err != "" {
					if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, c.err) || res.Errors[0].Count != int64(vus*iters) {
						t.Fatalf("errors:\n%swant %d× %q", errorsOf(res), vus*iters, c.err)
					}
					if strings.Contains(res.Errors[0].Message, "\n") {
						t.Errorf("error is not one line: %q", res.Errors[0].Message)
					}
				} else if len(res.Errors) > 0 {
					t.Fatalf("errors:\n%s", errorsOf(res))
				}
				if got := e.out(); got != c.want {
					t.Errorf("out = %q, want %q", got, c.want)
				}
				if c.check != nil {
					c.check(t, stderr.String())
				}
			})
		}
	}
}

func TestSleep(t *testing.T) {
	e := newEnv(t)
	e.write("x.sql", "\\set d 20\n\\sleep 30 ms\n\\sleep :d ms\n\\sleep 5000 us\n\\sleep 0\n")
	start := time.Now()
	_, res, err := e.run([]string{"x.sql"}, opts{iters: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("errors:\n%s", errorsOf(res))
	}
	if d := time.Since(start); d < 110*time.Millisecond || d > 5*time.Second {
		t.Errorf("2 runs of 55 ms of sleep took %s", d)
	}
}

// flaky fails the first command whose text contains failOn with a
// retryable error, once, and records the text and arguments of every
// command.
type flaky struct {
	workload.ScriptConn
	failOn string
	failed bool
	log    []string
}

func (f *flaky) RunSQL(ctx context.Context, q *workload.SQLQuery, keep workload.ResultFunc) error {
	f.log = append(f.log, fmt.Sprintf("%s %v", q.Text, q.Args))
	if !f.failed && strings.Contains(q.Text, f.failOn) {
		f.failed = true
		_ = f.ScriptConn.Rollback(ctx) // as a database does on a serialization failure
		return fmt.Errorf("injected conflict: %w", workload.ErrRetry)
	}
	return f.ScriptConn.RunSQL(ctx, q, keep)
}

func TestRetryRestoresVariablesAndRandomState(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			e := newEnv(t)
			e.write("x.sql", `\set n :n + 1
\set r random(1, 1000000000)
BEGIN;
select :n as m \gset
\set n :m + 100
insert into out values ('n' || :m, :r);
select 'fail here';
END;
`)
			var conns []*flaky
			_, res, err := e.run([]string{"x.sql"}, opts{proto: p, iters: 2, defines: []string{"n=0"}, maxRetries: 1,
				wrap: func(_ int, c workload.ScriptConn) workload.Conn {
					f := &flaky{ScriptConn: c, failOn: "fail here"}
					conns = append(conns, f)
					return f
				}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Errors) > 0 {
				t.Fatalf("errors:\n%s", errorsOf(res))
			}
			if got := res.Stats.Total().Retries; got != 1 {
				t.Errorf("retries = %d, want 1", got)
			}
			// n is 1 in both tries of the first transaction (restored, not
			// 2 nor 102), 102 in the second (kept across transactions).
			got := e.out()
			if !strings.HasPrefix(got, "n1=") || !strings.Contains(got, ",n102=") || strings.Count(got, "=") != 2 {
				t.Fatalf("out = %q, want n1=R1,n102=R2", got)
			}
			// The retry drew the same random value: the inserts of both
			// tries of the first transaction are identical.
			var inserts []string
			for _, l := range conns[0].log {
				if strings.HasPrefix(l, "insert") {
					inserts = append(inserts, l)
				}
			}
			if len(inserts) != 3 || inserts[0] != inserts[1] || inserts[1] == inserts[2] {
				t.Errorf("inserts of the three tries:\n%s", strings.Join(inserts, "\n"))
			}
		})
	}
}

// recorder records each command's text and arguments.
type recorder struct {
	workload.ScriptConn
	log []workload.SQLQuery
}

func (r *recorder) RunSQL(ctx context.Context, q *workload.SQLQuery, keep workload.ResultFunc) error {
	r.log = append(r.log, workload.SQLQuery{ID: q.ID, Text: q.Text, Args: append([]any(nil), q.Args...)})
	return r.ScriptConn.RunSQL(ctx, q, keep)
}

// TestProtocols checks what each protocol sends for the same script and
// that all three leave the same rows.
func TestProtocols(t *testing.T) {
	script := `\set a 1000
\set f 2.5
select 42 as g, '007' as z \gset
select :a as x, :g as y, :z as z2, :f as w, :a + 0 as a2 \gset
insert into out values ('x', :x), ('y', :y), ('z', :z2), ('w', :w), ('a2', :a2);
`
	want := map[workload.Protocol]string{
		workload.ProtoSimple:   "select 1000 as x, 42 as y, 007 as z2, 2.5 as w, 1000 + 0 as a2",
		workload.ProtoExtended: "select ? as x, ? as y, ? as z2, ? as w, ? + 0 as a2 [1000 42 007 2.5 1000]",
		workload.ProtoPrepared: "select ? as x, ? as y, ? as z2, ? as w, ? + 0 as a2 [1000 42 007 2.5 1000]",
	}
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			e := newEnv(t)
			e.write("x.sql", script)
			var rec *recorder
			_, res, err := e.run([]string{"x.sql"}, opts{proto: p, wrap: func(_ int, c workload.ScriptConn) workload.Conn {
				rec = &recorder{ScriptConn: c}
				return rec
			}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Errors) > 0 {
				t.Fatalf("errors:\n%s", errorsOf(res))
			}
			if len(rec.log) != 3 {
				t.Fatalf("%d commands sent, want 3", len(rec.log))
			}
			q := rec.log[1]
			got := q.Text
			if p == workload.ProtoSimple {
				if len(q.Args) != 0 {
					t.Errorf("simple protocol with args %v", q.Args)
				}
			} else {
				got = fmt.Sprintf("%s %v", q.Text, q.Args)
				// Numbers computed by \set, and text that reads back as the
				// same number, are bound as numbers; other text as text.
				if types := fmt.Sprintf("%T", q.Args); types != "[]interface {}" || len(q.Args) != 5 {
					t.Fatalf("args %v", q.Args)
				}
				types := fmt.Sprintf("%T %T %T %T %T", q.Args[0], q.Args[1], q.Args[2], q.Args[3], q.Args[4])
				if types != "int64 int64 string float64 int64" {
					t.Errorf("arg types %s", types)
				}
			}
			if exp := withPlaceholders(want[p], rec); got != exp {
				t.Errorf("sent\n%s\nwant\n%s", got, exp)
			}
			ids := map[int]bool{}
			for _, q := range rec.log {
				ids[q.ID] = true
			}
			if len(ids) != 3 {
				t.Errorf("IDs of 3 commands: %v", ids)
			}
			wantOut := "a2=1000,w=2.5,x=1000,y=42,z=7"
			if p != workload.ProtoSimple {
				wantOut = "a2=1000,w=2.5,x=1000,y=42,z=007"
			}
			if got := e.out(); got != wantOut {
				t.Errorf("out = %q, want %q", got, wantOut)
			}
		})
	}
}

// withPlaceholders writes the session's n-th placeholder for the n-th "?".
func withPlaceholders(s string, c workload.ScriptConn) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if r == '?' {
			n++
			b.WriteString(c.Placeholder(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func TestCommandReport(t *testing.T) {
	e := newEnv(t)
	e.write("x.sql", "\\set a random(1, 10)\n-- a comment\nselect :a;\n\\if :a > 5\nselect 1;\n\\endif\n")
	e.write("bad.sql", "select 1;\nselect * from nosuchtable;\n")
	w, res, err := e.run([]string{"x.sql@3", "bad.sql@1"}, opts{vus: 2, iters: 20, perCmd: true})
	if err != nil {
		t.Fatal(err)
	}
	rep := w.CommandReport()
	if len(rep) != 2 || rep[0].Script != "x.sql" || rep[1].Script != "bad.sql" {
		t.Fatalf("report %+v", rep)
	}
	good, bad := res.Stats[0].Commits, res.Stats[1].Errors
	if good+bad != 40 || good == 0 || bad == 0 {
		t.Fatalf("commits %d of x.sql, errors %d of bad.sql", good, bad)
	}
	x := rep[0].Commands
	if len(x) != 5 || x[0].Line != 1 || x[0].Text != `\set a random(1, 10)` || x[1].Line != 3 || x[2].Line != 4 || x[3].Line != 5 {
		t.Fatalf("x.sql commands %+v", x)
	}
	for i, c := range x {
		if i != 3 && c.Count != good {
			t.Errorf("command %d (line %d) count %d, want %d", i+1, c.Line, c.Count, good)
		}
		if c.Failures != 0 {
			t.Errorf("command %d failures %d", i+1, c.Failures)
		}
	}
	if x[3].Count == 0 || x[3].Count == good {
		t.Errorf("the branch ran %d times of %d", x[3].Count, good)
	}
	if x[1].Total <= 0 || x[1].Mean() <= 0 {
		t.Errorf("select total %s", x[1].Total)
	}
	b := rep[1].Commands
	if b[0].Count != bad || b[0].Failures != 0 || b[1].Count != 0 || b[1].Failures != bad {
		t.Errorf("bad.sql commands %+v, want %d runs failing at the second", b, bad)
	}
}

func TestScriptChoiceByWeight(t *testing.T) {
	w := &Workload{proto: workload.ProtoSimple, perCmd: false}
	w.scripts = []*pgbench.Script{{Name: "a", Weight: 1}, {Name: "b", Weight: 0}, {Name: "c", Weight: 3}}
	w.stderr = &lockedWriter{w: os.Stderr}
	term := w.NewTerminal(0, 1, 7)
	var n [3]int
	for range 4000 {
		n[term.Next().Kind()]++
	}
	if n[1] != 0 || n[0] < 850 || n[0] > 1150 || n[2] < 2850 || n[2] > 3150 {
		t.Errorf("draws %v, want about 1000, 0, 3000", n)
	}
	if mix := w.Mix(); len(mix) != 3 || mix[2].Name != "c" || mix[2].Weight != 3 || mix[2].Key != "" {
		t.Errorf("mix %+v", mix)
	}
	w.scripts = append(w.scripts, &pgbench.Script{Name: "a", Weight: 1})
	if mix := w.Mix(); mix[0].Key != "a#1" || mix[3].Key != "a#4" || mix[2].Key != "" {
		t.Errorf("a script given twice: mix %+v", mix)
	}
}

// pgbench's DDL (doc section 1), without the fillfactor SQLite lacks.
const tpcbSchema = `create table pgbench_history(tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22));
create table pgbench_tellers(tid int not null primary key,bid int,tbalance int,filler char(84));
create table pgbench_accounts(aid    int not null primary key,bid int,abalance int,filler char(84));
create table pgbench_branches(bid int not null primary key,bbalance int,filler char(88));`

// tpcbLoad loads scale s as pgbench's server-side generation does.
func tpcbLoad(s int) []string {
	return []string{
		fmt.Sprintf("insert into pgbench_branches(bid,bbalance) with recursive g(x) as (select 1 union all select x+1 from g where x < %d) select x, 0 from g", s),
		fmt.Sprintf("insert into pgbench_tellers(tid,bid,tbalance) with recursive g(x) as (select 1 union all select x+1 from g where x < %d) select x, (x - 1) / 10 + 1, 0 from g", 10*s),
		fmt.Sprintf("insert into pgbench_accounts(aid,bid,abalance,filler) with recursive g(x) as (select 1 union all select x+1 from g where x < %d) select x, (x - 1) / 100000 + 1, 0, '' from g", 100000*s),
	}
}

// TestBuiltinScripts runs pgbench's own builtin scripts, written out as
// files, against pgbench's schema at scale 3 (found by Attach from
// pgbench_branches), in every protocol, then through AddBuiltins mixed by
// weight; the balances must add up to the history's deltas.
func TestBuiltinScripts(t *testing.T) {
	e := newEnv(t)
	for _, s := range strings.Split(tpcbSchema, "\n") {
		e.exec(s)
	}
	e.exec("BEGIN")
	for _, s := range tpcbLoad(3) {
		e.exec(s)
	}
	e.exec("COMMIT")
	// Every script that writes adds its delta to one account and one
	// history row; only tpcb-like also to a teller and a branch.
	tpcbOnly := true
	check := func(t *testing.T, wantHistory int64) {
		t.Helper()
		if got := e.one("select count(*) from pgbench_history"); got != fmt.Sprint(wantHistory) {
			t.Errorf("history rows %s, want %d", got, wantHistory)
		}
		delta := e.one("select coalesce(sum(delta), 0) from pgbench_history")
		if got := e.one("select sum(abalance) from pgbench_accounts"); got != delta {
			t.Errorf("sum(abalance) = %s, want sum(delta) %s", got, delta)
		}
		tb := e.one("select sum(tbalance) from pgbench_tellers")
		if bb := e.one("select sum(bbalance) from pgbench_branches"); tb != bb {
			t.Errorf("sum(tbalance) %s != sum(bbalance) %s", tb, bb)
		}
		if tpcbOnly && tb != delta {
			t.Errorf("after tpcb-like only, sum(tbalance) = %s, want sum(delta) %s", tb, delta)
		}
	}
	var history int64
	for _, name := range []string{"tpcb-like", "simple-update", "select-only"} {
		text := pgbench.BuiltinText(name)
		if text == "" {
			t.Fatalf("no builtin %s", name)
		}
		e.write(name+".sql", text)
		tpcbOnly = tpcbOnly && name == "tpcb-like"
		for _, p := range protocols {
			t.Run(name+"/"+p.String(), func(t *testing.T) {
				e.t = t
				w, res, err := e.run([]string{name + ".sql"}, opts{proto: p, vus: 2, iters: 25, maxRetries: 10, perCmd: true, builtins: []string{"select-only@0"}})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Errors) > 0 {
					t.Fatalf("errors:\n%s", errorsOf(res))
				}
				if n := res.Stats.Total().Commits; n != 50 {
					t.Fatalf("commits %d, want 50", n)
				}
				if sc, n := w.Scale(); n != 3 {
					t.Errorf("scale %d %s, want 3", n, sc)
				}
				if name != "select-only" {
					history += 50
				}
				check(t, history)
				rep := w.CommandReport()
				for _, c := range rep[0].Commands {
					if c.Count != 50 || c.Failures != 0 {
						t.Errorf("line %d %q: count %d failures %d", c.Line, c.Text, c.Count, c.Failures)
					}
				}
			})
		}
	}
	t.Run("builtins by weight", func(t *testing.T) {
		e.t = t
		w, res, err := e.run(nil, opts{vus: 2, iters: 30, maxRetries: 10, builtins: []string{"tpcb-like@2", "simple-update@1", "select-only@1"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Errors) > 0 {
			t.Fatalf("errors:\n%s", errorsOf(res))
		}
		if mix := w.Mix(); len(mix) != 3 || mix[0].Name != "<builtin: TPC-B (sort of)>" || mix[0].Weight != 2 {
			t.Errorf("mix %+v", mix)
		}
		tpcbOnly = false
		history += res.Stats[0].Commits + res.Stats[1].Commits
		if res.Stats[0].Commits == 0 || res.Stats[1].Commits == 0 || res.Stats[2].Commits == 0 {
			t.Errorf("commits per script %d %d %d", res.Stats[0].Commits, res.Stats[1].Commits, res.Stats[2].Commits)
		}
		check(t, history)
	})
}

func TestAttachScale(t *testing.T) {
	e := newEnv(t)
	e.write("x.sql", "insert into out values ('scale', :scale);\n")
	if _, _, err := e.run([]string{"x.sql"}, opts{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.run([]string{"x.sql"}, opts{scale: 5}); err != nil {
		t.Fatal(err)
	}
	if got := e.out(); got != "scale=1,scale=5" {
		t.Errorf("out = %q: a custom script's scale is 1, or --scale", got)
	}
	_, _, err := e.run([]string{"x.sql"}, opts{builtins: []string{"select-only"}})
	if !errors.Is(err, workload.ErrNoSchema) || !strings.Contains(err.Error(), "sledge build tpcb") {
		t.Errorf("builtin without pgbench tables: %v, want ErrNoSchema naming sledge build tpcb", err)
	}
	e.exec("create table pgbench_branches(bid int not null primary key,bbalance int,filler char(88))")
	_, _, err = e.run([]string{"x.sql"}, opts{builtins: []string{"select-only"}})
	if !errors.Is(err, workload.ErrNoSchema) || !strings.Contains(err.Error(), "sledge build tpcb") {
		t.Errorf("builtin with empty pgbench_branches: %v, want ErrNoSchema", err)
	}
	e.exec("delete from out")
	if _, _, err := e.run([]string{"x.sql@1"}, opts{scale: 9, builtins: []string{"select-only@0"}}); err != nil {
		t.Fatal(err)
	}
	if got := e.out(); got != "scale=9" {
		t.Errorf("out = %q: --scale wins over counting", got)
	}
}

func TestCheckProtocol(t *testing.T) {
	t.Chdir(t.TempDir())
	os.WriteFile("c.sql", []byte("select 1;\n\n\n\nselect 1 \\; select 2;\n"), 0o644)
	os.WriteFile("p.sql", []byte("\\set a 1\n\\startpipeline\nselect :a;\n\\endpipeline\n"), 0o644)
	os.WriteFile("plain.sql", []byte("select 1;\n"), 0o644)
	wc, err := New(Config{Files: []string{"plain.sql", "c.sql"}})
	if err != nil {
		t.Fatal(err)
	}
	if !wc.HasCompound() || wc.NeedsPipelines() {
		t.Errorf("HasCompound %v NeedsPipelines %v", wc.HasCompound(), wc.NeedsPipelines())
	}
	if err := wc.CheckProtocol(workload.ProtoSimple); err != nil {
		t.Error(err)
	}
	for _, p := range []workload.Protocol{workload.ProtoExtended, workload.ProtoPrepared} {
		if err := wc.CheckProtocol(p); err == nil || err.Error() != `c.sql:5: compound queries (\;) need --protocol simple` {
			t.Errorf("%s: %v", p, err)
		}
	}
	wp, err := New(Config{Files: []string{"p.sql"}})
	if err != nil {
		t.Fatal(err)
	}
	if wp.HasCompound() || !wp.NeedsPipelines() {
		t.Errorf("HasCompound %v NeedsPipelines %v", wp.HasCompound(), wp.NeedsPipelines())
	}
	if err := wp.CheckProtocol(workload.ProtoSimple); err == nil || err.Error() != `p.sql:2: pipelines (\startpipeline) need --protocol extended or prepared` {
		t.Errorf("simple: %v", err)
	}
	if err := wp.CheckProtocol(workload.ProtoExtended); err != nil {
		t.Error(err)
	}
	// pgbench's MAX_ARGS: at most 255 parameters a statement with the
	// extended and prepared protocols; each reference is one.
	os.WriteFile("a255.sql", []byte("\\set z 0\nselect greatest("+strings.Repeat(":z, ", 254)+":z);\n"), 0o644)
	os.WriteFile("a256.sql", []byte("\\set z 0\nselect greatest("+strings.Repeat(":z, ", 255)+":z);\n"), 0o644)
	w255, err := New(Config{Files: []string{"a255.sql"}})
	if err != nil {
		t.Fatal(err)
	}
	w256, err := New(Config{Files: []string{"a256.sql"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []workload.Protocol{workload.ProtoSimple, workload.ProtoExtended, workload.ProtoPrepared} {
		if err := w255.CheckProtocol(p); err != nil {
			t.Errorf("255 parameters, %s: %v", p, err)
		}
		err := w256.CheckProtocol(p)
		if p == workload.ProtoSimple {
			if err != nil {
				t.Errorf("256 variables pasted, simple: %v", err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), `a256.sql:2: statement has too many arguments (maximum is 255): select greatest(:z, :z`) || !strings.HasSuffix(err.Error(), "...") {
			t.Errorf("256 parameters, %s: %v", p, err)
		}
	}
}

func TestNewErrors(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("bad.sql", []byte("select 1;\n\\nosuchcommand\n"), 0o644)
	os.WriteFile("ok.sql", []byte("select 1;\n"), 0o644)
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Files: []string{"bad.sql"}}, "bad.sql"},
		{Config{Files: []string{"missing.sql"}}, "missing.sql"},
		{Config{Files: []string{"ok.sql"}, Defines: []string{"novalue"}}, `invalid variable definition "novalue"`},
		{Config{Files: []string{"ok.sql"}, Defines: []string{"1x=2"}}, `invalid variable name "1x"`},
		{Config{Files: []string{"ok.sql"}, Scale: -1}, "--scale must not be negative"},
	} {
		_, err := New(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line containing %q", c.cfg, err, c.want)
		}
	}
	w, err := New(Config{Files: []string{"ok.sql@0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Validate(); err == nil || !strings.Contains(err.Error(), "weight") {
		t.Errorf("all weights 0: %v", err)
	}
	w, _ = New(Config{})
	if err := w.Validate(); err == nil {
		t.Error("no script: no error")
	}
	if err := w.AddBuiltins([]string{"nosuchbuiltin"}); err == nil {
		t.Error("unknown builtin: no error")
	}
}

func TestFlags(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("a.sql", []byte("select :x;\n"), 0o644)
	os.WriteFile("b.sql", []byte("select 2;\n"), 0o644)
	m, err := workload.Lookup("script")
	if err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	mk := m.Flags("run", fs)
	if err := fs.Parse([]string{"-f", "a.sql@3", "--file", "b.sql", "-D", "x=1", "--define", "y=a=b", "-s", "4"}); err != nil {
		t.Fatal(err)
	}
	wl, err := mk(11)
	if err != nil {
		t.Fatal(err)
	}
	w := wl.(*Workload)
	mix := w.Mix()
	if len(mix) != 2 || mix[0].Name != "a.sql" || mix[0].Weight != 3 || mix[1].Name != "b.sql" || mix[1].Weight != 1 {
		t.Errorf("mix %+v", mix)
	}
	if len(w.defines) != 2 || w.defines[1] != (define{name: "y", text: "a=b"}) {
		t.Errorf("defines %+v", w.defines)
	}
	if _, n := w.Scale(); n != 4 || w.cfg.Seed != 11 {
		t.Errorf("scale %d seed %d", n, w.cfg.Seed)
	}
	bfs := pflag.NewFlagSet("build", pflag.ContinueOnError)
	m.Flags("build", bfs)
	if bfs.HasFlags() {
		t.Error("build has script flags")
	}
}
