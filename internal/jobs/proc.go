package jobs

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"syscall"

	"github.com/sledge-bench/sledge/internal/sysprobe"
)

// selfProcess returns this process's id and identity: the boot id and the
// process's start time in clock ticks since boot (field 22 of
// /proc/<pid>/stat), which together tell this process from a later one that
// reuses its pid.
func selfProcess() (int, string) {
	pid := os.Getpid()
	return pid, procIdentity(pid)
}

func procIdentity(pid int) string {
	boot := sysprobe.BootID("/proc")
	if boot == "" {
		return ""
	}
	start, err := sysprobe.ProcStartTicks("/proc", pid)
	if err != nil {
		return ""
	}
	return boot + "/" + strconv.FormatInt(start, 10)
}

// alive reports whether the process that wrote a running job is still the
// same process, working on it. A job from another host cannot be checked
// and is taken as alive.
func alive(pid int, identity, hostname string) bool {
	if me, _ := os.Hostname(); hostname != "" && me != "" && hostname != me {
		return true
	}
	if identity != "" {
		now := procIdentity(pid)
		if now != "" || procAvailable() {
			return now == identity // gone, reused pid, or a reboot since
		}
	}
	// No /proc: fall back to asking whether some process has that pid.
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EPERM)
}

func procAvailable() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// ErrNotHere means a job's process cannot be reached from this process:
// it ended, its pid now belongs to another process, or it runs on
// another host.
var ErrNotHere = errors.New("the job's process is not running on this host")

// Process returns the live process that is running job j, for the
// service's stop to signal it. It refuses unless the process is provably
// the one that recorded the job (same host, same pid and start time in
// this boot): a signal must never reach a process that reused the pid.
func (j *Job) Process() (*os.Process, error) {
	if me, _ := os.Hostname(); j.Host.Hostname != "" && j.Host.Hostname != me {
		return nil, ErrNotHere
	}
	if j.PID <= 0 || j.procStart == "" || procIdentity(j.PID) != j.procStart {
		return nil, ErrNotHere
	}
	return os.FindProcess(j.PID)
}
