package mysql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/testdb"
	"github.com/sledge-bench/sledge/internal/workload"
)

// kill ends the newest session connected to database name (the one a
// test just opened: an idle connection of the shared pool may be there
// too), as an administrator would (KILL), and waits until it is gone.
func kill(t *testing.T, s *testdb.Server, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := gomysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr = s.User, s.Password, "unix", s.Socket
	d, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var id int64
	if err := d.QueryRowContext(ctx, "SELECT MAX(id) FROM information_schema.processlist WHERE db = ? AND id <> CONNECTION_ID()", name).Scan(&id); err != nil {
		t.Fatalf("the session on %s: %v", name, err)
	}
	if _, err := d.ExecContext(ctx, fmt.Sprintf("KILL %d", id)); err != nil {
		t.Fatal(err)
	}
	for {
		var n int
		if err := d.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.processlist WHERE id = ?", id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("session %d still there after KILL", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A session the server killed fails with ErrConnLost, whatever it was
// doing, and reports itself Broken: the engine reconnects. Sessions from
// the shared pool and counted sessions (own pool, engine.Plan.Cost) alike.
func TestKilledSessionIsConnLost(t *testing.T) {
	s := need(t)
	for _, m := range modes {
		for _, counted := range []bool{false, true} {
			for _, inTx := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/counted=%v/intx=%v", m, counted, inTx), func(t *testing.T) {
					name := fmt.Sprintf("lost_%s_%v_%v", m, counted, inTx)
					u := freshDB(t, s, name)
					t.Cleanup(func() { admin(t, s, "DROP DATABASE IF EXISTS "+name) })
					ctx := context.Background()
					d, err := db.Open(ctx, u)
					if err != nil {
						t.Fatal(err)
					}
					defer d.Close()
					cctx := ctx
					if counted {
						cctx = metrics.WithWire(ctx, new(metrics.WireCounts))
					}
					c, err := d.Connect(cctx, "tpcc", m)
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close(ctx)
					get := func(ctx context.Context) error { return c.QueryRow(ctx, "meta.get").Scan(new(any), new(any)) }
					if err := get(ctx); !errors.Is(err, workload.ErrNoSchema) {
						t.Fatalf("before: %v, want ErrNoSchema", err)
					}
					if c.(workload.Breakable).Broken() {
						t.Fatal("Broken before the kill")
					}
					kill(t, s, name)
					if inTx {
						err = c.InTx(ctx, workload.TxOptions{}, get)
					} else {
						err = get(ctx)
					}
					if !errors.Is(err, workload.ErrConnLost) {
						t.Fatalf("after KILL: %v, want ErrConnLost", err)
					}
					if errors.Is(err, workload.ErrRetry) || errors.Is(err, workload.ErrNoSchema) {
						t.Errorf("also classified otherwise: %v", err)
					}
					t.Logf("%v", err)
					if !c.(workload.Breakable).Broken() {
						t.Error("not Broken after the kill")
					}
					if err := get(ctx); !errors.Is(err, workload.ErrConnLost) {
						t.Errorf("next call: %v, want ErrConnLost", err)
					}
					c2, err := d.Connect(cctx, "tpcc", m)
					if err != nil {
						t.Fatalf("new session: %v", err)
					}
					defer c2.Close(ctx)
					if err := c2.QueryRow(ctx, "meta.get").Scan(new(any), new(any)); !errors.Is(err, workload.ErrNoSchema) {
						t.Errorf("new session: %v, want ErrNoSchema", err)
					}
				})
			}
		}
	}
}
