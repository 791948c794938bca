package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/testdb"
)

// Issue 24 §1: however many SIGINT/SIGTERM arrive, a command that measures
// stops measuring, prints and saves what it measured, and exits 130 (the
// Go runtime's default handler must never get a second copy). A third
// signal stops without waiting for transactions in flight, and still
// prints and saves.

// How the signals reach sledge.
const (
	// viaTimeout: GNU timeout, which signals its child and then the
	// child's process group (so sledge gets two copies). The test sends
	// timeout SIGALRM, which is what its own timer does, so the signal
	// comes when the test wants it.
	viaTimeout = "timeout"
	// viaGroup: one copy to the process group (a shell's Ctrl-C), one
	// more to the process.
	viaGroup = "group"
	// viaRepeat: two copies to the process, close together (Ctrl-C twice).
	viaRepeat = "repeat"
)

// sigProc is the real sledge binary in a process group of its own, as a
// shell starts a job, its stdout kept and its stderr watched for the line
// after which it has measured something.
type sigProc struct {
	cmd    *exec.Cmd
	sledge int // sledge's pid (under timeout: timeout's child)
	stdout bytes.Buffer
	stderr *watchBuf
}

// watchBuf keeps what is written and closes seen at the first line that
// matches.
type watchBuf struct {
	mu    sync.Mutex
	b     bytes.Buffer
	match *regexp.Regexp
	seen  chan struct{}
	once  sync.Once
}

func (w *watchBuf) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if w.match.Match(w.b.Bytes()) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

// waitFor reports whether the output holds text within d.
func (w *watchBuf) waitFor(text string, d time.Duration) bool {
	for end := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if strings.Contains(w.String(), text) {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

func (w *watchBuf) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// measuring matches a progress line (-P 1) that counted transactions.
var measuring = regexp.MustCompile(`progress: [0-9.]+ s, [1-9][0-9.]* tps`)

// startSigProc starts sledge with args, under timeout for viaTimeout, with
// env added to the environment; home is its job store's home.
func startSigProc(t *testing.T, how, sig, home string, env []string, match *regexp.Regexp, args ...string) *sigProc {
	t.Helper()
	bin := sledgeBinary(t)
	p := &sigProc{stderr: &watchBuf{match: match, seen: make(chan struct{})}}
	if how == viaTimeout {
		p.cmd = exec.Command("timeout", append([]string{"--preserve-status", "-s", sig, "1h", bin}, args...)...)
	} else {
		p.cmd = exec.Command(bin, args...)
	}
	p.cmd.Env = append(append(os.Environ(), "XDG_DATA_HOME="+home, "SLEDGE_JOBS_DB=", "SLEDGE_DB="), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			_ = p.cmd.Wait()
		}
	})
	p.sledge = p.cmd.Process.Pid
	if how == viaTimeout {
		p.sledge = 0 // timeout's child: found when needed
	}
	return p
}

// waitMeasuring waits until sledge has measured something (bounded: a
// run that never gets there fails the test instead of hanging it).
func (p *sigProc) waitMeasuring(t *testing.T) {
	t.Helper()
	select {
	case <-p.stderr.seen:
	case <-time.After(2 * time.Minute):
		t.Fatalf("sledge never started measuring; stderr:\n%s", p.stderr.String())
	}
}

// interrupt delivers sig the way how says.
func (p *sigProc) interrupt(t *testing.T, how string, sig syscall.Signal) {
	t.Helper()
	pid := p.cmd.Process.Pid
	var err error
	switch how {
	case viaTimeout:
		err = syscall.Kill(pid, syscall.SIGALRM)
	case viaGroup:
		err = syscall.Kill(-pid, sig) // the process group: pgid == pid
		if err == nil {
			testdb.Delivered(pid, sig)
			err = syscall.Kill(pid, sig)
		}
	case viaRepeat:
		err = syscall.Kill(pid, sig)
		if err == nil {
			testdb.Delivered(pid, sig)
			err = syscall.Kill(pid, sig)
		}
	}
	// The second copy finds sledge gone when it stopped that fast.
	if err != nil && err != syscall.ESRCH {
		t.Fatalf("signal %s: %v", how, err)
	}
}

