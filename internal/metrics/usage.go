package metrics

import "time"

// Usage is CPU time (user + system) and context switches (voluntary +
// involuntary), from getrusage.
type Usage struct {
	CPU      time.Duration
	Switches int64
}

// Sub is u − o.
func (u Usage) Sub(o Usage) Usage {
	return Usage{CPU: u.CPU - o.CPU, Switches: u.Switches - o.Switches}
}

// Add is u + o.
func (u Usage) Add(o Usage) Usage {
	return Usage{CPU: u.CPU + o.CPU, Switches: u.Switches + o.Switches}
}

// ProcessUsage is the whole process's usage so far: every thread, the Go
// runtime's (garbage collector, network poller) included.
func ProcessUsage() (Usage, error) { return rusage(rusageSelf) }

// ThreadUsage is the calling OS thread's usage so far; ok is false where
// the system cannot tell (only Linux has RUSAGE_THREAD). The caller must
// hold its thread (runtime.LockOSThread) for the figures to mean anything.
func ThreadUsage() (u Usage, ok bool) {
	if !threadUsage {
		return Usage{}, false
	}
	u, err := rusage(rusageThread)
	return u, err == nil
}
