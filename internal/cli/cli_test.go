package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sledge-bench/sledge/internal/testdb"
)

// runCLI runs sledge in-process with a private data home, and returns its
// output and exit status.
func runCLI(t *testing.T, home string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		switch k {
		case "XDG_DATA_HOME":
			return home
		case "HOME":
			return home
		}
		return ""
	}}
	code = Main(context.Background(), args, env)
	return out.String(), errb.String(), code
}

var (
	builtOnce sync.Once
	builtPath string
	builtErr  string
)

// builtDB returns a fresh copy of a one-warehouse TPC-C SQLite database,
// built once per test binary.
func builtDB(t *testing.T) string {
	t.Helper()
	builtOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sledge-cli-test-")
		if err != nil {
			builtErr = err.Error()
			return
		}
		builtPath = filepath.Join(dir, "tpcc.db")
		if _, stderr, code := runCLI(t, dir, "build", "--db", "sqlite://"+builtPath, "--seed", "7"); code != 0 {
			builtErr = stderr
		}
	})
	if builtErr != "" {
		t.Fatalf("build failed: %s", builtErr)
	}
	dst := filepath.Join(t.TempDir(), "tpcc.db")
	copyFile(t, builtPath, dst)
	return dst
}

// sharedDB is a SQLite database built once per test binary by `sledge
// build` with args (its URL appended); each test takes a fresh copy.
type sharedDB struct {
	name string   // the file's name: "tpch.db"
	args []string // the build command, without --db
	once sync.Once
	path string
	err  string
}

// copy returns a fresh copy of the database, building it first if no
// test has.
func (b *sharedDB) copy(t *testing.T) string {
	t.Helper()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "sledge-cli-"+strings.TrimSuffix(b.name, ".db")+"-")
		if err != nil {
			b.err = err.Error()
			return
		}
		b.path = filepath.Join(dir, b.name)
		args := append(append([]string{}, b.args...), "--db", "sqlite://"+b.path, "--no-job")
		if _, stderr, code := runCLI(t, dir, args...); code != 0 {
			b.err = stderr
		}
	})
	if b.err != "" {
		t.Fatalf("%s failed: %s", strings.Join(b.args, " "), b.err)
	}
	dst := filepath.Join(t.TempDir(), b.name)
	copyFile(t, b.path, dst)
	return dst
}

