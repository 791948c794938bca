package runner

import (
	"errors"
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"fmt"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/txlog"
	"github.com/sledge-bench/sledge/internal/workload"
	"math/rand/v2"
)

// RunFlags binds run's options to fs, with their defaults: the command
// line's flags (cobra adds them to `sledge run`), whose long names are a
// spec's option names. The common ones (--db, --json, --seed, the
// workloads' own, --jobs-db, --no-job) are the command line's.
func RunFlags(fs *pflag.FlagSet, o *RunOptions) {
	fs.IntVarP(&o.VUs, "vus", "c", 1, "virtual users (terminals), each with its own connection unless --connections (pgbench -c)")
	fs.IntVar(&o.Connections, "connections", 0, "connections shared by the virtual users, at most --vus: each virtual user takes one only for each transaction; 0: one per virtual user")
	o.Rampup = 10 * time.Second
	fs.Var(secondsValue{&o.Rampup}, "rampup", "warm-up before the measured interval, not counted (default 10s for tpcc, 0 for tpcb and scripts)")
	fs.Lookup("rampup").DefValue = "0" // the usage gives the per-workload defaults
	o.Duration = time.Minute
	fs.VarP(secondsValue{&o.Duration}, "duration", "T", "measured interval: 30 (seconds), 90s, 5m (pgbench -T)")
	fs.IntVarP(&o.Iterations, "iterations", "t", 0, "transactions per virtual user instead of a timed run (pgbench -t)")
	fs.BoolVar(&o.KeyingThinking, "keying-thinking", false, "sleep TPC-C keying and think times around each transaction")
	fs.StringVar(&o.Mode, "mode", "", "procedure, client, prepared, batched, pipeline or block (default: procedure where the database has procedures)")
	fs.IntVar(&o.MaxRetries, "max-retries", 10, "retries of a transaction after a deadlock, serialization failure or lock timeout")
	fs.IntVar(&o.MaxTries, "max-tries", 0, "pgbench's form of --max-retries: tries in all, 1 = no retry")
	fs.Float64VarP(&o.Rate, "rate", "R", 0, "throttle to this many transactions per second in all, on a Poisson schedule; latency counts from the schedule (pgbench -R)")
	fs.Float64VarP(&o.LatencyLimit, "latency-limit", "L", 0, "count transactions slower than this many milliseconds as late; with --rate, skip those already that late (pgbench -L)")
	fs.BoolVarP(&o.ConnectPerTx, "connect", "C", false, "open a new connection for every transaction, its time part of the transaction's latency (pgbench -C); not with --connections")
	fs.BoolVar(&o.FailuresDetailed, "failures-detailed", false, "split failed transactions into serialization failures and deadlocks in the report and in -l logs (pgbench --failures-detailed)")
	fs.BoolVar(&o.VerboseErrors, "verbose-errors", false, "print every error that fails or retries a transaction to stderr, with its virtual user and try (pgbench --verbose-errors)")
	fs.BoolVar(&o.ProgressTimestamp, "progress-timestamp", false, "with --progress: start each progress line with the Unix time instead of the time since the start (pgbench --progress-timestamp)")
	fs.BoolVarP(&o.PerCommand, "report-per-command", "r", false, "report the average latency and failures of every statement or script command (pgbench -r)")
	fs.StringVarP(&o.Protocol, "protocol", "M", "", "how script SQL travels: simple, extended or prepared (pgbench -M); for tpcb and tpcc, simple means --mode client and prepared --mode prepared")
	fs.StringVar(&o.RandomSeed, "random-seed", "", "pgbench's form of --seed: a number, time or rand")
	fs.DurationVar(&o.StopTimeout, "stop-timeout", engine.DefaultStopTimeout, "how long to wait after the end for transactions in flight; then they are cancelled and their virtual users reported stuck")
	fs.DurationVar(&o.TxTimeout, "tx-timeout", 5*time.Minute, "cancel a transaction (retries included) that runs longer than this, so an iterations run cannot wait forever on a server that stopped answering; 0: no limit")
	fs.StringVar(&o.Reconnect, "reconnect", "100ms,5s", "after a lost connection: off, or the first and the longest wait between attempts (doubling), as FIRST,MAX")
	fs.BoolVarP(&o.Log, "log", "l", false, "write each transaction's time to the file PREFIX.PID in pgbench's columns (pgbench -l; docs/pgbench.md, Logs)")
	fs.StringVar(&o.LogPrefix, "log-prefix", txlog.DefaultPrefix, "with -l: the log file's name before .PID, a path or a name in the current directory (pgbench --log-prefix)")
	fs.IntVar(&o.AggregateInterval, "aggregate-interval", 0, "with -l: one line of sums per this many seconds instead of one per transaction (pgbench --aggregate-interval)")
	fs.Float64Var(&o.SamplingRate, "sampling-rate", 0, "with -l: log only this fraction of the transactions, drawn at random, such as 0.01 (pgbench --sampling-rate)")
	fs.IntVarP(&o.Threads, "jobs", "j", 1, "on event loops (io=loop in the URL, or no io= and at least 16 connections per core): the event loops (threads) the virtual users share (loopwait=epoll|io_uring in the URL: how they wait); else accepted for pgbench command lines and ignored")
	fs.BoolVarP(&o.NoVacuum, "no-vacuum", "n", false, "accepted for pgbench command lines and ignored: sledge never vacuums or truncates before a run")
	_ = fs.MarkHidden("jobs")
	_ = fs.MarkHidden("no-vacuum")
	fs.BoolVar(&o.RaiseError, "raise-error", false, "stop a virtual user at its first failed transaction (HammerDB's raise-error)")
	fs.IntVarP(&o.Progress, "progress", "P", 0, "print a progress line to stderr every N seconds instead of the progress bar (pgbench -P): ramp-up lines marked, a last one for the measured interval's end; 0: off")
	fs.BoolVar(&o.NoCost, "no-cost", false, "do not measure the cost per transaction (round trips, bytes, CPU, context switches)")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of sledge itself to this file (go tool pprof reads it): where the client spends its time")
	fs.StringArrayVar(&o.Thresholds, "threshold", nil, "a pass/fail criterion on the result, as in k6: 'nopm>=10000', 'p95(new_order)<50ms', 'error_rate<0.01'; repeatable; a missed one exits 99 (docs/thresholds.md)")
	fs.StringVar(&o.Metrics, "metrics", "", "serve live Prometheus metrics at http://HOST:PORT/metrics while the run goes on, such as 127.0.0.1:9464, or :9464 on every interface (docs/metrics.md)")
	fs.DurationVar(&o.MetricsLinger, "metrics-linger", 0, "with --metrics: go on serving this long after the run, so that a last scrape reads its final counts")
	clusterFlags(fs, &o.Cluster)
	AgentFlags(fs, &o.Agent)
	fs.BoolVar(&o.PerTypeCPU, "per-type-cpu", false, "also measure client CPU and context switches per transaction type, by holding each virtual user on its own OS thread (slows the client: see docs/cost.md)")
}

