package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrepareHammerDBRefuses: without a usable HammerDB source the tool
// says why in one line (and then compares with the recorded figures).
func TestPrepareHammerDBRefuses(t *testing.T) {
	work := t.TempDir()
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "hammerdbcli"), []byte("set hdb_version \"v4.11\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitDir := filepath.Join(t.TempDir(), "repo")
	if _, err := exec.LookPath("git"); err == nil {
		if out, err := exec.Command("git", "init", "-q", "--bare", gitDir).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
	}
	for _, c := range []struct{ name, src, want string }{
		{"none", "", "no HammerDB source given"},
		{"empty dir", t.TempDir(), "neither a HammerDB checkout nor a git directory with tag v4.12"},
		{"git without the tag", gitDir, "neither a HammerDB checkout nor a git directory with tag v4.12"},
		{"another version", other, "is not HammerDB v4.12"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, why := prepareHammerDB(context.Background(), c.src, work)
			if h != nil || !strings.Contains(why, c.want) || strings.Contains(why, "\n") {
				t.Fatalf("prepareHammerDB(%q) = %v, %q; want nil and one line with %q", c.src, h, why, c.want)
			}
		})
	}
}
