package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
)

// buildOpts are build's flags: the common ones and runner's BuildOptions.
type buildOpts struct {
	common
	runner.BuildOptions
}

func newBuild(env *Env) *cobra.Command {
	o := &buildOpts{}
	cmd := &cobra.Command{
		Use:   "build [workload] [URL]",
		Short: "Create and load a benchmark schema (default workload: tpcc)",
		Long: `Create the workload's tables, load them with build virtual users working on
disjoint warehouse ranges in parallel, then create the indexes and any
server-side procedures. The data is a pure function of --seed.

A schema that is already complete is left alone (drop it first); the
leftovers of an interrupted build are dropped and the build starts over.

tpch (TPC-H-derived, docs/tpch.md): --scale SF (0.01, 0.1, 1, 10, …)
generates exactly TPC dbgen 2.14's rows and loads them with the database's
bulk path (COPY, LOAD DATA, SQLite prepared inserts); it needs a database
of its own: a database holding TPC-C's tables is refused.

ch (CH-benCHmark, docs/ch.md): TPC-C's nine tables (--warehouses N) and
supplier (10,000 rows), nation (62) and region (5); on a complete TPC-C
build it adds only the three.`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			w, url, err := o.resolve(cmd, args, env)
			if err != nil {
				return err
			}
			stopProfile, err := startCPUProfile(o.CPUProfile)
			if err != nil {
				return err
			}
			defer stopProfile()
			job, jenv, err := startJob(cmd, env, "build", w, url)
			if err != nil {
				return err
			}
			o.job = job
			return job.End(cmd.Context(), runBuild(cmd.Context(), jenv, &o.common, w, url, o.VUs))
		},
	}
	addCommon(cmd, &o.common, "build", 1)
	runner.BuildFlags(cmd.Flags(), &o.BuildOptions)
	return cmd
}

// buildResult is runner's.
type buildResult = runner.BuildResult

func runBuild(ctx context.Context, env *Env, c *common, w workload.Workload, url string, vus int) error {
	res, err := runner.Build(ctx, buildEnv(env, c.job), w, url, c.Seed, vus, c.JSON)
	if err != nil {
		return err
	}
	if c.JSON {
		return json.NewEncoder(env.Stdout).Encode(res)
	}
	fmt.Fprintf(env.Stdout, "built %s in %s: %s, %s rows in %s (load %s, %s %s; %s rows/s)\n",
		res.Workload, res.Database, res.Scale, thousands(res.Rows), seconds(secs(res.TotalS)),
		seconds(secs(res.LoadS)), res.AfterLoad, seconds(secs(res.IndexesS)), thousands(int64(res.RowsPerS)))
	printJobLine(env.Stdout, res.JobID)
	return nil
}

// buildEnv shows a build on the terminal: its progress bar.
func buildEnv(env *Env, job *runner.JobRun) runner.BuildEnv {
	return runner.BuildEnv{Stderr: env.Stderr, Job: job,
		Progress: func(render func() (float64, string)) func() {
			return startProgress(env, 10*time.Second, render).Stop
		}}
}

func secs(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
