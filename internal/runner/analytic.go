package runner

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// runAnalytic runs a workload that drives its own tests (TPC-H's power
// and throughput tests) on the database at url: it opens and attaches as
// a run does, hands the workload its sessions, records the result in the
// job store and shows it through env.Report, before it returns the
// workload's error (nothing measured is lost).
func runAnalytic(ctx context.Context, env RunEnv, o *RunOptions, a workload.Analytic, url string) error {
	if !o.SeedSet {
		o.Seed = rand.Uint64() >> 12 // short enough to type back in
	}
	if env.DryRun {
		return nil
	}
	s, err := OpenSession(ctx, url, a.Name(), 0, !o.Explicit)
	if err != nil {
		return err
	}
	defer s.Close(context.WithoutCancel(ctx))
	if noSchema, err := s.Attach(ctx, a); err != nil {
		if !noSchema {
			return fmt.Errorf("read schema: %w", err)
		}
		if o.Explicit {
			return s.MissingSchemaErr(ctx, a, true)
		}
		// The embedded default builds what it needs, and says so: the
		// smallest scale factor that has reference answers.
		fmt.Fprintf(env.Stderr, "no %s schema in %s yet: building one first\n", a.Name(), s.URL)
		meta, _ := workload.Lookup(a.Name())
		fs := pflag.NewFlagSet("", pflag.ContinueOnError)
		mk := meta.Flags("build", fs)
		if f := fs.Lookup("scale"); f != nil {
			_ = f.Value.Set("0.01")
		}
		fresh, err := mk(1)
		if err != nil {
			return err
		}
		if err := env.Build(ctx, s, fresh); err != nil {
			return err
		}
		if err := a.Attach(ctx, s.Ctl); err != nil {
			return fmt.Errorf("read schema: %w", err)
		}
	}
	info, err := s.DB.Info(ctx)
	if err != nil {
		return fmt.Errorf("database info: %w", err)
	}
	streams := 1
	if st, ok := a.(interface{ QueryStreams() int }); ok {
		streams = st.QueryStreams()
	}
	env.Job.SetAnalytic(info, streams, o.Seed)
	sd := s.DB.(db.SQLDB) // OpenSession checked it
	ctl, _ := s.Ctl.(workload.SQLConn)
	aenv := workload.AnalyticEnv{
		Dialect: sd.Dialect(), Database: s.URL, Driver: fmt.Sprintf("%s %s (%s)", info.Driver, info.Version, info.Transport),
		Ctl: ctl, Connect: sd.ConnectSQL, Seed: o.Seed,
		Suggest: func(cmd string) (string, string) { return Suggest(cmd, s.Raw, o.Explicit) },
	}
	// Each step's line goes to the terminal (above the live status when
	// there is one) unless --json, and to env.Progress (compare's cells).
	stop := func() {}
	show := func(string) {}
	if !o.JSON {
		if env.Header != nil {
			env.Header(a, s.URL, info, "SQL text")
		}
		show = func(line string) { fmt.Fprintln(env.Stderr, line) }
		if st, ok := a.(interface{ Status() (float64, string) }); ok && env.Live != nil {
			show, stop = env.Live(st.Status)
		}
	}
	if !o.JSON || env.Progress != nil {
		aenv.Progress = func(line string) {
			show(line)
			if env.Progress != nil {
				env.Progress(line)
			}
		}
	}
	res, runErr := a.RunAnalytic(ctx, aenv)
	stop()
	if res != nil {
		if j, ok := res.(interface{ SetJobID(int64) }); ok {
			j.SetJobID(env.Job.ID())
		}
		env.Job.SetSummary(res)
		if env.Report != nil {
			if err := env.Report(res); err != nil {
				return err
			}
		}
	}
	if runErr != nil && ctx.Err() != nil {
		if !o.JSON {
			fmt.Fprintln(env.Stderr, "sledge: interrupted; the result covers what was measured until then")
		}
		return Silent{Code: ExitInterrupted}
	}
	return runErr
}
