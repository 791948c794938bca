package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
)

// jobsPath is --jobs-db, else $SLEDGE_JOBS_DB, else
// $XDG_DATA_HOME/sledge/jobs.db (~/.local/share/sledge/jobs.db), whose
// directory it creates.
func jobsPath(cmd *cobra.Command, env *Env) (string, error) {
	p := ""
	if f := cmd.Flag("jobs-db"); f != nil {
		p = f.Value.String()
	}
	if p == "" {
		p = env.Getenv("SLEDGE_JOBS_DB")
	}
	if p != "" {
		return p, nil
	}
	return dataFile(env, "jobs.db", "the job store", "--jobs-db PATH")
}

// startJob records a running job of the given kind, unless --no-job, and
// returns the environment the command must use: its stderr is copied to
// the job's log.
func startJob(cmd *cobra.Command, env *Env, kind string, w workload.Workload, rawURL string) (*runner.JobRun, *Env, error) {
	if f := cmd.Flag("no-job"); f != nil && f.Value.String() == "true" {
		return nil, env, nil
	}
	path, err := jobsPath(cmd, env)
	if err != nil {
		runner.NotRecorded(env.Stderr, kind, err)
		return nil, env, nil
	}
	r, stderr, err := runner.StartJob(cmd.Context(), runner.JobStart{Kind: kind, Workload: w.Name(), RawURL: rawURL,
		Spec: specOf(cmd, kind, w.Name(), rawURL), Path: path, Record: true, JobID: env.JobID, Outputs: env.Outputs,
		Stderr: env.Stderr, Version: Version(), IsUsage: isUsage})
	if r == nil || err != nil {
		return nil, env, err
	}
	jenv := *env
	jenv.Stderr = stderr
	return r, &jenv, nil
}

// specOf is the command as a spec (runner.SpecOf over its own flags).
func specOf(cmd *cobra.Command, kind, wl, rawURL string) runner.Spec {
	return runner.SpecOf(cmd.LocalFlags(), kind, wl, rawURL)
}

// exitCode is the status Main gives err.
func exitCode(ctx context.Context, err error) int { return runner.ExitCode(ctx, err, isUsage) }
