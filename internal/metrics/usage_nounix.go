//go:build !unix

package metrics

import "errors"

const (
	threadUsage  = false
	rusageSelf   = 0
	rusageThread = 0
)

func rusage(int) (Usage, error) {
	return Usage{}, errors.New("getrusage: not available on this system")
}
