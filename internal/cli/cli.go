// Package cli is sledge's command line: it parses and validates options,
// wires workloads, databases and the engine together, and is the only
// package that prints.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/db"
	_ "github.com/sledge-bench/sledge/internal/db/all" // database drivers
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
  130  interrupted (Ctrl-C, SIGTERM): what was measured until then is printed and saved
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
		fmt.Fprintf(env.Stderr, "sledge: %s\n", oneLine(err.Error()))
	}
	return exitCode(ctx, err)
}

// isUsage recognises cobra's own parse errors, which are not typed.
func isUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag",
		"flag needs an argument", "accepts ", "requires ", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// Version is the module version the Go toolchain stamped into the binary
// (go install …@v1.2.3), else the VCS revision it was built from ("devel
// 1a2b3c4d5e6f", "+modified" with uncommitted changes), else "dev". Jobs
// record it.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, _, modified := vcsInfo(bi)
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified {
		rev += "+modified"
	}
	return "devel " + rev
}

// versionText is what --version prints: the version, the module, the
// revision with its time and whether the tree had uncommitted changes, and
// the Go toolchain.
func versionText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", Version())
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(&b, "module %s %s\n", bi.Main.Path, bi.Main.Version)
		if rev, at, modified := vcsInfo(bi); rev != "" {
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

// vcsInfo reads the revision, its time and the modified flag that the Go
// toolchain stamps into binaries built inside a VCS checkout.
func vcsInfo(bi *debug.BuildInfo) (rev, at string, modified bool) {
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return rev, at, modified
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
	root.AddCommand(newBuild(env), newRun(env), newCheck(env), newDrop(env), newJobs(env), newCompare(env))
	return root
}

// cleanFlagError turns pflag's strconv wording into plain words.
func cleanFlagError(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ": strconv."); i >= 0 {
		msg = msg[:i]
		switch {
		case strings.Contains(err.Error(), "ParseInt"), strings.Contains(err.Error(), "ParseUint"):
			msg += ": want a whole number"
		case strings.Contains(err.Error(), "ParseBool"):
			msg += ": want true or false"
		case strings.Contains(err.Error(), "ParseFloat"):
			msg += ": want a number"
		}
	}
	if strings.Contains(msg, "time: ") {
		if i := strings.Index(msg, ": time: "); i >= 0 {
			msg = msg[:i] + ": want a duration such as 90s, 5m or 1h30m"
		}
	}
	return strings.ReplaceAll(msg, "invalid argument", "invalid value")
}

// common holds the options every command shares.
type common struct {
	dbURL    string
	jsonOut  bool
	seed     uint64
	seedSet  bool
	wlName   string
	wlNew    map[string]func(seed uint64) (workload.Workload, error)
	explicit bool           // the user named the database (flag or SLEDGE_DB)
	job      *runner.JobRun // the job being recorded, nil when none
}

func addCommon(cmd *cobra.Command, c *common, name string, defaultSeed uint64) {
	fs := cmd.Flags()
	fs.StringVar(&c.dbURL, "db", "", "database URL (default: $SLEDGE_DB, else the embedded SQLite file)")
	fs.BoolVar(&c.jsonOut, "json", false, "print the result as one JSON object")
	fs.Uint64Var(&c.seed, "seed", defaultSeed, "random seed")
	c.wlNew = map[string]func(uint64) (workload.Workload, error){}
	for _, n := range workload.Names() {
		m, _ := workload.Lookup(n)
		wfs := pflag.NewFlagSet(n, pflag.ContinueOnError)
		c.wlNew[n] = m.Flags(name, wfs)
		fs.AddFlagSet(wfs)
	}
}

// resolve picks the workload (first argument, default tpcc) and the URL.
func (c *common) resolve(cmd *cobra.Command, args []string, env *Env) (workload.Workload, string, error) {
	c.seedSet = cmd.Flags().Changed("seed")
	// The database may be given as a positional URL, before or after the
	// workload (issue 2's contract): `sledge run postgres://…`.
	if len(args) > 0 {
		var rest []string
		for _, a := range args {
			if !strings.Contains(a, "://") {
				rest = append(rest, a)
				continue
			}
			if c.dbURL != "" {
				return nil, "", usageErr("two databases: --db and %s; give one", db.Redact(a))
			}
			c.dbURL = a
		}
		if len(rest) > 1 {
			return nil, "", usageErr("one workload at a time: %s", strings.Join(rest, " "))
		}
		args = rest
	}
	c.wlName = workload.Default()
	if len(args) > 0 {
		c.wlName = args[0]
	}
	// pgbench -b without -f: the builtin is the tpcb workload.
	if b := cmd.Flags().Lookup("builtin"); b != nil && b.Changed {
		f := cmd.Flags().Lookup("file")
		switch {
		case f != nil && f.Changed:
		case len(args) == 0:
			c.wlName = "tpcb"
		case args[0] != "tpcb":
			return nil, "", usageErr("--builtin (-b) is pgbench's: it applies to tpcb and to script runs (-f), not to %s", args[0])
		}
	}
	dbName := c.wlName
	if f := cmd.Flags().Lookup("file"); f != nil && f.Changed {
		// pgbench -f: users' scripts, usually on pgbench's tables.
		if len(args) > 0 && args[0] != "script" {
			return nil, "", usageErr("-f runs pgbench scripts: leave out the workload %q (mix in builtins with -b NAME)", args[0])
		}
		c.wlName, dbName = "script", "tpcb"
	}
	if c.wlName == "script" && cmd.Name() != "run" {
		return nil, "", usageErr("pgbench scripts have no schema to %s: build, check or drop tpcb (pgbench's tables), or your own", cmd.Name())
	}
	if _, err := workload.Lookup(c.wlName); err != nil {
		return nil, "", usageErr("%v", err)
	}
	w, err := c.wlNew[c.wlName](c.seed)
	if err != nil {
		return nil, "", usageErr("%v", err)
	}
	u := c.dbURL
	if u == "" {
		u = env.Getenv("SLEDGE_DB")
	}
	c.explicit = u != ""
	if !c.explicit {
		path, err := defaultDBPath(env, dbName)
		if err != nil {
			return nil, "", err
		}
		u = "sqlite://" + path
	}
	return w, u, nil
}

// defaultDBPath is $XDG_DATA_HOME/sledge/<workload>.db.
func defaultDBPath(env *Env, wl string) (string, error) {
	return dataFile(env, wl+".db", "the default database", "--db sqlite:///path/to/file.db")
}

// dataFile is $XDG_DATA_HOME/sledge/name, falling back to ~/.local/share as
// the XDG base directory specification says, with the directory created.
// what and hint name the file and the option that avoids it in errors.
func dataFile(env *Env, name, what, hint string) (string, error) {
	dir := env.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home := env.Getenv("HOME")
		if home == "" {
			return "", fmt.Errorf("cannot find a place for %s: HOME is not set; use %s", what, hint)
		}
		dir = filepath.Join(home, ".local", "share")
	}
	dir = filepath.Join(dir, "sledge")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cannot create %s for %s: %v; use %s", dir, what, unwrapPath(err), hint)
	}
	return filepath.Join(dir, name), nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func defaultBuildVUs() int { return runner.DefaultBuildVUs() }
