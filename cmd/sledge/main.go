// Command sledge is a database benchmarking tool: it builds a benchmark
// schema, drives it with virtual users, and reports what it measured.
package main

import (
	"context"
	"os"
	"runtime/pprof"

	"golang.org/x/term"

	"github.com/sledge-bench/sledge/internal/cli"
	_ "github.com/sledge-bench/sledge/internal/db/all" // every database this binary knows
	"github.com/sledge-bench/sledge/internal/interrupt"
)

func main() {
	// Ctrl-C and SIGTERM are caught for the whole life of the process: the
	// first cancels ctx (runs stop measuring, print and save what they
	// measured), a second is absorbed, a third stops without waiting for
	// transactions in flight (internal/interrupt). None kills outright.
	ctx := interrupt.Catch(os.Stderr, nil)
	env := cli.Env{
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		Getenv:     os.Getenv,
		IsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
	}
	os.Exit(run(ctx, env))
}

// run is main without os.Exit, so a CPU profile asked for with
// SLEDGE_CPUPROFILE=file (for sledge's developers) is written out.
func run(ctx context.Context, env cli.Env) int {
	if path := os.Getenv("SLEDGE_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			defer f.Close() // after StopCPUProfile has flushed into it
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	return cli.Main(ctx, os.Args[1:], env)
}
