package tpcc

import (
	"context"
	"errors"

	"github.com/sledge-bench/sledge/internal/workload"
)

// errBatchedPending is returned until batched mode's set-oriented logic
// lands (issue 13, in progress).
var errBatchedPending = errors.New("tpcc: --mode batched is being built")

// batchedStatements are the statements of batched mode.
func batchedStatements() []string { return clientStatements() }

func (t *newOrder) batched(ctx context.Context, c workload.Conn) error    { return errBatchedPending }
func (t *payment) batched(ctx context.Context, c workload.Conn) error     { return errBatchedPending }
func (t *delivery) batched(ctx context.Context, c workload.Conn) error    { return errBatchedPending }
func (t *orderStatus) batched(ctx context.Context, c workload.Conn) error { return errBatchedPending }
func (t *stockLevel) batched(ctx context.Context, c workload.Conn) error  { return errBatchedPending }
