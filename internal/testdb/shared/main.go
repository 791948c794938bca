// Command shared runs a command (make test's unit groups) with one private
// PostgreSQL and one private MariaDB for all of it, named in the
// environment (testdb.SharedPostgresEnv, testdb.SharedMariaDBEnv) for
// testdb.LazyPostgres and testdb.LazyMariaDB. The servers are stopped and
// their directories removed when the command ends, fails or is
// interrupted. A server that cannot start is left out: the tests start
// their own, as under plain go test.
//
//	go run ./internal/testdb/shared -- go test ./...
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/sledge-bench/sledge/internal/testdb"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: shared -- command [args...]")
		os.Exit(2)
	}
	os.Exit(run(args))
}

func run(args []string) int {
	// Signals are for the command: it is told, it ends, then the servers
	// stop. A terminal's Ctrl-C reaches the whole group anyway.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	var (
		wg      sync.WaitGroup
		servers [2]*testdb.Server
	)
	// More connections than a test package's own server: every package
	// and shard of the run connects to it at once.
	starts := [2]func(context.Context) (*testdb.Server, error){
		func(ctx context.Context) (*testdb.Server, error) {
			return testdb.StartPostgresWith(ctx, "max_connections=400")
		},
		testdb.StartMariaDB,
	}
	envs := [2]string{testdb.SharedPostgresEnv, testdb.SharedMariaDBEnv}
	for i, start := range starts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := start(ctx)
			if err != nil {
				if !errors.Is(err, testdb.ErrUnavailable) {
					fmt.Fprintf(os.Stderr, "shared test server: %v (tests start their own)\n", err)
				}
				return
			}
			servers[i] = s
		}()
	}
	wg.Wait()
	cancel()
	defer func() {
		for _, s := range servers {
			if err := s.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "stop shared %s: %v\n", s.Kind, err)
			}
		}
	}()

	select {
	case <-sigs: // interrupted while the servers started
		return 130
	default:
	}
	env := os.Environ()
	for i, s := range servers {
		if s == nil {
			continue
		}
		v, err := testdb.SharedEnv(s)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		env = append(env, envs[i]+"="+v)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "shared: %v\n", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case sig := <-sigs:
			_ = cmd.Process.Signal(sig)
		case err := <-done:
			var exit *exec.ExitError
			switch {
			case err == nil:
				return 0
			case errors.As(err, &exit) && exit.ExitCode() > 0:
				return exit.ExitCode()
			case errors.As(err, &exit):
				// Ended by a signal: the shell's 128+n.
				if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					return 128 + int(ws.Signal())
				}
				return 1
			default:
				fmt.Fprintf(os.Stderr, "shared: %v\n", err)
				return 1
			}
		}
	}
}
