package sysprobe

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Small facts about processes and this machine from /proc, for the rest
// of sledge (the job store's process identity, the host a job ran on, the
// locality of a database server): read here so that sledge has one /proc
// reader. procRoot is "/proc" outside tests.

// ProcComm is a process's name (/proc/PID/comm without its newline: a
// name may end in a space).
func ProcComm(procRoot string, pid int) (string, error) {
	b, err := procFS{procRoot}.read(strconv.Itoa(pid), "comm")
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(b), "\n"), nil
}

func procStat(procRoot string, pid int) (taskStat, error) {
	b, err := procFS{procRoot}.read(strconv.Itoa(pid), "stat")
	if err != nil {
		return taskStat{}, err
	}
	st := parseTaskStat(b)
	if !st.ok {
		return st, fmt.Errorf("%s/%d/stat: malformed", procRoot, pid)
	}
	return st, nil
}

// ProcStartTicks is when a process started, in clock ticks since boot
// (/proc/PID/stat field 22): with the boot id, it tells a process from a
// later one that reuses its pid.
func ProcStartTicks(procRoot string, pid int) (int64, error) {
	st, err := procStat(procRoot, pid)
	return st.Starttime, err
}

// ProcParent is a process's parent (/proc/PID/stat field 4).
func ProcParent(procRoot string, pid int) (int, error) {
	st, err := procStat(procRoot, pid)
	return st.PPID, err
}

// BootID is this boot's id (/proc/sys/kernel/random/boot_id), "" where
// it cannot be read.
func BootID(procRoot string) string {
	b, err := procFS{procRoot}.read("sys", "kernel", "random", "boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// MachineFacts are what a job records of the machine it ran on: "" and 0
// where /proc does not say.
type MachineFacts struct {
	CPUModel    string
	MemoryBytes int64
	Kernel      string
}

// Machine reads the CPU model (/proc/cpuinfo), the memory
// (/proc/meminfo MemTotal) and the kernel release.
func Machine(procRoot string) MachineFacts {
	var m MachineFacts
	p := procFS{procRoot}
	if b, err := p.read("cpuinfo"); err == nil {
		m.CPUModel = KeyValue(b, ':', "model name", "Model", "cpu model", "Hardware")
	}
	if b, err := p.read("meminfo"); err == nil {
		m.MemoryBytes, _ = parseMeminfo(b)
	}
	if b, err := p.read("sys", "kernel", "osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// KeyValue returns the value of the first line "key<sep>value" whose key
// is one of keys (tried in order), trimmed.
func KeyValue(b []byte, sep byte, keys ...string) string {
	for _, k := range keys {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			line := sc.Text()
			i := strings.IndexByte(line, sep)
			if i < 0 || strings.TrimSpace(line[:i]) != k {
				continue
			}
			return strings.TrimSpace(line[i+1:])
		}
	}
	return ""
}
