package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A suggested command can be pasted: the URL without its password (never
// "REDACTED"), and a note naming the variable the driver reads it from.
// Pasting it with that variable set works.
func TestSuggestedCommandsCanBePasted(t *testing.T) {
	for _, c := range []struct{ kind, scheme, env string }{
		{"postgres", "postgres", "PGPASSWORD"},
		{"mariadb", "mysql", "MYSQL_PWD"},
	} {
		t.Run(c.kind, func(t *testing.T) {
			srv := pgLazy.Get(t)
			if c.kind == "mariadb" {
				srv = mariaLazy.Get(t)
			}
			home := t.TempDir()
			u := ownDB(t, srv, "suggest")
			// The database exists and is empty: the run says to build.
			if _, stderr, code := runCLI(t, home, "build", "tpcb", "--db", u, "--scale", "1", "--no-job"); code != 0 {
				t.Fatalf("build: %s", stderr)
			}
			_, stderr, code := runCLI(t, home, "run", "--db", u, "-t", "1", "--no-job")
			if code != ExitFailure {
				t.Fatalf("run without a tpcc schema: exit %d: %s", code, stderr)
			}
			m := regexp.MustCompile("run `([^`]+)` first \\(with the password in ([A-Z_]+)\\)").FindStringSubmatch(stderr)
			if m == nil || m[2] != c.env {
				t.Fatalf("no pasteable suggestion naming %s: %s", c.env, stderr)
			}
			if strings.Contains(m[1], "REDACTED") || strings.Contains(stderr, srv.Password) {
				t.Errorf("suggestion %q has a placeholder or the password", m[1])
			}
			// Paste it, with the password where the note says.
			t.Setenv(c.env, srv.Password)
			args := strings.Fields(m[1])
			if args[0] != "sledge" {
				t.Fatalf("suggestion %q is not a sledge command", m[1])
			}
			if _, stderr, code := runCLI(t, home, append(args[1:], "--warehouses", "1", "--no-job")...); code != ExitOK {
				t.Errorf("the pasted suggestion %q failed: exit %d: %s", m[1], code, stderr)
			}
			// A job's recorded command (jobs show) can be pasted too.
			if _, stderr, code := runCLI(t, home, "run", "--db", u, "-t", "5"); code != ExitOK {
				t.Fatalf("run: exit %d: %s", code, stderr)
			}
			show, _, _ := runCLI(t, home, "jobs", "show", "1")
			cm := regexp.MustCompile(`(?m)^command +(sledge .*?)  # password from ([A-Z_]+)$`).FindStringSubmatch(show)
			if cm == nil || cm[2] != c.env || strings.Contains(cm[1], "REDACTED") {
				t.Fatalf("jobs show: no pasteable command:\n%s", show)
			}
			if _, stderr, code := runCLI(t, home, append(strings.Fields(cm[1])[1:], "--no-job")...); code != ExitOK {
				t.Errorf("the pasted job command %q failed: exit %d: %s", cm[1], code, stderr)
			}
			// build again: "drop it first with `…`", pasteable too.
			_, stderr, _ = runCLI(t, home, "build", "tpcb", "--db", u, "--scale", "1", "--no-job")
			d := regexp.MustCompile("drop it first with `([^`]+)` \\(with the password in ([A-Z_]+)\\)").FindStringSubmatch(stderr)
			if d == nil || d[2] != c.env || !strings.HasPrefix(d[1], "sledge drop tpcb --db "+c.scheme+"://"+srv.User+"@") || strings.Contains(d[1], "REDACTED") {
				t.Errorf("drop suggestion: %s", stderr)
			}
		})
	}
}

// --help gives each flag's default once: where the usage says it in words,
// cobra must not add its own.
func TestHelpGivesEachDefaultOnce(t *testing.T) {
	root := newRoot(t.Context(), &Env{Getenv: func(string) string { return "" }})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.LocalFlags(), c.InheritedFlags()} {
			for _, line := range strings.Split(fs.FlagUsages(), "\n") {
				if strings.Count(line, "(default") > 1 {
					t.Errorf("%s: %s", c.CommandPath(), strings.TrimSpace(line))
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// --version names what the binary was built from: the module, the git
// revision (with its time and whether the tree had changes) and the Go
// toolchain. A binary built by `make build` in a git checkout carries the
// checkout's HEAD.
func TestVersionNamesTheBuild(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "sledge")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/sledge")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	v := string(out)
	for _, want := range []string{"module github.com/sledge-bench/sledge", "built with " + runtime.Version()} {
		if !strings.Contains(v, want) {
			t.Errorf("--version lacks %q:\n%s", want, v)
		}
	}
	// A clone has a .git directory; a git worktree a .git file, which the
	// Go toolchain does not stamp from: then --version must say so.
	if fi, err := os.Stat(filepath.Join(root, ".git")); err == nil && fi.IsDir() {
		head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
		if err != nil {
			t.Fatal(err)
		}
		rev := strings.TrimSpace(string(head))
		// The first line is the module's pseudo-version the toolchain
		// derives from the revision, or "devel <revision>".
		first, _, _ := strings.Cut(v, "\n")
		if !strings.Contains(v, "revision "+rev) || !strings.HasPrefix(first, "sledge ") || !strings.Contains(first, rev[:12]) {
			t.Errorf("--version does not name HEAD %s:\n%s", rev, v)
		}
	} else if !strings.Contains(v, "revision unknown") {
		t.Errorf("--version claims a revision it cannot know:\n%s", v)
	}
}
