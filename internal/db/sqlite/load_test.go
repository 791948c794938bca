package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

var itemTable = workload.Table{Name: "item", Columns: []string{"id", "i", "f", "s", "n", "ts"}}

// itemRow is row k of the test table: every value type Load takes.
func itemRow(k int64) []any {
	var n any // NULL on even rows
	if k%2 == 1 {
		n = "odd"
	}
	at := time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone("CEST", 2*3600)).Add(time.Duration(k) * time.Second)
	return []any{k, -3 * k, float64(k) + 0.25, fmt.Sprintf("s%d 'q' \"d\" ✓", k), n, at}
}

func TestLoadRoundTrip(t *testing.T) {
	ctx := context.Background()
	const total, batch = 2345, 700 // several INSERTs per batch plus remainders
	d := openBuilt(t, "")
	var wg sync.WaitGroup
	errs := make(chan error, total/batch+1)
	for start := int64(1); start <= total; start += batch {
		wg.Go(func() { // concurrent build workers
			var rows [][]any
			for k := start; k < start+batch && k <= total; k++ {
				rows = append(rows, itemRow(k))
			}
			if err := d.Load(ctx, &itemTable, rows); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	runModes(t, func(t *testing.T, m workload.Mode) {
		c := connect(t, d, m)
		var count int64
		if err := c.QueryRow(ctx, "item.count").Scan(&count); err != nil || count != total {
			t.Fatalf("count = %d, %v; want %d", count, err, total)
		}
		rs, err := c.Query(ctx, "item.range", int64(1), int64(total))
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		k := int64(0)
		for rs.Next() {
			k++
			var (
				id, i int64
				f     float64
				s     string
				n, ts any
			)
			if err := rs.Scan(&id, &i, &f, &s, &n, &ts); err != nil {
				t.Fatal(err)
			}
			want := itemRow(k)
			wantTS := want[5].(time.Time).UTC().Format("2006-01-02 15:04:05")
			if id != k || i != want[1] || f != want[2] || s != want[3] || n != want[4] || ts != wantTS {
				t.Fatalf("row %d = %v %v %v %q %v %v; want %v (ts %s)", k, id, i, f, s, n, ts, want, wantTS)
			}
		}
		if err := rs.Err(); err != nil || k != total {
			t.Fatalf("read %d rows, %v", k, err)
		}
		// What is stored, as SQLite literals: identical under both drivers.
		var raw string
		if err := c.QueryRow(ctx, "item.raw", int64(3)).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		if want := `-9,3.25,'s3 ''q'' "d" ✓','odd','2024-01-02 01:04:08'`; raw != want {
			t.Fatalf("stored %s, want %s", raw, want)
		}
		if err := c.QueryRow(ctx, "item.raw", int64(4)).Scan(&raw); err != nil || !strings.Contains(raw, ",NULL,") {
			t.Fatalf("stored %s, %v; want a NULL", raw, err)
		}
	})
}

func TestLoadErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("no schema", func(t *testing.T) {
		d := openTest(t, "")
		err := d.Load(ctx, &itemTable, [][]any{itemRow(1)})
		if !errors.Is(err, workload.ErrNoSchema) || !strings.HasPrefix(err.Error(), "sqlite: load item: ") {
			t.Fatalf("err = %v, want ErrNoSchema", err)
		}
	})
	d := openBuilt(t, "")
	tests := []struct {
		name    string
		ctx     func() context.Context
		table   workload.Table
		rows    [][]any
		wantErr string
	}{
		{name: "short row", table: itemTable, rows: [][]any{itemRow(1), {int64(2)}}, wantErr: "sqlite: load item: row has 1 values for 6 columns"},
		{name: "duplicate key", table: itemTable, rows: [][]any{itemRow(1), itemRow(1)}, wantErr: "UNIQUE constraint failed"},
		{name: "no columns", table: workload.Table{Name: "item"}, rows: [][]any{{}}, wantErr: "table has 0 columns"},
		{name: "cancelled", table: itemTable, rows: [][]any{itemRow(1)}, wantErr: "context canceled", ctx: func() context.Context {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			return ctx
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ctx
			if tt.ctx != nil {
				c = tt.ctx()
			}
			err := d.Load(c, &tt.table, tt.rows)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
	// Each failed call rolled back: nothing was stored, and loading works.
	if err := d.Load(ctx, &itemTable, [][]any{itemRow(1), itemRow(2)}); err != nil {
		t.Fatal(err)
	}
	c := connect(t, d, workload.ModePrepared)
	var n int64
	if err := c.QueryRow(ctx, "item.count").Scan(&n); err != nil || n != 2 {
		t.Fatalf("count = %d, %v; want 2", n, err)
	}
	if err := d.Load(ctx, &itemTable, nil); err != nil {
		t.Fatalf("empty load: %v", err)
	}
}

func TestInsertSQL(t *testing.T) {
	got := insertSQL("t", []string{"a", `b"c`}, 3)
	want := `INSERT INTO "t" ("a", "b""c") VALUES (?,?),(?,?),(?,?)`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
