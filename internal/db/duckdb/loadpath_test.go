//go:build cgo

package duckdb

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/tpch/dbgen"
	"github.com/sledge-bench/sledge/internal/workload/tpch/queries"
)

// The load path's measurement (docs/duckdb.md): TPC-H's eight tables at
// SF 0.1 (866,037 rows) loaded once through Load (the appender) and once
// through multi-row INSERTs of bound values (500 rows a statement, one
// transaction a batch), one writer each, into fresh files. Set
// SLEDGE_DUCKDB_LOADPATH=1 to run it.
func TestLoadPaths(t *testing.T) {
	if os.Getenv("SLEDGE_DUCKDB_LOADPATH") == "" {
		t.Skip("set SLEDGE_DUCKDB_LOADPATH=1 to measure the appender against INSERTs at SF 0.1")
	}
	sc, err := dbgen.NewScale(0.1)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []struct {
		name string
		load func(ctx context.Context, d *DB, t *workload.Table, rows [][]any) error
	}{
		{"appender", func(ctx context.Context, d *DB, t *workload.Table, rows [][]any) error { return d.Load(ctx, t, rows) }},
		{"insert", insertLoad},
	} {
		t.Run(path.name, func(t *testing.T) {
			ctx := context.Background()
			d, err := open(ctx, filepath.Join(t.TempDir(), "load.duckdb"), url.Values{}, db.SQLFiles{FS: sqlFS})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			for _, st := range queries.Schema(queries.DuckDB) {
				if _, err := d.pool.ExecContext(ctx, st); err != nil {
					t.Fatal(err)
				}
			}
			var n int64
			var took time.Duration
			var buf [][]any
			for _, tb := range dbgen.Tables(sc) {
				for i := 0; i < tb.Batches; i++ {
					buf = tb.Fill(i, buf[:0])
					start := time.Now()
					if err := path.load(ctx, d, &tb, buf); err != nil {
						t.Fatal(err)
					}
					took += time.Since(start)
					n += int64(len(buf))
				}
			}
			t.Logf("%s: %d rows in %v: %.0f rows/s", path.name, n, took.Round(time.Millisecond), float64(n)/took.Seconds())
		})
	}
}

// insertLoad is the other path: prepared multi-row INSERTs in a
// transaction.
func insertLoad(ctx context.Context, d *DB, t *workload.Table, rows [][]any) error {
	c, err := d.pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return err
	}
	const per = 500
	for len(rows) > 0 {
		n := min(per, len(rows))
		var b strings.Builder
		fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", t.Name, strings.Join(t.Columns, ", "))
		args := make([]any, 0, n*len(t.Columns))
		for i, r := range rows[:n] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('(')
			for j, v := range r {
				if j > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "$%d", len(args)+1)
				args = append(args, v) // DuckDB casts a bound DOUBLE to the DECIMAL column
			}
			b.WriteByte(')')
		}
		if _, err := c.ExecContext(ctx, b.String(), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	_, err = c.ExecContext(ctx, "COMMIT")
	return err
}
