package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

func TestLoadCoversEveryBatchOnce(t *testing.T) {
	mk := func(name string, batches int) workload.Table {
		return workload.Table{Name: name, Batches: batches, Rows: int64(batches),
			Fill: func(i int, buf [][]any) [][]any { return append(buf, []any{int64(i)}) }}
	}
	for _, workers := range []int{1, 2, 3, 8} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			tables := []workload.Table{mk("a", 7), mk("b", 1), mk("c", 20), mk("meta", 2)}
			var mu sync.Mutex
			seen := map[string]int{}
			order := []string{}
			load := func(_ context.Context, tb *workload.Table, rows [][]any) error {
				mu.Lock()
				defer mu.Unlock()
				for _, r := range rows {
					seen[fmt.Sprintf("%s/%d", tb.Name, r[0])]++
				}
				order = append(order, tb.Name)
				return nil
			}
			prog := NewBuildProgress(tables)
			if err := Load(t.Context(), tables, workers, load, prog); err != nil {
				t.Fatal(err)
			}
			if len(seen) != 30 || prog.Loaded() != 30 || prog.Total != 30 {
				t.Errorf("distinct batches %d, loaded %d of %d; want 30", len(seen), prog.Loaded(), prog.Total)
			}
			for k, n := range seen {
				if n != 1 {
					t.Errorf("%s loaded %d times", k, n)
				}
			}
			if len(order) != 30 {
				t.Errorf("%d loads, want 30", len(order))
			}
		})
	}
}

// A worker generates its next batch while the current one loads, and
// never refills a buffer whose load has not returned.
func TestLoadOverlapsGenerationWithLoading(t *testing.T) {
	next := make(chan int, 10)
	tables := []workload.Table{{Name: "x", Batches: 5, Rows: 5,
		Fill: func(i int, buf [][]any) [][]any {
			next <- i
			return append(buf, []any{int64(i)})
		}}}
	load := func(_ context.Context, _ *workload.Table, rows [][]any) error {
		b := rows[0][0].(int64)
		if b < 4 {
			select { // batch b+1 is generated while b is still loading
			case <-next:
			case <-time.After(5 * time.Second):
				return fmt.Errorf("batch %d: the next one was not generated during its load", b)
			}
		}
		if got := rows[0][0].(int64); got != b {
			return fmt.Errorf("batch %d's buffer was refilled with %d during its load", b, got)
		}
		return nil
	}
	if err := Load(t.Context(), tables, 1, func(ctx context.Context, tb *workload.Table, rows [][]any) error {
		if rows[0][0].(int64) == 0 {
			<-next // batch 0's own Fill
		}
		return load(ctx, tb, rows)
	}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestLoadStopsOnFirstError(t *testing.T) {
	boom := errors.New("disk full")
	tables := []workload.Table{{Name: "x", Batches: 100, Rows: 100,
		Fill: func(i int, buf [][]any) [][]any { return append(buf, []any{i}) }}}
	err := Load(t.Context(), tables, 2, func(context.Context, *workload.Table, [][]any) error { return boom }, nil)
	if !errors.Is(err, boom) || err.Error() != "load x: disk full" {
		t.Fatalf("err = %v", err)
	}
}

// LoadStreaming hands each worker's share of a table to one stream, every
// batch once, and a stream's error (or its next's) stops the load.
func TestLoadStreaming(t *testing.T) {
	mk := func(name string, batches int) workload.Table {
		return workload.Table{Name: name, Batches: batches, Rows: int64(batches),
			Fill: func(i int, buf [][]any) [][]any { return append(buf, []any{int64(i)}) }}
	}
	for _, workers := range []int{1, 2, 3, 8} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			tables := []workload.Table{mk("a", 7), mk("b", 1), mk("c", 20)}
			var mu sync.Mutex
			seen := map[string]int{}
			streams := map[string]int{}
			stream := func(_ context.Context, tb *workload.Table, next func() ([][]any, error)) error {
				mu.Lock()
				streams[tb.Name]++
				mu.Unlock()
				for {
					rows, err := next()
					if err != nil {
						return err
					}
					if rows == nil {
						return nil
					}
					mu.Lock()
					for _, r := range rows {
						seen[fmt.Sprintf("%s/%d", tb.Name, r[0])]++
					}
					mu.Unlock()
				}
			}
			prog := NewBuildProgress(tables)
			if err := LoadStreaming(t.Context(), tables, workers, stream, prog); err != nil {
				t.Fatal(err)
			}
			if len(seen) != 28 || prog.Loaded() != 28 {
				t.Errorf("distinct batches %d, loaded %d; want 28", len(seen), prog.Loaded())
			}
			for k, n := range seen {
				if n != 1 {
					t.Errorf("%s loaded %d times", k, n)
				}
			}
			// One stream per worker with a share of the table: b has one
			// batch, so one stream at most; a and c one per worker with batches.
			if streams["b"] != 1 || streams["a"] != min(workers, 7) || streams["c"] != min(workers, 20) {
				t.Errorf("streams per table %v with %d workers", streams, workers)
			}
		})
	}
	boom := errors.New("copy failed")
	err := LoadStreaming(t.Context(), []workload.Table{mk("x", 50)}, 2, func(context.Context, *workload.Table, func() ([][]any, error)) error {
		return boom
	}, nil)
	if !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
}
