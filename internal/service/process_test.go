package service_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/testdb"
)

// serveProc is `sledge serve` running as a child process.
type serveProc struct {
	cmd   *exec.Cmd
	url   string
	token string
	lines chan string // stderr after the listening line
}

func startServe(t *testing.T, home, store string) *serveProc {
	t.Helper()
	cmd := exec.Command(binPath, "serve", "--listen", "127.0.0.1:0", "--jobs-db", store)
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+home, "HOME="+home, "SLEDGE_DB=", "SLEDGE_JOBS_DB=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a group of its own, as a shell's job
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	p := &serveProc{cmd: cmd, lines: make(chan string, 100)}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if _, after, ok := strings.Cut(sc.Text(), "listening on "); ok {
			p.url = strings.TrimSuffix(strings.Fields(after)[0], "/")
			break
		}
	}
	if p.url == "" {
		t.Fatal("sledge serve printed no address")
	}
	go func() {
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		close(p.lines)
	}()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(store), "serve.token"))
	if err != nil {
		t.Fatal(err)
	}
	p.token = strings.TrimSpace(string(b))
	return p
}

// A service killed with SIGKILL mid-run: a new service on the same store
// finds its jobs, the one that was running as interrupted.
func TestServeKilledJobIsInterrupted(t *testing.T) {
	home := t.TempDir()
	store := filepath.Join(home, "jobs.db")
	u := sqliteDB(t)
	first := startServe(t, home, store)
	done := submit(t, first.url, first.token, map[string]any{"kind": "check", "db": u})
	waitStatus(t, first.url, first.token, done, 30*time.Second, "completed")
	id := submit(t, first.url, first.token, map[string]any{"kind": "run", "db": u,
		"options": map[string]any{"vus": 1, "duration": "5m", "rampup": "0s"}})
	waitStatus(t, first.url, first.token, id, 20*time.Second, "running")
	// The real service's /metrics follows the run (Prometheus text, behind
	// the token): its transactions counter grows.
	scrape := func() float64 {
		code, b := call(t, first.url, first.token, "GET", "/metrics", nil)
		if code != 200 {
			t.Fatalf("/metrics: %d %s", code, b)
		}
		var n float64
		want := fmt.Sprintf(`job_id="%d"`, id)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "sledge_transactions_total{") && strings.Contains(line, want) {
				f := strings.Fields(line)
				v, _ := strconv.ParseFloat(f[len(f)-1], 64)
				n += v
			}
		}
		return n
	}
	n0 := scrape()
	deadline := time.Now().Add(10 * time.Second)
	for scrape() <= n0 {
		if time.Now().After(deadline) {
			t.Fatalf("sledge_transactions_total of job %d did not grow in 10 s", id)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code, _ := call(t, first.url, "", "GET", "/metrics", nil); code != 401 {
		t.Errorf("/metrics without the token: %d, want 401", code)
	}
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()

	second := startServe(t, home, store)
	if second.token != first.token {
		t.Error("the second start made a new token")
	}
	j := getJob(t, second.url, second.token, id)
	if j.Status != "interrupted" || j.StoreStatus != "incomplete" {
		t.Errorf("the killed service's run is %s (store: %s), want interrupted (incomplete)", j.Status, j.StoreStatus)
	}
	if j := getJob(t, second.url, second.token, done); j.Status != "completed" {
		t.Errorf("the finished check is %s", j.Status)
	}
	// SIGTERM ends the service normally: exit 0.
	if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := second.cmd.Wait(); err != nil {
		t.Errorf("sledge serve after SIGTERM: %v, want exit 0", err)
	}
}

// Stop reaches a run of the command line on this host: SIGTERM, then the
// job is recorded stopped and the command exits 130, as on Ctrl-C.
func TestServeStopsCommandLineJob(t *testing.T) {
	home := t.TempDir()
	store := filepath.Join(home, "jobs.db")
	u := sqliteDB(t)
	run := exec.Command(binPath, "run", "--db", u, "--vus", "1", "--rampup", "0s", "--duration", "5m", "-R", "100", "--jobs-db", store)
	run.Env = append(os.Environ(), "XDG_DATA_HOME="+home, "HOME="+home)
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if run.ProcessState == nil {
			_ = run.Process.Kill()
			_ = run.Wait()
		}
	})
	s := startService(t, store)
	var id int64
	deadline := time.Now().Add(20 * time.Second)
	for id == 0 {
		_, b := s.do(t, "GET", "/api/jobs?status=running", nil)
		if _, after, ok := strings.Cut(string(b), `"id":`); ok {
			fmt.Sscan(strings.SplitN(after, ",", 2)[0], &id)
		}
		if time.Now().After(deadline) {
			t.Fatal("the command line's run is not listed as running")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Its events come from the store's samples (flushed by the command).
	code, b := s.do(t, "POST", fmt.Sprintf("/api/jobs/%d/stop", id), nil)
	if code != 200 && code != 202 {
		t.Fatalf("stop: %d %s", code, b)
	}
	j := waitStatus(t, s.url, testToken, id, 30*time.Second, "stopped")
	if len(j.Result) < 10 {
		t.Errorf("the stopped run keeps its result: %s", j.Result)
	}
	err := run.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("sledge run after stop: %v, want exit 130", err)
	}
}

