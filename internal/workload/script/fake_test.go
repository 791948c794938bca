package script

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/pgbench"
	"github.com/sledge-bench/sledge/internal/workload"
)

// fakeConn is a script session without a database: it tracks BEGIN/END,
// answers every command that has a keep with one row of one column "x",
// and optionally records what it was sent.
type fakeConn struct {
	workload.ScriptConn // nil: only the methods below are called
	inTx                bool
	record              bool
	sent                []string
}

func (f *fakeConn) Placeholder(n int) string { return "$" + strconv.Itoa(n) }
func (f *fakeConn) InTransaction() bool      { return f.inTx }
func (f *fakeConn) Rollback(context.Context) error {
	f.inTx = false
	return nil
}

var fakeCols = []string{"x"}
var fakeRow = []any{"1"}

func (f *fakeConn) RunSQL(_ context.Context, q *workload.SQLQuery, keep workload.ResultFunc) error {
	if f.record {
		f.sent = append(f.sent, q.Text)
	}
	switch {
	case strings.HasPrefix(q.Text, "BEGIN"):
		f.inTx = true
	case strings.HasPrefix(q.Text, "END"), strings.HasPrefix(q.Text, "COMMIT"):
		f.inTx = false
	}
	if keep != nil {
		keep(0, fakeCols, fakeRow, 1)
	}
	return nil
}

