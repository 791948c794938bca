package tpcb_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/tpcb"
	"github.com/sledge-bench/sledge/internal/workload/tpcc"
)

// BenchmarkTxLoop is a virtual user's transaction loop on each database in
// each mode, without the engine (BenchmarkVULoop in internal/engine
// measures that): draw a transaction, run it on the session. ns/op is one
// transaction round trips included; allocs/op is what the workload and
// the database package allocate per transaction (go test -benchmem).
// Needs the private servers (make bench-go starts them through testdb).
func BenchmarkTxLoop(b *testing.B) {
	for _, tg := range targets() {
		for _, m := range tg.modes {
			if m.suffix != "" {
				continue // the same calls as procedure mode
			}
			b.Run(tg.name+"/tpcb-like/"+m.name, func(b *testing.B) {
				u := tg.fresh(b)
				w := tpcb.New(tpcb.Config{Seed: 1})
				txLoop(b, u, m.mode, w, func() workload.Terminal { return w.NewTerminal(0, 1, 1) })
			})
			b.Run(tg.name+"/tpcc/"+m.name, func(b *testing.B) {
				u := freshTPCC(b, tg)
				w := tpcc.New(tpcc.Config{Seed: 1})
				txLoop(b, u, m.mode, w, func() workload.Terminal { return w.NewTerminal(0, 1, 1) })
			})
		}
		// tpcb refuses batched; TPC-C runs it on every database.
		b.Run(tg.name+"/tpcc/batched", func(b *testing.B) {
			u := freshTPCC(b, tg)
			w := tpcc.New(tpcc.Config{Seed: 1})
			txLoop(b, u, workload.ModeBatched, w, func() workload.Terminal { return w.NewTerminal(0, 1, 1) })
		})
	}
}

// freshTPCC returns the URL of a new one-warehouse TPC-C schema on tg's
// database.
func freshTPCC(b *testing.B, tg target) string {
	u := tg.fresh(b) // a new database (with a tpcb schema beside)
	if strings.HasPrefix(u, "sqlite://") {
		u = strings.TrimSuffix(u, "tpcb.db") + "tpcc.db"
	}
	if code, _, stderr := sledge(b, "build", "tpcc", "--db", u, "--warehouses", "1", "--json"); code != 0 {
		b.Fatalf("build tpcc: exit %d: %s", code, stderr)
	}
	return u
}

func txLoop(b *testing.B, u string, m workload.Mode, w workload.Workload, term func() workload.Terminal) {
	ctx, cancel := context.WithCancel(context.Background()) // cancellable, as the engine's
	defer cancel()
	d, err := db.Open(ctx, u)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	c, err := d.Connect(ctx, w.Name(), m)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	if err := w.Attach(ctx, c); err != nil {
		b.Fatal(err)
	}
	t := term()
	for range 100 { // warm: statements prepared, buffers grown
		_ = t.Next().Run(ctx, c)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := t.Next().Run(ctx, c); err != nil && !isExpected(err) {
			b.Fatal(err)
		}
	}
}

func isExpected(err error) bool {
	return errors.Is(err, workload.ErrUserAbort) || errors.Is(err, workload.ErrRetry)
}