// AgentFlags binds the flags that say where the server's side of the cost
// is read (issue 25; docs/cost.md, "Server side"): run's and compare's.
func AgentFlags(fs *pflag.FlagSet, o *AgentOptions) {
	fs.StringVar(&o.Addr, "agent", "", "read the server's side (CPU, context switches, run-queue delay, thread states, port bytes, its host) from sledge agent at `HOST:PORT` (default port 7078), or a URL (https:// for TLS); checked before the run: exit 1 if it does not answer or does not find the server")
	fs.StringVar(&o.TokenFile, "agent-token-file", "", "with --agent: a file holding the agent's token (default: $SLEDGE_AGENT_TOKEN)")
	fs.StringVar(&o.Target, "agent-target", "", "with --agent: what the agent looks for: port=N, pid=N or process=NAME (default: the database URL's port; a unix socket URL: PostgreSQL's port from the socket, else 5432; MariaDB's 3306)")
	fs.StringVar(&o.CAFile, "agent-ca", "", "with --agent: the PEM file of the certificate authority that signed the agent's certificate; means TLS (https) with a plain HOST:PORT (default: the system's roots for an https:// --agent)")
	fs.BoolVar(&o.Stacks, "stacks", false, "record the server's on-CPU stacks (perf, 99 Hz) during the measured interval, kept folded with the job: through --agent (which needs --allow-stacks), or on a local server when perf is installed here; refused: one line and the run goes on")
}

// BuildOptions are build's options, typed (beside the common ones).
type BuildOptions struct {
	VUs        int    // --build-vus: build virtual users loading in parallel
	CPUProfile string // --cpuprofile: where the build's generator and loaders spend their time
}

// analyticFlags are the run flags an analytic workload (tpch) takes.
var analyticFlags = map[string]bool{"cpuprofile": true, "random-seed": true, "no-cost": true, "jobs": true, "no-vacuum": true}

// BuildFlags binds build's options to fs, as RunFlags does run's.
func BuildFlags(fs *pflag.FlagSet, o *BuildOptions) {
	fs.IntVar(&o.VUs, "build-vus", DefaultBuildVUs(), "build virtual users loading in parallel (default: the number of CPUs)")
	// The usage says the default in words: cobra must not add this machine's.
	fs.Lookup("build-vus").DefValue = "0"
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of sledge itself to this file (go tool pprof reads it): where generating and loading the rows spends its time")
}

// DefaultBuildVUs is the number of CPUs.
func DefaultBuildVUs() int { return runtime.NumCPU() }

