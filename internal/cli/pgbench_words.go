package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/sledge-bench/sledge/internal/db/postgres"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/script"
)

// pgbPrefix starts sledge pgbench's messages where pgbench's start with
// "pgbench: ": the program is sledge's, the words after it pgbench's.
const pgbPrefix = "sledge pgbench: "

// pgbTryErrors says what pgbench 15 says, on stderr, of an error that
// ends a client's try: for an error pgbench aborts the client at (any
// but a serialization failure or a deadlock), its error lines ("client 0
// script 0 aborted in command 1 query 0: ERROR:  …" with the server's
// DETAIL, HINT and CONTEXT lines, or for a meta-command the reason and
// "client 0 aborted in command 1 (set) of script 0; evaluation of
// meta-command failed"), commands numbered from 0 as pgbench's messages
// number them. Serialization failures and deadlocks are said only with
// --verbose-errors: "client 0 got an error in command 3 (SQL) of script
// 0; ERROR:  …" and whether the transaction is tried again, with the try
// and the tries allowed (maxTries; 0: unlimited) and, with a latency
// limit, the share of it used. sledge's client goes on after an error
// pgbench aborts it at (docs/pgbench.md). Lines of concurrent clients do
// not mix.
func pgbTryErrors(w io.Writer, verbose bool, maxTries int, limit time.Duration) func(engine.TryError) {
	var mu sync.Mutex
	server := func(err error, sql string) (string, bool) { return postgres.LibpqMessage(err, sql) }
	return func(e engine.TryError) {
		var b strings.Builder
		f, isScript := script.AsFailure(e.Err)
		switch {
		case errors.Is(e.Err, workload.ErrRetry):
			if !verbose {
				return
			}
			msg, ok := server(e.Err, "")
			where, inner := fmt.Sprintf("script %d", e.Kind), e.Err
			if isScript {
				msg, ok = server(e.Err, f.SQL)
				where, inner = fmt.Sprintf("command %d (SQL) of script %d", f.Command, f.Script), f.Err
			}
			if !ok {
				msg = inner.Error()
			}
			fmt.Fprintf(&b, "%sclient %d got an error in %s; %s\n", pgbPrefix, e.VU, where, msg)
			what := "ends the failed transaction"
			if e.Retry {
				what = "repeats the transaction after the error"
			}
			tries := ""
			if maxTries > 0 {
				tries = fmt.Sprintf("/%d", maxTries)
			}
			if limit > 0 {
				tries += fmt.Sprintf(", %.3f%% of the maximum time of tries was used", 100*float64(e.Elapsed)/float64(limit))
			}
			fmt.Fprintf(&b, "%sclient %d %s (try %d%s)\n", pgbPrefix, e.VU, what, e.Try, tries)
		case isScript:
			for _, l := range f.Lines(e.VU, server) {
				fmt.Fprintf(&b, "%serror: %s\n", pgbPrefix, l)
			}
		case strings.HasPrefix(e.Err.Error(), "connect: "):
			// -C: a connection before a transaction failed.
			fmt.Fprintf(&b, "%serror: %s\n%serror: client %d aborted while establishing connection\n",
				pgbPrefix, strings.TrimPrefix(e.Err.Error(), "connect: "), pgbPrefix, e.VU)
		default:
			fmt.Fprintf(&b, "%serror: client %d aborted in script %d: %s\n", pgbPrefix, e.VU, e.Kind, e.Err)
		}
		mu.Lock()
		defer mu.Unlock()
		_, _ = io.WriteString(w, b.String())
	}
}

// pgbSeed is pgbench's "setting random seed to N" (on stderr, as the
// option is read): for --random-seed, else PGBENCH_RANDOM_SEED, which
// pgbench reads first. c.seed becomes the number, so that "time" and
// "rand" run with the seed said. False: PGBENCH_RANDOM_SEED is not a
// seed (pgbench's error, exit 1).
func pgbSeed(env *Env, c *pgbConfig) bool {
	seed := c.seed
	if seed == "" {
		if seed = env.Getenv("PGBENCH_RANDOM_SEED"); seed == "" {
			return true
		}
		if _, err := runner.ParseRandomSeed(seed); err != nil {
			fmt.Fprintf(env.Stderr, "%serror: unrecognized random seed option \"%s\"\n%sdetail: Expecting an unsigned integer, \"time\" or \"rand\".\n%serror: error while setting random seed from PGBENCH_RANDOM_SEED environment variable\n",
				pgbPrefix, seed, pgbPrefix, pgbPrefix)
			return false
		}
	}
	n, err := runner.ParseRandomSeed(seed) // readPgbench checked --random-seed
	if err != nil {
		return true
	}
	fmt.Fprintf(env.Stderr, "%ssetting random seed to %d\n", pgbPrefix, n)
	c.seed = fmt.Sprint(n)
	return true
}

// pgbSetup is pgbench's setup connection before a run, on PostgreSQL
// (postgres.PgbenchSetup): connect, count pgbench_branches for a builtin,
// vacuum unless -n, in pgbench's words on stderr. It returns pgbench's
// status when the run must not go on (1; 130 when interrupted), else -1.
// Other databases have no setup: the run says what fails.
func pgbSetup(cmd *cobra.Command, env *Env, c *pgbConfig, url string, bad func(error) int) int {
	if !pgbPostgres(url) {
		return -1
	}
	ctx := cmd.Context()
	d, err := runner.OpenDB(ctx, url)
	if err != nil {
		return bad(err)
	}
	defer d.Close()
	pd, ok := d.(*postgres.DB)
	if !ok {
		return -1
	}
	builtin := false
	for _, s := range c.scripts {
		builtin = builtin || s.builtin
	}
	if pd.PgbenchSetup(ctx, postgres.PgbenchSetup{Builtin: builtin, ScaleGiven: c.scaleSet, Vacuum: !c.noVacuum,
		Accounts: c.vacuumAll, Prefix: pgbPrefix}, env.Stderr) {
		return -1
	}
	if ctx.Err() != nil {
		fmt.Fprintln(env.Stderr, "sledge pgbench: interrupted")
		return ExitInterrupted
	}
	return pgbExitBad
}
