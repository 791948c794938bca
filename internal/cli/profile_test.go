package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCPUProfileIsWritten: --cpuprofile leaves a profile go tool pprof reads
// (gzip-compressed protobuf), and a path that cannot be written is bad
// input: one line, exit 2, nothing run.
func TestCPUProfileIsWritten(t *testing.T) {
	db := builtDB(t)
	prof := filepath.Join(t.TempDir(), "cpu.pprof")
	_, stderr, code := runCLI(t, t.TempDir(), "run", "--db", "sqlite://"+db, "-c", "1", "-t", "200", "--no-job", "--cpuprofile", prof)
	if code != 0 {
		t.Fatalf("run exited %d: %s", code, stderr)
	}
	b, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 20 || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Fatalf("profile is %d bytes, not a gzip'd pprof profile", len(b))
	}

	_, stderr, code = runCLI(t, t.TempDir(), "run", "--db", "sqlite://"+db, "-t", "1", "--no-job", "--cpuprofile", filepath.Join(t.TempDir(), "no", "such", "dir", "p"))
	if code != ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "--cpuprofile") {
		t.Fatalf("unwritable profile path: exit %d, stderr %q; want exit %d and one line naming --cpuprofile", code, stderr, ExitUsage)
	}
}

// TestBuildCPUProfileIsWritten: build takes --cpuprofile too, for where
// generating and loading the rows spends its time.
func TestBuildCPUProfileIsWritten(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "build.pprof")
	_, stderr, code := runCLI(t, dir, "build", "tpch", "--db", "sqlite://"+filepath.Join(dir, "t.db"), "--scale", "0.01", "--no-job", "--cpuprofile", prof)
	if code != 0 {
		t.Fatalf("build exited %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(prof); err != nil || len(b) < 20 || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Fatalf("build's profile: %d bytes, %v; want a gzip'd pprof profile", len(b), err)
	}
}
