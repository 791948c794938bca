package runner

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/workload"
)

// resolveArgs resolves `sledge run ARGS --json` as the command does, up to
// resolveRun: the same flags, workload and checks, with no database.
func resolveArgs(t *testing.T, getenv func(string) string, args ...string) (*resolved, error) {
	t.Helper()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c Common
	var ro RunOptions
	CommonFlags(fs, &c, "run", 0)
	RunFlags(fs, &ro)
	// A database named, never opened: resolveRun has no URL to open.
	args = append(args, "--json", "--db", "sqlite://"+t.TempDir()+"/none.db")
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	w, _, err := c.Resolve(fs, "run", fs.Args(), getenv)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	ro.Seed, ro.SeedSet, ro.Explicit, ro.JSON = c.Seed, c.SeedSet, c.Explicit, c.JSON
	if err := ro.FlagsSet(fs, w); err != nil {
		return nil, err
	}
	return resolveRun(RunEnv{Stderr: io.Discard, Getenv: getenv}, &ro, w)
}

func noEnv(string) string { return "" }

// resolveRun refuses a bad combination of run options with the line and
// exit status the command has always given (2), before anything is opened.
func TestResolveRunRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "nosuch"}, `unknown mode "nosuch"`},
		{[]string{"--protocol", "bogus"}, `--protocol "bogus": use simple, extended or prepared`},
		{[]string{"tpcc", "--protocol", "extended"}, "--protocol extended applies to scripts (-f); tpcc takes --mode"},
		{[]string{"--protocol", "simple", "--mode", "prepared"}, "--protocol simple and --mode prepared disagree"},
		{[]string{"script", "-b", "tpcb-like", "--mode", "client"}, "--mode applies to workloads with named statements"},
		{[]string{"--rate", "-1"}, "--rate must be a positive number"},
		{[]string{"--latency-limit", "-1"}, "--latency-limit must be a positive number"},
		{[]string{"-j", "0"}, "-j/--jobs must be at least 1"},
		{[]string{"--sampling-rate", "0.5"}, "log sampling (--sampling-rate) is allowed only when logging transactions (-l)"},
		{[]string{"-l", "--aggregate-interval", "7", "--duration", "10s"}, "duration (10s) must be a multiple of aggregation interval (7 s)"},
		{[]string{"--reconnect", "soon"}, `--reconnect "soon": want off, or FIRST,MAX waits`},
		{[]string{"--stop-timeout", "0"}, "--stop-timeout must be positive"},
		{[]string{"--threshold", "p95(nosuch)<5ms"}, `has no transaction type "nosuch"`},
		{[]string{"--threshold", "fast"}, `--threshold "fast": want FIGURE OP NUMBER`},
		{[]string{"--vus", "0"}, "--vus must be at least 1"},
		{[]string{"--vus", "2", "--connections", "4"}, "--connections 4 is more than --vus 2"},
		{[]string{"--progress", "-1"}, "--progress must not be negative"},
		{[]string{"--metrics-linger", "5s"}, "--metrics-linger applies to --metrics"},
		{[]string{"--workers", "0"}, "--workers must be at least 1"},
		{[]string{"--coordinator", "host"}, "--coordinator needs --workers N"},
		{[]string{"--workers", "3", "--vus", "2"}, "--workers 3 is more than --vus 2"},
		{[]string{"--workers", "2", "--vus", "2", "-l"}, "-l/--log with --workers: not supported"},
		{[]string{"--workers", "2", "--vus", "2", "--coordinator", "host"}, "a worker needs --worker-index or $JOB_COMPLETION_INDEX"},
		{[]string{"--workers", "2", "--vus", "2", "--coordinator", "host", "--worker-index", "2"}, "--worker-index 2 out of range 0-1"},
	} {
		rs, err := resolveArgs(t, noEnv, c.args...)
		switch {
		case err == nil:
			t.Errorf("%q: resolved %+v, want %q", c.args, rs, c.want)
		case ExitCode(t.Context(), err, IsUsage) != ExitUsage:
			t.Errorf("%q: %v (exit %d), want a usage error (exit 2)", c.args, err, ExitCode(t.Context(), err, IsUsage))
		case !strings.Contains(err.Error(), c.want):
			t.Errorf("%q: %q, want %q", c.args, err, c.want)
		}
	}
}

