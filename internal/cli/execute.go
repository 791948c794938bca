package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"

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

// executeMain runs one spec through Main, with --json: what Execute must
// do the same as (TestExecuteParity).
func executeMain(ctx context.Context, s runner.Spec, x runner.Exec) runner.Result {
	args, err := s.Args(x.Only)
	if err != nil {
		return runner.Result{Code: ExitUsage, Err: err.Error()}
	}
	args = append(args, "--json")
	if x.JobsDB != "" {
		args = append(args, "--jobs-db", x.JobsDB)
	}
	if x.NoJob {
		args = append(args, "--no-job")
	}
	var out, errBuf bytes.Buffer
	stderr := io.Writer(&errBuf)
	if x.Stderr != nil {
		stderr = io.MultiWriter(x.Stderr, &errBuf)
	}
	getenv := x.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	code := Main(ctx, args, Env{Stdout: &out, Stderr: stderr, Getenv: getenv, JobID: x.JobID, Outputs: x.Outputs})
	r := runner.Result{JobID: x.JobID, Code: code}
	if b := bytes.TrimSpace(out.Bytes()); json.Valid(b) && len(b) > 0 {
		r.JSON = json.RawMessage(b)
	}
	if code != ExitOK {
		r.Err = strings.TrimPrefix(lastLine(errBuf.String()), "sledge: ")
	}
	return r
}

var _ runner.Executor = Execute
