package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/sledge-bench/sledge/internal/db"
)

// Exit statuses (the command line's exitCodesHelp; docs/contracts.md).
const (
	ExitOK      = 0
	ExitFailure = 1 // the command ran and failed (a check failed, the database refused…)
	ExitUsage   = 2 // bad input on the command line
	// ExitFailedTx: a run (or a compare's cell) measured to its end, but
	// transactions failed with errors that were not retried; the result is
	// printed and saved all the same. pgbench exits 2 for this; 2 is bad
	// input here.
	ExitFailedTx = 3
	ExitInternal = 70 // a bug in sledge (EX_SOFTWARE): one line, never a stack trace
	// ExitThreshold: the run measured to its end and its result is printed
	// and saved, but a --threshold was not met (k6's code for the same).
	ExitThreshold   = 99
	ExitInterrupted = 130 // stopped by Ctrl-C or SIGTERM, like a shell reports SIGINT; wins over 3
)

// ExitError carries an exit status with its one-line message.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Usagef is bad input (exit 2), with its message.
func Usagef(format string, a ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, a...)}
}

// Silent ends a command with a status after it has printed its result.
type Silent struct{ Code int }

func (e Silent) Error() string { return fmt.Sprintf("exit %d", e.Code) }

// ExitCode is the status the command line gives err. isUsage, when given,
// recognises bad input that carries no type (the command-line parser's
// own errors).
func ExitCode(ctx context.Context, err error, isUsage ...func(error) bool) int {
	var silent Silent
	var ee *ExitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &silent):
		return silent.Code
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, new(*db.URLError)):
		return ExitUsage
	}
	for _, u := range isUsage {
		if u != nil && u(err) {
			return ExitUsage
		}
	}
	if ctx.Err() != nil {
		return ExitInterrupted
	}
	return ExitFailure
}
