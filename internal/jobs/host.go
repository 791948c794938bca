package jobs

import (
	"os"
	"runtime"
	"strings"

	"github.com/sledge-bench/sledge/internal/sysprobe"
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
	m := sysprobe.Machine("/proc")
	h.CPUModel, h.MemoryBytes, h.Kernel = m.CPUModel, m.MemoryBytes, m.Kernel
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		if v := strings.Trim(sysprobe.KeyValue(b, '=', "PRETTY_NAME"), `"'`); v != "" {
			h.OS = v
		}
	}
	return h
}
