package sqlite

import (
	"context"
	"testing"

	"github.com/sledge-bench/sledge/internal/workload"
)

// Run under both drivers to compare them:
//
//	go test -run '^$' -bench . ./internal/db/sqlite/
//	go test -run '^$' -bench . -tags sqlite_modernc ./internal/db/sqlite/

// BenchmarkLoad measures the build's bottleneck: rows/s through Load, in
// batches of 1000 rows of the 6-column test table.
func BenchmarkLoad(b *testing.B) {
	ctx := context.Background()
	d := openBuilt(b, "")
	const batch = 1000
	rows := make([][]any, batch)
	for i := range rows {
		rows[i] = itemRow(int64(i))
	}
	next := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range rows { // only the key changes: measure Load, not Fill
			next++
			r[0] = next
		}
		if err := d.Load(ctx, &itemTable, rows); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(next)/b.Elapsed().Seconds(), "rows/s")
}

const benchItems = 10000

func benchDB(b *testing.B) *DB {
	b.Helper()
	d := openBuilt(b, "")
	rows := make([][]any, 0, benchItems)
	for k := int64(1); k <= benchItems; k++ {
		rows = append(rows, itemRow(k))
	}
	if err := d.Load(context.Background(), &itemTable, rows); err != nil {
		b.Fatal(err)
	}
	return d
}

func benchModes(b *testing.B, f func(b *testing.B, c workload.Conn)) {
	d := benchDB(b)
	for _, m := range []workload.Mode{workload.ModePrepared, workload.ModeClient} {
		b.Run(m.String(), func(b *testing.B) {
			c := connect(b, d, m)
			b.ReportAllocs()
			f(b, c)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}

// BenchmarkPointSelect is one primary-key lookup per op.
func BenchmarkPointSelect(b *testing.B) {
	ctx := context.Background()
	benchModes(b, func(b *testing.B, c workload.Conn) {
		var (
			k, i  int64
			f     float64
			s     string
			n, ts any
		)
		for b.Loop() {
			k = k%benchItems + 1
			if err := c.QueryRow(ctx, "item.get", k).Scan(&i, &f, &s, &n, &ts); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkUpdateTx is one read-modify-write transaction per op:
// BEGIN IMMEDIATE, select, update, COMMIT.
func BenchmarkUpdateTx(b *testing.B) {
	ctx := context.Background()
	benchModes(b, func(b *testing.B, c workload.Conn) {
		var k int64
		for b.Loop() {
			k = k%benchItems + 1
			err := c.InTx(ctx, workload.TxOptions{}, func(ctx context.Context) error {
				var (
					i     int64
					f     float64
					s     string
					n, ts any
				)
				if err := c.QueryRow(ctx, "item.get", k).Scan(&i, &f, &s, &n, &ts); err != nil {
					return err
				}
				_, err := c.Exec(ctx, "item.set_s", k, "updated")
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
