// Package child holds what the benchmark tools (soak, manyvus) need to
// watch the sledge process they start: its memory and threads from /proc,
// its -P progress and GODEBUG=gctrace lines, and how to print its command.
package child

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Status is what /proc/<pid>/status says of a process's memory and threads.
type Status struct {
	RSSKB, HWMKB, Threads int64 // VmRSS, VmHWM (KB), Threads
}

// ProcStatus reads pid's Status.
func ProcStatus(pid int) (Status, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Status{}, err
	}
	var s Status
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			s.RSSKB, found = n, true
		case "VmHWM":
			s.HWMKB = n
		case "Threads":
			s.Threads = n
		}
	}
	if !found {
		return Status{}, errors.New("no VmRSS (a zombie?)")
	}
	return s, nil
}

// ProgressTPS returns the rate of a -P line ("progress: 5.0 s, 1234.5 tps, …").
func ProgressTPS(line string) (string, bool) {
	if !strings.HasPrefix(line, "progress: ") {
		return "", false
	}
	parts := strings.Split(line, ", ")
	if len(parts) < 2 {
		return "", false
	}
	return strings.TrimSpace(parts[1]), true
}

// GCLive returns the live heap in MB of a GODEBUG=gctrace=1 line
// ("gc 12 @3.4s 2%: …, 4->5->3 MB, 6 MB goal, …"): the third figure.
func GCLive(line string) (int64, bool) {
	if !strings.HasPrefix(line, "gc ") {
		return 0, false
	}
	for _, part := range strings.Split(line, ", ") {
		if f, ok := strings.CutSuffix(part, " MB"); ok && strings.Count(f, "->") == 2 {
			n, err := strconv.ParseInt(f[strings.LastIndex(f, ">")+1:], 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// Clock prints d as m:ss.
func Clock(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

// RedactArgs returns args with password replaced, for printing a command.
func RedactArgs(args []string, password string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, password, "REDACTED")
	}
	return out
}

// ModuleRoot is the directory of go.mod, so that a tool works from any
// directory of the checkout.
func ModuleRoot() string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "."
	}
	if p := strings.TrimSpace(string(out)); p != "" && p != os.DevNull {
		return filepath.Dir(p)
	}
	return "."
}

// BuildSledge builds ./cmd/sledge into bin, from the module root.
func BuildSledge(bin string) error {
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/sledge")
	cmd.Dir = ModuleRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	return nil
}

// TempSledge builds sledge into a new temporary directory named after
// prefix: the binary's path, and the directory, which the caller removes.
func TempSledge(prefix string) (bin, dir string, err error) {
	if dir, err = os.MkdirTemp("", prefix); err != nil {
		return "", "", err
	}
	bin = filepath.Join(dir, "sledge")
	if err := BuildSledge(bin); err != nil {
		os.RemoveAll(dir)
		return "", "", err
	}
	return bin, dir, nil
}

// Pgbench is the path of the pgbench the tools measure against.
func Pgbench() (string, error) {
	p, err := exec.LookPath("pgbench")
	if err != nil {
		return "", fmt.Errorf("pgbench not found: install postgresql-contrib (scripts/install-servers.sh)")
	}
	return p, nil
}

// ClockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on
// every Linux architecture Go runs on.
const ClockTicks = 100

// ProcTicks is utime+stime of /proc/<pid>/stat, in clock ticks.
func ProcTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: count after its ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("bad /proc stat")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("bad /proc stat times")
	}
	return u + st, nil
}

// CPUUs is a finished process's user + system CPU time in microseconds,
// as the kernel reports it to the parent.
func CPUUs(ps *os.ProcessState) float64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec)*1e6 + float64(t.Usec) }
	return tv(ru.Utime) + tv(ru.Stime)
}

// Median is the median of f over the samples (the upper one of an even
// count); 0 for none.
func Median[S any](s []S, f func(S) float64) float64 {
	v := make([]float64, len(s))
	for i := range s {
		v[i] = f(s[i])
	}
	sort.Float64s(v)
	if len(v) == 0 {
		return 0
	}
	return v[len(v)/2]
}

// RoundOrder is the order n tools run in round r (1-based): rotated by the
// round and reversed every other round, so that no tool always runs first
// (the colder cache) or last.
func RoundOrder(n, r int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = (i + r - 1) % n
	}
	if r%2 == 0 {
		slices.Reverse(order)
	}
	return order
}
