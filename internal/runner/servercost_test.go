package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// serverLocal reads a /proc: a fake one in a temporary directory gives it
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
			ok, why := serverLocal(root, c.host, c.pid)
			if ok != c.ok || !strings.Contains(why, c.whyHas) {
				t.Errorf("serverLocal(%q, %d) = %v, %q; want %v, %q", c.host, c.pid, ok, why, c.ok, c.whyHas)
			}
		})
	}
}
