package testdb

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Delivered waits until process pid has no sig pending (/proc's ShdPnd),
// so that the next copy sent is a signal of its own: the kernel merges a
// copy sent while one is pending into it. It gives up when pid is gone, or
// after 10 s.
func Delivered(pid int, sig syscall.Signal) {
	bit := uint64(1) << (sig - 1)
	for range 10000 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return
		}
		_, rest, _ := strings.Cut(string(b), "\nShdPnd:")
		pending, err := strconv.ParseUint(strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]), 16, 64)
		if err != nil || pending&bit == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
