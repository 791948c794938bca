package txlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/cli"
	_ "github.com/sledge-bench/sledge/internal/db/postgres" // the databases these tests run on
	_ "github.com/sledge-bench/sledge/internal/db/sqlite"
	"github.com/sledge-bench/sledge/internal/testdb"
)

// The private PostgreSQL, started the first time a test needs it.
var (
	pgServer = testdb.LazyPostgres()
	dbSeq    atomic.Int64
)

func TestMain(m *testing.M) { testdb.Main(m, pgServer) }

// sledge runs the CLI in-process with its job store in home.
func sledge(t *testing.T, home string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := cli.Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "HOME" || k == "XDG_DATA_HOME" {
			return home
		}
		return ""
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code = cli.Main(ctx, args, env)
	return code, out.String(), errb.String()
}

// targets are tpcb databases, built.
func targets(t *testing.T) map[string]func(t *testing.T) string {
	build := func(t *testing.T, u string) string {
		if code, _, stderr := sledge(t, t.TempDir(), "build", "tpcb", "--db", u, "--scale", "1", "--no-job"); code != 0 {
			t.Fatalf("build: exit %d: %s", code, stderr)
		}
		return u
	}
	return map[string]func(t *testing.T) string{
		"sqlite": func(t *testing.T) string { return build(t, "sqlite://"+filepath.Join(t.TempDir(), "tpcb.db")) },
		"postgres": func(t *testing.T) string {
			return build(t, pgURL(t, pgServer.Get(t)))
		},
	}
}

func pgURL(t *testing.T, s *testdb.Server) string {
	name := fmt.Sprintf("txlog_e2e_%d", dbSeq.Add(1))
	s.DropAtEnd(t, name)
	return fmt.Sprintf("postgres://%s:%s@%s:%d/%s", s.User, s.Password, s.Host, s.Port, name)
}

type result struct {
	Transactions int64   `json:"transactions"`
	Failed       int64   `json:"failed"`
	LatencyAvgMS float64 `json:"latency_avg_ms"`
}

func runJSON(t *testing.T, args ...string) result {
	t.Helper()
	code, stdout, stderr := sledge(t, t.TempDir(), append(args, "--json", "--no-job")...)
	if code != 0 {
		t.Fatalf("sledge %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	var r result
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("--json: %v: %s", err, stdout)
	}
	return r
}

// logFile is the one file dir holds whose name starts with prefix.
func logFile(t *testing.T, dir, prefix string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, prefix+".*"))
	if len(m) != 1 {
		t.Fatalf("log files %s.*: %v, want one", prefix, m)
	}
	if want := fmt.Sprintf("%s.%d", prefix, os.Getpid()); filepath.Base(m[0]) != want {
		t.Errorf("log file %s, want %s", filepath.Base(m[0]), want)
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func ints(t *testing.T, line string, n int) []int64 {
	t.Helper()
	f := strings.Fields(line)
	if len(f) != n {
		t.Fatalf("line %q: %d columns, want %d", line, len(f), n)
	}
	out := make([]int64, n)
	for i, s := range f {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("line %q: column %d: %v", line, i+1, err)
		}
		out[i] = v
	}
	return out
}

// `run tpcb -t 50 -c 2 -l`: 100 lines, 50 per client numbered 1..50, whose
// latencies average the report's.
func TestE2ELogPerTransaction(t *testing.T) {
	for name, target := range targets(t) {
		t.Run(name, func(t *testing.T) {
			u := target(t)
			dir := t.TempDir()
			r := runJSON(t, "run", "tpcb", "--db", u, "-t", "50", "-c", "2", "--max-tries", "1", "-l", "--log-prefix", filepath.Join(dir, "x"))
			lines := logFile(t, dir, "x")
			if len(lines) != 100 || r.Transactions != 100 {
				t.Fatalf("%d lines, %d transactions processed, want 100", len(lines), r.Transactions)
			}
			var sum int64
			next := map[int64]int64{}
			start := time.Now().Add(-time.Minute).Unix()
			for _, ln := range lines {
				c := ints(t, ln, 6) // --max-tries 1, no -R: pgbench's six columns
				client, no, us, script, epoch, frac := c[0], c[1], c[2], c[3], c[4], c[5]
				next[client]++
				if client < 0 || client > 1 || no != next[client] || script != 0 || us <= 0 ||
					epoch < start || epoch > time.Now().Unix() || frac < 0 || frac >= 1e6 {
					t.Fatalf("line %q", ln)
				}
				sum += us
			}
			avg := float64(sum) / 100 / 1000 // ms
			// Each line's time is truncated to the microsecond.
			if math.Abs(avg-r.LatencyAvgMS) > 0.002 {
				t.Errorf("the log's latencies average %.4f ms, the report %.4f ms", avg, r.LatencyAvgMS)
			}
		})
	}
}

