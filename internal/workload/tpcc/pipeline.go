package tpcc

import (
	"context"
	"errors"

	"github.com/sledge-bench/sledge/internal/workload"
)

// errPipelinePending is returned until pipeline mode's logic lands (issue
// 13, in progress).
var errPipelinePending = errors.New("tpcc: --mode pipeline is being built")

func (t *newOrder) pipelined(ctx context.Context, c workload.Conn) error { return errPipelinePending }
func (t *payment) pipelined(ctx context.Context, c workload.Conn) error  { return errPipelinePending }
func (t *delivery) pipelined(ctx context.Context, c workload.Conn) error { return errPipelinePending }
func (t *orderStatus) pipelined(ctx context.Context, c workload.Conn) error {
	return errPipelinePending
}
func (t *stockLevel) pipelined(ctx context.Context, c workload.Conn) error { return errPipelinePending }