func builtinWorkload(t testing.TB, name string, p workload.Protocol) *Workload {
	t.Helper()
	w, err := New(Config{Scale: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddBuiltins([]string{name}); err != nil {
		t.Fatal(err)
	}
	w.SetProtocol(p)
	if err := w.Attach(context.Background(), &fakeConn{}); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestHotPathAllocations bounds the allocations of one run of the
// tpcb-like builtin: with the simple protocol, the 7 texts sent (5 with
// values) and the text of the 4 values; bound, the 4 values boxed once
// each however often they are used. Nothing per variable lookup.
func TestHotPathAllocations(t *testing.T) {
	for _, c := range []struct {
		proto workload.Protocol
		max   float64
	}{
		{workload.ProtoSimple, 9},
		{workload.ProtoExtended, 4},
		{workload.ProtoPrepared, 4},
	} {
		t.Run(c.proto.String(), func(t *testing.T) {
			w := builtinWorkload(t, "tpcb-like", c.proto)
			term := w.NewTerminal(0, 1, 1)
			conn := &fakeConn{}
			ctx := context.Background()
			n := testing.AllocsPerRun(200, func() {
				if err := term.Next().Run(ctx, conn); err != nil {
					t.Fatal(err)
				}
			})
			if n > c.max {
				t.Errorf("%.1f allocations per transaction, want at most %.0f", n, c.max)
			}
		})
	}
}

func BenchmarkTPCBLike(b *testing.B) {
	for _, p := range protocols {
		b.Run(p.String(), func(b *testing.B) {
			w := builtinWorkload(b, "tpcb-like", p)
			term := w.NewTerminal(0, 1, 1)
			conn := &fakeConn{}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := term.Next().Run(ctx, conn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestInterpreterWithoutDatabase runs the control flow and the variable
// handling that need no database against fakeConn.
func TestInterpreterWithoutDatabase(t *testing.T) {
	s, err := pgbench.Parse("f.sql", `\set a 3
\if :a > 5
select 'big';
\elif :a > 2
select 'middle :a';
\else
select 'small';
\endif
select 1 as x \gset v_
\set b :v_x + :a
select :b, ':undefined';
BEGIN;
select 1;
END;
`)
	if err != nil {
		t.Fatal(err)
	}
	w := &Workload{scripts: []*pgbench.Script{s}, builtin: []bool{false}, proto: workload.ProtoSimple, stderr: &lockedWriter{}}
	term := w.NewTerminal(0, 1, 1)
	conn := &fakeConn{record: true}
	if err := term.Next().Run(context.Background(), conn); err != nil {
		t.Fatal(err)
	}
	want := "select 'middle 3';|select 1 as x|select 4, ':undefined';|BEGIN;|select 1;|END;"
	if got := strings.Join(conn.sent, "|"); got != want {
		t.Errorf("sent\n%s\nwant\n%s", got, want)
	}
}

// fakePipe is a fakeConn that pipelines, recording the pipeline calls;
// endErr is what EndPipeline returns once.
type fakePipe struct {
	fakeConn
	endErr error
}

func (f *fakePipe) StartPipeline(context.Context) error {
	f.sent = append(f.sent, "START")
	return nil
}

func (f *fakePipe) SyncPipeline(context.Context) error {
	f.sent = append(f.sent, "SYNC")
	return nil
}

func (f *fakePipe) EndPipeline(context.Context) error {
	f.sent = append(f.sent, "END")
	err := f.endErr
	f.endErr = nil
	return err
}

// TestPipelines covers what SQLite cannot: pipelines go through
// workload.Pipeliner, and an error ends the pipeline. (\gset inside one
// is refused by the parser already.)
func TestPipelines(t *testing.T) {
	const text = "\\set a 5\n\\startpipeline\nselect :a;\n\\syncpipeline\nselect 2;\n\\endpipeline\n"
	cases := []struct {
		name  string
		text  string
		proto workload.Protocol
		conn  func() workload.ScriptConn
		sent  string
		err   string
		isErr error
	}{
		{name: "extended", text: text, proto: workload.ProtoExtended, sent: "START|select $1;|SYNC|select 2;|END"},
		{name: "prepared", text: text, proto: workload.ProtoPrepared, sent: "START|select $1;|SYNC|select 2;|END"},
		{name: "a conflict at the end is retryable", text: text, proto: workload.ProtoExtended,
			conn: func() workload.ScriptConn {
				return &fakePipe{fakeConn: fakeConn{record: true}, endErr: fmt.Errorf("conflict: %w", workload.ErrRetry)}
			},
			sent: "START|select $1;|SYNC|select 2;|END", err: "script p.sql command 6 (line 6): conflict", isErr: workload.ErrRetry},
		{name: "an error inside a pipeline ends it", text: "\\startpipeline\nselect 1;\n\\set x 1 / 0\n\\endpipeline\n", proto: workload.ProtoExtended,
			sent: "START|select 1;|END", err: "script p.sql command 3 (line 3): division by zero"},
		{name: "simple protocol", text: text, proto: workload.ProtoSimple,
			sent: "", err: "script p.sql command 2 (line 2): cannot use pipeline mode with the simple query protocol"},
		{name: "a database without pipelines", text: text, proto: workload.ProtoExtended,
			conn: func() workload.ScriptConn { return &fakeConn{record: true} },
			sent: "", err: `script p.sql command 2 (line 2): this database cannot pipeline (\startpipeline)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := pgbench.Parse("p.sql", c.text)
			if err != nil {
				t.Fatal(err)
			}
			w := &Workload{scripts: []*pgbench.Script{s}, builtin: []bool{false}, proto: c.proto, stderr: &lockedWriter{}}
			var conn workload.ScriptConn = &fakePipe{fakeConn: fakeConn{record: true}}
			if c.conn != nil {
				conn = c.conn()
			}
			err = w.NewTerminal(0, 1, 1).Next().Run(context.Background(), conn)
			switch {
			case c.err == "" && err != nil:
				t.Fatal(err)
			case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
				t.Fatalf("err = %v, want %q", err, c.err)
			case c.isErr != nil && !errors.Is(err, c.isErr):
				t.Errorf("err = %v, want errors.Is %v", err, c.isErr)
			}
			var sent []string
			switch f := conn.(type) {
			case *fakePipe:
				sent = f.sent
			case *fakeConn:
				sent = f.sent
			}
			if got := strings.Join(sent, "|"); got != c.sent {
				t.Errorf("sent %q, want %q", got, c.sent)
			}
		})
	}
}