// remove deletes the database built, if any.
func (b *sharedDB) remove() {
	if b.path != "" {
		os.RemoveAll(filepath.Dir(b.path))
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtPath != "" {
		os.RemoveAll(filepath.Dir(builtPath))
	}
	if twoWHPath != "" {
		os.RemoveAll(filepath.Dir(twoWHPath))
	}
	tpchBuilt.remove()
	chBuilt.remove()
	binCleanup()
	for _, b := range []*pgBuilt{tpcc4Built, tpcb1Built} {
		if err := b.drop(); err != nil {
			fmt.Fprintln(os.Stderr, "drop", b.name, err)
		}
	}
	for _, l := range []*testdb.Lazy{pgLazy, mariaLazy} {
		if err := l.Stop(); err != nil && code == 0 {
			fmt.Fprintln(os.Stderr, "stop", l.Started().Kind, err)
			code = 1
		}
	}
	os.Exit(code)
}

// Bad input: one line on stderr that says what is wrong, a non-zero
// status, no stack trace.
func TestBadInputIsOneClearLine(t *testing.T) {
	home := t.TempDir()
	empty := "sqlite://" + filepath.Join(home, "empty.db")
	notDir := filepath.Join(home, "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown mode", []string{"run", "--mode", "bogus"}, ExitUsage, `unknown mode "bogus"`},
		{"procedure on sqlite", []string{"run", "--mode", "procedure"}, ExitUsage, "sqlite has no stored procedures; use --mode client or prepared"},
		{"pipeline on sqlite", []string{"run", "--mode", "pipeline"}, ExitUsage, "sqlite has no pipeline mode: in-process SQL has no round trips to save; use --mode client or prepared"},
		{"block on sqlite", []string{"run", "--mode", "block"}, ExitUsage, "sqlite has no block mode: it has no procedural language to run an anonymous block in; use --mode client or prepared"},
		{"batched tpcb", []string{"run", "tpcb", "--mode", "batched", "--db", empty}, ExitUsage, "tpcb: --mode batched has no set-oriented form here (each statement touches one row of its own table); use prepared or pipeline"},
		{"zero warehouses", []string{"build", "--warehouses", "0", "--db", empty}, ExitUsage, "--warehouses must be at least 1"},
		{"warehouses not a number", []string{"build", "--warehouses", "many"}, ExitUsage, `invalid value "many" for "--warehouses" flag: want a whole number`},
		{"zero build vus", []string{"build", "--build-vus", "0", "--db", empty}, ExitUsage, "--build-vus must be at least 1"},
		{"zero vus", []string{"run", "--vus", "0"}, ExitUsage, "--vus must be at least 1"},
		{"negative duration", []string{"run", "--duration", "-5s"}, ExitUsage, "--duration must be positive"},
		{"duration with a bad unit", []string{"run", "--duration", "60x"}, ExitUsage, "want a duration such as 30 (seconds), 90s or 5m"},
		{"both -T and -t", []string{"run", "-T", "5", "-t", "10"}, ExitUsage, "give either -T/--duration or -t/--iterations"},
		{"bad protocol", []string{"run", "-M", "fast"}, ExitUsage, `--protocol "fast": use simple, extended or prepared`},
		{"negative rate", []string{"run", "-R", "-5"}, ExitUsage, "--rate must be a positive number"},
		{"bad reconnect", []string{"run", "--reconnect", "soon"}, ExitUsage, `--reconnect "soon": want off`},
		{"zero stop timeout", []string{"run", "--stop-timeout", "0s"}, ExitUsage, "--stop-timeout must be positive"},
		{"bad random seed", []string{"run", "--random-seed", "often"}, ExitUsage, `--random-seed "often": want a whole number, time or rand`},
		{"negative iterations", []string{"run", "--iterations", "-1"}, ExitUsage, "--iterations must not be negative"},
		{"unknown flag", []string{"run", "--warp", "9"}, ExitUsage, "unknown flag: --warp"},
		{"unknown command", []string{"launch"}, ExitUsage, `unknown command "launch"`},
		{"unknown workload", []string{"run", "tpcz"}, ExitUsage, `unknown workload "tpcz"`},
		{"unknown scheme", []string{"run", "--db", "oracle://u:secret@127.0.0.1/x"}, ExitUsage, `unknown scheme "oracle": known schemes are`},
		{"not a url", []string{"run", "--db", "just-a-path.db"}, ExitUsage, "bad database URL just-a-path.db: no scheme"},
		{"missing directory", []string{"build", "--db", "sqlite:///nonexistent-dir/x.db"}, ExitFailure, "/nonexistent-dir"},
		{"path under a file", []string{"build", "--db", "sqlite://" + notDir + "/x.db"}, ExitFailure, notDir},
		{"run without schema", []string{"run", "--db", empty}, ExitFailure, "no tpcc schema in " + empty + ": run `sledge build tpcc --db " + empty + "` first"},
		{"check without schema", []string{"check", "--db", empty}, ExitFailure, "no tpcc schema in"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, home, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, stderr)
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "sledge: ") {
				t.Errorf("stderr is not one line starting with 'sledge: ': %q", stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q does not say %q", stderr, c.want)
			}
			if strings.Contains(stderr+stdout, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("stack trace in output: %s", stderr)
			}
			if strings.Contains(stderr+stdout, "secret") {
				t.Errorf("password in output: %s", stderr)
			}
		})
	}
}

type summaryJSON struct {
	Workload    string   `json:"workload"`
	Mode        string   `json:"mode"`
	Transport   string   `json:"transport"`
	VUs         int      `json:"vus"`
	MeasuredS   float64  `json:"measured_s"`
	NOPM        *float64 `json:"nopm"`
	TPM         float64  `json:"tpm"`
	TPMSource   string   `json:"tpm_source"`
	Interrupted bool     `json:"interrupted"`
	Total       txJSON   `json:"total"`
	Types       []txJSON `json:"types"`
}

