// Package faults holds sledge's end-to-end fault tests
// (docs/reliability.md): the real sledge binary runs TPC-C against private
// PostgreSQL and MariaDB servers while the test restarts a server, kills
// one of its connections, stops it with SIGSTOP, or holds a lock forever,
// and checks what the run reported, that it ended in bounded time, and
// what its job in the store says.
//
// The servers are started once in TestMain (testdb: a free loopback port
// and a unix socket in a temporary directory) and each test builds its
// own database. Outside CI a missing server binary skips the tests that
// need it; in CI it fails them.
package faults

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/testbin"
	"github.com/sledge-bench/sledge/internal/testdb"
)

var (
	binPath string // the sledge binary: make unit's, or built once
	binErr  error

	pgSrv, myServer *testdb.Server
	pgErr, myErr    error
)

func TestMain(m *testing.M) {
	code := func() int {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		var wg sync.WaitGroup
		wg.Add(3)
		cleanupBin := func() {}
		defer func() { cleanupBin() }()
		go func() {
			defer wg.Done()
			binPath, cleanupBin, binErr = testbin.Sledge(ctx, "")
		}()
		go func() {
			defer wg.Done()
			pgSrv, pgErr = testdb.StartPostgres(ctx)
		}()
		go func() {
			defer wg.Done()
			myServer, myErr = testdb.StartMariaDB(ctx)
		}()
		wg.Wait()
		code := m.Run()
		for _, s := range []*testdb.Server{pgSrv, myServer} {
			if s != nil {
				if err := s.Stop(); err != nil {
					fmt.Fprintln(os.Stderr, "stop", s.Kind+":", err)
					if code == 0 {
						code = 1
					}
				}
			}
		}
		return code
	}()
	os.Exit(code)
}

// bin is the sledge binary, or the test fails.
func bin(t *testing.T) string {
	t.Helper()
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// proc is a sledge process started by start.
type proc struct {
	t       *testing.T
	cmd     *exec.Cmd
	started time.Time
	stdout  strings.Builder
	stderr  lockedBuilder
	lines   chan string // stderr, line by line, until it closes
	done    chan struct{}
	code    int
	ended   time.Time
}

type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) add(s string) {
	l.mu.Lock()
	l.b.WriteString(s + "\n")
	l.mu.Unlock()
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start runs sledge with args, its job store in jobs, and HOME and
// XDG_DATA_HOME in a temporary directory.
func start(t *testing.T, jobs string, args ...string) *proc {
	t.Helper()
	home := t.TempDir()
	p := &proc{t: t, lines: make(chan string, 1024), done: make(chan struct{})}
	p.cmd = exec.Command(bin(t), append(args, "--jobs-db", jobs)...)
	p.cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+home, "SLEDGE_DB=", "SLEDGE_JOBS_DB=")
	p.cmd.Stdout = &p.stdout
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.stderr.add(sc.Text())
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		close(p.lines)
		_, _ = io.Copy(io.Discard, stderr)
		err := p.cmd.Wait()
		p.ended = time.Now()
		p.code = 0
		if err != nil {
			p.code = -1
			if ee, ok := err.(*exec.ExitError); ok {
				p.code = ee.ExitCode()
			}
		}
		close(p.done)
	}()
	// Never outlive the test.
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// waitLine waits until sledge printed a stderr line starting with prefix,
// and returns when it did.
func (p *proc) waitLine(prefix string, within time.Duration) time.Time {
	p.t.Helper()
	timeout := time.After(within)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("sledge ended before printing %q (exit %d): %s", prefix, p.code, p.stderr.String())
			}
			// A progress line of the measured interval has no phase in
			// parentheses; those of connecting or ramping up do.
			if strings.HasPrefix(l, prefix) && !(prefix == "progress:" && strings.HasSuffix(l, ")")) {
				return time.Now()
			}
		case <-timeout:
			p.t.Fatalf("no %q from sledge within %v: %s", prefix, within, p.stderr.String())
		}
	}
}

// wait waits for the process to end, at most within from its start; on
// overrun it kills it and fails the test: sledge must never hang.
func (p *proc) wait(within time.Duration) (code int, took time.Duration) {
	p.t.Helper()
	code, took, err := p.waitErr(within)
	if err != nil {
		p.t.Fatal(err)
	}
	return code, took
}

