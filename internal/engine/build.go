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

// StreamFunc loads one worker's share of a table as one stream
// (db.StreamLoader: PostgreSQL, one COPY): it calls next for each batch
// until next returns no rows, and must be done with a batch's rows before
// it calls next again. An error from next ends the stream without
// committing it.
type StreamFunc func(ctx context.Context, t *workload.Table, next func() ([][]any, error)) error

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
	return loadWorkers(ctx, tables, workers, prog, func(ctx context.Context, ready <-chan filled, free chan<- [][]any) error {
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
	})
}

// LoadStreaming is Load for a database that takes each worker's share of
// a table as one stream: one COPY per table and worker, as a load from
// files does, in place of one per batch, so the database never waits
// between batches.
func LoadStreaming(ctx context.Context, tables []workload.Table, workers int, stream StreamFunc, prog *BuildProgress) error {
	if workers < 1 {
		return errors.New("--build-vus must be at least 1")
	}
	if prog == nil {
		prog = NewBuildProgress(tables)
	}
	return loadWorkers(ctx, tables, workers, prog, func(ctx context.Context, ready <-chan filled, free chan<- [][]any) error {
		var pending *filled // received, of the next table
		for {
			if pending == nil {
				f, ok := <-ready
				if !ok {
					break
				}
				pending = &f
			}
			t := pending.t
			var lent [][]any // the batch the stream holds, given back at its next call
			next := func() ([][]any, error) {
				if lent != nil {
					free <- lent
					lent = nil
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				if pending == nil {
					f, ok := <-ready
					if !ok {
						return nil, nil
					}
					pending = &f
				}
				if pending.t != t {
					return nil, nil // this table's share is done
				}
				lent, pending = pending.rows, nil
				prog.loaded.Add(int64(len(lent)))
				return lent, nil
			}
			if err := stream(ctx, t, next); err != nil {
				return fmt.Errorf("load %s: %w", t.Name, err)
			}
			if lent != nil {
				free <- lent
			}
			if pending != nil && pending.t == t {
				// The stream ended without asking for all of its rows.
				return fmt.Errorf("load %s: the stream ended before its last batch", t.Name)
			}
		}
		return ctx.Err()
	})
}

// loadWorkers runs workers workers over their shares of the tables: each
// a generator goroutine filling batches into two buffers in turn, and
// consume loading them. consume gives each buffer back on free once
// loaded; the generator fills it again only then.
func loadWorkers(ctx context.Context, tables []workload.Table, workers int, prog *BuildProgress,
	consume func(ctx context.Context, ready <-chan filled, free chan<- [][]any) error) error {
	g, gctx := errgroup.WithContext(ctx)
	for w := 0; w < workers; w++ {
		g.Go(func() error { return loadShare(gctx, tables, w, workers, consume) })
	}
	return g.Wait()
}

// filled is one generated batch of a table, ready to load.
type filled struct {
	t    *workload.Table
	rows [][]any
}

// loadShare loads worker w's share (of k) of every table: a generator
// goroutine fills batches into two buffers in turn, consume loads them.
func loadShare(ctx context.Context, tables []workload.Table, w, k int,
	consume func(ctx context.Context, ready <-chan filled, free chan<- [][]any) error) error {
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
	return consume(ctx, ready, free)
}

// share returns worker w's contiguous range of n batches split over k workers.
func share(n, w, k int) (from, to int) {
	return n * w / k, n * (w + 1) / k
}
