package sysprobe

import (
	"bytes"
	"strconv"
	"strings"
)

// Parsers of /proc files. Each takes the file's bytes and returns what it
// could read; a missing or malformed field reads as zero (the kernels this
// runs on differ in columns, and a half-read file must not stop a watch).

// userHZ is USER_HZ, the unit of /proc/stat and /proc/PID/stat times: 100
// on every Linux architecture sledge builds for (it is fixed by the ABI,
// not by CONFIG_HZ).
const userHZ = 100

// tickNs converts USER_HZ ticks to nanoseconds.
const tickNs = int64(1e9 / userHZ)

// fields splits b on spaces and tabs without allocating strings.
func fields(b []byte) [][]byte { return bytes.Fields(b) }

// atoi parses a decimal integer, 0 when it is not one.
func atoi(b []byte) int64 {
	var n int64
	neg := false
	for i, c := range b {
		if i == 0 && c == '-' {
			neg = true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

// col is field i of fs, or 0 when there is none.
func col(fs [][]byte, i int) int64 {
	if i < len(fs) {
		return atoi(fs[i])
	}
	return 0
}

// parseCPULine reads the columns after "cpu" or "cpuN".
func parseCPULine(fs [][]byte) CPUTimes {
	return CPUTimes{
		User:    col(fs, 1) * tickNs,
		Nice:    col(fs, 2) * tickNs,
		System:  col(fs, 3) * tickNs,
		Idle:    col(fs, 4) * tickNs,
		IOWait:  col(fs, 5) * tickNs,
		IRQ:     col(fs, 6) * tickNs,
		SoftIRQ: col(fs, 7) * tickNs,
		Steal:   col(fs, 8) * tickNs,
	}
}

// Busy is the non-idle, non-iowait time (guest time is already inside
// user and nice).
func (c CPUTimes) Busy() int64 {
	return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
}

// Total is every column.
func (c CPUTimes) Total() int64 { return c.Busy() + c.Idle + c.IOWait }

func (c CPUTimes) sub(o CPUTimes) CPUTimes {
	return CPUTimes{c.User - o.User, c.Nice - o.Nice, c.System - o.System, c.Idle - o.Idle,
		c.IOWait - o.IOWait, c.IRQ - o.IRQ, c.SoftIRQ - o.SoftIRQ, c.Steal - o.Steal}
}

// parseStat reads /proc/stat into h: cpu lines, ctxt, intr,
// procs_running, procs_blocked.
func parseStat(b []byte, h *Host) {
	h.PerCPU = h.PerCPU[:0]
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		fs := fields(line)
		if len(fs) < 2 {
			continue
		}
		name := fs[0]
		switch {
		case string(name) == "cpu":
			h.CPU = parseCPULine(fs)
		case bytes.HasPrefix(name, []byte("cpu")):
			h.PerCPU = append(h.PerCPU, parseCPULine(fs))
		case string(name) == "ctxt":
			h.ContextSwitch = atoi(fs[1])
		case string(name) == "intr":
			h.Interrupts = atoi(fs[1])
		case string(name) == "procs_running":
			h.ProcsRunning = int(atoi(fs[1]))
		case string(name) == "procs_blocked":
			h.ProcsBlocked = int(atoi(fs[1]))
		}
	}
	h.CPUs = len(h.PerCPU)
}

// parseNetDev reads /proc/net/dev: "iface: rxbytes rxpackets … (8
// receive columns) txbytes txpackets …".
func parseNetDev(b []byte) map[string]NetCounters {
	m := map[string]NetCounters{}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		i := bytes.IndexByte(line, ':')
		if i < 0 {
			continue
		}
		name := strings.TrimSpace(string(line[:i]))
		fs := fields(line[i+1:])
		if name == "" || len(fs) < 10 {
			continue
		}
		m[name] = NetCounters{RxBytes: col(fs, 0), RxPackets: col(fs, 1), TxBytes: col(fs, 8), TxPackets: col(fs, 9)}
	}
	return m
}

// wholeDisk says whether a /proc/diskstats device is a whole disk worth
// reporting: not a partition (sda1, nvme0n1p1, mmcblk0p1), not a loop,
// ram, zram or device-mapper... dm devices are kept (LVM volumes are
// where databases live) but their partitions are not. isPartition comes
// from /sys when readable (see partitionOf), else from the name.
func wholeDisk(name string, isPartition func(string) (bool, bool)) bool {
	for _, p := range []string{"loop", "ram", "zram", "fd", "sr"} {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	if part, ok := isPartition(name); ok {
		return !part
	}
	// Name rules: nvme0n1p1, mmcblk0p1 end in pN after a digit; sda1,
	// vda2, xvda3 end in a digit after a letter.
	last := name[len(name)-1]
	if last < '0' || last > '9' {
		return true
	}
	if strings.HasPrefix(name, "nvme") || strings.HasPrefix(name, "mmcblk") {
		i := strings.LastIndexByte(name, 'p')
		return i < 0 || i == len(name)-1 || !isDigits(name[i+1:])
	}
	if strings.HasPrefix(name, "dm-") || strings.HasPrefix(name, "md") {
		return true
	}
	return false
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// parseDiskstats reads /proc/diskstats: "major minor name reads merged
// sectors ms writes merged sectors ms inflight io_ms …". Sectors are 512
// bytes whatever the device's block size.
func parseDiskstats(b []byte, isPartition func(string) (bool, bool)) map[string]DiskCounters {
	m := map[string]DiskCounters{}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		fs := fields(line)
		if len(fs) < 13 {
			continue
		}
		name := string(fs[2])
		if !wholeDisk(name, isPartition) {
			continue
		}
		m[name] = DiskCounters{
			Reads: col(fs, 3), ReadBytes: col(fs, 5) * 512,
			Writes: col(fs, 7), WrittenBytes: col(fs, 9) * 512,
			IOTimeMs: col(fs, 12),
		}
	}
	return m
}

// parseMeminfo reads MemTotal and MemAvailable (kB) in bytes.
func parseMeminfo(b []byte) (total, avail int64) {
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		fs := fields(line)
		if len(fs) < 2 {
			continue
		}
		switch string(fs[0]) {
		case "MemTotal:":
			total = atoi(fs[1]) * 1024
		case "MemAvailable:":
			avail = atoi(fs[1]) * 1024
		}
	}
	return total, avail
}

// taskStat is what sysprobe reads of /proc/PID[/task/TID]/stat.
type taskStat struct {
	Comm      string
	State     byte
	PPID      int
	Utime     int64 // ticks
	Stime     int64 // ticks
	Starttime int64 // ticks since boot
	Threads   int   // num_threads
	ok        bool
}

// parseTaskStat reads a stat line. comm may hold spaces and parentheses:
// it is everything between the first '(' and the last ')'.
func parseTaskStat(b []byte) taskStat {
	var s taskStat
	open := bytes.IndexByte(b, '(')
	closeP := bytes.LastIndexByte(b, ')')
	if open < 0 || closeP < open {
		return s
	}
	s.Comm = string(b[open+1 : closeP])
	fs := fields(b[closeP+1:])
	// fs[0] is state (field 3); utime is field 14 → fs[11], stime fs[12],
	// num_threads field 20 → fs[17], starttime field 22 → fs[19].
	if len(fs) < 13 {
		return s
	}
	if len(fs[0]) > 0 {
		s.State = fs[0][0]
	}
	s.PPID = int(col(fs, 1))
	s.Utime = col(fs, 11)
	s.Stime = col(fs, 12)
	s.Threads = int(col(fs, 17))
	s.Starttime = col(fs, 19)
	s.ok = true
	return s
}

// parseStatusSwitches reads voluntary_ctxt_switches and
// nonvoluntary_ctxt_switches of a /proc/…/status file.
func parseStatusSwitches(b []byte) (vol, invol int64) {
	const v, nv = "voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"
	if i := bytes.Index(b, []byte("\n"+v)); i >= 0 {
		vol = atoi(bytes.TrimLeft(b[i+1+len(v):], " \t"))
	}
	if i := bytes.Index(b, []byte("\n"+nv)); i >= 0 {
		invol = atoi(bytes.TrimLeft(b[i+1+len(nv):], " \t"))
	}
	return vol, invol
}

// parseSchedstat reads "run_ns run_delay_ns timeslices".
func parseSchedstat(b []byte) (runNs, delayNs, slices int64) {
	fs := fields(b)
	return col(fs, 0), col(fs, 1), col(fs, 2)
}

// procIO is /proc/PID/io's syscall counters.
type procIO struct{ rchar, wchar, syscr, syscw int64 }

func parseIO(b []byte) procIO {
	var io procIO
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		fs := fields(line)
		if len(fs) < 2 {
			continue
		}
		switch string(fs[0]) {
		case "rchar:":
			io.rchar = atoi(fs[1])
		case "wchar:":
			io.wchar = atoi(fs[1])
		case "syscr:":
			io.syscr = atoi(fs[1])
		case "syscw:":
			io.syscw = atoi(fs[1])
		}
	}
	return io
}