// waitErr is wait returning the overrun as an error (for sync.Once, where
// a failed test must not look done).
func (p *proc) waitErr(within time.Duration) (code int, took time.Duration, err error) {
	select {
	case <-p.done:
	case <-time.After(time.Until(p.started.Add(within))):
		_ = p.cmd.Process.Signal(syscall.SIGQUIT) // the goroutines, on stderr
		select {
		case <-p.done:
		case <-time.After(2 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		return p.code, p.ended.Sub(p.started), fmt.Errorf("sledge %s still running %v after it started: killed\nstderr:\n%s",
			p.cmd.Args[1], within, p.stderr.String())
	}
	return p.code, p.ended.Sub(p.started), nil
}

// buildTimeout bounds a build: on a busy machine a two-warehouse build
// takes more than a minute.
const buildTimeout = 5 * time.Minute

// sledge runs a command to its end, within buildTimeout. An overrun is
// exit status -1, with the process's stderr and the reason.
func sledge(t *testing.T, jobs string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	p := start(t, jobs, args...)
	code, _, err := p.waitErr(buildTimeout)
	if err != nil {
		return p.stdout.String(), err.Error(), -1
	}
	return p.stdout.String(), p.stderr.String(), code
}

// runResult is what the fault tests read of `sledge run --json`.
type runResult struct {
	Database   string   `json:"database"`
	VUs        int      `json:"vus"`
	MeasuredS  float64  `json:"measured_s"`
	NOPM       *float64 `json:"nopm"`
	TPM        float64  `json:"tpm"`
	TPMSource  string   `json:"tpm_source"`
	TPMClient  float64  `json:"tpm_client"`
	TPMNote    string   `json:"tpm_note"`
	Reconnects int64    `json:"reconnects"`
	ConnLost   int64    `json:"conn_lost"`
	OutageS    int      `json:"outage_s"`
	OutageSecs []int    `json:"outage_seconds"`
	StuckVUs   []int    `json:"stuck_vus"`
	Total      struct {
		Count  int64 `json:"count"`
		Errors int64 `json:"errors"`
	} `json:"total"`
	Errors []struct {
		Message string `json:"message"`
		Count   int64  `json:"count"`
	} `json:"errors"`
}

// parseRun decodes the JSON a run printed.
func parseRun(t *testing.T, stdout, stderr string) runResult {
	t.Helper()
	var r runResult
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("run --json: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	return r
}

// job is what the fault tests read of `sledge jobs export ID --format json`.
type job struct {
	ID      int64           `json:"id"`
	Kind    string          `json:"kind"`
	Status  string          `json:"status"`
	Error   string          `json:"error"`
	Summary json.RawMessage `json:"summary"`
	Samples []struct {
		ElapsedMs int64  `json:"elapsed_ms"`
		SpanMs    int64  `json:"span_ms"`
		Phase     string `json:"phase"`
		Completed int64  `json:"completed"`
		Measured  int64  `json:"measured"`
		Errors    int64  `json:"errors"`
	} `json:"samples"`
	Log []struct {
		Line string `json:"line"`
	} `json:"log"`
}

// lastRun exports the newest run job of the store.
func lastRun(t *testing.T, jobs string) job {
	t.Helper()
	stdout, stderr, code := sledge(t, jobs, "jobs", "list", "--json", "--limit", "0")
	if code != 0 {
		t.Fatalf("jobs list: exit %d: %s", code, stderr)
	}
	var list struct {
		Jobs []struct {
			ID   int64  `json:"id"`
			Kind string `json:"kind"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatalf("jobs list --json: %v: %s", err, stdout)
	}
	for _, j := range list.Jobs {
		if j.Kind == "run" {
			stdout, stderr, code := sledge(t, jobs, "jobs", "export", fmt.Sprint(j.ID), "--format", "json")
			if code != 0 {
				t.Fatalf("jobs export %d: exit %d: %s", j.ID, code, stderr)
			}
			var out job
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatalf("jobs export --format json: %v", err)
			}
			return out
		}
	}
	t.Fatalf("no run job in %s: %s", jobs, stdout)
	return job{}
}
