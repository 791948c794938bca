//go:build unix && !linux

package metrics

// No RUSAGE_THREAD here: per-type CPU and switches are not measured.
const (
	threadUsage  = false
	rusageThread = 0
)
