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
// a disjoint range of warehouses) and goes through the tables in order on
// its own session. While one batch loads, the worker generates its next
// one, so the client's generation overlaps the database's work on every
// session rather than leaving it idle. Tables that must come after the
// others (a build's marker) are the caller's to load in a second call.
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
	g, gctx := errgroup.WithContext(ctx)
	for w := 0; w < workers; w++ {
		g.Go(func() error { return loadShare(gctx, tables, w, workers, load, prog) })
	}
	return g.Wait()
}

// filled is one generated batch of a table, ready to load.
type filled struct {
	t    *workload.Table
	rows [][]any
}

// loadShare loads worker w's share (of k) of every table: a generator
// goroutine fills batches into two buffers in turn, this one loads them.
// A buffer is filled again only after its load returned.
func loadShare(ctx context.Context, tables []workload.Table, w, k int, load LoadFunc, prog *BuildProgress) error {
	gctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the generator when a load fails
	ready := make(chan filled, 1)
	free := make(chan [][]any, 2)
	free <- nil
	free <- nil
	go func() {
		defer close(ready)
		for i := range tables {
			from, to := share(tables[i].Batches, w, k)
			for b := from; b < to; b++ {
				var buf [][]any
				select {
				case buf = <-free:
				case <-gctx.Done():
					return
				}
				buf = tables[i].Fill(b, buf[:0])
				select {
				case ready <- filled{&tables[i], buf}:
				case <-gctx.Done():
					return
				}
			}
		}
	}()
	for f := range ready {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := load(ctx, f.t, f.rows); err != nil {
			return fmt.Errorf("load %s: %w", f.t.Name, err)
		}
		prog.loaded.Add(int64(len(f.rows)))
		free <- f.rows
	}
	return ctx.Err()
}

// share returns worker w's contiguous range of n batches split over k workers.
func share(n, w, k int) (from, to int) {
	return n * w / k, n * (w + 1) / k
}
