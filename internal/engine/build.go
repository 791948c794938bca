package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/sledge-bench/sledge/internal/workload"
)

// LoadFunc inserts one batch of rows into a table (db.DB.Load).
type LoadFunc func(ctx context.Context, t *workload.Table, rows [][]any) error

// BuildProgress is read by progress displays during a load.
type BuildProgress struct {
	Total  int64 // rows to load
	loaded atomic.Int64
}

// Loaded is the number of rows loaded so far.
func (b *BuildProgress) Loaded() int64 { return b.loaded.Load() }

// NewBuildProgress sizes the progress of loading tables.
func NewBuildProgress(tables []workload.Table) *BuildProgress {
	p := &BuildProgress{}
	for _, t := range tables {
		p.Total += t.Rows
	}
	return p
}

// Load generates and loads the tables with the given number of workers.
// Each worker takes a contiguous range of every table's batches (for TPC-C,
// a disjoint range of warehouses) and goes through the tables in order, so
// generation on one worker overlaps with inserts on another. The last table
// is loaded after all others are complete: it marks a finished load.
func Load(ctx context.Context, tables []workload.Table, workers int, load LoadFunc, prog *BuildProgress) error {
	if workers < 1 {
		return errors.New("--build-vus must be at least 1")
	}
	if len(tables) == 0 {
		return nil
	}
	if prog == nil {
		prog = NewBuildProgress(tables)
	}
	body, last := tables[:len(tables)-1], tables[len(tables)-1:]
	g, gctx := errgroup.WithContext(ctx)
	for w := 0; w < workers; w++ {
		g.Go(func() error {
			var buf [][]any
			for i := range body {
				from, to := share(body[i].Batches, w, workers)
				if err := loadBatches(gctx, &body[i], from, to, load, prog, &buf); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	var buf [][]any
	return loadBatches(ctx, &last[0], 0, last[0].Batches, load, prog, &buf)
}

// loadBatches generates and loads batches [from, to) of t, reusing *buf.
func loadBatches(ctx context.Context, t *workload.Table, from, to int, load LoadFunc, prog *BuildProgress, buf *[][]any) error {
	for b := from; b < to; b++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		*buf = t.Fill(b, (*buf)[:0])
		if err := load(ctx, t, *buf); err != nil {
			return fmt.Errorf("load %s: %w", t.Name, err)
		}
		prog.loaded.Add(int64(len(*buf)))
	}
	return nil
}

// share returns worker w's contiguous range of n batches split over k workers.
func share(n, w, k int) (from, to int) {
	return n * w / k, n * (w + 1) / k
}
