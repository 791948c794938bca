package cli

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/db/sqlite"
	"github.com/sledge-bench/sledge/internal/testbin"
)

var (
	binOnce    sync.Once
	binPath    string
	binCleanup = func() {}
	binErr     error
)

// sledgeBinary gives the package's tests that need a real process
// (signals, SIGKILL) the sledge command: make unit's, or one built once.
func sledgeBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	binOnce.Do(func() {
		// The process runs the SQLite driver the tests were built with
		// (make test's second pass: modernc.org/sqlite).
		tags := ""
		if sqlite.SQLDriverName == "sqlite" {
			tags = testbin.Tags
		}
		binPath, binCleanup, binErr = testbin.Sledge(context.Background(), tags)
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// An interrupted build stops cleanly with 130; check and run then say the
// schema is incomplete and what to do; building again starts over.
func TestInterruptedBuildIsIncomplete(t *testing.T) {
	bin := sledgeBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			url := "sqlite://" + filepath.Join(dir, "b.db")
			env := append(os.Environ(), "XDG_DATA_HOME="+dir, "SLEDGE_JOBS_DB=")
			cmd := exec.Command(bin, "build", "--db", url, "--warehouses", "8")
			cmd.Env = env
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(stderr)
			var errText strings.Builder
			for sc.Scan() {
				errText.WriteString(sc.Text() + "\n")
				if strings.HasPrefix(sc.Text(), "building tpcc") {
					break
				}
			}
			time.Sleep(1500 * time.Millisecond) // well inside the load of 8 warehouses
			sent := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			for sc.Scan() {
				errText.WriteString(sc.Text() + "\n")
			}
			_ = cmd.Wait()
			if took := time.Since(sent); took > 10*time.Second {
				t.Errorf("took %s to stop", took)
			}
			if code := cmd.ProcessState.ExitCode(); code != ExitInterrupted {
				t.Fatalf("build exit %d, want 130; stderr:\n%s", code, errText.String())
			}
			if !strings.Contains(errText.String(), "the schema is incomplete: run `sledge build tpcc --db "+url+"` with the same options (8 warehouses) again, which drops") {
				t.Errorf("no word on the incomplete schema:\n%s", errText.String())
			}
			for _, args := range [][]string{{"check", "--db", url}, {"run", "--db", url, "-t", "5"}} {
				c := exec.Command(bin, args...)
				c.Env = env
				out, _ := c.CombinedOutput()
				if code := c.ProcessState.ExitCode(); code != ExitFailure {
					t.Errorf("%s exit %d, want 1: %s", args[0], code, out)
				}
				want := "the tpcc schema in " + url + " is incomplete: its build was interrupted or failed; run `sledge build tpcc --db " + url + "` again"
				if !strings.Contains(string(out), want) || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
					t.Errorf("%s said %q, want one line with %q", args[0], out, want)
				}
			}
			c := exec.Command(bin, "build", "--db", url, "--warehouses", "1")
			c.Env = env
			if out, err := c.CombinedOutput(); err != nil {
				t.Fatalf("build again: %v: %s", err, out)
			}
			c = exec.Command(bin, "check", "--db", url)
			c.Env = env
			if out, err := c.CombinedOutput(); err != nil {
				t.Errorf("check after the new build: %v: %s", err, out)
			}
		})
	}
}
