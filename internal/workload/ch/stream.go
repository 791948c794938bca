package ch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

// dialectOf is the dialect a SQL session speaks (db.SQLOnly names it).
func dialectOf(c workload.SQLConn) (string, error) {
	d, ok := c.(interface{ Dialect() string })
	if !ok || !knownDialect(d.Dialect()) {
		return "", errors.New("ch: the session does not name a dialect ch renders its queries for (postgres, mysql, sqlite, duckdb)")
	}
	return d.Dialect(), nil
}

// Order is stream s's order of the 22 queries (numbers 1..22): a
// permutation drawn from the run's seed and s, the same on every pass of
// the stream and in every run with that seed.
func Order(seed uint64, s int) []int {
	r := rand.New(rand.NewPCG(seed, 0xc4b3_0000+uint64(s)))
	out := make([]int, numQueries)
	for i, p := range r.Perm(numQueries) {
		out[i] = p + 1
	}
	return out
}

// startSession runs the dialect's session statements on c.
func startSession(ctx context.Context, c workload.SQLConn, d string) error {
	for _, st := range session(d) {
		if err := c.ExecSQL(ctx, st); err != nil {
			return fmt.Errorf("ch: %s: %w", st, err)
		}
	}
	return nil
}

// Stream runs stream s's queries in its order (Order), pass after pass,
// until ctx ends; every query that ended is reported through done, its
// error included. A lost session or a missing schema ends the stream.
func (w *Workload) Stream(ctx context.Context, c workload.SQLConn, s int, seed uint64, done func(workload.QueryRun)) error {
	d, err := dialectOf(c)
	if err != nil {
		return err
	}
	if err := startSession(ctx, c, d); err != nil {
		return err
	}
	order := Order(seed, s)
	for {
		for _, q := range order {
			if ctx.Err() != nil {
				return nil
			}
			text, err := Render(d, q)
			if err != nil {
				return err
			}
			start := time.Now()
			n, err := c.QuerySQL(ctx, text, func([][]byte) error { return nil })
			end := time.Now()
			if ctx.Err() != nil {
				return nil // cut short: not a query that ended
			}
			if err != nil {
				err = fmt.Errorf("Q%d: %w", q, err)
			}
			done(workload.QueryRun{Stream: s, Query: q - 1, Start: start, End: end, Rows: n, Err: err})
			if errors.Is(err, workload.ErrConnLost) || errors.Is(err, workload.ErrNoSchema) {
				return err
			}
		}
	}
}
