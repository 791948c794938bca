package cli

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/db"
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

// specOf is the command as a spec: every option with its value (the ones
// given and the defaults), with the database URL redacted.
func specOf(cmd *cobra.Command, kind, wl, rawURL string) runner.Spec {
	opts := map[string]any{}
	var set []string
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" {
			return
		}
		v := f.Value.String()
		if f.Name == "db" {
			v = db.Redact(v)
		}
		opts[f.Name] = typedValue(f.Value.Type(), v)
		if f.Changed {
			set = append(set, f.Name)
		}
	})
	if set == nil {
		set = []string{}
	}
	return runner.Spec{Version: runner.SpecVersion, Kind: kind, Workload: wl, DB: db.Redact(rawURL), Options: opts, Set: set}
}

// typedValue keeps numbers and booleans as JSON numbers and booleans.
func typedValue(typ, v string) any {
	switch {
	case typ == "bool":
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	case strings.HasPrefix(typ, "int") || strings.HasPrefix(typ, "uint") || strings.HasPrefix(typ, "float"):
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return json.Number(v)
		}
	}
	return v
}

// exitCode is the status Main gives err.
func exitCode(ctx context.Context, err error) int { return runner.ExitCode(ctx, err, isUsage) }
