// Package testbrowser starts headless Chromium for the tests of sledge's web
// pages (the report and the service's page): Debian's package, which
// scripts/install-servers.sh installs.
package testbrowser

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sledge-bench/sledge/internal/testdb"
)

// Path is the Chromium the tests run.
const Path = "/usr/bin/chromium"

// Need skips t where Chromium is missing, and fails it in CI, where the
// install script puts it.
func Need(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(Path); err != nil {
		if testdb.InCI() {
			t.Fatalf("%s is missing in CI: scripts/install-servers.sh installs it", Path)
		}
		t.Skipf("skipping: no %s (run scripts/install-servers.sh as root)", Path)
	}
}

// Allocator is chromedp's allocator for a headless Chromium of width×height
// whose profile and temporary files are in a directory removed when t ends:
// Chromium makes its singleton socket's directory in TMPDIR and leaves it
// there when it is killed, as cancelling the allocator does.
func Allocator(ctx context.Context, t testing.TB, width, height int) (context.Context, context.CancelFunc) {
	dir := tempDir(t)
	return chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Path), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.UserDataDir(filepath.Join(dir, "profile")), chromedp.Env("TMPDIR="+dir),
		chromedp.WindowSize(width, height))...)
}

// Command is headless Chromium run to its end with args, its profile and
// temporary files in a directory removed when t ends (see Allocator).
func Command(ctx context.Context, t testing.TB, args ...string) *exec.Cmd {
	dir := tempDir(t)
	cmd := exec.CommandContext(ctx, Path, append([]string{"--headless", "--no-sandbox", "--disable-gpu",
		"--user-data-dir=" + filepath.Join(dir, "profile")}, args...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	return cmd
}

// tempDir is a directory under the system's temporary directory, not
// t.TempDir(): a test's name makes that too long for the unix socket
// Chromium makes in it (108 bytes).
func tempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sledge-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
