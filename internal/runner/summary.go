package runner

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/script"
)

// CostJSON is the cost of one transaction, averaged over the measured
// interval: "per_txn" in --json (issue 4's contract keys).
type CostJSON struct {
	RoundTrips    float64 `json:"round_trips"`    // request/response exchanges on the VU's connection
	BytesSent     float64 `json:"bytes_sent"`     // on the VU's connection
	BytesReceived float64 `json:"bytes_received"` // on the VU's connection
	// Overall: the whole sledge process. Per type: the virtual users' own
	// threads, null unless measured (--per-type-cpu).
	ClientCPUUs     *float64 `json:"client_cpu_us"`    // user+sys CPU
	ContextSwitches *float64 `json:"context_switches"` // voluntary+involuntary
	// ClientCPUNote says why the overall CPU and context switches are
	// null although measured: another run shared the process.
	ClientCPUNote string `json:"client_cpu_note,omitempty"`
	// The same CPU split into user and system time, and the time the
	// process's threads waited for a CPU (schedstat run_delay), overall
	// only (issue 25); null where not measured.
	ClientCPUUserUs       *float64 `json:"client_cpu_user_us,omitempty"`
	ClientCPUSysUs        *float64 `json:"client_cpu_sys_us,omitempty"`
	ClientRunQueueDelayUs *float64 `json:"client_run_queue_delay_us,omitempty"`
}

// ServerCostJSON is what the server says it sent and received per
// transaction over the measured interval: every session included, not
// only sledge's virtual users ("server_per_txn" in --json).
type ServerCostJSON struct {
	BytesSent     *float64 `json:"bytes_sent"`     // by the server; MariaDB/MySQL only
	BytesReceived *float64 `json:"bytes_received"` // by the server
	// The server's processes, from /proc when the server is on this
	// machine (servercost.go; docs/cost.md "Server side"); null otherwise.
	CPUUserUs       *float64 `json:"cpu_user_us"`
	CPUSysUs        *float64 `json:"cpu_sys_us"`
	ContextSwitches *float64 `json:"context_switches"`
	// From the same source as cpu (issue 25): the switches split, the
	// time the server's threads waited for a CPU, bytes through read and
	// write system calls (/proc/PID/io), and bytes on the server's port
	// from the sockets' own counters (inet_diag).
	VoluntarySwitches   *float64 `json:"voluntary_switches,omitempty"`
	InvoluntarySwitches *float64 `json:"involuntary_switches,omitempty"`
	RunQueueDelayUs     *float64 `json:"run_queue_delay_us,omitempty"`
	SyscallReadBytes    *float64 `json:"syscall_read_bytes,omitempty"`
	SyscallWriteBytes   *float64 `json:"syscall_write_bytes,omitempty"`
	PortBytesIn         *float64 `json:"port_bytes_in,omitempty"`
	PortBytesOut        *float64 `json:"port_bytes_out,omitempty"`
	// LocalCheck: with --agent on a local server, the same server read
	// in-process at the same edges (system_fill.go), a cross-check.
	LocalCheck *LocalCheckJSON `json:"local_check,omitempty"`
	// What the database counts: statements executed, parsed, planned.
	Statements *float64 `json:"statements"`
	Parses     *float64 `json:"parses"`
	Plans      *float64 `json:"plans"`
	// The database's activity counters per transaction, by their own
	// names ("pg_stat_database.blks_hit", "Innodb_rows_read").
	Counters map[string]float64 `json:"db_counters,omitempty"`
	// Source names where each figure comes from; Missing says why a
	// figure is null ("server is remote").
	Source  map[string]string `json:"source,omitempty"`
	Missing map[string]string `json:"missing,omitempty"`
}

