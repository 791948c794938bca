package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// apis are the two ways a script session speaks: sledge's own protocol
// (the default) and pgconn's (api=pgconn), compared below.
var apis = []string{"wire", "pgconn"}

// scriptAPIs opens the database at u once per api.
func scriptAPIs(t *testing.T, u string) map[string]db.ScriptDB {
	t.Helper()
	out := map[string]db.ScriptDB{}
	for _, api := range apis {
		d, err := db.Open(context.Background(), u+"?api="+api)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		out[api] = d.(db.ScriptDB)
	}
	return out
}

// outcome is what a script command gives the interpreter: keep's calls,
// the error's text and kind, the transaction status after it.
type outcome struct {
	Results  []result
	Err      string
	Retry    bool
	NoSchema bool
	ConnLost bool
	InTx     bool
}

func outcomeOf(c workload.ScriptConn, got []result, err error) outcome {
	o := outcome{Results: got, InTx: c.InTransaction()}
	if err != nil {
		o.Err = err.Error()
		o.Retry = errors.Is(err, workload.ErrRetry)
		o.NoSchema = errors.Is(err, workload.ErrNoSchema)
		o.ConnLost = errors.Is(err, workload.ErrConnLost)
	}
	return o
}

// A script's commands give the same results, errors and transaction
// status on sledge's wire as on pgconn, in every protocol.
func TestScriptWireSameAsPgconn(t *testing.T) {
	_, u := scriptDB(t)
	ds := scriptAPIs(t, u)
	type step struct {
		text  string
		args  []any
		keep  bool
		only  workload.Protocol // 0: every protocol
		check func(t *testing.T, o outcome)
	}
	raise := func(code string) string {
		return "DO $$BEGIN RAISE EXCEPTION 'raised %', '" + code + "' USING ERRCODE = '" + code + "'; END$$"
	}
	steps := []step{
		{text: "CREATE TEMP TABLE t (k bigint PRIMARY KEY, f float8, s text, b bool, n int)"},
		{text: "INSERT INTO t VALUES ($1, $2, $3, $4, $5)", args: []any{int64(1), 0.1, "one", true, nil}, keep: true},
		{text: "INSERT INTO t VALUES ($1, $2, $3, $4, $5)", args: []any{int64(2), 1e-7, "", false, int64(7)}, keep: true},
		{text: "INSERT INTO t VALUES ($1, $2, $3, $4, $5) RETURNING k, s", args: []any{int64(3), -2.5, "it's 3", nil, nil}, keep: true},
		{text: "SELECT k, f, s, b, n FROM t WHERE k >= $1 ORDER BY k", args: []any{int64(1)}, keep: true,
			check: func(t *testing.T, o outcome) {
				if len(o.Results) != 1 || o.Results[0].Rows != 3 {
					t.Errorf("SELECT: %+v, want 3 rows", o)
				}
			}},
		{text: "SELECT k, f, s, b, n FROM t WHERE k >= $1 ORDER BY k", args: []any{int64(9)}, keep: true},
		{text: "SELECT k FROM t WHERE k >= $1 ORDER BY k", args: []any{int64(1)}},
		{text: "SELECT", keep: true},
		{text: "UPDATE t SET f = f * $1 WHERE k = $2", args: []any{2.0, int64(2)}, keep: true},
		{text: "SELECT f, n::text || $1 AS x FROM t WHERE k = $2", args: []any{"!", int64(2)}, keep: true},
		{text: "SELECT 1 AS a; INSERT INTO t VALUES (4); SELECT k, NULL AS z FROM t ORDER BY k; SELECT 1 AS b WHERE false", keep: true, only: workload.ProtoSimple,
			check: func(t *testing.T, o outcome) {
				if len(o.Results) != 3 || o.Results[1].Stmt != 2 {
					t.Errorf("compound: %+v, want results 0, 2 and 3", o.Results)
				}
			}},
		{text: "SELECT 1 AS a; SELECT 1/0; SELECT 2 AS b", keep: true, only: workload.ProtoSimple},
		{text: "SELECT k FROM missing WHERE k = $1", args: []any{int64(1)}, keep: true,
			check: func(t *testing.T, o outcome) {
				if !o.NoSchema || o.Retry {
					t.Errorf("undefined table: %+v, want ErrNoSchema", o)
				}
			}},
		{text: "SELEC 1", keep: true},
		{text: "SELECT 1/$1::int AS q", args: []any{int64(0)}, keep: true},
		{text: "SELECT $1::int AS v", args: []any{struct{}{}}, keep: true},
		{text: raise("40001"), check: func(t *testing.T, o outcome) {
			if !o.Retry {
				t.Errorf("serialization failure: %+v, want ErrRetry", o)
			}
		}},
		{text: raise("40P01"), check: func(t *testing.T, o outcome) {
			if !o.Retry {
				t.Errorf("deadlock: %+v, want ErrRetry", o)
			}
		}},
		{text: raise("55P03"), check: func(t *testing.T, o outcome) {
			if o.Retry {
				t.Errorf("lock timeout: %+v, want no retry", o)
			}
		}},
		{text: "BEGIN", check: func(t *testing.T, o outcome) {
			if !o.InTx {
				t.Errorf("BEGIN: %+v, want in a transaction", o)
			}
		}},
		{text: "SELECT k FROM t WHERE k = $1", args: []any{int64(1)}, keep: true},
		{text: "SELECT 1/0", keep: true},
		{text: "SELECT 1 AS one", keep: true, check: func(t *testing.T, o outcome) {
			if !o.InTx || o.Err == "" {
				t.Errorf("in a failed block: %+v, want an error and still in it", o)
			}
		}},
		{text: "COPY t FROM STDIN"},
		{text: "ROLLBACK"},
		{text: "COPY (SELECT 1) TO STDOUT", keep: true},
		{text: "COPY t FROM STDIN", keep: true},
		{text: "SELECT count(*) AS n FROM t", keep: true},
		{text: "", keep: true},
	}
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			ctx := context.Background()
			conns := map[string]workload.ScriptConn{}
			for _, api := range apis {
				conns[api] = connectScript(t, ctx, ds[api], p)
			}
			for i, s := range steps {
				if s.only != 0 && s.only != p {
					continue
				}
				q := &workload.SQLQuery{ID: i + 1, Text: s.text, Args: s.args}
				if p == workload.ProtoSimple && len(s.args) > 0 {
					text, err := db.Interpolate(s.text, db.Dollar, s.args)
					if err != nil {
						continue // a value the simple protocol cannot write in
					}
					q = &workload.SQLQuery{ID: i + 1, Text: text}
				}
				got := map[string]outcome{}
				for _, api := range apis {
					c := conns[api]
					var res []result
					var err error
					if s.keep {
						res, err = run(t, c, q)
					} else {
						err = c.RunSQL(ctx, q, nil)
					}
					got[api] = outcomeOf(c, res, err)
				}
				if !reflect.DeepEqual(got["wire"], got["pgconn"]) {
					t.Errorf("%q:\n wire   %+v\n pgconn %+v", s.text, got["wire"], got["pgconn"])
				}
				if s.check != nil {
					s.check(t, got["wire"])
				}
			}
		})
	}
}