// Issue 24 §1: Ctrl-C or SIGTERM, however many copies (the process group's
// and the process's own; twice in a row), stops sledge serve as documented:
// its running job stops as on Ctrl-C and is saved interrupted with what
// it measured, and the service exits 0.
func TestServeSignalsSaveJobs(t *testing.T) {
	cases := []struct {
		name  string
		sig   syscall.Signal
		group bool
	}{
		{"group-TERM", syscall.SIGTERM, true},
		{"twice-INT", syscall.SIGINT, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			store := filepath.Join(home, "jobs.db")
			s := startServe(t, home, store)
			id := submit(t, s.url, s.token, map[string]any{"kind": "run", "db": sqliteDB(t),
				"options": map[string]any{"vus": 1, "duration": "5m", "rampup": "0s"}})
			waitStatus(t, s.url, s.token, id, 20*time.Second, "running")
			waitTransactions(t, s, id)
			pid := s.cmd.Process.Pid
			first := pid
			if tc.group {
				first = -pid // pgid == pid
			}
			if err := syscall.Kill(first, tc.sig); err != nil {
				t.Fatal(err)
			}
			testdb.Delivered(pid, tc.sig)
			if err := syscall.Kill(pid, tc.sig); err != nil && err != syscall.ESRCH {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- s.cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("sledge serve after %s: %v, want exit 0", tc.name, err)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("sledge serve did not exit 30 s after %s", tc.name)
			}
			var lines []string
			for l := range s.lines {
				lines = append(lines, l)
			}
			if all := strings.Join(lines, "\n"); !strings.Contains(all, "sledge serve: stopping: running jobs end interrupted") || strings.Contains(all, "goroutine ") {
				t.Errorf("stderr:\n%s", all)
			}
			show := exec.Command(binPath, "jobs", "show", strconv.FormatInt(id, 10), "--json", "--jobs-db", store)
			show.Env = append(os.Environ(), "XDG_DATA_HOME="+home, "HOME="+home)
			out, err := show.Output()
			if err != nil {
				t.Fatalf("jobs show: %v", err)
			}
			var rec struct {
				Status  string `json:"status"`
				Summary struct {
					Interrupted bool                  `json:"interrupted"`
					Total       struct{ Count int64 } `json:"total"`
				} `json:"summary"`
			}
			if err := json.Unmarshal(out, &rec); err != nil || rec.Status != "interrupted" || !rec.Summary.Interrupted || rec.Summary.Total.Count == 0 {
				t.Errorf("the job after %s (%v): %s", tc.name, err, out)
			}
		})
	}
}

// waitTransactions waits until the service's /metrics counts transactions
// of job id: it has measured something.
func waitTransactions(t *testing.T, s *serveProc, id int64) {
	t.Helper()
	want := fmt.Sprintf(`job_id="%d"`, id)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, b := call(t, s.url, s.token, "GET", "/metrics", nil)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "sledge_transactions_total{") && strings.Contains(line, want) {
				f := strings.Fields(line)
				if v, _ := strconv.ParseFloat(f[len(f)-1], 64); v > 0 {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d counted no transaction in 30 s", id)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
