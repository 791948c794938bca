//go:build unix

package metrics

import (
	"fmt"
	"syscall"
	"time"
)

const rusageSelf = syscall.RUSAGE_SELF

func rusage(who int) (Usage, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return Usage{}, fmt.Errorf("getrusage: %w", err)
	}
	tv := func(t syscall.Timeval) time.Duration {
		return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
	}
	return Usage{CPU: tv(ru.Utime) + tv(ru.Stime), Switches: int64(ru.Nvcsw) + int64(ru.Nivcsw)}, nil
}