func TestRunEveryModeThenCheck(t *testing.T) {
	for _, mode := range []string{"client", "prepared"} {
		t.Run("mode="+mode, func(t *testing.T) {
			path := builtDB(t)
			url := "sqlite://" + path
			stdout, stderr, code := runCLI(t, t.TempDir(), "run", "--db", url, "--mode", mode,
				"--vus", "3", "--iterations", "150", "--seed", "11", "--json")
			if code != 0 {
				t.Fatalf("run exit %d: %s", code, stderr)
			}
			var s summaryJSON
			if err := json.Unmarshal([]byte(stdout), &s); err != nil {
				t.Fatalf("bad JSON %v: %s", err, stdout)
			}
			if s.Mode != mode || s.Transport != "embedded" || s.TPMSource != "client" || s.VUs != 3 {
				t.Errorf("summary header %+v", s)
			}
			// Every transaction completes: nothing may fail with SQLITE_BUSY.
			if s.Total.Count != 450 || s.Total.Errors != 0 {
				t.Errorf("total %+v, want 450 completed and no errors", s.Total)
			}
			if len(s.Types) != 5 || s.Types[0].Name != "neword" || s.Types[0].Count < 150 {
				t.Errorf("types %+v", s.Types)
			}
			// NOPM comes from the district table: committed New-Orders only.
			neword := s.Types[0]
			wantNOPM := float64(neword.Commits) / (s.MeasuredS / 60)
			if s.NOPM == nil || *s.NOPM < wantNOPM*0.99 || *s.NOPM > wantNOPM*1.01 {
				t.Errorf("NOPM %v, want %.0f from %d committed New-Orders in %.2fs", s.NOPM, wantNOPM, neword.Commits, s.MeasuredS)
			}
			stdout, stderr, code = runCLI(t, t.TempDir(), "check", "--db", url)
			if code != 0 {
				t.Fatalf("check after %s run: exit %d\n%s%s", mode, code, stdout, stderr)
			}
			if !strings.Contains(stdout, "all conditions hold") {
				t.Errorf("check output: %s", stdout)
			}
		})
	}
}

func TestBuildRefusesToLoadOverASchemaAndDropRemovesIt(t *testing.T) {
	path := builtDB(t)
	url := "sqlite://" + path
	_, stderr, code := runCLI(t, t.TempDir(), "build", "--db", url)
	if code != ExitFailure || !strings.Contains(stderr, "a tpcc schema already exists") {
		t.Errorf("build over a schema: exit %d, %q", code, stderr)
	}
	stdout, stderr, code := runCLI(t, t.TempDir(), "drop", "--db", url)
	if code != 0 || !strings.Contains(stdout, "dropped") {
		t.Fatalf("drop: exit %d %s %s", code, stdout, stderr)
	}
	_, stderr, code = runCLI(t, t.TempDir(), "run", "--db", url, "--iterations", "1")
	if code != ExitFailure || !strings.Contains(stderr, "no tpcc schema") {
		t.Errorf("run after drop: exit %d, %q", code, stderr)
	}
}

func TestCheckFailsOnBrokenData(t *testing.T) {
	path := builtDB(t)
	url := "sqlite://" + path
	breakData(t, path, "UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1")
	stdout, _, code := runCLI(t, t.TempDir(), "check", "--db", url)
	if code != ExitFailure {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(stdout, "fail") || !strings.Contains(stdout, "failed") {
		t.Errorf("output does not report the failure:\n%s", stdout)
	}
}

func TestDefaultDatabaseIsBuiltOnFirstRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a schema")
	}
	home := t.TempDir()
	stdout, stderr, code := runCLI(t, home, "run", "--rampup", "0s", "--duration", "2s")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := filepath.Join(home, "sledge", "tpcc.db")
	if !strings.Contains(stderr, "no tpcc schema in sqlite://"+want+" yet: building one first") {
		t.Errorf("does not say it builds first: %s", stderr)
	}
	if !strings.Contains(stdout, "NOPM") || !strings.Contains(stdout, "neword") {
		t.Errorf("no summary: %s", stdout)
	}
	if _, err := os.Stat(want); err != nil {
		t.Errorf("default database not at %s: %v", want, err)
	}
}