// parseListenInodes reads /proc/net/tcp or tcp6 and returns the inodes of
// LISTEN sockets (state 0A) whose local port is port; port 0: every
// listening socket's inode with its port.
func parseListenInodes(b []byte, port int) map[uint64]int {
	m := map[uint64]int{}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		fs := fields(line)
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
		if len(fs) < 10 || string(fs[3]) != "0A" {
			continue
		}
		local := fs[1]
		i := bytes.LastIndexByte(local, ':')
		if i < 0 {
			continue
		}
		p, err := strconv.ParseUint(string(local[i+1:]), 16, 16)
		if err != nil || (port != 0 && int(p) != port) {
			continue
		}
		ino, err := strconv.ParseUint(string(fs[9]), 10, 64)
		if err != nil || ino == 0 {
			continue
		}
		m[ino] = int(p)
	}
	return m
}

// parseUnixListenInodes reads /proc/net/unix: the inodes of the sockets
// accepting connections (Flags with __SO_ACCEPTCON, 0x10000).
func parseUnixListenInodes(b []byte) []uint64 {
	var out []uint64
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		fs := fields(line)
		// Num RefCount Protocol Flags Type St Inode [Path]
		if len(fs) < 7 {
			continue
		}
		flags, err := strconv.ParseUint(string(fs[3]), 16, 32)
		if err != nil || flags&0x10000 == 0 {
			continue
		}
		if ino, err := strconv.ParseUint(string(fs[6]), 10, 64); err == nil && ino != 0 {
			out = append(out, ino)
		}
	}
	return out
}