// A server that ends the session while its command's rows are being read
// (pg_terminate_backend after the first row) fails the command with
// ErrConnLost, on the wire as on pgconn; the session is Broken and the
// next command fails the same way at once.
func TestScriptWireKilledMidRead(t *testing.T) {
	s := server(t)
	for _, api := range apis {
		for _, p := range protocols {
			t.Run(api+"/"+p.String(), func(t *testing.T) {
				name := emptyDB(t, fmt.Sprintf("killed_%s_%s", api, p))
				d, err := db.Open(context.Background(), tcpURL(s, name)+"?api="+api)
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				ctx := context.Background()
				c := connectScript(t, ctx, d.(db.ScriptDB), p)
				// The first row goes out at once, the second after a long sleep.
				q := &workload.SQLQuery{ID: 1, Text: "SELECT g, pg_sleep(CASE WHEN g = 2 THEN 600 ELSE 0 END) /* wire-cancel */ FROM generate_series(1, 2) g"}
				done := make(chan error, 1)
				rows := 0
				go func() {
					done <- c.RunSQL(ctx, q, func(_ int, _ []string, _ []any, n int) { rows = n })
				}()
				waitActivity(t, name, 1)
				terminate(t, name)
				err = <-done
				if !errors.Is(err, workload.ErrConnLost) || errors.Is(err, workload.ErrRetry) {
					t.Fatalf("killed mid-read: %v, want ErrConnLost", err)
				}
				if rows != 0 {
					t.Errorf("keep called with %d rows of a result cut short", rows)
				}
				oneLine(t, err.Error(), "SELECT g")
				if !c.(workload.Breakable).Broken() {
					t.Error("not Broken after the kill")
				}
				if err := c.RunSQL(ctx, &workload.SQLQuery{ID: 2, Text: "SELECT 1"}, nil); !errors.Is(err, workload.ErrConnLost) {
					t.Errorf("next command: %v, want ErrConnLost", err)
				}
				if err := c.Rollback(ctx); err != nil {
					t.Errorf("Rollback of a lost session: %v", err)
				}
			})
		}
	}
}

