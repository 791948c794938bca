package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
)

type buildOpts struct {
	common
	vus int
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
leftovers of an interrupted build are dropped and the build starts over.`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			w, url, err := o.resolve(cmd, args, env)
			if err != nil {
				return err
			}
			job, jenv, err := startJob(cmd, env, "build", w, url)
			if err != nil {
				return err
			}
			o.job = job
			return job.End(cmd.Context(), runBuild(cmd.Context(), jenv, &o.common, w, url, o.vus))
		},
	}
	addCommon(cmd, &o.common, "build", 1)
	cmd.Flags().IntVar(&o.vus, "build-vus", defaultBuildVUs(), "build virtual users loading in parallel (default: the number of CPUs)")
	// The usage says the default in words: cobra must not add this machine's.
	cmd.Flags().Lookup("build-vus").DefValue = "0"
	return cmd
}

type buildResult struct {
	Workload  string  `json:"workload"`
	Database  string  `json:"database"`
	Scale     string  `json:"scale"`
	Seed      uint64  `json:"seed"`
	BuildVUs  int     `json:"build_vus"`
	Rows      int64   `json:"rows"`
	LoadS     float64 `json:"load_s"`
	IndexesS  float64 `json:"indexes_s"`
	TotalS    float64 `json:"total_s"`
	RowsPerS  float64 `json:"rows_per_s"`
	Completed bool    `json:"completed"`
}

func runBuild(ctx context.Context, env *Env, c *common, w workload.Workload, url string, vus int) error {
	if vus < 1 {
		return usageErr("--build-vus must be at least 1")
	}
	s, err := runner.OpenSession(ctx, url, w.Name(), 0, true)
	if err != nil {
		return err
	}
	defer s.Close(context.WithoutCancel(ctx))
	c.job.SetDB(ctx, s, vus)
	res, err := build(ctx, env, s, w, c.seed, vus, c.jsonOut)
	if err != nil {
		return err
	}
	c.job.SetSummary(res)
	if c.jsonOut {
		return json.NewEncoder(env.Stdout).Encode(res)
	}
	fmt.Fprintf(env.Stdout, "built %s in %s: %s, %s rows in %s (load %s, indexes and procedures %s; %s rows/s)\n",
		res.Workload, res.Database, res.Scale, thousands(res.Rows), seconds(secs(res.TotalS)),
		seconds(secs(res.LoadS)), seconds(secs(res.IndexesS)), thousands(int64(res.RowsPerS)))
	return nil
}

func secs(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// build creates and loads the schema of w through session s.
func build(ctx context.Context, env *Env, s *runner.Session, w workload.Workload, seed uint64, vus int, quiet bool) (*buildResult, error) {
	// A complete schema has its marker table; refuse to load over it.
	switch noSchema, err := s.Attach(ctx, w); {
	case err == nil:
		how, note := runner.Suggest("sledge drop "+w.Name(), s.Raw, true)
		return nil, fmt.Errorf("a %s schema already exists in %s: drop it first with `%s`%s", w.Name(), s.URL, how, note)
	case !noSchema:
		return nil, fmt.Errorf("read schema: %w", err)
	}
	start := time.Now()
	// Whatever an interrupted build left behind goes first.
	if err := s.DB.Script(ctx, w.Name(), "drop"); err != nil {
		return nil, fmt.Errorf("drop leftovers: %w", err)
	}
	if err := s.DB.Script(ctx, w.Name(), "tables"); err != nil {
		return nil, fmt.Errorf("create tables: %w", err)
	}
	tables := w.Tables()
	prog := engine.NewBuildProgress(tables)
	if !quiet {
		fmt.Fprintf(env.Stderr, "building %s in %s: %s, seed %d, %d build virtual users\n",
			w.Name(), s.URL, runner.ScaleText(w), seed, vus)
	}
	var disp *progress
	if !quiet {
		disp = startProgress(env, 10*time.Second, func() (float64, string) {
			n := prog.Loaded()
			el := time.Since(start)
			return float64(n) / float64(max(prog.Total, 1)),
				fmt.Sprintf("loading: %s of %s rows, %s", thousands(n), thousands(prog.Total), seconds(el))
		})
	}
	// The last table marks a finished build (Attach finds the schema by
	// it), so it is loaded only after everything else, indexes and
	// procedures included: an interrupted build never looks complete.
	last := len(tables) - 1
	err := engine.Load(ctx, tables[:last], vus, s.DB.Load, prog)
	loaded := time.Now()
	if err == nil {
		if disp != nil {
			disp.Stop()
			disp = nil
			// One total for one build: the rows so far of all the build
			// will load, the last table's included (it comes last).
			fmt.Fprintf(env.Stderr, "loaded %s of %s rows in %s; creating indexes and procedures, then loading %s (%s rows), which marks the build complete\n",
				thousands(prog.Loaded()), thousands(prog.Total), seconds(loaded.Sub(start)), tables[last].Name, thousands(tables[last].Rows))
		}
		if err = s.DB.Script(ctx, w.Name(), "indexes"); err != nil {
			err = fmt.Errorf("create indexes: %w", err)
		} else if err = s.DB.Script(ctx, w.Name(), "procedures"); err != nil {
			err = fmt.Errorf("create procedures: %w", err)
		} else if err = engine.Load(ctx, tables[last:], 1, s.DB.Load, prog); err != nil {
			err = fmt.Errorf("load %s: %w", tables[last].Name, err)
		}
	}
	if disp != nil {
		disp.Stop()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, &runner.ExitError{Code: ExitInterrupted, Err: fmt.Errorf("build interrupted after %s rows; the schema is incomplete: run `sledge build %s` again, which drops what was loaded and starts over", thousands(prog.Loaded()), w.Name())}
		}
		return nil, err
	}
	end := time.Now()
	return &buildResult{
		Workload: w.Name(), Database: s.URL, Scale: runner.ScaleText(w), Seed: seed, BuildVUs: vus,
		Rows: prog.Loaded(), LoadS: loaded.Sub(start).Seconds(), IndexesS: end.Sub(loaded).Seconds(),
		TotalS: end.Sub(start).Seconds(), RowsPerS: float64(prog.Loaded()) / loaded.Sub(start).Seconds(),
		Completed: true,
	}, nil
}
