//go:build !linux

package evloop

import (
	"context"
	"errors"
	"time"
)

// Loop is an event loop; there is none outside Linux (New fails), and a
// nil loop's waits block their thread.
type Loop struct{}

// New fails: the loop needs epoll or io_uring.
func New(raw bool, kind WaitKind) (*Loop, error) {
	return nil, errors.New("event loop: only on Linux (use io=blocking)")
}

func (l *Loop) Close()       {}
func (l *Loop) Go(fn func()) {}
func (l *Loop) Run()         {}
func (l *Loop) Poke()        {}

func (l *Loop) WaitKind() WaitKind { return WaitEpoll }
func (l *Loop) Fallback() string   { return "" }

// FD is a non-blocking descriptor a loop waits for.
type FD struct{ Sysfd int }

func (f *FD) Forget() {}

// RefuseIOUring does nothing: there is no io_uring outside Linux.
func RefuseIOUring(on bool) {}

func (l *Loop) Wait(f *FD, deadline time.Time) error { return ErrNotOnLoop }

func (l *Loop) Sleep(ctx context.Context, d time.Duration) bool { return sleepAlone(ctx, d) }

func (l *Loop) WaitFor(ctx context.Context, cond func() bool) bool { return pollAlone(ctx, cond) }
