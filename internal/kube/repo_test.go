package kube

import (
	"debug/elf"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// repoRoot is the module's root, two levels up from this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

// The Kubernetes API's packages are big: only this package, which only
// `sledge kube` uses, imports them (tests may, to read manifests back).
func TestK8sImportsStayInKube(t *testing.T) {
	root := repoRoot(t)
	kubeDir := filepath.Join(root, "internal", "kube")
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == kubeDir {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "k8s.io/") || strings.HasPrefix(p, "sigs.k8s.io/") {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s imports %s: only internal/kube may", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files under %s: the walk missed the repository", files, root)
	}
}

// The Dockerfile's build stage, run here: its go build line (environment
// and flags as written) must build, and the binary must be static, since
// the distroless static image has no libc or dynamic loader.
func TestDockerfileStaticBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds sledge without cgo: about a minute")
	}
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "RUN ") && strings.Contains(l, " go build ") {
			line = strings.TrimPrefix(l, "RUN ")
		}
	}
	if line == "" {
		t.Fatal("no RUN … go build line in the Dockerfile")
	}
	words := shellWords(t, line)
	var env []string
	for len(words) > 0 && strings.Contains(words[0], "=") {
		env = append(env, words[0])
		words = words[1:]
	}
	if len(words) < 2 || words[0] != "go" || words[1] != "build" {
		t.Fatalf("Dockerfile build line %q: want [VAR=value…] go build …", line)
	}
	for _, want := range []string{"CGO_ENABLED=0"} {
		if !slices.Contains(env, want) {
			t.Errorf("the build line sets %q, want %s", env, want)
		}
	}
	for _, want := range []string{"-trimpath", "-ldflags=-s -w", "./cmd/sledge"} {
		if !slices.Contains(words, want) {
			t.Errorf("the build line %q lacks %s", line, want)
		}
	}
	out := filepath.Join(t.TempDir(), "sledge")
	args := words[1:]
	for i := range args {
		if args[i] == "-o" && i+1 < len(args) {
			args[i+1] = out
		}
	}
	if !slices.Contains(args, out) {
		t.Fatalf("the build line %q has no -o", line)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, msg)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary has a PT_INTERP header: it needs a dynamic loader, which distroless static lacks")
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %q (%v)", libs, err)
	}
	// -s -w: no symbol table; the image stays small.
	if s := f.Section(".symtab"); s != nil {
		t.Error("the binary has a symbol table: -ldflags=-s did not apply")
	}
}

// shellWords splits a shell command line on blanks, with single quotes
// (all the Dockerfile uses) holding blanks in a word.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	in, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted = !quoted
			in = true
		case (r == ' ' || r == '\t') && !quoted:
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quote in %q", line)
	}
	if in {
		words = append(words, w.String())
	}
	return words
}
