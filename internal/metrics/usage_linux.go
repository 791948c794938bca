package metrics

import "syscall"

const (
	threadUsage  = true
	rusageThread = syscall.RUSAGE_THREAD
)