// Ctrl-C during a long statement: the command returns context.Canceled
// (not a lost connection) at once, the session is Broken (the engine
// reconnects) and the server cancels the statement (a CancelRequest).
func TestScriptWireCancel(t *testing.T) {
	s := server(t)
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			name := emptyDB(t, "wcancel_"+p.String())
			d, err := db.Open(context.Background(), tcpURL(s, name))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			ctx, cancel := context.WithCancel(context.Background())
			c := connectScript(t, ctx, d.(db.ScriptDB), p)
			done := make(chan error, 1)
			go func() {
				done <- c.RunSQL(ctx, &workload.SQLQuery{ID: 1, Text: "SELECT pg_sleep(600) /* wire-cancel */"}, nil)
			}()
			waitActivity(t, name, 1)
			cancel()
			err = <-done
			if !errors.Is(err, context.Canceled) || errors.Is(err, workload.ErrConnLost) {
				t.Errorf("cancelled command: %v, want context.Canceled", err)
			}
			oneLine(t, err.Error(), "interrupted", "SELECT pg_sleep(600)")
			if !c.(workload.Breakable).Broken() {
				t.Error("not Broken after the interruption")
			}
			waitActivity(t, name, 0) // the server cancelled it
		})
	}
}

// A pipeline hands the connection back to pgconn: what the wire did
// before stays (a statement prepared on it, an open transaction block),
// and the session goes on after the pipeline.
func TestScriptWireHandBack(t *testing.T) {
	d, _ := scriptDB(t)
	ctx := context.Background()
	for _, p := range protocols[1:] {
		t.Run(p.String(), func(t *testing.T) {
			c := connectScript(t, ctx, d, p)
			pl := c.(workload.Pipeliner)
			table := "hb_" + p.String()
			ins := "INSERT INTO " + table + " VALUES ($1)"
			mustRun(t, c, sqlq(t, p, 1, "CREATE TABLE "+table+" (k int PRIMARY KEY)"))
			mustRun(t, c, sqlq(t, p, 2, "BEGIN"))
			mustRun(t, c, sqlq(t, p, 3, ins, int64(1)))
			if err := pl.StartPipeline(ctx); err != nil {
				t.Fatal(err)
			}
			for k := int64(2); k <= 3; k++ {
				if err := c.RunSQL(ctx, sqlq(t, p, 3, ins, k), nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := pl.EndPipeline(ctx); err != nil {
				t.Fatal(err)
			}
			if !c.InTransaction() {
				t.Error("the block opened on the wire is not open after the pipeline")
			}
			mustRun(t, c, sqlq(t, p, 4, "COMMIT"))
			got := mustRun(t, c, sqlq(t, p, 5, "SELECT string_agg(k::text, ',' ORDER BY k) AS ks, (SELECT count(*) FROM pg_prepared_statements) AS np FROM "+table))
			want := map[workload.Protocol][]any{workload.ProtoExtended: {"1,2,3", "0"}, workload.ProtoPrepared: {"1,2,3", "5"}}[p]
			if len(got) != 1 || !reflect.DeepEqual(got[0].Last, want) {
				t.Errorf("after the pipeline: %v, want %v (P_3 prepared once, on the wire)", got, want)
			}
		})
	}
}

// RunSQL on the prepared protocol allocates nothing once the statement is
// prepared (the interpreter's boxed values aside); with \gset, only the
// kept row's values as strings in keep's []any.
func TestScriptWireNoAllocs(t *testing.T) {
	d, _ := scriptDB(t)
	ctx, cancel := context.WithCancel(context.Background()) // cancellable, as the engine's
	defer cancel()
	p := workload.ProtoPrepared
	c := connectScript(t, ctx, d, p)
	mustRun(t, c, sqlq(t, p, 1, "CREATE TABLE na (k int PRIMARY KEY, v int)"))
	mustRun(t, c, sqlq(t, p, 2, "INSERT INTO na SELECT g, 0 FROM generate_series(1, 10) g"))
	upd := &workload.SQLQuery{ID: 3, Text: "UPDATE na SET v = v + $1 WHERE k = $2", Args: []any{int64(-5), int64(3)}}
	sel := &workload.SQLQuery{ID: 4, Text: "SELECT v, k FROM na WHERE k = $1", Args: []any{int64(3)}}
	var v any
	keep := func(_ int, _ []string, last []any, _ int) { v = last[0] }
	for _, c2 := range []struct {
		q      *workload.SQLQuery
		keep   workload.ResultFunc
		allocs float64
	}{
		{upd, nil, 0},
		{sel, nil, 0},
		// keep's []any: "-260" copied and boxed, "3" boxed (Go keeps
		// one-byte strings static).
		{sel, keep, 3},
	} {
		call := func() {
			if err := c.RunSQL(ctx, c2.q, c2.keep); err != nil {
				t.Fatal(err)
			}
		}
		call()
		if n := testing.AllocsPerRun(50, call); n != c2.allocs {
			t.Errorf("%s (keep %v): %v allocations per call, want %v", c2.q.Text, c2.keep != nil, n, c2.allocs)
		}
	}
	if v != "-260" { // 52 updates of -5: one call and AllocsPerRun's 51
		t.Errorf("kept v = %v, want -260", v)
	}
}

// The engine's calls beside RunSQL work on the wire as on pgconn: Publish
// (pg_stat_force_next_flush at the interval's edges) and ServerSession
// (the backend's PID, from the startup).
func TestScriptWirePublishAndSession(t *testing.T) {
	_, u := scriptDB(t)
	ds := scriptAPIs(t, u)
	ctx := context.Background()
	for _, api := range apis {
		for _, p := range protocols {
			t.Run(api+"/"+p.String(), func(t *testing.T) {
				c := connectScript(t, ctx, ds[api], p)
				n, ok, err := c.(workload.Publisher).Publish(ctx)
				if err != nil || !ok || n != 1 {
					t.Fatalf("Publish: %d %v %v, want 1 true nil (PostgreSQL 15 or later)", n, ok, err)
				}
				pid, err := c.(db.ServerSessioner).ServerSession(ctx)
				if err != nil {
					t.Fatal(err)
				}
				got := mustRun(t, c, &workload.SQLQuery{ID: 1, Text: "SELECT pg_backend_pid() AS pid"})
				if len(got) != 1 || got[0].Last[0] != fmt.Sprint(pid) {
					t.Errorf("ServerSession %d, pg_backend_pid() %v", pid, got)
				}
			})
		}
	}
}

// `sledge pgbench` with the builtin tpcb-like script runs in each
// protocol on the wire (also on event loops, io=loop) and on pgconn: every
// transaction lands (a history row each) and the balances add up.
func TestScriptWirePgbenchRuns(t *testing.T) {
	s := server(t)
	name := emptyDB(t, "wpgbench")
	u := tcpURL(s, name)
	if code, _, stderr := sledge(t, "pgbench", "--db", u, "-i", "-s", "1"); code != 0 {
		t.Fatalf("pgbench -i: exit %d: %s", code, stderr)
	}
	ctx := context.Background()
	pc, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(ctx)
	var history int64
	for _, q := range []string{"", "?io=loop", "?api=pgconn"} {
		for _, p := range protocols {
			// -n: no vacuum before the run, which would truncate the
			// history the check adds up (as pgbench's vacuum does).
			code, stdout, stderr := sledge(t, "pgbench", "--db", u+q, "-n", "-M", p.String(), "-c", "2", "-t", "20")
			if code != 0 {
				t.Fatalf("%s -M %s: exit %d: %s%s", q, p, code, stdout, stderr)
			}
			history += 40
			var n int64
			var balanced bool
			if err := pc.QueryRow(ctx, `SELECT (SELECT count(*) FROM pgbench_history),
				(SELECT sum(abalance) FROM pgbench_accounts) = (SELECT sum(delta) FROM pgbench_history)`).Scan(&n, &balanced); err != nil {
				t.Fatal(err)
			}
			if n != history || !balanced {
				t.Errorf("%s -M %s: %d history rows (want %d), balances add up: %v", q, p, n, history, balanced)
			}
		}
	}
}
