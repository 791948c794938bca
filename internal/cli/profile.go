package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startCPUProfile profiles the whole command into path (--cpuprofile), so a
// user can see where the client's own time goes; "" does nothing. The
// returned stop flushes and closes the file.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, usageErr("--cpuprofile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
