// Package cli is sledge's command line: it parses and validates options,
// wires workloads, databases and the engine together, and is the only
// package that prints.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
	_ "github.com/sledge-bench/sledge/internal/workload/all" // workloads
)

// Exit statuses (exitCodesHelp; docs/contracts.md): runner's.
const (
	ExitOK          = runner.ExitOK
	ExitFailure     = runner.ExitFailure
	ExitUsage       = runner.ExitUsage
	ExitFailedTx    = runner.ExitFailedTx
	ExitInternal    = runner.ExitInternal
	ExitThreshold   = runner.ExitThreshold
	ExitInterrupted = runner.ExitInterrupted
)

// exitCodesHelp ends every command's --help: the same table for all.
const exitCodesHelp = `
Exit status:
  0    done
  1    the command ran and failed: a consistency condition failed, the database refused, a run could not start
  2    bad input: an unknown flag or value, an impossible combination, a bad database URL
  3    the run measured to its end but transactions failed with errors that were not retried
       (its result is printed and saved all the same)
  70   internal error in sledge (please report it)
  99   run: the run measured to its end but missed a --threshold (its result is printed and saved
       all the same; wins over 3)
  130  interrupted (Ctrl-C, SIGTERM, however many): what was measured until then is printed and
       saved; a third Ctrl-C stops without waiting for transactions in flight, and saves too
`

// Env is the process's outside world, injected so tests can run commands
// in-process.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	IsTerminal     bool // stderr is a terminal: draw progress bars
	// JobID is a queued job to run as (the service queues a job first, to
	// answer with its id); 0 records a new job.
	JobID int64
	// Outputs follow the job live (the service's stream, Prometheus).
	Outputs []runner.Output
	// pgb is set by `sledge pgbench` for the run it starts: print
	// pgbench's report first, sledge's additions after it.
	pgb *pgbReport
}

func usageErr(format string, a ...any) error { return runner.Usagef(format, a...) }

// Main runs sledge with args and returns the process exit status.
func Main(ctx context.Context, args []string, env Env) (code int) {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	defer func() {
		// Never a stack trace: one line, and a status that says "internal".
		if r := recover(); r != nil {
			fmt.Fprintf(env.Stderr, "sledge: internal error: %v (please report this)\n", r)
			code = ExitInternal
		}
	}()
	root := newRoot(ctx, &env)
	root.SetArgs(args)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var silent runner.Silent
	if !errors.As(err, &silent) {
		fmt.Fprintf(env.Stderr, "sledge: %s%s\n", oneLine(err.Error()), didYouMean(root, err))
	}
	return exitCode(ctx, err)
}

var unknownCmd = regexp.MustCompile(`^unknown command "([^"]*)" for "([^"]*)"`)

// didYouMean is "; did you mean "run"?" after cobra's unknown command
// error when a command of that parent is near the word (cobra puts its
// suggestions on lines of their own, which the one-line error drops, and
// only for the root's commands); "" otherwise.
func didYouMean(root *cobra.Command, err error) string {
	m := unknownCmd.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	parent := root
	if path := strings.Fields(m[2]); len(path) > 1 {
		c, _, ferr := root.Find(path[1:])
		if ferr != nil || c == nil {
			return ""
		}
		parent = c
	}
	if parent.SuggestionsMinimumDistance <= 0 {
		parent.SuggestionsMinimumDistance = 2 // cobra's default, which it sets only on the root
	}
	var names []string
	for _, s := range parent.SuggestionsFor(m[1]) {
		names = append(names, strconv.Quote(s))
	}
	if len(names) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(names, " or ") + "?"
}

// isUsage recognises cobra's own parse errors, which are not typed
// (runner.IsUsage).
func isUsage(err error) bool { return runner.IsUsage(err) }

// cleanFlagError turns pflag's strconv wording into plain words
// (runner.CleanFlagError).
func cleanFlagError(err error) string { return runner.CleanFlagError(err) }

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// Version is the module version the Go toolchain stamped into the binary
// (runner.Version). Jobs record it.
func Version() string { return runner.Version() }

// versionText is what --version prints: the version, the module, the
// revision with its time and whether the tree had uncommitted changes, and
// the Go toolchain.
func versionText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", Version())
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(&b, "module %s %s\n", bi.Main.Path, bi.Main.Version)
		if rev, at, modified := runner.VCSInfo(bi); rev != "" {
			fmt.Fprintf(&b, "revision %s", rev)
			if at != "" {
				fmt.Fprintf(&b, " (%s)", at)
			}
			if modified {
				b.WriteString(", with uncommitted changes")
			}
			b.WriteString("\n")
		} else {
			b.WriteString("revision unknown (built outside a git checkout, by go run, or with -buildvcs=false: `make build` stamps it)\n")
		}
	}
	fmt.Fprintf(&b, "built with %s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return b.String()
}

func newRoot(ctx context.Context, env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:   "sledge",
		Short: "Benchmark databases: build a schema, drive it with virtual users, report why",
		Long: `sledge builds a benchmark schema, drives it with virtual users and reports
throughput and latency, and where each number comes from.

With no --db, sledge uses an embedded SQLite file (see "sledge run --help").`,
		Version:       versionText(),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%s (see sledge %s --help)", cleanFlagError(err), c.Name())
	})
	root.SetVersionTemplate("sledge {{.Version}}\n")
	root.CompletionOptions.DisableDefaultCmd = true
	// Subcommands inherit the root's usage template: one table for all.
	root.SetUsageTemplate(root.UsageTemplate() + exitCodesHelp)
	pf := root.PersistentFlags()
	pf.String("jobs-db", "", "job store file (default: $SLEDGE_JOBS_DB, else $XDG_DATA_HOME/sledge/jobs.db)")
	pf.Bool("no-job", false, "do not record this build, run or check in the job store")
	root.AddCommand(newBuild(env), newRun(env), newCheck(env), newDrop(env), newJobs(env), newCompare(env), newServe(env), newPgbench(env))
	root.AddCommand(newKube(env))
	root.AddCommand(newAgent(env))
	return root
}

// common holds the options every command shares: runner's Common, and
// the job being recorded.
type common struct {
	runner.Common
	job *runner.JobRun // the job being recorded, nil when none
}

func addCommon(cmd *cobra.Command, c *common, name string, defaultSeed uint64) {
	runner.CommonFlags(cmd.Flags(), &c.Common, name, defaultSeed)
}

// resolve picks the workload (first argument, default tpcc) and the URL.
func (c *common) resolve(cmd *cobra.Command, args []string, env *Env) (workload.Workload, string, error) {
	return c.Resolve(cmd.Flags(), cmd.Name(), args, env.Getenv)
}

// dataFile is $XDG_DATA_HOME/sledge/name (runner.DataFile).
func dataFile(env *Env, name, what, hint string) (string, error) {
	return runner.DataFile(env.Getenv, name, what, hint)
}

func defaultBuildVUs() int { return runner.DefaultBuildVUs() }
