package testdb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Faults for reliability tests (docs/reliability.md). They act on this
// server's own processes only: other test packages run private servers of
// their own at the same time, and those are never touched.

// Restart stops the server and starts it again at once on the same data
// directory, port and socket, and returns once it accepts connections.
// Every open connection is lost (PostgreSQL: a fast shutdown, which
// terminates the sessions with SQLSTATE 57P01; MariaDB: a clean shutdown
// by SIGTERM). A paused server is resumed first.
func (s *Server) Restart(ctx context.Context) error { return s.RestartAfter(ctx, 0) }

// RestartAfter is Restart with the server down for d between the stop and
// the start, as a real restart often is: connections are refused then.
func (s *Server) RestartAfter(ctx context.Context, d time.Duration) error {
	if s == nil || s.restart == nil {
		return errors.New("testdb: restart: the server is not running")
	}
	if err := s.Resume(); err != nil {
		return err
	}
	return s.restart(ctx, d)
}

// PID is the server's main process: the postmaster, or mariadbd.
func (s *Server) PID() (int, error) {
	if s == nil || s.pid == nil {
		return 0, errors.New("testdb: the server is not running")
	}
	return s.pid()
}

// Pause stops the server with SIGSTOP, so that it keeps its connections
// and its port but answers nothing: the main process first (so that it
// forks no new one), then every child process it has (PostgreSQL's
// backends and auxiliary processes; mariadbd is one process). New
// connections wait in the kernel's backlog. Resume undoes it; Stop and
// Restart resume first.
func (s *Server) Pause() error {
	pid, err := s.PID()
	if err != nil {
		return err
	}
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	stopped := map[int]bool{}
	signal := func(p int) error {
		if stopped[p] {
			return nil
		}
		if err := syscall.Kill(p, syscall.SIGSTOP); err != nil {
			if errors.Is(err, syscall.ESRCH) {
				return nil // it just exited
			}
			return fmt.Errorf("testdb: pause %d: %w", p, err)
		}
		stopped[p] = true
		s.paused = append(s.paused, p)
		return nil
	}
	if err := signal(pid); err != nil {
		return err
	}
	// A child forked just before the main process stopped shows up on a
	// later scan; once a scan finds nothing new, none is left.
	for range 10 {
		kids, err := children(pid)
		if err != nil {
			return err
		}
		n := len(stopped)
		for _, k := range kids {
			if err := signal(k); err != nil {
				return err
			}
		}
		if len(stopped) == n {
			return nil
		}
	}
	return nil
}

// Paused lists the processes Pause stopped (the main process first).
func (s *Server) Paused() []int {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	return append([]int(nil), s.paused...)
}

// Resume continues what Pause stopped (SIGCONT). Resuming a server that
// is not paused does nothing.
func (s *Server) Resume() error {
	if s == nil {
		return nil
	}
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	var errs []error
	// Children first: the main process then finds them running.
	for i := len(s.paused) - 1; i >= 0; i-- {
		if err := syscall.Kill(s.paused[i], syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("testdb: resume %d: %w", s.paused[i], err))
		}
	}
	s.paused = nil
	return errors.Join(errs...)
}

// children lists the processes whose parent is pid, from /proc.
func children(pid int) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("testdb: %w", err)
	}
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, err := parentOf(p); err == nil && pp == pid {
			out = append(out, p)
		}
	}
	return out, nil
}

// parentOf reads a process's parent from /proc/PID/stat: "pid (comm) state
// ppid …", where comm may hold spaces and parentheses.
func parentOf(pid int) (int, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("testdb: bad /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, fmt.Errorf("testdb: bad /proc/%d/stat", pid)
	}
	return strconv.Atoi(f[1])
}

// pidFileFirst reads the number on the first line of a pid file
// (postmaster.pid, mysqld.pid).
func pidFileFirst(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("testdb: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("testdb: bad pid file %s", path)
	}
	return pid, nil
}
