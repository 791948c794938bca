package runner

import "time"

// RunOptions are a run's options, typed: the command line's flags of
// `sledge run` (their long names in the comments where they differ), and
// what the command resolved before the run (the seed, whether the
// database was named, --json).
type RunOptions struct {
	VUs            int
	Connections    int // --connections: sessions shared by the VUs; 0: one each
	Rampup         time.Duration
	Duration       time.Duration
	Iterations     int
	KeyingThinking bool
	Mode           string
	MaxRetries     int
	RaiseError     bool
	Progress       int      // seconds between --progress lines; 0: the progress bar
	NoCost         bool     // --no-cost: measure no cost per transaction
	PerTypeCPU     bool     // --per-type-cpu: CPU and context switches per type
	Thresholds     []string // --threshold, as given

	// pgbench's controls (issue 5) and fault handling (issue 6).
	Rate         float64 // -R: transactions per second in all; 0: as fast as possible
	LatencyLimit float64 // -L, milliseconds
	PerCommand   bool    // -r
	Protocol     string  // -M: simple, extended, prepared
	MaxTries     int     // --max-tries: pgbench's name for 1 + --max-retries
	RandomSeed   string  // --random-seed: time, rand or a number (pgbench)
	StopTimeout  time.Duration
	TxTimeout    time.Duration
	Reconnect    string
	RampupSet    bool
	Threads      int  // -j: with io=loop, the event loops (engine.Plan.Loops); else accepted for pgbench command lines
	ThreadsSet   bool // -j was given
	NoVacuum     bool // -n: accepted for pgbench command lines; sledge never vacuums before a run
	CPUProfile   string

	// pgbench's -C/--connect (a new connection per transaction),
	// --failures-detailed, --verbose-errors and --progress-timestamp
	// (issue 16).
	ConnectPerTx      bool
	FailuresDetailed  bool
	VerboseErrors     bool
	ProgressTimestamp bool

	// pgbench's transaction logs (txlog): -l, --log-prefix,
	// --aggregate-interval (seconds; 0: a line per transaction),
	// --sampling-rate (0: every transaction).
	Log               bool
	LogPrefix         string
	AggregateInterval int
	SamplingRate      float64

	Metrics       string        // --metrics HOST:PORT: serve /metrics during the run (issue 14)
	MetricsLinger time.Duration // --metrics-linger: serve it this long after the run

	Cluster ClusterOptions // --workers, --listen, --coordinator… (workers.go)
	Agent   AgentOptions   // --agent, --agent-token-file, --agent-target, --agent-ca, --stacks (agent.go)

	// Resolved by the command before the run.
	Seed     uint64
	SeedSet  bool // --seed or --random-seed was given: Run picks none
	Explicit bool // the user named the database (flag or SLEDGE_DB)
	JSON     bool // --json: print nothing but the result
}
