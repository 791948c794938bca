package db

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestIsLoopbackHost(t *testing.T) {
	for _, c := range []struct {
		host string
		want bool
	}{
		{"127.0.0.1", true}, {"127.3.2.1", true}, {"::1", true}, {"[::1]", true}, {"localhost", true},
		{"LOCALHOST", true}, {"/var/run/postgresql", true}, {"/tmp/mysqld.sock", true}, {"", true},
		{"db.example.com", false}, {"10.0.0.5", false}, {"192.168.1.20", false}, {"2001:db8::1", false},
	} {
		t.Run(c.host, func(t *testing.T) {
			if got := IsLoopbackHost(c.host); got != c.want {
				t.Errorf("IsLoopbackHost(%q) = %v, want %v", c.host, got, c.want)
			}
		})
	}
}

// ServerLocal reads a /proc: a fake one in a temporary directory gives it
// a server, a stranger and a missing process; a remote host is remote
// before any of them is looked at.
func TestServerLocal(t *testing.T) {
	root := t.TempDir()
	for pid, comm := range map[int]string{100: "postgres", 200: "mariadbd", 300: "bash", 400: "mysqld"} {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "comm"), []byte(comm+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		host   string
		pid    int
		ok     bool
		whyHas string
	}{
		{"127.0.0.1", 100, true, ""},
		{"/tmp/sock", 200, true, ""},
		{"localhost", 400, true, ""},
		{"db.example.com", 100, false, "server is remote"},
		{"10.1.2.3", 100, false, "server is remote"},
		{"127.0.0.1", 999, false, "not visible from this process"},
		{"127.0.0.1", 300, false, "not the server"},
		{"127.0.0.1", 0, false, "not known"},
	} {
		t.Run(c.host+"/"+strconv.Itoa(c.pid), func(t *testing.T) {
			ok, why := ServerLocal(root, c.host, c.pid)
			if ok != c.ok || !strings.Contains(why, c.whyHas) {
				t.Errorf("ServerLocal(%q, %d) = %v, %q; want %v, %q", c.host, c.pid, ok, why, c.ok, c.whyHas)
			}
		})
	}
}

// ReadProc on this test process: its CPU and switches only grow.
func TestReadProcSelf(t *testing.T) {
	for _, threads := range []bool{false, true} {
		a, err := ReadProc("/proc", os.Getpid(), threads)
		if err != nil {
			t.Fatal(err)
		}
		x := 0
		for i := 0; i < 20_000_000; i++ {
			x += i
		}
		_ = x
		b, err := ReadProc("/proc", os.Getpid(), threads)
		if err != nil {
			t.Fatal(err)
		}
		if b.UserTicks+b.SysTicks < a.UserTicks+a.SysTicks || b.Voluntary+b.Involun < a.Voluntary+a.Involun || a.Start != b.Start || a.Start <= 0 {
			t.Errorf("threads=%v: %+v then %+v", threads, a, b)
		}
	}
}