// `--aggregate-interval 1 -T 3`: a line per second, whose counts add up to
// the transactions processed.
func TestE2ELogAggregate(t *testing.T) {
	for name, target := range targets(t) {
		t.Run(name, func(t *testing.T) {
			u := target(t)
			dir := t.TempDir()
			r := runJSON(t, "run", "tpcb", "--db", u, "-T", "3", "-c", "2", "-l", "--aggregate-interval", "1", "--log-prefix", filepath.Join(dir, "a"))
			lines := logFile(t, dir, "a")
			// 3 s from a start inside a second: 3 or 4 whole seconds, and
			// the transactions in flight at the end may end in one more.
			if len(lines) < 3 || len(lines) > 5 {
				t.Fatalf("%d lines for 3 s by 1 s: %q", len(lines), lines)
			}
			var n int64
			for i, ln := range lines {
				c := ints(t, ln, 15)
				if i > 0 && c[0] != ints(t, lines[i-1], 15)[0]+1 {
					t.Errorf("interval %d starts at %d after %q", i, c[0], lines[i-1])
				}
				if c[1] > 0 && (c[4] > c[5] || c[2] < c[1]*c[4] || c[2] > c[1]*c[5]) {
					t.Errorf("line %q: sum, min and max disagree", ln)
				}
				n += c[1]
			}
			if n != r.Transactions {
				t.Errorf("the intervals count %d transactions, the report %d", n, r.Transactions)
			}
		})
	}
}

// The layout of sledge's files is pgbench's: the same columns, of the same
// kinds, with each set of options, against the same database.
func TestE2ELogLayoutAsPgbench(t *testing.T) {
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		t.Skip("pgbench is not installed: no layout to compare with")
	}
	s := pgServer.Get(t)
	u := targets(t)["postgres"](t)
	dbname := u[strings.LastIndex(u, "/")+1:]
	for _, c := range []struct {
		name string
		opts []string
	}{
		{"plain", []string{"-t", "20", "--max-tries", "1"}},
		{"retries", []string{"-t", "20", "--max-tries", "3"}},
		{"rate", []string{"-t", "20", "--max-tries", "1", "-R", "500"}},
		{"rate, limit and retries", []string{"-t", "20", "--max-tries", "2", "-R", "500", "-L", "50"}},
		{"aggregate", []string{"-T", "2", "--max-tries", "1", "--aggregate-interval", "1"}},
		{"aggregate, rate, limit and retries", []string{"-T", "2", "--max-tries", "2", "-R", "200", "-L", "50", "--aggregate-interval", "1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"-n", "-c", "2", "-l", "--log-prefix", filepath.Join(dir, "pg"),
				"-h", s.Host, "-p", strconv.Itoa(s.Port), "-U", s.User}, c.opts...)
			cmd := exec.Command(pgbench, append(args, dbname)...)
			cmd.Env = append(os.Environ(), "PGPASSWORD="+s.Password)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("pgbench: %v: %s", err, out)
			}
			theirs, _ := filepath.Glob(filepath.Join(dir, "pg.*"))
			if len(theirs) != 1 {
				t.Fatalf("pgbench's files: %v", theirs)
			}
			b, _ := os.ReadFile(theirs[0])
			pg := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			runJSON(t, append([]string{"run", "tpcb", "--db", u, "-c", "2", "-l", "--log-prefix", filepath.Join(dir, "sl")}, c.opts...)...)
			sl := logFile(t, dir, "sl")
			if len(pg) == 0 || len(sl) == 0 || pg[0] == "" {
				t.Fatalf("pgbench wrote %d lines, sledge %d", len(pg), len(sl))
			}
			if want, got := shapes(pg), shapes(sl); !sub(got, want) {
				t.Errorf("sledge's line shapes %v are not among pgbench's %v\npgbench: %q\nsledge:  %q", got, want, pg[0], sl[0])
			}
		})
	}
}

// shapes are the distinct layouts of lines: per column, a number or the
// word in it ("failed", "skipped").
func shapes(lines []string) map[string]bool {
	out := map[string]bool{}
	for _, ln := range lines {
		f := strings.Fields(ln)
		for i, s := range f {
			if _, err := strconv.ParseInt(s, 10, 64); err == nil {
				f[i] = "N"
			}
		}
		out[strings.Join(f, " ")] = true
	}
	return out
}

// sub reports whether every shape of got is one of want's, counting
// "skipped" and "failed" lines as the numbered ones (a run may have none).
func sub(got, want map[string]bool) bool {
	norm := func(s string) string {
		return strings.NewReplacer("skipped", "N", "failed", "N").Replace(s)
	}
	w := map[string]bool{}
	for s := range want {
		w[norm(s)] = true
	}
	for s := range got {
		if !w[norm(s)] {
			return false
		}
	}
	return true
}

// pgbench's checks of the log options: bad input, exit 2, one line.
func TestE2ELogOptionChecks(t *testing.T) {
	u := "sqlite://" + filepath.Join(t.TempDir(), "none.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--aggregate-interval", "1"}, "allowed only when logging transactions (-l)"},
		{[]string{"--sampling-rate", "0.5"}, "allowed only when logging transactions (-l)"},
		{[]string{"--log-prefix", "x"}, "allowed only when logging transactions (-l)"},
		{[]string{"-l", "--sampling-rate", "0.5", "--aggregate-interval", "1"}, "cannot be used at the same time"},
		{[]string{"-l", "--sampling-rate", "0"}, "invalid --sampling-rate"},
		{[]string{"-l", "--sampling-rate", "1.5"}, "invalid --sampling-rate"},
		{[]string{"-l", "--aggregate-interval", "0"}, "at least 1"},
		{[]string{"-l", "--aggregate-interval", "-3"}, "at least 1"},
		{[]string{"-l", "--aggregate-interval", "2", "-T", "3"}, "must be a multiple of aggregation interval"},
		{[]string{"-l", "--aggregate-interval", "5", "-T", "3"}, "must not be higher than test duration"},
		{[]string{"-l", "--log-prefix", ""}, "--log-prefix must not be empty"},
	} {
		code, _, stderr := sledge(t, t.TempDir(), append([]string{"run", "tpcb", "--db", u, "--no-job"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, %q; want 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
}