// wait waits for the exit (bounded) and returns sledge's exit status.
func (p *sigProc) wait(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("sledge did not exit 30 s after the signal; stderr:\n%s", p.stderr.String())
	}
	if strings.Contains(p.stderr.String(), "goroutine ") {
		t.Errorf("stack trace:\n%s", p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

// onlyJob is the job store's one job of kind under home.
func onlyJob(t *testing.T, home, kind string) listJSON {
	t.Helper()
	var found []listJSON
	for _, j := range listJobs(t, home).Jobs {
		if j.Kind == kind {
			found = append(found, j)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one %s job, have %+v", kind, found)
	}
	return found[0]
}

// TestSignalsRun: run (TPC-C on SQLite), text and --json, under timeout -s
// INT and -s TERM, a group's Ctrl-C and a double Ctrl-C: each prints the
// whole summary (or one whole JSON object), saves the job interrupted
// with its NOPM and TPM, and exits 130. The runs here and in
// TestSignalsCommands are throttled (-R 100; compare has no -R): what is
// asserted is what an interrupted run keeps, not its throughput, and
// unthrottled each kept both cores busy until its signal.
func TestSignalsRun(t *testing.T) {
	cases := []struct {
		how  string
		sig  syscall.Signal
		json bool
	}{
		{viaTimeout, syscall.SIGINT, false},
		{viaTimeout, syscall.SIGTERM, true},
		{viaGroup, syscall.SIGINT, true},
		{viaRepeat, syscall.SIGTERM, false},
	}
	for _, tc := range cases {
		name := tc.how + "/" + tc.sig.String()
		if tc.json {
			name += "/json"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			args := []string{"run", "--db", "sqlite://" + builtDB(t), "--vus", "2", "--rampup", "0s", "-T", "5m", "-P", "1", "-R", "100"}
			if tc.json {
				args = append(args, "--json")
			}
			p := startSigProc(t, tc.how, sigName(tc.sig), home, nil, measuring, args...)
			p.waitMeasuring(t)
			p.interrupt(t, tc.how, tc.sig)
			if code := p.wait(t); code != ExitInterrupted {
				t.Fatalf("exit %d, want 130; stderr:\n%s", code, p.stderr)
			}
			if tc.json {
				var sum runSummary
				if err := json.Unmarshal(p.stdout.Bytes(), &sum); err != nil || !sum.Interrupted || sum.Total.Count == 0 {
					t.Errorf("stdout is not the whole result (%v):\n%s", err, p.stdout.String())
				}
			} else if out := p.stdout.String(); !strings.Contains(out, "(interrupted)") || !strings.Contains(out, "NOPM") || !strings.Contains(out, "neword") {
				t.Errorf("no summary of what was measured:\n%s", out)
			}
			if j := onlyJob(t, home, "run"); j.Status != "interrupted" || j.NOPM == nil || j.TPM == nil || *j.TPM == 0 {
				t.Errorf("job %+v, want interrupted with NOPM and TPM", j)
			}
		})
	}
}

func sigName(s syscall.Signal) string {
	if s == syscall.SIGTERM {
		return "TERM"
	}
	return "INT"
}

// TestSignalsEscalate: transactions that sleep 10 minutes, a stop timeout
// as long; the first two Ctrl-C wait for them, a third stops at once
// without waiting, and still prints the whole JSON result and saves the
// job. (A second signal after the stop timeout escalates as well:
// TestSignalCounting in internal/interrupt.)
func TestSignalsEscalate(t *testing.T) {
	home := t.TempDir()
	script := filepath.Join(home, "slow.sql")
	if err := os.WriteFile(script, []byte("SELECT 1;\n\\sleep 600 s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startSigProc(t, viaRepeat, "INT", home, nil, regexp.MustCompile(`progress: `), "run", "--db", "sqlite://"+filepath.Join(home, "x.db"),
		"-f", script, "-c", "2", "-T", "5m", "--stop-timeout", "10m", "-P", "1", "--json")
	p.waitMeasuring(t)
	// Go's runtime merges a copy of a signal that arrives before its
	// signal loop has read the one before (os/signal's queue holds one of
	// each), so the kernel having delivered a copy (testdb.Delivered) is
	// not enough: each copy after the first is sent again until the line
	// it makes is seen. A merged copy makes no line; a counted one does at
	// once.
	pid := p.cmd.Process.Pid
	send := func() {
		if err := syscall.Kill(pid, syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		testdb.Delivered(pid, syscall.SIGINT)
	}
	send() // the first: the graceful stop, no line of its own
	for _, want := range []string{"sledge: already stopping", "sledge: stopping without waiting"} {
		for try := 1; ; try++ {
			send()
			if p.stderr.waitFor(want, 2*time.Second) {
				break
			}
			if try == 10 {
				t.Fatalf("no %q after %d more signals; stderr:\n%s", want, try, p.stderr)
			}
		}
	}
	if code := p.wait(t); code != ExitInterrupted {
		t.Fatalf("exit %d, want 130; stderr:\n%s", code, p.stderr)
	}
	for _, want := range []string{"sledge: already stopping: what was measured will be printed and saved; a third Ctrl-C or SIGTERM stops without waiting for transactions in flight",
		"sledge: stopping without waiting for transactions in flight; what was measured is saved"} {
		if !strings.Contains(p.stderr.String(), want) {
			t.Errorf("stderr has no %q:\n%s", want, p.stderr)
		}
	}
	var sum struct {
		Interrupted bool  `json:"interrupted"`
		Stuck       []int `json:"stuck_vus"`
	}
	if err := json.Unmarshal(p.stdout.Bytes(), &sum); err != nil || !sum.Interrupted {
		t.Errorf("stdout is not the whole result (%v):\n%s", err, p.stdout.String())
	}
	if j := onlyJob(t, home, "run"); j.Status != "interrupted" || j.TPM == nil {
		t.Errorf("job %+v, want interrupted with its summary", j)
	}
}

// TestSignalsCommands: every other command that measures, stopped the
// ways a person or a script stops it: compare and run --workers (the
// coordinator and its local workers in one process group) under timeout,
// run tpch (text: its --json prints nothing to watch on stderr) by a
// group's SIGTERM, pgbench on PostgreSQL under timeout -s
// TERM. Each prints what it measured (text, or one whole JSON object),
// saves its job interrupted and exits 130.
func TestSignalsCommands(t *testing.T) {
	type check func(t *testing.T, home, stdout string)
	cases := []struct {
		name  string
		how   string
		sig   syscall.Signal
		match *regexp.Regexp
		setup func(t *testing.T, home string) (env, args []string)
		check check
	}{
		{"compare", viaTimeout, syscall.SIGINT, measuring,
			func(t *testing.T, home string) ([]string, []string) {
				return nil, []string{"compare", "--db", "sqlite://" + builtDB(t), "--modes", "client", "--vus", "1,2", "--rampup", "0s", "-T", "5m", "-P", "1"}
			},
			func(t *testing.T, home, stdout string) {
				if !strings.Contains(stdout, "(interrupted)") || !strings.Contains(stdout, "NOPM") {
					t.Errorf("no table of the cell measured:\n%s", stdout)
				}
				if j := onlyJob(t, home, "compare"); j.Status != "interrupted" {
					t.Errorf("compare job %+v, want interrupted", j)
				}
				if j := onlyJob(t, home, "run"); j.Status != "interrupted" || j.NOPM == nil || j.TPM == nil || *j.TPM == 0 {
					t.Errorf("the cell's job %+v, want interrupted with NOPM and TPM", j)
				}
			}},
		{"workers", viaTimeout, syscall.SIGINT, measuring,
			func(t *testing.T, home string) ([]string, []string) {
				db := "sqlite://" + filepath.Join(home, "tpcb.db")
				sledgeBuild(t, nil, home, "tpcb", "--db", db)
				return nil, []string{"run", "tpcb", "--db", db, "-c", "2", "-T", "5m", "-P", "1", "-R", "100", "--workers", "2", "--json"}
			},
			func(t *testing.T, home, stdout string) {
				var res struct {
					Interrupted bool `json:"interrupted"`
					workersResult
				}
				if err := json.Unmarshal([]byte(stdout), &res); err != nil || !res.Interrupted || res.Total.Count == 0 || len(res.Workers) != 2 {
					t.Fatalf("stdout is not the whole merged result (%v):\n%s", err, stdout)
				}
				for _, w := range res.Workers {
					if w.State != "finished" || w.Transactions == 0 {
						t.Errorf("worker %d: %s, %d transactions; want finished, with what it measured", w.Index, w.State, w.Transactions)
					}
				}
				if j := onlyJob(t, home, "run"); j.Status != "interrupted" || j.TPM == nil || *j.TPM == 0 {
					t.Errorf("job %+v, want interrupted with TPM", j)
				}
			}},
		{"tpch", viaGroup, syscall.SIGTERM, regexp.MustCompile(`stream 0  Q`),
			func(t *testing.T, home string) ([]string, []string) {
				return nil, []string{"run", "tpch", "--db", "sqlite://" + tpchDB(t)}
			},
			func(t *testing.T, home, stdout string) {
				// A query's row with its time (the one interrupted shows 0).
				if !strings.Contains(stdout, "query seconds") || !regexp.MustCompile(`(?m)^ +Q[0-9]+ +[0-9]*\.[0-9]*[1-9][0-9]* +[0-9]+$`).MatchString(stdout) {
					t.Errorf("no query measured in the result:\n%s", stdout)
				}
				if j := onlyJob(t, home, "run"); j.Status != "interrupted" || !strings.Contains(stdout, fmt.Sprintf("job %d\n", j.ID)) {
					t.Errorf("job %+v, want it interrupted and named in the result", j)
				}
			}},
		{"pgbench", viaTimeout, syscall.SIGTERM, measuring,
			func(t *testing.T, home string) ([]string, []string) {
				srv := pgLazy.Get(t)
				dbname := pgbDatabase(t, srv)
				vars := pgbEnv(srv)
				if _, stderr, code := sledgePgbench(t, home, vars, "-i", "-s", "1", "--no-job", dbname); code != 0 {
					t.Fatalf("pgbench -i: exit %d: %s", code, stderr)
				}
				var env []string
				for k, v := range vars {
					env = append(env, k+"="+v)
				}
				return env, []string{"pgbench", "-c", "2", "-T", "300", "-P", "1", "-R", "100", dbname}
			},
			func(t *testing.T, home, stdout string) {
				if !regexp.MustCompile(`number of transactions actually processed: [1-9]`).MatchString(stdout) || !strings.Contains(stdout, "(interrupted)") {
					t.Errorf("no report of what was measured:\n%s", stdout)
				}
				if j := onlyJob(t, home, "run"); j.Status != "interrupted" || j.TPM == nil || *j.TPM == 0 {
					t.Errorf("job %+v, want interrupted with TPM", j)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			env, args := tc.setup(t, home)
			p := startSigProc(t, tc.how, sigName(tc.sig), home, env, tc.match, args...)
			p.waitMeasuring(t)
			p.interrupt(t, tc.how, tc.sig)
			if code := p.wait(t); code != ExitInterrupted {
				t.Fatalf("exit %d, want 130; stdout:\n%s\nstderr:\n%s", code, p.stdout.String(), p.stderr)
			}
			tc.check(t, home, p.stdout.String())
		})
	}
}
