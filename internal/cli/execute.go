package cli

import (
	"context"

	"github.com/sledge-bench/sledge/internal/runner"
)

// Execute runs one spec in this process exactly as the command line would
// run it with --json: the same options, checks, job record and exit
// status. It is the runner.Executor behind `sledge serve`: runner.Execute,
// which runs builds, runs, checks and compares without the command line.
// Cancelling ctx stops the job as Ctrl-C does.
func Execute(ctx context.Context, s runner.Spec, x runner.Exec) runner.Result {
	return runner.Execute(ctx, s, x)
}

var _ runner.Executor = Execute
