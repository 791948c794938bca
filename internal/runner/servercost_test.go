package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
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

// The wait sampler reads about serverSampleSessions session states a
// second: every 100 ms for a few sessions, once a second for hundreds
// (each reading is one query whose rows are every session).
func TestSamplePeriod(t *testing.T) {
	for _, tc := range []struct {
		sessions int
		want     time.Duration
	}{
		{0, 100 * time.Millisecond},
		{1, 100 * time.Millisecond},
		{4, 100 * time.Millisecond},
		{16, 100 * time.Millisecond},
		{40, 250 * time.Millisecond},
		{80, 500 * time.Millisecond},
		{160, time.Second},
		{200, time.Second},
		{10000, time.Second},
	} {
		if got := samplePeriod(tc.sessions); got != tc.want {
			t.Errorf("samplePeriod(%d) = %v, want %v", tc.sessions, got, tc.want)
		}
	}
}
