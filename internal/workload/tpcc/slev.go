package tpcc

import (
	"context"
	"fmt"

	"github.com/sledge-bench/sledge/internal/workload"
)

// stockLevel is one Stock-Level (§2.8) with its inputs.
type stockLevel struct {
	w, d      int64
	threshold int64
	low       int64 // result of the last Run
}

func (t *stockLevel) Kind() int { return kindStockLevel }

// Run runs the transaction: one call in procedure mode, else the §2.8.2.2
// profile inside one read-only database transaction (§2.8.2.3 only asks for
// committed data; one transaction gives that and a consistent snapshot).
func (t *stockLevel) Run(ctx context.Context, c workload.Conn) error {
	if c.Mode().ProcedureLike() {
		if err := c.QueryRow(ctx, stmtSLCall, t.w, t.d, t.threshold).Scan(&t.low); err != nil {
			return fmt.Errorf("slev: call w=%d d=%d: %w", t.w, t.d, err)
		}
		return nil
	}
	switch c.Mode() {
	case workload.ModeBatched:
		return c.InTx(ctx, workload.TxOptions{ReadOnly: true}, func(ctx context.Context) error { return t.batched(ctx, c) })
	case workload.ModePipeline:
		return t.pipelined(ctx, c)
	}
	return c.InTx(ctx, workload.TxOptions{ReadOnly: true}, func(ctx context.Context) error { return t.run(ctx, c) })
}

func (t *stockLevel) run(ctx context.Context, c workload.Conn) error {
	var next int64
	if err := c.QueryRow(ctx, stmtSLDistrict, t.w, t.d).Scan(&next); err != nil {
		return fmt.Errorf("slev: district w=%d d=%d: %w", t.w, t.d, err)
	}
	// §2.8.2.2: distinct items of the district's last 20 orders whose stock
	// in the home warehouse is below the threshold.
	if err := c.QueryRow(ctx, stmtSLCount, t.w, t.d, next-20, next, t.threshold).Scan(&t.low); err != nil {
		return fmt.Errorf("slev: count w=%d d=%d: %w", t.w, t.d, err)
	}
	return nil
}
