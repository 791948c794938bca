package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/evloop"
)

// Issue 26: io=loop's wait (loopwait=epoll|io_uring) is reported beside
// the run's other keys (loops, loop_wait), and where io_uring_setup is
// refused the loops wait on epoll and the run says so (loop_wait_note, one
// line on stderr). Bad values and loopwait without io=loop are bad input.
// Not parallel: the refusal is process-wide.
func TestContractRunLoopWait(t *testing.T) {
	srv := pgLazy.Get(t)
	u := ownDB(t, srv, "loopwait")
	home := t.TempDir()
	if _, stderr, code := runCLI(t, home, "build", "tpcb", "--db", u, "-s", "1", "--no-job"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	run := func(query string) (string, string, int) {
		return runCLI(t, home, "run", "tpcb", "--db", u+query, "--mode", "prepared", "-c", "2", "-j", "2",
			"--iterations", "20", "--json", "--no-job")
	}
	cases := []struct {
		name, query string
		refuse      bool
		loops       int
		wait        string // "": no loop keys
		note        bool
	}{
		{"threads", "", false, 0, "", false},
		{"default wait", "?io=loop", false, 2, evloop.DefaultWait.String(), false},
		{"epoll", "?io=loop&loopwait=epoll", false, 2, "epoll", false},
		{"io_uring", "?io=loop&loopwait=io_uring", false, 2, "io_uring", false},
		{"io_uring refused", "?io=loop&loopwait=io_uring", true, 2, "epoll", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evloop.RefuseIOUring(c.refuse)
			defer evloop.RefuseIOUring(false)
			stdout, stderr, code := run(c.query)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if strings.Contains(stdout+stderr, srv.Password) {
				t.Error("output shows the password")
			}
			var out struct {
				Loops    *int    `json:"loops"`
				LoopWait *string `json:"loop_wait"`
				Note     *string `json:"loop_wait_note"`
			}
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatalf("bad JSON %v: %s", err, stdout)
			}
			if c.wait == "" {
				if out.Loops != nil || out.LoopWait != nil || out.Note != nil {
					t.Errorf("loop keys on threads: %v %v %v", out.Loops, out.LoopWait, out.Note)
				}
				return
			}
			pinKeys(t, c.name, stdout, map[string]kind{"loops": jNumber, "loop_wait": jString})
			if out.Loops == nil || *out.Loops != c.loops || out.LoopWait == nil || *out.LoopWait != c.wait {
				t.Errorf("loops %v, loop_wait %v; want %d, %s", out.Loops, out.LoopWait, c.loops, c.wait)
			}
			if c.note {
				pinKeys(t, c.name, stdout, map[string]kind{"loop_wait_note": jString})
				if out.Note == nil || !strings.Contains(*out.Note, "operation not permitted") {
					t.Errorf("loop_wait_note %v, want io_uring_setup's refusal", out.Note)
				}
				if !strings.Contains(stderr, "loopwait=io_uring refused") {
					t.Errorf("stderr does not say the loops fell back: %q", stderr)
				}
			} else if out.Note != nil {
				t.Errorf("loop_wait_note %q without a refusal", *out.Note)
			}
		})
	}
	for _, q := range []string{"?io=loop&loopwait=kqueue", "?loopwait=epoll", "?io=blocking&loopwait=io_uring"} {
		_, stderr, code := run(q)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "loopwait") {
			t.Errorf("%s: exit %d %q, want 2 and one line naming loopwait", q, code, stderr)
		}
	}
}
