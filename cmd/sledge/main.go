// Command sledge is a database benchmarking tool: it builds a benchmark
// schema, drives it with virtual users, and reports what it measured.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/sledge-bench/sledge/internal/cli"
)

func main() {
	// The first Ctrl-C or SIGTERM cancels ctx: runs stop starting new
	// transactions and print what they measured. A second one kills.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() { <-ctx.Done(); stop() }()
	env := cli.Env{
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		Getenv:     os.Getenv,
		IsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
	}
	os.Exit(cli.Main(ctx, os.Args[1:], env))
}