// resolveRun gives the steps after it the plan and the choices the
// options make: mode, protocol, role, thresholds.
func TestResolveRunPlan(t *testing.T) {
	index := func(k string) string {
		if k == "JOB_COMPLETION_INDEX" {
			return "1"
		}
		return ""
	}
	for _, c := range []struct {
		name   string
		getenv func(string) string
		args   []string
		check  func(t *testing.T, rs *resolved)
	}{
		{"defaults", noEnv, []string{"tpcc", "--vus", "3", "--seed", "42", "--threshold", "nopm>=1"}, func(t *testing.T, rs *resolved) {
			p := rs.plan
			if p.VUs != 3 || p.Seed != 42 || rs.o.Seed != 42 || len(p.Mix) == 0 || !p.Cost || p.StopTimeout != engine.DefaultStopTimeout {
				t.Errorf("plan %+v", p)
			}
			if rs.role != roleAlone || rs.mode != 0 || rs.script != nil || len(rs.thresholds) != 1 || rs.o.JSON != true {
				t.Errorf("role %d, mode %v, script %v, thresholds %v", rs.role, rs.mode, rs.script, rs.thresholds)
			}
		}},
		{"protocol as mode", noEnv, []string{"tpcc", "-M", "prepared"}, func(t *testing.T, rs *resolved) {
			if rs.mode != workload.ModePrepared || rs.o.Protocol != "" {
				t.Errorf("mode %v, protocol %q; want prepared, reported as the mode", rs.mode, rs.o.Protocol)
			}
		}},
		{"script", noEnv, []string{"script", "-b", "tpcb-like"}, func(t *testing.T, rs *resolved) {
			if rs.script == nil || rs.proto != workload.ProtoSimple || rs.o.Protocol != "simple" || rs.mode != 0 {
				t.Errorf("script %v, protocol %v (%q), mode %v; want a script, simple", rs.script, rs.proto, rs.o.Protocol, rs.mode)
			}
		}},
		{"pgbench controls", noEnv, []string{"--rate", "100", "--latency-limit", "5", "--reconnect", "100ms,5s", "--stop-timeout", "7s", "-C"}, func(t *testing.T, rs *resolved) {
			p := rs.plan
			if p.Rate != 100 || p.LatencyLimit != 5*time.Millisecond || p.StopTimeout != 7*time.Second || !p.ConnectPerTx ||
				p.Reconnect != (engine.Reconnect{Backoff: 100 * time.Millisecond, MaxBackoff: 5 * time.Second}) {
				t.Errorf("plan %+v", p)
			}
		}},
		{"reconnect off", noEnv, []string{"--reconnect", "off"}, func(t *testing.T, rs *resolved) {
			if !rs.plan.Reconnect.Off {
				t.Errorf("reconnect %+v, want off", rs.plan.Reconnect)
			}
		}},
		{"local workers", noEnv, []string{"--workers", "2", "--vus", "4"}, func(t *testing.T, rs *resolved) {
			if rs.role != roleLocal {
				t.Errorf("role %d, want local", rs.role)
			}
		}},
		{"coordinator", noEnv, []string{"--workers", "2", "--vus", "4", "--listen", "0.0.0.0"}, func(t *testing.T, rs *resolved) {
			if rs.role != roleCoordinator || rs.o.Cluster.Listen != "0.0.0.0:7077" {
				t.Errorf("role %d on %q, want the coordinator on 0.0.0.0:7077", rs.role, rs.o.Cluster.Listen)
			}
		}},
		{"worker", index, []string{"--workers", "2", "--vus", "4", "--coordinator", "boss", "--threshold", "tps>1", "--metrics", ":9100"}, func(t *testing.T, rs *resolved) {
			// A worker shows and judges nothing: the coordinator does.
			c := rs.o.Cluster
			if rs.role != roleWorker || c.Coordinator != "boss:7077" || c.WorkerIndex != 1 || rs.thresholds != nil || rs.o.Metrics != "" || !rs.o.JSON {
				t.Errorf("role %d of %q index %d, thresholds %v, metrics %q", rs.role, c.Coordinator, c.WorkerIndex, rs.thresholds, rs.o.Metrics)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs, err := resolveArgs(t, c.getenv, c.args...)
			if err != nil {
				t.Fatalf("%q: %v", c.args, err)
			}
			c.check(t, rs)
		})
	}
}

// resolveRun opens nothing: not the transaction log of -l either (it is
// opened once the database answers).
func TestResolveRunOpensNothing(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if _, err := resolveArgs(t, noEnv, "-l", "--log-prefix", "txlog"); err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("resolveRun left %v (%v)", ents, err)
	}
}

// verdict is the exit status once the summary is out: the run's own
// error, then an interrupt, a missed threshold, failed transactions.
func TestVerdict(t *testing.T) {
	missed := []ThresholdJSON{{Threshold: "tps>1"}}
	for _, c := range []struct {
		name        string
		runErr      error
		interrupted bool
		json        bool
		sum         RunSummary
		code        int
		stderr      string
	}{
		{"clean", nil, false, false, RunSummary{Processed: 5}, ExitOK, ""},
		{"run error first", &ExitError{Code: ExitFailure, Err: io.ErrUnexpectedEOF}, true, false, RunSummary{Failed: 1, Thresholds: missed}, ExitFailure, ""},
		{"interrupted", nil, true, false, RunSummary{Failed: 1, Thresholds: missed}, ExitInterrupted, "sledge: interrupted; the summary covers what was measured until then\n"},
		{"interrupted, json", nil, true, true, RunSummary{}, ExitInterrupted, ""},
		{"threshold over failures", nil, false, false, RunSummary{Failed: 1, Thresholds: missed}, ExitThreshold, ""},
		{"failed", nil, false, false, RunSummary{Failed: 1, Processed: 9}, ExitFailedTx, ""},
	} {
		var stderr strings.Builder
		err := verdict(&stderr, &RunOptions{JSON: c.json}, &engine.Result{Interrupted: c.interrupted}, &c.sum, c.runErr)
		if code := ExitCode(t.Context(), err, IsUsage); code != c.code || stderr.String() != c.stderr {
			t.Errorf("%s: exit %d (%v), stderr %q; want %d, %q", c.name, code, err, stderr.String(), c.code, c.stderr)
		}
	}
}
