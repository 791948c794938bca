package jobs

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Host is the machine a job ran on: what a result depends on besides the
// database.
type Host struct {
	Hostname    string `json:"hostname,omitempty"`
	CPUModel    string `json:"cpu_model,omitempty"`
	CPUs        int    `json:"cpus"`                   // logical CPUs sledge may use
	MemoryBytes int64  `json:"memory_bytes,omitempty"` // MemTotal
	OS          string `json:"os"`                     // e.g. "Debian GNU/Linux 13 (trixie)"
	Kernel      string `json:"kernel,omitempty"`       // e.g. "6.12.48+deb13-amd64"
	Arch        string `json:"arch"`
	GoVersion   string `json:"go_version"`
}

// ThisHost reads the facts of the machine sledge runs on. Facts it cannot
// read (another OS, a container hiding /proc) are left empty.
func ThisHost() Host {
	h := Host{CPUs: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, GoVersion: runtime.Version()}
	h.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		h.CPUModel = field(b, ':', "model name", "Model", "cpu model", "Hardware")
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		// "MemTotal:       32795492 kB"
		if v := strings.Fields(field(b, ':', "MemTotal")); len(v) >= 1 {
			if kb, err := strconv.ParseInt(v[0], 10, 64); err == nil {
				h.MemoryBytes = kb * 1024
			}
		}
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		if v := strings.Trim(field(b, '=', "PRETTY_NAME"), `"'`); v != "" {
			h.OS = v
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	return h
}

// field returns the value of the first line "key<sep>value" whose key is
// one of keys, trimmed.
func field(b []byte, sep byte, keys ...string) string {
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