// SecondsFlag is a duration flag that also takes a plain number of
// seconds, as pgbench's -T does (run's and compare's --duration, --rampup).
func SecondsFlag(d *time.Duration) pflag.Value { return secondsValue{d} }

// secondsValue is a duration flag that also takes a plain number of
// seconds, as pgbench's -T does.
type secondsValue struct{ d *time.Duration }

func (v secondsValue) String() string {
	if v.d == nil {
		return ""
	}
	return v.d.String()
}

func (v secondsValue) Type() string { return "duration" }

func (v secondsValue) Set(s string) error {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		if n < 0 || n > 1e9 || math.IsNaN(n) {
			return errors.New("want a duration such as 30 (seconds), 90s or 5m")
		}
		*v.d = time.Duration(n * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration such as 30 (seconds), 90s or 5m")
	}
	*v.d = d
	return nil
}

// ParseRandomSeed reads pgbench's --random-seed: a number, "time" or "rand".
func ParseRandomSeed(s string) (uint64, error) {
	switch s {
	case "time":
		return uint64(time.Now().UnixNano()) >> 12, nil
	case "rand":
		return rand.Uint64() >> 12, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("--random-seed %q: want a whole number, time or rand", s)
	}
	return n, nil
}

// FlagsSet applies what depends on which of run's flags in f the user
// gave.
func (o *RunOptions) FlagsSet(f *pflag.FlagSet, w workload.Workload) error {
	o.RampupSet = f.Changed("rampup")
	o.ThreadsSet = f.Changed("jobs")
	o.Cluster.set(f)
	if _, ok := w.(workload.Analytic); ok {
		// Virtual users, durations and modes are the engine's: an
		// analytic workload runs its own tests.
		var bad []string
		all := pflag.NewFlagSet("", pflag.ContinueOnError)
		RunFlags(all, &RunOptions{})
		all.VisitAll(func(fl *pflag.Flag) {
			if !analyticFlags[fl.Name] && f.Changed(fl.Name) {
				bad = append(bad, "--"+fl.Name)
			}
		})
		if len(bad) > 0 {
			return Usagef("%s: not for %s, which runs its own tests (see sledge run --help: --test, --streams, --params, --queries)", strings.Join(bad, ", "), w.Name())
		}
	}
	if f.Changed("duration") && f.Changed("iterations") {
		return Usagef("give either -T/--duration or -t/--iterations, not both (pgbench: specify either a number of transactions or a duration)")
	}
	if f.Changed("max-tries") && f.Changed("max-retries") {
		return Usagef("give either --max-tries or --max-retries, not both")
	}
	if f.Changed("max-tries") {
		switch {
		case o.MaxTries < 0:
			return Usagef("--max-tries must not be negative")
		case o.MaxTries == 0 && !f.Changed("duration") && o.LatencyLimit <= 0:
			return Usagef("--max-tries 0 (unlimited) needs -T/--duration or -L/--latency-limit, as in pgbench")
		case o.MaxTries == 0:
			o.MaxRetries = unlimitedRetries
		default:
			o.MaxRetries = o.MaxTries - 1
		}
	}
	// pgbench refuses these values given, where the defaults mean "off".
	if f.Changed("aggregate-interval") && o.AggregateInterval < 1 {
		return Usagef("--aggregate-interval must be a whole number of seconds, at least 1")
	}
	if f.Changed("sampling-rate") && !(o.SamplingRate > 0 && o.SamplingRate <= 1) {
		return Usagef("invalid --sampling-rate %v: want a fraction above 0, at most 1", o.SamplingRate)
	}
	if o.ProgressTimestamp && o.Progress == 0 {
		return Usagef("--progress-timestamp is allowed only under --progress (-P)")
	}
	if o.ConnectPerTx && o.Connections > 0 {
		return Usagef("give either -C/--connect (a new connection per transaction) or --connections (shared connections), not both")
	}
	if f.Changed("log-prefix") && !o.Log {
		return Usagef("log file prefix (--log-prefix) is allowed only when logging transactions (-l)")
	}
	if f.Changed("random-seed") {
		if f.Changed("seed") {
			return Usagef("give either --seed or --random-seed, not both")
		}
		n, err := ParseRandomSeed(o.RandomSeed)
		if err != nil {
			return Usagef("%v", err)
		}
		o.Seed, o.SeedSet = n, true
	}
	if sw, ok := w.(ScriptWorkload); ok {
		if f.Changed("builtin") {
			specs, _ := f.GetStringArray("builtin")
			if err := sw.AddBuiltins(specs); err != nil {
				return Usagef("%v", err)
			}
		}
		if err := sw.Validate(); err != nil { // weights, before anything is opened
			return Usagef("%v", err)
		}
	}
	return nil
}
