package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/workload"
)

// Execute runs one spec in this process exactly as the command line would
// run it with --json: the same options (parsed by the same flag
// definitions), checks, job record and exit status, without the command
// line: builds, runs, checks and compares (whose cells it runs through
// Execute too). Cancelling ctx stops the job as Ctrl-C does.
func Execute(ctx context.Context, s Spec, x Exec) Result {
	args, err := s.Args(x.Only)
	if err != nil {
		return Result{Code: ExitUsage, Err: err.Error()}
	}
	if s.Kind != "build" && s.Kind != "run" && s.Kind != "check" && s.Kind != "compare" {
		return Result{JobID: x.JobID, Code: ExitUsage, Err: fmt.Sprintf("%s: this runner runs %s", s.Kind, strings.Join(Kinds, ", "))}
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
	code := execute(ctx, args[0], args[1:], x, &out, stderr, getenv)
	r := Result{JobID: x.JobID, Code: code}
	if b := bytes.TrimSpace(out.Bytes()); json.Valid(b) && len(b) > 0 {
		r.JSON = json.RawMessage(b)
	}
	if code != ExitOK {
		r.Err = strings.TrimPrefix(lastLine(errBuf.String()), "sledge: ")
	}
	return r
}

// execute is the command line's Main for one command with --json: it
// prints an error on stderr as one line and returns the exit status.
func execute(ctx context.Context, kind string, args []string, x Exec, stdout, stderr io.Writer, getenv func(string) string) (code int) {
	defer func() {
		// Never a stack trace: one line, and a status that says "internal".
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "sledge: internal error: %v (please report this)\n", r)
			code = ExitInternal
		}
	}()
	err := executeCommand(ctx, kind, args, x, stdout, stderr, getenv)
	if err == nil {
		return ExitOK
	}
	var silent Silent
	if !errors.As(err, &silent) {
		fmt.Fprintf(stderr, "sledge: %s\n", oneLine(err.Error()))
	}
	return ExitCode(ctx, err, IsUsage)
}

// executeCommand parses the command's flags and runs it, as its cobra
// command's RunE does.
func executeCommand(ctx context.Context, kind string, args []string, x Exec, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := pflag.NewFlagSet(kind, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c Common
	var ro RunOptions
	var bo BuildOptions
	var co CompareOptions
	switch kind {
	case "build":
		CommonFlags(fs, &c, kind, 1)
		BuildFlags(fs, &bo)
	case "run":
		CommonFlags(fs, &c, kind, 0)
		RunFlags(fs, &ro)
	case "compare":
		// The workloads' run options: every cell takes them.
		CommonFlags(fs, &c, "run", 0)
		CompareFlags(fs, &co)
	default:
		CommonFlags(fs, &c, kind, 0)
	}
	// --json as the command line's Execute passes it: the spec records it.
	if err := fs.Parse(append(args, "--json")); err != nil {
		return Usagef("%s (see sledge %s --help)", CleanFlagError(err), kind)
	}
	if n := fs.NArg(); n > 2 {
		return fmt.Errorf("accepts at most %d arg(s), received %d", 2, n)
	}
	w, url, err := c.Resolve(fs, kind, fs.Args(), getenv)
	if err != nil {
		return err
	}
	if kind == "run" {
		ro.Seed, ro.SeedSet, ro.Explicit, ro.JSON = c.Seed, c.SeedSet, c.Explicit, c.JSON
		if err := ro.FlagsSet(fs, w); err != nil {
			return err
		}
	}
	if kind == "compare" {
		co.FlagsSet(fs)
		co.Seed, co.SeedSet, co.Explicit, co.JSON = c.Seed, c.SeedSet, c.Explicit, c.JSON
	}
	path := x.JobsDB
	if path == "" && !x.NoJob {
		path = getenv("SLEDGE_JOBS_DB")
	}
	if path == "" && !x.NoJob {
		if path, err = DataFile(getenv, "jobs.db", "the job store", "--jobs-db PATH"); err != nil {
			NotRecorded(stderr, kind, err)
		}
	}
	if x.DryRun {
		return dryRun(ctx, kind, w, url, &ro, &bo, &co, getenv)
	}
	var job *JobRun
	jstderr := stderr
	if err == nil && !x.NoJob {
		job, jstderr, err = StartJob(ctx, JobStart{Kind: kind, Workload: w.Name(), RawURL: url,
			Spec: SpecOf(fs, kind, w.Name(), url), Path: path, Record: true, JobID: x.JobID, Outputs: x.Outputs,
			Stderr: stderr, Version: Version(), IsUsage: IsUsage})
		if err != nil {
			return err
		}
	}
	switch kind {
	case "build":
		res, err := Build(ctx, BuildEnv{Stderr: jstderr, Job: job}, w, url, c.Seed, bo.VUs, c.JSON)
		if err == nil {
			err = json.NewEncoder(stdout).Encode(res)
		}
		return job.End(ctx, err)
	case "run":
		_, err := Run(ctx, RunEnv{Stdout: stdout, Stderr: jstderr, Getenv: getenv, Job: job, WorkerArgs: WorkerArgs(fs, fs.Args()),
			Build: func(ctx context.Context, s *Session, w workload.Workload) error {
				_, err := BuildSchema(ctx, BuildEnv{Stderr: jstderr}, s, w, 1, DefaultBuildVUs(), true)
				return err
			},
			Display: func(_ *engine.Plan, live *engine.Live, name string, kind int) func() {
				if ro.Progress > 0 {
					return RunProgressLines(jstderr, time.Duration(ro.Progress)*time.Second, live, name, kind, ro.ProgressTimestamp)
				}
				return nil
			},
			Result:   func(sum *RunSummary) error { return writeJSON(stdout, sum) },
			Report:   func(res workload.AnalyticResult) error { return writeJSON(stdout, res) },
			Progress: x.Progress,
		}, &ro, w, url)
		return job.End(ctx, err)
	case "compare":
		_, err := Compare(ctx, CompareEnv{Stderr: jstderr, Getenv: getenv, Job: job, Outputs: x.Outputs,
			Cell: func(c *CompareCell) func() {
				if co.Progress > 0 {
					fmt.Fprintln(jstderr, c.What)
				}
				return nil
			},
			Result:         func(out *CompareJSON) error { return writeJSON(stdout, out) },
			AnalyticResult: func(out *AnalyticCompareJSON) error { return writeJSON(stdout, out) },
			Command:        func(seed uint64) string { return CompareCommand(fs, seed, compareCommandExtra(x)) },
		}, &co, w, url)
		return job.End(ctx, err)
	}
	result, failed, err := Check(ctx, CheckEnv{Job: job}, w, url, c.Explicit)
	if err == nil {
		if err = writeJSON(stdout, result); err == nil && failed > 0 {
			err = Silent{Code: ExitFailure}
		}
	}
	return job.End(ctx, err)
}

// dryRun checks a command's options as it does before it opens anything.
func dryRun(ctx context.Context, kind string, w workload.Workload, url string, ro *RunOptions, bo *BuildOptions,
	co *CompareOptions, getenv func(string) string) error {
	switch kind {
	case "build":
		return checkBuildVUs(bo.VUs)
	case "run":
		return run(ctx, RunEnv{Stderr: io.Discard, Getenv: getenv, DryRun: true}, ro, w, url, new(*RunSummary))
	case "compare":
		_, err := Compare(ctx, CompareEnv{Stderr: io.Discard, Getenv: getenv, DryRun: true}, co, w, url)
		return err
	}
	return nil
}

func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