// ConnWaitJSON is how long virtual users waited for a shared connection
// (--connections): part of their transactions' latency.
type ConnWaitJSON struct {
	Count  int64   `json:"count"` // transactions of the measured interval
	MeanMs float64 `json:"mean_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// TxJSON is one transaction type in the summary; latencies in milliseconds,
// measured by the client from the first statement to the commit.
type TxJSON struct {
	Name      string    `json:"name"`
	Count     int64     `json:"count"`
	Commits   int64     `json:"commits"`
	Rollbacks int64     `json:"rollbacks"`
	Errors    int64     `json:"errors"`
	Retries   int64     `json:"retries"`
	Retried   int64     `json:"retried"`
	Late      int64     `json:"late,omitempty"`
	MeanMs    float64   `json:"mean_ms"`
	StddevMs  float64   `json:"stddev_ms"`
	P50Ms     float64   `json:"p50_ms"`
	P90Ms     float64   `json:"p90_ms"`
	P95Ms     float64   `json:"p95_ms"`
	P99Ms     float64   `json:"p99_ms"`
	MaxMs     float64   `json:"max_ms"`
	PerTxn    *CostJSON `json:"per_txn,omitempty"`
	// Failed transactions that were serialization failures or deadlocks
	// (pgbench's --failures-detailed classes), among Errors.
	SerializationFailures int64 `json:"serialization_failures"`
	DeadlockFailures      int64 `json:"deadlock_failures"`
}

// RunSummary is the result of a run, printed as text or JSON.
type RunSummary struct {
	Workload string `json:"workload"`
	// Analytic is a mixed workload's query streams over the same
	// measured interval (CH-benCHmark; mixed.go); nil for the others.
	Analytic    *MixedJSON `json:"analytic,omitempty"`
	Script      string     `json:"script,omitempty"` // pgbench's "transaction type": builtin or file names
	Database    string     `json:"database"`         // the driver: "sqlite", "postgres", "mysql"
	DatabaseURL string     `json:"database_url"`     // password redacted
	Driver      string     `json:"driver"`
	DBVersion   string     `json:"db_version"`
	Transport   string     `json:"transport"`
	Mode        string     `json:"mode"`
	VUs         int        `json:"vus"`
	// Connections is how many connections served the VUs: --connections,
	// or vus when each had its own (ConnWait nil).
	Connections int `json:"connections"`
	// Loops is how many event loops the VUs ran on (io=loop), LoopWait
	// how they waited ("epoll", "io_uring"), LoopWaitNote why io_uring
	// was not used when it was asked; all absent off loops.
	Loops        int    `json:"loops,omitempty"`
	LoopWait     string `json:"loop_wait,omitempty"`
	LoopWaitNote string `json:"loop_wait_note,omitempty"`

	// ConnWait is the VUs' wait for a free connection before each
	// transaction of the measured interval, with --connections only.
	ConnWait    *ConnWaitJSON `json:"connection_wait,omitempty"`
	Scale       string        `json:"scale_text,omitempty"`
	ScaleN      *int          `json:"scale,omitempty"`      // tpcb: pgbench's scaling factor
	Warehouses  *int          `json:"warehouses,omitempty"` // tpcc
	Protocol    string        `json:"protocol,omitempty"`   // scripts: pgbench -M
	Seed        uint64        `json:"seed"`
	RampupS     float64       `json:"rampup_s"`
	DurationS   float64       `json:"duration_s"`
	Iterations  int           `json:"iterations,omitempty"`
	MeasuredS   float64       `json:"measured_s"`
	Interrupted bool          `json:"interrupted"`
	MeterName   string        `json:"-"`
	NOPM        *float64      `json:"nopm,omitempty"`
	// NOPMCeiling is TPC-C's ceiling on NOPM for the warehouses: about
	// 12.86 per warehouse, which keying and think times impose (tpcc).
	NOPMCeiling *float64 `json:"nopm_ceiling,omitempty"`
	// TPMCNote says why this tpcc run is not a TPC-C result and cannot be
	// called tpmC: NOPM above the ceiling, or no keying and think times;
	// absent when neither holds.
	TPMCNote  string  `json:"tpmc_note,omitempty"`
	TPM       float64 `json:"tpm"`
	TPMSource string  `json:"tpm_source"` // "database" or "client"
	TPMClient float64 `json:"tpm_client"`
	TPMNote   string  `json:"tpm_note,omitempty"` // why the database's counters were not used
	// The database's own figure whenever its counters were read and did
	// not reset, headline or not: its commits and rollbacks in the measured
	// interval (less the statements sledge sent to publish them) per minute.
	TPMDatabase    *float64 `json:"tpm_database,omitempty"`
	DBTransactions *int64   `json:"db_transactions,omitempty"`
	// pgbench's report, for every workload: successful transactions per
	// second (commits and the workload's own rollbacks) over the measured
	// interval, failed and retried transactions, latency of successful
	// ones (from the schedule under --rate).
	TPS float64 `json:"tps"`
	// InitialConnectionMs is the time from the start until every virtual
	// user's connection was open (pgbench's "initial connection time").
	InitialConnectionMs float64 `json:"initial_connection_ms"`
	Processed           int64   `json:"-"` // "transactions" for tpcb and scripts
	Failed              int64   `json:"failed"`
	Retried             int64   `json:"retried"`
	Retries             int64   `json:"retries"`
	LatencyAvgMs        float64 `json:"latency_avg_ms"`
	LatencyStddevMs     float64 `json:"latency_stddev_ms"`
	P50Ms               float64 `json:"p50_ms"`
	P90Ms               float64 `json:"p90_ms"`
	P99Ms               float64 `json:"p99_ms"`
	MaxMs               float64 `json:"max_ms"`
	// SerializationFailures and DeadlockFailures are the failed
	// transactions of pgbench's two classes (SQLSTATE 40001, 40P01;
	// MariaDB's 1213 is a deadlock), among Failed.
	SerializationFailures int64 `json:"serialization_failures"`
	DeadlockFailures      int64 `json:"deadlock_failures"`
	// ConnectionAvgMs is, with -C/--connect, the average time to close
	// and open the connection before each transaction (pgbench's "average
	// connection time").
	ConnectionAvgMs *float64 `json:"connection_avg_ms,omitempty"`
	// FailuresDetailed: --failures-detailed was given; the text report
	// prints the classes' lines.
	FailuresDetailed bool `json:"-"`
	// Throttling (--rate) and the latency limit (--latency-limit).
	RateTPS        float64  `json:"rate_tps,omitempty"`
	LatencyLimitMs float64  `json:"latency_limit_ms,omitempty"`
	Skipped        int64    `json:"skipped"`
	Late           int64    `json:"late"`
	LagAvgMs       *float64 `json:"lag_avg_ms,omitempty"`
	LagMaxMs       *float64 `json:"lag_max_ms,omitempty"`
	// Faults: reconnections after lost connections, the transactions
	// lost with them, whole seconds of the measured interval without a
	// completed transaction, and VUs stuck when the stop timeout ran out.
	Reconnects    int64 `json:"reconnects"`
	ConnLost      int64 `json:"conn_lost"`
	OutageS       int   `json:"outage_s"`
	OutageSeconds []int `json:"outage_seconds,omitempty"`
	StuckVUs      []int `json:"stuck_vus"`
	// -r: per statement (named statements) or per script command.
	Statements []StmtJSON `json:"statements,omitempty"`
	Total      TxJSON     `json:"total"`
	PerTxn     *CostJSON  `json:"per_txn,omitempty"` // overall cost per transaction
	// WireNote says why per_txn's round trips and bytes are zero, for
	// the text: "embedded", "not counted", or "" when they were counted.
	WireNote     string          `json:"-"`
	ServerPerTxn *ServerCostJSON `json:"server_per_txn,omitempty"`
	// ServerWaits: where the VUs' sessions were found by the server's
	// sampler during the measured interval; absent when not sampled.
	ServerWaits *ServerWaitsJSON `json:"server_waits"` // null: not sampled
	// Issue 25 (system.go): where the server's threads were, the server's
	// host and sledge's own host over the measured interval, the agent
	// that measured the server, and its on-CPU stacks (--stacks).
	ServerThreads *ThreadStatesJSON `json:"server_threads,omitempty"`
	ServerHost    *HostJSON         `json:"server_host,omitempty"`
	ClientHost    *HostJSON         `json:"client_host,omitempty"`
	Agent         *AgentJSON        `json:"agent,omitempty"`
	ServerStacks  *StacksJSON       `json:"server_stacks,omitempty"`
	Types         []TxJSON          `json:"types"`
	// Thresholds are the --threshold criteria with the values they were
	// judged on; absent without --threshold.
	Thresholds []ThresholdJSON `json:"thresholds,omitempty"`
	// "transactions": TPC-C keeps issue 2's object of types by key
	// ("new_order": {…}); tpcb and scripts give pgbench's count of
	// transactions actually processed (see MarshalJSON).
	PerType    map[string]TxJSON   `json:"per_type"`
	Errors     []engine.ErrorCount `json:"errors"`
	StoppedVUs []int               `json:"stopped_vus,omitempty"` // --raise-error: VUs that stopped at an error
	Settings   map[string]string   `json:"db_settings,omitempty"`

	// tpcc: the home warehouses the VUs use, ascending, beside
	// "warehouses" (all of them only with --all-warehouses or at least as
	// many VUs as warehouses).
	HomeWarehouses []int `json:"home_warehouses,omitempty"`

	// Workers: a scale-out run's workers (docs/workers.md); absent otherwise.
	Workers []WorkerJSON `json:"workers,omitempty"`

	// JobID is the job that records the run; absent with --no-job.
	JobID int64 `json:"job_id,omitempty"`
}

// SetJobID records the job that keeps the run (JobRun.SetSummary).
func (s *RunSummary) SetJobID(id int64) { s.JobID = id }

// msMicro is d in milliseconds, to the microsecond.
func msMicro(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func toJSON(s metrics.Summary) TxJSON {
	ms := msMicro
	return TxJSON{Name: s.Name, Count: s.Count, Commits: s.Commits, Rollbacks: s.Rollbacks,
		Errors: s.Errors, Retries: s.Retries, Retried: s.Retried, MeanMs: ms(s.Mean), StddevMs: ms(s.Stddev),
		P50Ms: ms(s.P50), P90Ms: ms(s.P90),
		P95Ms: ms(s.P95), P99Ms: ms(s.P99), MaxMs: ms(s.Max)}
}

// tpmTolerance is how far the database's count of the measured interval's
// transactions may be from the one sledge expects before it is not the
// headline: 2%, and at least TPMSlack transactions, for the few statements
// of sledge's own control session that the database counts too.
const (
	tpmTolerance = 0.02
	TPMSlack     = 10
)

// dbHeadline decides whether the database's count n of the measured
// interval's transactions gives the headline TPM (HammerDB's source), or
// sledge's own count does, with a note saying why. TPM counts completed
// transactions: commits and the workload's own rollbacks. The database
// counts a failed transaction, and each failed attempt that was retried, as
// a rollback too, so where failures make the difference, the headline is
// sledge's count, which leaves them out. gap is the engine's word on the
// edges of the interval (engine.Result.EdgeGap).
func dbHeadline(n int64, total *metrics.TxStats, gap string) (source, note string) {
	want := total.Completed()
	tol := max(tpmTolerance*float64(want), TPMSlack)
	diff := n - want
	failed := total.Errors + total.Retries
	switch {
	case math.Abs(float64(diff)) <= tol:
		return "database", ""
	case float64(n) < 0.1*float64(want):
		// MariaDB counts no commit for an autocommit statement (tpcb's
		// select-only): its counters miss nearly all of what sledge saw.
		return "client", fmt.Sprintf("the database counted %d commits and rollbacks for %d transactions (autocommit statements are not commits there): TPM counted by sledge", n, want)
	case failed > 0 && math.Abs(float64(n-want-failed)) <= tol:
		return "client", fmt.Sprintf("the database counted %d transactions for the %d sledge completed: it counts the %d failed ones and retried attempts as rollbacks; TPM counted by sledge leaves them out", n, want, failed)
	}
	why := "other sessions were busy on the database"
	if diff < 0 {
		why = "the database did not count them all"
	}
	if gap != "" {
		why = gap
	}
	return "client", fmt.Sprintf("the database counted %d transactions for the %d sledge completed (%+.1f%%: %s): TPM counted by sledge",
		n, want, 100*float64(diff)/float64(max(want, 1)), why)
}

func Summarize(w workload.Workload, s *Session, info db.Info, mode workload.Mode, o *RunOptions, res *engine.Result) *RunSummary {
	measured := res.Measured()
	sum := &RunSummary{
		Workload: w.Name(), Database: info.Driver, DatabaseURL: s.URL, Driver: info.Driver, DBVersion: info.Version,
		Transport: info.Transport, Mode: mode.String(), VUs: o.VUs, Scale: ScaleText(w), Seed: o.Seed,
		RampupS: o.Rampup.Seconds(), DurationS: o.Duration.Seconds(), Iterations: o.Iterations,
		MeasuredS: measured.Seconds(), Interrupted: res.Interrupted, Settings: info.Settings,
		Errors: res.Errors, StoppedVUs: res.Stopped, PerType: map[string]TxJSON{},
		Reconnects: res.Reconnects, ConnLost: res.ConnLost, OutageS: res.Outage,
		OutageSeconds: res.OutageSeconds, StuckVUs: res.Stuck, Skipped: res.Skipped, Late: res.Late,
		RateTPS: o.Rate, LatencyLimitMs: o.LatencyLimit, Protocol: o.Protocol,
	}
	if sum.StuckVUs == nil {
		sum.StuckVUs = []int{}
	}
	sum.Loops, sum.LoopWait = res.Loops, res.LoopWait
	if res.LoopFallback != "" {
		sum.LoopWaitNote = "io_uring refused (" + res.LoopFallback + "): the loops waited on epoll"
	}
	sum.Connections = o.VUs
	if o.Connections > 0 {
		sum.Connections = o.Connections
		sum.ConnWait = &ConnWaitJSON{Count: res.ConnWait.Count, MeanMs: msOf(res.ConnWait.Mean()), MaxMs: msOf(res.ConnWait.Max)}
	}
	if sc, ok := w.(workload.Scaler); ok {
		unit, n := sc.Scale()
		if strings.HasPrefix(unit, "warehouse") {
			sum.Warehouses = &n
			if hw, ok := w.(HomeWarehouser); ok {
				sum.HomeWarehouses, _ = hw.HomeWarehouses(o.VUs)
			}
		} else {
			sum.ScaleN = &n
		}
	}
	sum.Script = transactionType(w)
	if o.Rate > 0 {
		avg, mx := msOf(res.Lag.Mean()), msOf(res.Lag.Max)
		sum.LagAvgMs, sum.LagMaxMs = &avg, &mx
	}
	for _, st := range res.Statements {
		sum.Statements = append(sum.Statements, StmtJSON{Name: st.Name, Count: st.Count,
			AvgMs: msOf(st.Mean()), Failures: st.Failures, Rollbacks: st.Rollbacks})
	}
	if sw, ok := w.(*script.Workload); ok && o.PerCommand {
		for _, r := range sw.CommandReport() {
			for _, c := range r.Commands {
				sum.Statements = append(sum.Statements, StmtJSON{Script: r.Script, Line: c.Line, Name: c.Text,
					Count: c.Count, AvgMs: msOf(c.Mean()), Failures: c.Failures})
			}
		}
	}
	if o.Iterations > 0 {
		sum.RampupS, sum.DurationS = 0, 0
	}
	if sum.Errors == nil {
		sum.Errors = []engine.ErrorCount{}
	}
	mix := w.Mix()
	for i := range res.Stats {
		t := toJSON(res.Stats[i].Summarize(mix[i].Name))
		t.PerTxn = typeCost(res, &res.Stats[i])
		if i < len(res.Failures) {
			t.SerializationFailures, t.DeadlockFailures = res.Failures[i].Serialization, res.Failures[i].Deadlock
			sum.SerializationFailures += t.SerializationFailures
			sum.DeadlockFailures += t.DeadlockFailures
		}
		sum.Types = append(sum.Types, t)
		key := mix[i].Key
		if key == "" {
			key = mix[i].Name
		}
		sum.PerType[key] = t
	}
	total := res.Stats.Total()
	sum.Total = toJSON(total.Summarize("total"))
	sum.Processed, sum.Failed, sum.Retried, sum.Retries = total.Completed(), total.Errors, total.Retried, total.Retries
	if !res.Connected.IsZero() {
		sum.InitialConnectionMs = msMicro(res.Connected.Sub(res.Start))
	}
	sum.FailuresDetailed = o.FailuresDetailed
	if o.ConnectPerTx && res.Connects.Count > 0 {
		ms := msMicro(res.Connects.Mean())
		sum.ConnectionAvgMs = &ms
	}
	sum.TPS = 0
	if measured > 0 {
		sum.TPS = float64(total.Completed()) / measured.Seconds()
	}
	sum.LatencyAvgMs, sum.LatencyStddevMs = sum.Total.MeanMs, sum.Total.StddevMs
	sum.P50Ms, sum.P90Ms, sum.P99Ms, sum.MaxMs = sum.Total.P50Ms, sum.Total.P90Ms, sum.Total.P99Ms, sum.Total.MaxMs
	sum.PerTxn = overallCost(res, total)
	switch {
	case sum.PerTxn == nil:
	case info.Transport == "embedded":
		sum.WireNote = "embedded"
	case !res.Wired:
		sum.WireNote = "not counted"
	}
	if n := total.Completed(); n > 0 {
		sent, ok1 := res.Delta("db_bytes_sent")
		recv, ok2 := res.Delta("db_bytes_received")
		if ok1 && ok2 {
			bs, br := float64(sent)/float64(n), float64(recv)/float64(n)
			sum.ServerPerTxn = &ServerCostJSON{BytesSent: &bs, BytesReceived: &br}
		}
	}
	sum.TPMClient = metrics.PerMinute(total.Completed(), measured)
	sum.TPM, sum.TPMSource = sum.TPMClient, "client"
	if c, ok1 := res.Delta("db_commits"); ok1 {
		r, _ := res.Delta("db_rollbacks")
		switch {
		case c < 0 || r < 0:
			// The server's counters went backwards: it restarted inside
			// the measured interval and began again from zero.
			sum.TPMNote = "the database's counters went backwards (a server restart): TPM counted by sledge"
		case res.Reconnects > 0:
			// A restart that kept its counters still lost the sessions'
			// unpublished counts; the client's count is the honest one.
			sum.TPMNote = "connections were lost and reopened: TPM counted by sledge, the database's counters may have reset"
		default:
			n := c + r - res.EdgeAdded
			tpm := metrics.PerMinute(n, measured)
			sum.TPMDatabase, sum.DBTransactions = &tpm, &n
			sum.TPMSource, sum.TPMNote = dbHeadline(n, total, res.EdgeGap)
			if sum.TPMSource == "database" {
				sum.TPM = tpm
			} else {
				sum.TPM = sum.TPMClient
			}
		}
	}
	if m, ok := w.(workload.Meter); ok {
		sum.MeterName = m.MeterName()
		if d, ok := res.Delta("meter"); ok {
			v := metrics.PerMinute(d, measured)
			sum.NOPM = &v
		}
	}
	if sum.Warehouses != nil && workload.SQLName(w) == "tpcc" { // ch too: its terminals are TPC-C's
		ceiling := NOPMPerWarehouse * float64(*sum.Warehouses)
		sum.NOPMCeiling = &ceiling
		sum.TPMCNote = tpmcNote(sum.NOPM, ceiling, *sum.Warehouses, o.KeyingThinking)
	}
	return sum
}

// NOPMPerWarehouse is TPC-C's ceiling on new orders per minute per
// warehouse: ten terminals, each at most about 1.286 a minute once it
// keys and thinks as the specification says (docs/tpcc.md).
const NOPMPerWarehouse = 12.86

// tpmcNote says why a TPC-C run is not a TPC-C result, when NOPM is above
// the ceiling for its warehouses or it had no keying and think times;
// "" when neither holds (it is still no audited result: README).
func tpmcNote(nopm *float64, ceiling float64, warehouses int, keying bool) string {
	var why []string
	if nopm != nil && *nopm > ceiling {
		of := "1 warehouse"
		if warehouses != 1 {
			of = fmt.Sprintf("%s warehouses, %.2f each", Thousands(int64(warehouses)), NOPMPerWarehouse)
		}
		why = append(why, fmt.Sprintf("NOPM %s is above TPC-C's ceiling of about %s for %s",
			Thousands(int64(*nopm+0.5)), strconv.FormatFloat(math.Round(ceiling*100)/100, 'f', -1, 64), of))
	}
	if !keying {
		why = append(why, "the run had no keying or think times (--keying-thinking)")
	}
	if len(why) == 0 {
		return ""
	}
	return strings.Join(why, ", and ") + ": this is not a TPC-C result and cannot be called tpmC"
}

// StmtJSON is one statement's or script command's timing (-r).
type StmtJSON struct {
	Script   string  `json:"script,omitempty"`
	Line     int     `json:"line,omitempty"`
	Name     string  `json:"name"`
	Count    int64   `json:"count"`
	AvgMs    float64 `json:"avg_ms"`
	Failures int64   `json:"failures"`
	// Rollbacks: executions whose error was the workload's own rollback
	// (TPC-C's unused item in procedure mode), not failures.
	Rollbacks int64 `json:"rollbacks"`
}

func msOf(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// MarshalJSON adds "transactions": for TPC-C the object of types by key
// (issue 2's contract), for every other workload pgbench's number of
// transactions actually processed (issue 5's contract).
//
// A run interrupted before its measured interval measured nothing: its
// nopm (TPC-C) and tpm are null, not 0, as jobs list shows "-".
func (s *RunSummary) MarshalJSON() ([]byte, error) {
	type plain RunSummary
	var v any = (*plain)(s)
	// The outer fields win over the embedded ones of the same name.
	switch {
	case s.MeasuredS == 0 && s.MeterName != "":
		v = struct {
			*plain
			NOPM *float64 `json:"nopm"`
			TPM  *float64 `json:"tpm"`
		}{plain: (*plain)(s)}
	case s.MeasuredS == 0:
		v = struct {
			*plain
			TPM *float64 `json:"tpm"`
		}{plain: (*plain)(s)}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var tx any = s.Processed
	if workload.ReportOf(s.Workload) == workload.ReportTPCC {
		tx = s.PerType
	}
	t, err := json.Marshal(tx)
	if err != nil {
		return nil, err
	}
	out := append(b[:len(b)-1:len(b)-1], `,"transactions":`...)
	out = append(out, t...)
	return append(out, '}'), nil
}

// overallCost is the cost of one transaction over the measured interval:
// the wire counts of every counted transaction (so the types add up to it)
// and the whole process's CPU and context switches, over the completed
// transactions. Nil when the run did not measure cost.
func overallCost(res *engine.Result, total *metrics.TxStats) *CostJSON {
	n := float64(total.Completed())
	if n == 0 || !res.ProcessOK {
		return nil
	}
	c := wireCost(total.Wire, n)
	if res.SharedProcess {
		// Both runs' CPU: a figure that would be wrong is not shown.
		c.ClientCPUNote = sharedCPUNote
		return c
	}
	c.ClientCPUUs, c.ContextSwitches = usageCost(res.Process, n)
	return c
}

// sharedCPUNote is why a run's client CPU is not given.
const sharedCPUNote = "not measured: another run went on in this sledge process during the measured interval (sledge serve runs jobs side by side), so its CPU time is not this run's"

// typeCost is one type's cost: its wire counts, and CPU and context
// switches on its VUs' own threads, over its completed transactions.
func typeCost(res *engine.Result, s *metrics.TxStats) *CostJSON {
	n := float64(s.Completed())
	if n == 0 || !res.ProcessOK {
		return nil
	}
	c := wireCost(s.Wire, n)
	if res.ThreadUsage {
		c.ClientCPUUs, c.ContextSwitches = usageCost(s.Thread, n)
	}
	return c
}

func usageCost(u metrics.Usage, n float64) (cpuUs, switches *float64) {
	cpu, sw := float64(u.CPU.Nanoseconds())/1e3/n, float64(u.Switches)/n
	return &cpu, &sw
}

func wireCost(w metrics.Wire, n float64) *CostJSON {
	return &CostJSON{RoundTrips: float64(w.RoundTrips) / n,
		BytesSent: float64(w.BytesSent) / n, BytesReceived: float64(w.BytesReceived) / n}
}

// transactionType is pgbench's "transaction type" line, from workloads that
// have one (workload.Describer); empty for TPC-C.
func transactionType(w workload.Workload) string {
	if d, ok := w.(workload.Describer); ok {
		return d.Description()
	}
	return ""
}

// HomeWarehouser is a workload whose virtual users have home warehouses
// (TPC-C).
type HomeWarehouser interface {
	HomeWarehouses(vus int) (homes []int, all bool)
}
