package sysprobe

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// procFS reads one /proc tree (Options.ProcRoot, "/proc" by default).
type procFS struct{ root string }

func (p procFS) path(parts ...string) string {
	return filepath.Join(append([]string{p.root}, parts...)...)
}

func (p procFS) read(parts ...string) ([]byte, error) { return os.ReadFile(p.path(parts...)) }

// pids lists the numeric entries of /proc.
func (p procFS) pids() ([]int, error) {
	d, err := os.Open(p.root)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	sort.Ints(out)
	return out, nil
}

// tids lists a process's threads.
func (p procFS) tids(pid int) ([]int, error) {
	d, err := os.Open(p.path(strconv.Itoa(pid), "task"))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(names))
	for _, n := range names {
		if tid, err := strconv.Atoi(n); err == nil {
			out = append(out, tid)
		}
	}
	sort.Ints(out)
	return out, nil
}

// children lists a process's children from /proc/PID/task/*/children
// (CONFIG_PROC_CHILDREN; every thread's, since a child's parent is the
// thread that forked it). allThreads false reads only the main thread's
// when the process has more than fewThreads threads (servers with many
// threads fork from their main thread, if at all). ok false: the file does
// not exist here, and the caller scans /proc instead.
func (p procFS) children(pid int, allThreads bool) (kids []int, ok bool) {
	tids, err := p.tids(pid)
	if err != nil {
		return nil, true // the process ended: no children
	}
	if !allThreads && len(tids) > fewThreads {
		tids = []int{pid}
	}
	for _, tid := range tids {
		b, err := p.read(strconv.Itoa(pid), "task", strconv.Itoa(tid), "children")
		if err != nil {
			if os.IsNotExist(err) && tid == pid {
				if _, serr := os.Stat(p.path(strconv.Itoa(pid))); serr == nil {
					return nil, false
				}
			}
			continue
		}
		for _, f := range bytes.Fields(b) {
			if k, err := strconv.Atoi(string(f)); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids, true
}

// fewThreads: a process with at most this many threads has the children
// of every thread listed every second.
const fewThreads = 64

// tree returns roots and every process whose parent chain reaches one of
// them, sorted. allThreads: children of every thread, else, in processes
// with more than fewThreads threads, of the main thread only.
func (p procFS) tree(roots []int, allThreads bool) []int {
	seen := map[int]bool{}
	queue := append([]int(nil), roots...)
	var parents map[int][]int // built once when children files are missing
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		kids, ok := p.children(pid, allThreads)
		if !ok {
			if parents == nil {
				parents = p.parentMap()
			}
			kids = parents[pid]
		}
		queue = append(queue, kids...)
	}
	out := make([]int, 0, len(seen))
	for pid := range seen {
		out = append(out, pid)
	}
	sort.Ints(out)
	return out
}

// parentMap maps every process to its children by reading each
// /proc/PID/stat: the fallback where /proc/PID/task/TID/children is not
// compiled in.
func (p procFS) parentMap() map[int][]int {
	m := map[int][]int{}
	pids, _ := p.pids()
	for _, pid := range pids {
		b, err := p.read(strconv.Itoa(pid), "stat")
		if err != nil {
			continue
		}
		if st := parseTaskStat(b); st.ok {
			m[st.PPID] = append(m[st.PPID], pid)
		}
	}
	return m
}

// listeners returns the pids holding a LISTEN socket on port (port 0:
// any), with the ports each listens on.
func (p procFS) listeners(port int) (map[int][]int, error) {
	inodes := map[uint64]int{}
	var firstErr error
	for _, f := range []string{"tcp", "tcp6"} {
		b, err := p.read("net", f)
		if err != nil {
			if firstErr == nil && !os.IsNotExist(err) {
				firstErr = err
			}
			continue
		}
		for ino, pt := range parseListenInodes(b, port) {
			inodes[ino] = pt
		}
	}
	if len(inodes) == 0 {
		return nil, firstErr
	}
	pids, err := p.pids()
	if err != nil {
		return nil, err
	}
	out := map[int][]int{}
	for _, pid := range pids {
		for _, pt := range p.socketPorts(pid, inodes) {
			out[pid] = appendUnique(out[pid], pt)
		}
	}
	return out, nil
}

// socketPorts returns the ports of the sockets in inodes that pid holds.
func (p procFS) socketPorts(pid int, inodes map[uint64]int) []int {
	dir := p.path(strconv.Itoa(pid), "fd")
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	var ports []int
	for _, n := range names {
		link, err := os.Readlink(dir + "/" + n)
		if err != nil {
			continue
		}
		if ino, ok := socketInode(link); ok {
			if pt, ok := inodes[ino]; ok {
				ports = appendUnique(ports, pt)
			}
		}
	}
	return ports
}

func appendUnique(s []int, v int) []int {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// comm is ProcComm, "" when it cannot be read.
func (p procFS) comm(pid int) string {
	c, _ := ProcComm(p.root, pid)
	return c
}

// findRoots resolves a target to its root processes (their children are
// added by tree) and the ports they listen on.
func (p procFS) findRoots(t Target) (roots []int, ports []int, err error) {
	switch {
	case t.Port != 0:
		if t.Port < 0 || t.Port > 65535 {
			return nil, nil, fmt.Errorf("%w: port %d is not a TCP port", ErrNotFound, t.Port)
		}
		ls, err := p.listeners(t.Port)
		if err != nil {
			return nil, nil, fmt.Errorf("find the process listening on port %d: %w", t.Port, err)
		}
		for pid := range ls {
			roots = append(roots, pid)
		}
		if len(roots) == 0 {
			return nil, nil, fmt.Errorf("%w: no process listens on TCP port %d (%s/net/tcp, tcp6)", ErrNotFound, t.Port, p.root)
		}
		// A forking server's children inherit the listening socket
		// (PostgreSQL's postmaster, and its backends): keep only the
		// processes whose parent is not also a listener.
		roots = topmost(p, roots)
		ports = []int{t.Port}
	case t.PID != 0:
		if _, err := os.Stat(p.path(strconv.Itoa(t.PID))); err != nil {
			return nil, nil, fmt.Errorf("%w: no process with pid %d", ErrNotFound, t.PID)
		}
		roots = []int{t.PID}
	case t.Process != "":
		pids, err := p.pids()
		if err != nil {
			return nil, nil, fmt.Errorf("list processes: %w", err)
		}
		for _, pid := range pids {
			if p.comm(pid) == t.Process {
				roots = append(roots, pid)
			}
		}
		if len(roots) == 0 {
			return nil, nil, fmt.Errorf("%w: no process named %q (%s/PID/comm)", ErrNotFound, t.Process, p.root)
		}
		roots = topmost(p, roots)
	default:
		return nil, nil, nil
	}
	sort.Ints(roots)
	if t.Port == 0 {
		// Watched by pid or name: the TCP ports its processes listen on.
		ls, _ := p.listeners(0)
		in := map[int]bool{}
		for _, pid := range p.tree(roots, true) {
			in[pid] = true
		}
		for pid, pts := range ls {
			if in[pid] {
				for _, pt := range pts {
					ports = appendUnique(ports, pt)
				}
			}
		}
		sort.Ints(ports)
	}
	return roots, ports, nil
}

// topmost drops the pids whose parent chain reaches another pid of the
// list: they are in the tree anyway.
func topmost(p procFS, pids []int) []int {
	set := map[int]bool{}
	for _, pid := range pids {
		set[pid] = true
	}
	var out []int
	for _, pid := range pids {
		covered := false
		cur := pid
		for i := 0; i < 64 && cur > 1; i++ {
			b, err := p.read(strconv.Itoa(cur), "stat")
			if err != nil {
				break
			}
			st := parseTaskStat(b)
			if !st.ok {
				break
			}
			cur = st.PPID
			if set[cur] {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, pid)
		}
	}
	return out
}
