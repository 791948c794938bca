package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// emptyDB creates a database of its own for one test, dropped at the end.
func emptyDB(t *testing.T, name string) string {
	t.Helper()
	s := server(t)
	if err := tryExec(s, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tryExec(s, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	return name
}

// terminate ends the one backend connected to database name, as an
// administrator would (pg_terminate_backend), and waits until it is gone.
func terminate(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, tcpURL(server(t), "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var pids []int32
	if err := c.QueryRow(ctx, "SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity WHERE datname = $1", name).Scan(&pids); err != nil {
		t.Fatal(err)
	}
	if len(pids) != 1 {
		t.Fatalf("backends on %s: %v, want one", name, pids)
	}
	var ok bool
	if err := c.QueryRow(ctx, "SELECT pg_terminate_backend($1, 5000)", pids[0]).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d): %v %v", pids[0], ok, err)
	}
}

// A session whose backend the server terminated fails with ErrConnLost,
// whatever it was doing, and reports itself Broken: the engine reconnects.
func TestTerminatedSessionIsConnLost(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	runModes(t, func(t *testing.T, m workload.Mode) {
		for _, inTx := range []bool{false, true} {
			t.Run(fmt.Sprintf("intx=%v", inTx), func(t *testing.T) {
				name := emptyDB(t, fmt.Sprintf("lost_%s_%v", m, inTx))
				d := open(t, tcpURL(s, name))
				c := connect(t, d, m)
				// The session works: no schema here, so it says that.
				if err := c.QueryRow(ctx, "meta.get").Scan(new(any), new(any)); !errors.Is(err, workload.ErrNoSchema) {
					t.Fatalf("before: %v, want ErrNoSchema", err)
				}
				if b := c.(workload.Breakable); b.Broken() {
					t.Fatal("Broken before the kill")
				}
				terminate(t, name)
				var err error
				if inTx {
					err = c.InTx(ctx, workload.TxOptions{}, func(ctx context.Context) error {
						return c.QueryRow(ctx, "meta.get").Scan(new(any), new(any))
					})
				} else {
					err = c.QueryRow(ctx, "meta.get").Scan(new(any), new(any))
				}
				if !errors.Is(err, workload.ErrConnLost) {
					t.Fatalf("after pg_terminate_backend: %v, want ErrConnLost", err)
				}
				if errors.Is(err, workload.ErrRetry) || errors.Is(err, workload.ErrNoSchema) {
					t.Errorf("also classified otherwise: %v", err)
				}
				if !c.(workload.Breakable).Broken() {
					t.Error("not Broken after the kill")
				}
				t.Logf("%v", err)
				// The next call fails the same way, at once.
				if err := c.QueryRow(ctx, "meta.get").Scan(new(any), new(any)); !errors.Is(err, workload.ErrConnLost) {
					t.Errorf("next call: %v, want ErrConnLost", err)
				}
				// A new session works.
				c2 := connect(t, d, m)
				if err := c2.QueryRow(ctx, "meta.get").Scan(new(any), new(any)); !errors.Is(err, workload.ErrNoSchema) {
					t.Errorf("new session: %v, want ErrNoSchema", err)
				}
			})
		}
	})
}

// The same for a script session (pgbench scripts), in every protocol.
func TestTerminatedScriptSessionIsConnLost(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	for _, p := range []workload.Protocol{workload.ProtoSimple, workload.ProtoExtended, workload.ProtoPrepared} {
		t.Run(p.String(), func(t *testing.T) {
			name := emptyDB(t, "lost_script_"+p.String())
			d := open(t, tcpURL(s, name))
			c, err := d.(db.ScriptDB).ConnectScript(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			q := &workload.SQLQuery{ID: 1, Text: "SELECT 1"}
			if err := c.RunSQL(ctx, q, nil); err != nil {
				t.Fatal(err)
			}
			terminate(t, name)
			err = c.RunSQL(ctx, q, nil)
			if !errors.Is(err, workload.ErrConnLost) {
				t.Fatalf("after pg_terminate_backend: %v, want ErrConnLost", err)
			}
			if !c.(workload.Breakable).Broken() {
				t.Error("not Broken after the kill")
			}
			if err := c.Rollback(ctx); err != nil {
				t.Errorf("Rollback on a lost session: %v", err)
			}
		})
	}
}
