package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRunFlags runs random argument vectors through Main for run, build
// and check. Whatever the arguments, sledge must not panic (Main turns a
// panic into exit 70, "internal error"), must exit 0, 1, 2 or 130, and a
// failure must be one line on stderr starting with "sledge: " (store
// warnings, "sledge: warning: …", aside) with nothing on stdout.
//
// It never runs long and never reaches a server: the last arguments are
// always --db with a SQLite file in a directory that does not exist, so a
// command that gets past its options fails at Open (pflag keeps the last
// value; after a "--" they become extra arguments, which are refused). The
// arguments may not contain "/", so script files (-f) are read only from
// the fuzz's own directory, which holds a few scripts; stdin ("-f -") is
// an empty file; the job store is in the fuzz's own data home.
func FuzzRunFlags(f *testing.F) {
	dir := f.TempDir()
	scripts := filepath.Join(dir, "scripts")
	home := filepath.Join(dir, "home")
	for _, d := range []string{scripts, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for name, text := range map[string]string{
		"ok.sql":    "\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
		"pipe.sql":  "\\startpipeline\nSELECT 1;\n\\endpipeline\n",
		"comp.sql":  "SELECT 1 \\; SELECT 2;\n",
		"bad.sql":   "\\set x 1 +\n",
		"cond.sql":  "\\if :client_id = 0\nSELECT 1;\n\\else\nSELECT 2;\n\\endif\n",
		"empty.sql": "",
		"shell.sql": "\\setshell x echo 1\n\\shell true\nSELECT :x;\n",
	} {
		if err := os.WriteFile(filepath.Join(scripts, name), []byte(text), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		f.Fatal(err)
	}
	stdin := os.Stdin
	os.Stdin = devNull // "-f -" reads an empty script, never the terminal
	f.Cleanup(func() { os.Stdin = stdin; devNull.Close() })
	wd, err := os.Getwd()
	if err != nil {
		f.Fatal(err)
	}
	refused := "sqlite://" + filepath.Join(dir, "no-such-dir", "x.db")

	for _, s := range []struct {
		cmd  uint8
		args string
	}{
		{0, "--iterations 1"},
		{0, "-c 4 -T 10 -P 1 --mode client"},
		{0, "-T 5 -t 10"},
		{0, "--max-tries 3 --max-retries 2"},
		{0, "--max-tries 0"},
		{0, "--seed 1 --random-seed time"},
		{0, "--random-seed often"},
		{0, "tpcb --builtin sel@3 --builtin tpcb-like@1 -M prepared"},
		{0, "tpcb -b s"},
		{0, "tpcc --protocol extended"},
		{0, "-f ok.sql@2 -f cond.sql -D scale=5 -D x=1 -M extended -r"},
		{0, "-f comp.sql -M prepared"},
		{0, "-f pipe.sql -M simple"},
		{0, "-f pipe.sql -M extended"},
		{0, "-f bad.sql"},
		{0, "-f empty.sql"},
		{0, "-f - -t 1"},
		{0, "-f ok.sql@0"},
		{0, "-f ok.sql -D foo"},
		{0, "-f ok.sql --mode client"},
		{0, "-f shell.sql -s 3"},
		{0, "-R -5 -L 0.5"},
		{0, "-R NaN"},
		{0, "--rampup 1e9 --duration 1e9"},
		{0, "--reconnect 1s,100ms"},
		{0, "--reconnect off --stop-timeout 0s"},
		{0, "--progress -1"},
		{0, "-j 0 -n"},
		{0, "-c 4 --workers 2"},
		{0, "--workers 0 --listen :7077"},
		{0, "--workers 2 --coordinator a:b:c --worker-index 1"},
		{0, "--worker-index 3 --worker-timeout -1s"},
		{0, "--vus 99999999999 --iterations -1"},
		{0, "--all-warehouses --keying-thinking --per-type-cpu --no-cost --raise-error"},
		{0, "-- --db"},
		{0, "--help"},
		{1, "--warehouses 0"},
		{1, "tpcb --scale 30000"},
		{1, "tpcb -s 1 --build-vus 0"},
		{1, "script"},
		{1, "--seed 18446744073709551615 --json"},
		{2, "tpcb --json"},
		{2, "nosuch"},
		{2, "tpcc extra"},
	} {
		f.Add(s.cmd, s.args)
	}
	commands := []string{"run", "build", "check"}
	f.Fuzz(func(t *testing.T, cmd uint8, argText string) {
		args := strings.Split(argText, " ")
		if len(args) > 40 || strings.Contains(argText, "/") || strings.ContainsRune(argText, 0) {
			t.Skip("too many arguments, a path outside the fuzz's directory, or a NUL")
		}
		if err := os.Chdir(scripts); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := os.Chdir(wd); err != nil {
				t.Fatal(err)
			}
		}()
		argv := append([]string{commands[int(cmd)%len(commands)]}, args...)
		argv = append(argv, "--db", refused)
		var out, errb bytes.Buffer
		env := Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
			switch k {
			case "XDG_DATA_HOME", "HOME":
				return home
			}
			return ""
		}}
		code := Main(context.Background(), argv, env)
		stdout, stderr := out.String(), errb.String()
		if strings.Contains(stderr+stdout, "goroutine ") || strings.Contains(stderr, "internal error") {
			t.Fatalf("%q: exit %d, a panic:\n%s%s", argv, code, stdout, stderr)
		}
		switch code {
		case ExitOK:
			return // --help, --version
		case ExitFailure, ExitUsage, ExitInterrupted:
		default:
			t.Fatalf("%q: exit %d, want 0, 1, 2 or 130; stderr %q", argv, code, stderr)
		}
		if stdout != "" {
			t.Errorf("%q: exit %d with output on stdout: %q", argv, code, stdout)
		}
		if msg := failureLines(stderr); len(msg) != 1 {
			t.Errorf("%q: exit %d: stderr is not one line starting with \"sledge: \": %q", argv, code, stderr)
		}
	})
}

// failureLines are the lines of stderr other than store warnings; each
// must start with "sledge: ", else it is returned with them too.
func failureLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		if strings.HasPrefix(l, "sledge: warning: ") {
			continue
		}
		out = append(out, l)
	}
	for _, l := range out {
		if !strings.HasPrefix(l, "sledge: ") {
			return append(out, "") // never one line
		}
	}
	return out
}
