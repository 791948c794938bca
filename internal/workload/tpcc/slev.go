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
	st        *stockLevelStmts
}

// stockLevelStmts are a Stock-Level's statements bound once to its inputs
// and to the variables below, which each Run rewrites (issue 26).
type stockLevelStmts struct {
	next, lowO            int64 // d_next_o_id; the window's first order, next − 20
	district, count, call *workload.Stmt
	c                     workload.Conn // the session of the Run under way
	body                  func(ctx context.Context) error
}

// bind makes t's statements; a stockLevel made without NewTerminal binds
// on its first Run.
func (t *stockLevel) bind() {
	st := &stockLevelStmts{}
	st.district = workload.Bind(stmtSLDistrict, []any{&t.w, &t.d}, &st.next)
	st.count = workload.Bind(stmtSLCount, []any{&t.w, &t.d, &st.lowO, &st.next, &t.threshold}, &t.low)
	st.call = workload.Bind(stmtSLCall, []any{&t.w, &t.d, &t.threshold}, &t.low)
	st.body = func(ctx context.Context) error { return t.run(ctx, st.c) }
	t.st = st
}

func (t *stockLevel) Kind() int { return kindStockLevel }

// Run runs the transaction: one call in procedure mode, else the §2.8.2.2
// profile inside one read-only database transaction (§2.8.2.3 only asks for
// committed data; one transaction gives that and a consistent snapshot).
func (t *stockLevel) Run(ctx context.Context, c workload.Conn) error {
	if t.st == nil {
		t.bind()
	}
	if c.Mode().ProcedureLike() {
		if err := workload.QueryRowStmt(ctx, c, t.st.call); err != nil {
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
	t.st.c = c
	err := c.InTx(ctx, workload.TxOptions{ReadOnly: true}, t.st.body)
	t.st.c = nil // the session is not the transaction's to keep
	return err
}

func (t *stockLevel) run(ctx context.Context, c workload.Conn) error {
	st := t.st
	if err := workload.QueryRowStmt(ctx, c, st.district); err != nil {
		return fmt.Errorf("slev: district w=%d d=%d: %w", t.w, t.d, err)
	}
	// §2.8.2.2: distinct items of the district's last 20 orders whose stock
	// in the home warehouse is below the threshold.
	st.lowO = st.next - 20
	if err := workload.QueryRowStmt(ctx, c, st.count); err != nil {
		return fmt.Errorf("slev: count w=%d d=%d: %w", t.w, t.d, err)
	}
	return nil
}