// socketInode reads a /proc/PID/fd link "socket:[12345]".
func socketInode(link string) (uint64, bool) {
	if !strings.HasPrefix(link, "socket:[") || !strings.HasSuffix(link, "]") {
		return 0, false
	}
	n, err := strconv.ParseUint(link[len("socket:["):len(link)-1], 10, 64)
	return n, err == nil
}

// parseSyscall reads /proc/…/syscall: "running", "-1 sp pc" (in user
// space, not running), or "NR arg1 … sp pc" (blocked in NR). arg1 is
// the first argument (hex). ok false: unreadable.
func parseSyscall(b []byte) (nr int64, arg1 int64, running bool, ok bool) {
	if len(b) == 0 {
		return 0, 0, false, false
	}
	if b[0] == 'r' {
		return 0, 0, true, true
	}
	i := 0
	for i < len(b) && b[i] != ' ' && b[i] != '\n' {
		i++
	}
	nr = atoi(b[:i])
	if nr < 0 || i >= len(b)-1 {
		return nr, 0, false, true
	}
	j := i + 1
	if j+2 <= len(b) && b[j] == '0' && b[j+1] == 'x' {
		j += 2
	}
	for ; j < len(b); j++ {
		c := b[j]
		var d int64
		switch {
		case c >= '0' && c <= '9':
			d = int64(c - '0')
		case c >= 'a' && c <= 'f':
			d = int64(c-'a') + 10
		default:
			return nr, arg1, false, true
		}
		arg1 = arg1<<4 | d
	}
	return nr, arg1, false, true
}
