package testdb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// guardHelperEnv makes TestGuardHelper the process that TestGuard's
// cases start and kill.
const guardHelperEnv = "SLEDGE_TESTDB_GUARD_HELPER"

// TestGuardHelper is not a test of its own: run by TestGuard with
// guardHelperEnv set, it starts what the case names, prints "ready" and
// what to look for, and waits to be killed (or, disarmed, returns).
func TestGuardHelper(t *testing.T) {
	what, arg, _ := strings.Cut(os.Getenv(guardHelperEnv), " ")
	switch what {
	case "":
		t.Skip("run by TestGuard")
	case "armed":
		startGuard("touch "+shellQuote(arg), nil)
		fmt.Println("ready")
		select {}
	case "disarmed":
		startGuard("touch "+shellQuote(arg), nil).disarm()
		fmt.Println("ready")
		return
	case "postgres", "mariadb":
		start := map[string]func(context.Context) (*Server, error){"postgres": StartPostgres, "mariadb": StartMariaDB}[what]
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		srv, err := start(ctx)
		if err != nil {
			fmt.Println("error", err)
			return
		}
		pid, err := srv.pid()
		if err != nil {
			fmt.Println("error", err)
			return
		}
		fmt.Println("ready", pid, srv.Dir)
		select {}
	}
}

// TestGuard: what a test process started outside itself is stopped and
// removed when the process is killed before its cleanups run (SIGKILL,
// which no handler sees), and left alone when the process disarmed it.
func TestGuard(t *testing.T) {
	t.Parallel()
	helper := func(t *testing.T, what string, kill bool) []string {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestGuardHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), guardHelperEnv+"="+what)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) > 0 && f[0] == "error" {
				if strings.Contains(sc.Text(), ErrUnavailable.Error()) && !InCI() {
					t.Skip(sc.Text())
				}
				t.Fatal(sc.Text())
			}
			if len(f) > 0 && f[0] == "ready" {
				if kill {
					_ = cmd.Process.Kill()
				}
				return f[1:]
			}
		}
		t.Fatalf("the helper ended without ready: %v", cmd.Wait())
		return nil
	}
	// within polls cond for up to d.
	within := func(d time.Duration, cond func() bool) bool {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if cond() {
				return true
			}
		}
		return cond()
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	t.Run("killed runs the script", func(t *testing.T) {
		t.Parallel()
		f := filepath.Join(t.TempDir(), "ran")
		helper(t, "armed "+f, true)
		if !within(10*time.Second, func() bool { return exists(f) }) {
			t.Fatal("the guard did not run its script after its process was killed")
		}
	})
	t.Run("disarmed does nothing", func(t *testing.T) {
		t.Parallel()
		f := filepath.Join(t.TempDir(), "ran")
		helper(t, "disarmed "+f, false)
		time.Sleep(time.Second)
		if exists(f) {
			t.Fatal("a disarmed guard ran its script")
		}
	})
	for _, kind := range []string{"postgres", "mariadb"} {
		t.Run("killed stops "+kind, func(t *testing.T) {
			t.Parallel()
			f := helper(t, kind, true)
			if len(f) != 2 {
				t.Fatalf("helper said %q", f)
			}
			var pid int
			if _, err := fmt.Sscan(f[0], &pid); err != nil {
				t.Fatal(err)
			}
			dir := f[1]
			gone := func() bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) && !exists(dir) }
			if !within(60*time.Second, gone) {
				// Leave nothing behind whatever the outcome.
				_ = syscall.Kill(pid, syscall.SIGKILL)
				_ = os.RemoveAll(dir)
				t.Fatalf("%s (pid %d, %s) still there 60 s after the test process was killed", kind, pid, dir)
			}
		})
	}
}
