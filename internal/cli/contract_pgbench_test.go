package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The contract of `sledge pgbench` (docs/contracts.md): pgbench's exit
// codes 0, 1 and 2; pgbench's report first on stdout, sledge's part after
// a blank line and "--- sledge ---". On SQLite through --db: no server
// needed.
func TestContractPgbench(t *testing.T) {
	home := t.TempDir()
	url := "sqlite://" + filepath.Join(home, "pgbench.db")
	if stdout, stderr, code := runCLI(t, home, "pgbench", "--db", url, "-i", "-s", "1"); code != 0 || stdout != "" {
		t.Fatalf("pgbench -i: exit %d, stdout %q: %s", code, stdout, stderr)
	}
	stdout, stderr, code := runCLI(t, home, "pgbench", "--db", url, "-c", "2", "-t", "3")
	if code != 0 {
		t.Fatalf("pgbench -c 2 -t 3: exit %d: %s", code, stderr)
	}
	pg, sledge, ok := strings.Cut(stdout, "\n\n--- sledge ---\n")
	if !ok || !regexp.MustCompile(`^job [0-9]+\n`).MatchString(sledge) {
		t.Fatalf("no sledge part after a blank line and --- sledge --- with the job first:\n%s", stdout)
	}
	for _, p := range []string{`^pgbench \(`, `\ntransaction type: <builtin: TPC-B \(sort of\)>\n`, `\nnumber of clients: 2\n`,
		`\nnumber of transactions actually processed: 6/6\n`, `\nlatency average = [0-9.]+ ms\n`,
		`\ntps = [0-9.]+ \(without initial connection time\)$`} {
		if !regexp.MustCompile(p).MatchString(pg) {
			t.Errorf("pgbench's part has no %q:\n%s", p, pg)
		}
	}
	// -C on any database: pgbench's connection line and tps with it;
	// --failures-detailed's lines.
	stdout, stderr, code = runCLI(t, home, "pgbench", "--db", url, "-C", "-c", "2", "-t", "3", "--failures-detailed", "-P", "1", "--progress-timestamp")
	if code != 0 {
		t.Fatalf("pgbench -C: exit %d: %s", code, stderr)
	}
	for _, p := range []string{`\nnumber of serialization failures: 0 \(0\.000%\)\n`, `\nnumber of deadlock failures: 0 \(0\.000%\)\n`,
		`\naverage connection time = [0-9.]+ ms\n`, `\ntps = [0-9.]+ \(including reconnection times\)\n`} {
		if !regexp.MustCompile(p).MatchString(stdout) {
			t.Errorf("pgbench -C --failures-detailed: no %q:\n%s", p, stdout)
		}
	}
	for _, args := range [][]string{{"-V"}, {"--help"}, {"-b", "list"}, {"--show-script", "tpcb-like"}} {
		if _, stderr, code := runCLI(t, home, append([]string{"pgbench"}, args...)...); code != 0 {
			t.Errorf("pgbench %q: exit %d, want 0: %s", args, code, stderr)
		}
	}
	for _, args := range [][]string{{"-x"}, {"-c", "0"}, {"-l"}, {"--db", "sqlite://" + filepath.Join(home, "none", "x.db"), "-t", "1"}} {
		_, stderr, code := runCLI(t, home, append([]string{"pgbench"}, args...)...)
		if code != 1 || !strings.HasPrefix(stderr, "sledge pgbench: error: ") {
			t.Errorf("pgbench %q: exit %d, want 1 with sledge pgbench's error: %s", args, code, stderr)
		}
	}
	script := filepath.Join(home, "fail.sql")
	if err := os.WriteFile(script, []byte("SELECT * FROM no_such_table;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = runCLI(t, home, "pgbench", "--db", url, "-f", script, "-t", "2")
	if code != 2 || !strings.Contains(stdout, "number of failed transactions: 2 (100.000%)") {
		t.Errorf("failed transactions: exit %d, want 2:\n%s\n%s", code, stdout, stderr)
	}
}
