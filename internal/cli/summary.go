package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/script"
)

func newFlagSet() *pflag.FlagSet { return pflag.NewFlagSet("", pflag.ContinueOnError) }

// costJSON is the cost of one transaction, averaged over the measured
// interval: "per_txn" in --json (issue 4's contract keys).
type costJSON struct {
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
}

// serverCostJSON is what the server says it sent and received per
// transaction over the measured interval: every session included, not
// only sledge's virtual users ("server_per_txn" in --json).
type serverCostJSON struct {
	BytesSent     *float64 `json:"bytes_sent"`     // by the server; MariaDB/MySQL only
	BytesReceived *float64 `json:"bytes_received"` // by the server
	// The server's processes, from /proc when the server is on this
	// machine (servercost.go; docs/cost.md "Server side"); null otherwise.
	CPUUserUs       *float64 `json:"cpu_user_us"`
	CPUSysUs        *float64 `json:"cpu_sys_us"`
	ContextSwitches *float64 `json:"context_switches"`
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

// connWaitJSON is how long virtual users waited for a shared connection
// (--connections): part of their transactions' latency.
type connWaitJSON struct {
	Count  int64   `json:"count"` // transactions of the measured interval
	MeanMs float64 `json:"mean_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// txJSON is one transaction type in the summary; latencies in milliseconds,
// measured by the client from the first statement to the commit.
type txJSON struct {
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
	PerTxn    *costJSON `json:"per_txn,omitempty"`
}

// runSummary is the result of a run, printed as text or JSON.
type runSummary struct {
	Workload    string `json:"workload"`
	Script      string `json:"script,omitempty"` // pgbench's "transaction type": builtin or file names
	Database    string `json:"database"`         // the driver: "sqlite", "postgres", "mysql"
	DatabaseURL string `json:"database_url"`     // password redacted
	Driver      string `json:"driver"`
	DBVersion   string `json:"db_version"`
	Transport   string `json:"transport"`
	Mode        string `json:"mode"`
	VUs         int    `json:"vus"`
	// Connections is how many connections served the VUs: --connections,
	// or vus when each had its own (ConnWait nil).
	Connections int `json:"connections"`
	// ConnWait is the VUs' wait for a free connection before each
	// transaction of the measured interval, with --connections only.
	ConnWait    *connWaitJSON `json:"connection_wait,omitempty"`
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
	TPM         float64       `json:"tpm"`
	TPMSource   string        `json:"tpm_source"` // "database" or "client"
	TPMClient   float64       `json:"tpm_client"`
	TPMNote     string        `json:"tpm_note,omitempty"` // why the database's counters were not used
	// The database's own figure whenever its counters were read and did
	// not reset, headline or not: its commits and rollbacks in the measured
	// interval (less the statements sledge sent to publish them) per minute.
	TPMDatabase    *float64 `json:"tpm_database,omitempty"`
	DBTransactions *int64   `json:"db_transactions,omitempty"`
	// pgbench's report, for every workload: successful transactions per
	// second (commits and the workload's own rollbacks) over the measured
	// interval, failed and retried transactions, latency of successful
	// ones (from the schedule under --rate).
	TPS             float64 `json:"tps"`
	Processed       int64   `json:"-"` // "transactions" for tpcb and scripts
	Failed          int64   `json:"failed"`
	Retried         int64   `json:"retried"`
	Retries         int64   `json:"retries"`
	LatencyAvgMs    float64 `json:"latency_avg_ms"`
	LatencyStddevMs float64 `json:"latency_stddev_ms"`
	P50Ms           float64 `json:"p50_ms"`
	P90Ms           float64 `json:"p90_ms"`
	P99Ms           float64 `json:"p99_ms"`
	MaxMs           float64 `json:"max_ms"`
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
	Statements []stmtJSON `json:"statements,omitempty"`
	Total      txJSON     `json:"total"`
	PerTxn     *costJSON  `json:"per_txn,omitempty"` // overall cost per transaction
	// WireNote says why per_txn's round trips and bytes are zero, for
	// the text: "embedded", "not counted", or "" when they were counted.
	WireNote     string          `json:"-"`
	ServerPerTxn *serverCostJSON `json:"server_per_txn,omitempty"`
	// ServerWaits: where the VUs' sessions were found by the server's
	// sampler during the measured interval; absent when not sampled.
	ServerWaits *serverWaitsJSON `json:"server_waits"` // null: not sampled
	Types       []txJSON         `json:"types"`
	// Thresholds are the --threshold criteria with the values they were
	// judged on; absent without --threshold.
	Thresholds []thresholdJSON `json:"thresholds,omitempty"`
	// "transactions": TPC-C keeps issue 2's object of types by key
	// ("new_order": {…}); tpcb and scripts give pgbench's count of
	// transactions actually processed (see MarshalJSON).
	PerType    map[string]txJSON   `json:"per_type"`
	Errors     []engine.ErrorCount `json:"errors"`
	StoppedVUs []int               `json:"stopped_vus,omitempty"` // --raise-error: VUs that stopped at an error
	Settings   map[string]string   `json:"db_settings,omitempty"`

	// tpcc: the home warehouses the VUs use, ascending, beside
	// "warehouses" (all of them only with --all-warehouses or at least as
	// many VUs as warehouses).
	HomeWarehouses []int `json:"home_warehouses,omitempty"`
}

func toJSON(s metrics.Summary) txJSON {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return txJSON{Name: s.Name, Count: s.Count, Commits: s.Commits, Rollbacks: s.Rollbacks,
		Errors: s.Errors, Retries: s.Retries, Retried: s.Retried, MeanMs: ms(s.Mean), StddevMs: ms(s.Stddev),
		P50Ms: ms(s.P50), P90Ms: ms(s.P90),
		P95Ms: ms(s.P95), P99Ms: ms(s.P99), MaxMs: ms(s.Max)}
}

// tpmTolerance is how far the database's count of the measured interval's
// transactions may be from the one sledge expects before it is not the
// headline: 2%, and at least tpmSlack transactions, for the few statements
// of sledge's own control session that the database counts too.
const (
	tpmTolerance = 0.02
	tpmSlack     = 10
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
	tol := max(tpmTolerance*float64(want), tpmSlack)
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

func summarize(w workload.Workload, s *runner.Session, info db.Info, mode workload.Mode, o *runOpts, res *engine.Result) *runSummary {
	measured := res.Measured()
	sum := &runSummary{
		Workload: w.Name(), Database: info.Driver, DatabaseURL: s.URL, Driver: info.Driver, DBVersion: info.Version,
		Transport: info.Transport, Mode: mode.String(), VUs: o.vus, Scale: runner.ScaleText(w), Seed: o.seed,
		RampupS: o.rampup.Seconds(), DurationS: o.duration.Seconds(), Iterations: o.iterations,
		MeasuredS: measured.Seconds(), Interrupted: res.Interrupted, Settings: info.Settings,
		Errors: res.Errors, StoppedVUs: res.Stopped, PerType: map[string]txJSON{},
		Reconnects: res.Reconnects, ConnLost: res.ConnLost, OutageS: res.Outage,
		OutageSeconds: res.OutageSeconds, StuckVUs: res.Stuck, Skipped: res.Skipped, Late: res.Late,
		RateTPS: o.rate, LatencyLimitMs: o.latencyLimit, Protocol: o.protocolName,
	}
	if sum.StuckVUs == nil {
		sum.StuckVUs = []int{}
	}
	sum.Connections = o.vus
	if o.connections > 0 {
		sum.Connections = o.connections
		sum.ConnWait = &connWaitJSON{Count: res.ConnWait.Count, MeanMs: msOf(res.ConnWait.Mean()), MaxMs: msOf(res.ConnWait.Max)}
	}
	if sc, ok := w.(workload.Scaler); ok {
		unit, n := sc.Scale()
		if strings.HasPrefix(unit, "warehouse") {
			sum.Warehouses = &n
			if hw, ok := w.(homeWarehouser); ok {
				sum.HomeWarehouses, _ = hw.HomeWarehouses(o.vus)
			}
		} else {
			sum.ScaleN = &n
		}
	}
	sum.Script = transactionType(w)
	if o.rate > 0 {
		avg, mx := msOf(res.Lag.Mean()), msOf(res.Lag.Max)
		sum.LagAvgMs, sum.LagMaxMs = &avg, &mx
	}
	for _, st := range res.Statements {
		sum.Statements = append(sum.Statements, stmtJSON{Name: st.Name, Count: st.Count,
			AvgMs: msOf(st.Mean()), Failures: st.Failures, Rollbacks: st.Rollbacks})
	}
	if sw, ok := w.(*script.Workload); ok && o.perCommand {
		for _, r := range sw.CommandReport() {
			for _, c := range r.Commands {
				sum.Statements = append(sum.Statements, stmtJSON{Script: r.Script, Line: c.Line, Name: c.Text,
					Count: c.Count, AvgMs: msOf(c.Mean()), Failures: c.Failures})
			}
		}
	}
	if o.iterations > 0 {
		sum.RampupS, sum.DurationS = 0, 0
	}
	if sum.Errors == nil {
		sum.Errors = []engine.ErrorCount{}
	}
	mix := w.Mix()
	for i := range res.Stats {
		t := toJSON(res.Stats[i].Summarize(mix[i].Name))
		t.PerTxn = typeCost(res, &res.Stats[i])
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
			sum.ServerPerTxn = &serverCostJSON{BytesSent: &bs, BytesReceived: &br}
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
	return sum
}

// stmtJSON is one statement's or script command's timing (-r).
type stmtJSON struct {
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
func (s *runSummary) MarshalJSON() ([]byte, error) {
	type plain runSummary
	b, err := json.Marshal((*plain)(s))
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
func overallCost(res *engine.Result, total *metrics.TxStats) *costJSON {
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
func typeCost(res *engine.Result, s *metrics.TxStats) *costJSON {
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

func wireCost(w metrics.Wire, n float64) *costJSON {
	return &costJSON{RoundTrips: float64(w.RoundTrips) / n,
		BytesSent: float64(w.BytesSent) / n, BytesReceived: float64(w.BytesReceived) / n}
}

func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printSummary(out io.Writer, s *runSummary) {
	scale := ""
	if s.Scale != "" {
		scale = ", " + s.Scale
	}
	how := "mode " + s.Mode
	if s.Protocol != "" {
		how = "protocol " + s.Protocol
	}
	fmt.Fprintf(out, "\n%s on %s %s (%s) · %s · %s%s · seed %d\n",
		s.Workload, s.Driver, s.DBVersion, s.Transport, how, vusText(s.VUs, s.pooledConnections()), scale, s.Seed)
	if s.Warehouses != nil {
		if t := warehousesText(s.VUs, s.HomeWarehouses, *s.Warehouses); t != "" {
			fmt.Fprintln(out, t)
		}
		if t := terminalsNote(s.Workload, s.VUs, *s.Warehouses); t != "" {
			fmt.Fprintln(out, t)
		}
	}
	switch {
	case s.MeasuredS == 0:
		fmt.Fprintln(out, "nothing was measured: the run stopped before the measured interval began")
		return
	case s.Iterations > 0:
		fmt.Fprintf(out, "measured %.1f s: %d transactions per virtual user%s\n", s.MeasuredS, s.Iterations, interrupted(s))
	default:
		fmt.Fprintf(out, "measured %.1f s after %.0f s of ramp-up%s\n", s.MeasuredS, s.RampupS, interrupted(s))
	}
	style := workload.ReportOf(s.Workload)
	if style == workload.ReportPgbench {
		printPgbench(out, s)
	}
	if s.NOPM != nil {
		fmt.Fprintf(out, "%-5s %12s   new orders per minute, from the database (Σ district.d_next_o_id)\n",
			s.MeterName, thousands(int64(*s.NOPM+0.5)))
	}
	if s.TPMSource == "database" {
		fmt.Fprintf(out, "%-5s %12s   transactions per minute, from the database's commit and rollback counters\n",
			"TPM", thousands(int64(s.TPM+0.5)))
		fmt.Fprintf(out, "%-5s %12s   transactions per minute, counted by sledge\n", "", thousands(int64(s.TPMClient+0.5)))
	} else {
		why := s.Driver + " keeps no transaction counters"
		if s.TPMNote != "" {
			why = s.TPMNote
		}
		fmt.Fprintf(out, "%-5s %12s   transactions per minute, counted by sledge (%s)\n",
			"TPM", thousands(int64(s.TPM+0.5)), why)
		if s.TPMDatabase != nil {
			fmt.Fprintf(out, "%-5s %12s   transactions per minute, from the database's commit and rollback counters (not the headline)\n",
				"", thousands(int64(*s.TPMDatabase+0.5)))
		}
	}
	if style == workload.ReportTPCC {
		printLimits(out, s)
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "type\tcount\trollbacks\terrors\tretries\tmean ms\tp50 ms\tp90 ms\tp95 ms\tp99 ms\tmax ms\t")
	row := func(t txJSON) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", t.Name, thousands(t.Count),
			thousands(t.Rollbacks), thousands(t.Errors), thousands(t.Retries),
			ms(t.MeanMs), ms(t.P50Ms), ms(t.P90Ms), ms(t.P95Ms), ms(t.P99Ms), ms(t.MaxMs))
	}
	for _, t := range s.Types {
		row(t)
	}
	row(s.Total)
	tw.Flush()
	if w := s.ConnWait; w != nil {
		fmt.Fprintln(out, "latencies measured by sledge per transaction, from the moment its virtual user asked for a connection to its commit")
		fmt.Fprintf(out, "connection wait: mean %s ms, max %s ms before each transaction (%s; part of the latencies above)\n",
			ms3(w.MeanMs), ms3(w.MaxMs), vusText(s.VUs, s.Connections))
	} else {
		fmt.Fprintln(out, "latencies measured by sledge per transaction, from its first statement to its commit")
	}
	printCost(out, s)
	printStatements(out, s)
	printFaults(out, s)
	if len(s.StoppedVUs) > 0 {
		fmt.Fprintf(out, "\n%d virtual user%s stopped at an error (--raise-error): %v\n", len(s.StoppedVUs), plural(len(s.StoppedVUs)), s.StoppedVUs)
	}
	if len(s.Errors) > 0 {
		fmt.Fprintln(out, "\nerrors:")
		for _, e := range s.Errors {
			fmt.Fprintf(out, "  %6s × %s\n", thousands(e.Count), oneLine(e.Message))
		}
	}
	printThresholds(out, s.Thresholds)
}

func ms(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 1000:
		return fmt.Sprintf("%.1f", v)
	}
	return strings.TrimSuffix(thousands(int64(v+0.5)), "")
}

// ms3 is a wait in milliseconds, 0 as 0.000 rather than ms's "-".
func ms3(v float64) string {
	if v >= 100 {
		return thousands(int64(v + 0.5))
	}
	return fmt.Sprintf("%.3f", v)
}

// pooledConnections is --connections as the summary recorded it; 0 when
// each VU had its own connection.
func (s *runSummary) pooledConnections() int {
	if s.ConnWait == nil {
		return 0
	}
	return s.Connections
}

// vusText is "4 virtual users", or with --connections "10000 virtual users
// over 200 connections".
func vusText(vus, connections int) string {
	t := fmt.Sprintf("%d virtual user%s", vus, plural(vus))
	if connections > 0 {
		t += fmt.Sprintf(" over %d connection%s", connections, plural(connections))
	}
	return t
}

// terminalsNote says when TPC-C runs more terminals (VUs) per warehouse
// than the specification's ten (§4.2.2): allowed, and worth knowing when
// reading NOPM per warehouse; "" otherwise.
func terminalsNote(wl string, vus, warehouses int) string {
	if wl != "tpcc" || warehouses < 1 || vus <= 10*warehouses {
		return ""
	}
	n := fmt.Sprint(vus / warehouses)
	if vus%warehouses != 0 {
		n = fmt.Sprintf("up to %d", (vus+warehouses-1)/warehouses)
	}
	return fmt.Sprintf("%s terminals per warehouse: TPC-C has 10 (allowed; more terminals per warehouse than the specification's)", n)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func interrupted(s *runSummary) string {
	if s.Interrupted {
		return " (interrupted)"
	}
	return ""
}

// printCost prints the cost per transaction: a column set per type and an
// overall line, each figure labelled with where it was measured.
func printCost(out io.Writer, s *runSummary) {
	if s.PerTxn == nil {
		return
	}
	fmt.Fprintln(out, "\ncost per transaction (client)")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "type\tround trips\tbytes sent\tbytes received\tCPU µs\tcontext switches\t")
	row := func(name string, c *costJSON) {
		if c == nil {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t\n", name)
			return
		}
		cpuText, sw := "-", "-"
		if c.ClientCPUUs != nil && c.ContextSwitches != nil {
			cpuText, sw = fmt.Sprintf("%.1f", *c.ClientCPUUs), fmt.Sprintf("%.2f", *c.ContextSwitches)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t%s\t%s\t%s\t\n", name, c.RoundTrips,
			thousands(int64(c.BytesSent+0.5)), thousands(int64(c.BytesReceived+0.5)), cpuText, sw)
	}
	perType := false
	for _, t := range s.Types {
		row(t.Name, t.PerTxn)
		perType = perType || (t.PerTxn != nil && t.PerTxn.ClientCPUUs != nil)
	}
	row("all", s.PerTxn)
	tw.Flush()
	wire := "on the virtual users' connections"
	switch {
	case strings.HasPrefix(s.WireNote, "embedded"):
		wire = "none: " + s.Driver + " is embedded"
	case s.WireNote != "":
		wire = "not counted on this database"
	}
	fmt.Fprintf(out, "round trips and bytes: %s\n", wire)
	if s.PerTxn != nil && s.PerTxn.ClientCPUNote != "" {
		fmt.Fprintln(out, "CPU and context switches: "+s.PerTxn.ClientCPUNote)
	} else if perType {
		fmt.Fprintln(out, "CPU and context switches: per type on each virtual user's own thread; all: the whole sledge process")
	} else {
		fmt.Fprintln(out, "CPU and context switches: the whole sledge process (per type: --per-type-cpu)")
	}
	if c := s.ServerPerTxn; c != nil && c.BytesSent != nil && c.BytesReceived != nil {
		fmt.Fprintf(out, "server: %s bytes received, %s bytes sent per transaction (%s global status: every session)\n",
			thousands(int64(*c.BytesReceived+0.5)), thousands(int64(*c.BytesSent+0.5)), s.Driver)
	}
	printServerCost(out, s)
}

// printPgbench prints pgbench's report lines (tpcb and scripts), in its
// order and wording, so that what parses pgbench's output parses these;
// sledge adds percentiles and says where each figure comes from.
func printPgbench(out io.Writer, s *runSummary) {
	if s.Script != "" {
		fmt.Fprintf(out, "transaction type: %s\n", s.Script)
	}
	if s.ScaleN != nil {
		fmt.Fprintf(out, "scaling factor: %d\n", *s.ScaleN)
	}
	qm := s.Protocol
	if qm == "" {
		qm = s.Mode
	}
	fmt.Fprintf(out, "query mode: %s\n", qm)
	fmt.Fprintf(out, "number of clients: %d\n", s.VUs)
	if s.Iterations > 0 {
		fmt.Fprintf(out, "number of transactions per client: %d\n", s.Iterations)
		fmt.Fprintf(out, "number of transactions actually processed: %d/%d\n", s.Processed, s.Iterations*s.VUs)
	} else {
		fmt.Fprintf(out, "duration: %.0f s\n", s.MeasuredS)
		fmt.Fprintf(out, "number of transactions actually processed: %d\n", s.Processed)
	}
	den := float64(s.Processed + s.Skipped + s.Failed)
	pct := func(n int64) string {
		if den == 0 {
			return "0.000%"
		}
		return fmt.Sprintf("%.3f%%", 100*float64(n)/den)
	}
	fmt.Fprintf(out, "number of failed transactions: %d (%s)\n", s.Failed, pct(s.Failed))
	if s.Retried > 0 || s.Retries > 0 {
		fmt.Fprintf(out, "number of transactions retried: %d (%s)\n", s.Retried, pct(s.Retried))
		fmt.Fprintf(out, "total number of retries: %d\n", s.Retries)
	}
	printSkippedLate(out, s)
	fmt.Fprintf(out, "latency average = %.3f ms\n", s.LatencyAvgMs)
	fmt.Fprintf(out, "latency stddev = %.3f ms\n", s.LatencyStddevMs)
	fmt.Fprintf(out, "latency percentiles: p50 = %.3f ms, p90 = %.3f ms, p99 = %.3f ms, max = %.3f ms\n",
		s.P50Ms, s.P90Ms, s.P99Ms, s.MaxMs)
	if s.LagAvgMs != nil {
		fmt.Fprintf(out, "rate limit schedule lag: avg %.3f (max %.3f) ms\n", *s.LagAvgMs, *s.LagMaxMs)
	}
	fmt.Fprintf(out, "tps = %f (without initial connection time; counted by sledge over the measured interval)\n\n", s.TPS)
}

// printSkippedLate prints pgbench's lines for -R with -L (transactions
// skipped) and for -L (transactions late), in pgbench's wording.
func printSkippedLate(out io.Writer, s *runSummary) {
	if s.RateTPS > 0 && s.LatencyLimitMs > 0 {
		den := float64(s.Processed + s.Skipped + s.Failed)
		pct := "0.000%"
		if den > 0 {
			pct = fmt.Sprintf("%.3f%%", 100*float64(s.Skipped)/den)
		}
		fmt.Fprintf(out, "number of transactions skipped: %d (%s)\n", s.Skipped, pct)
	}
	if s.LatencyLimitMs > 0 {
		late := "0.000%"
		if s.Processed > 0 {
			late = fmt.Sprintf("%.3f%%", 100*float64(s.Late)/float64(s.Processed))
		}
		fmt.Fprintf(out, "number of transactions above the %.1f ms latency limit: %d/%d (%s)\n",
			s.LatencyLimitMs, s.Late, s.Processed, late)
	}
}

// printLimits prints what -R and -L did in a TPC-C summary, which has
// no pgbench report: the rate, skipped and late transactions, the lag
// behind the schedule.
func printLimits(out io.Writer, s *runSummary) {
	if s.RateTPS <= 0 && s.LatencyLimitMs <= 0 {
		return
	}
	fmt.Fprintln(out)
	if s.RateTPS > 0 {
		fmt.Fprintf(out, "rate limit: %g transactions per second in all (-R), on a Poisson schedule; latencies count from the schedule\n", s.RateTPS)
	}
	printSkippedLate(out, s)
	if s.LagAvgMs != nil {
		fmt.Fprintf(out, "rate limit schedule lag: avg %.3f (max %.3f) ms\n", *s.LagAvgMs, *s.LagMaxMs)
	}
}

// printStatements prints -r: per statement (or script command) latency.
func printStatements(out io.Writer, s *runSummary) {
	if len(s.Statements) == 0 {
		return
	}
	// The workload's own rollbacks (TPC-C's 1% of New-Orders) get a column
	// of their own where there are any: they are not failures.
	rollbacks := false
	for _, st := range s.Statements {
		rollbacks = rollbacks || st.Rollbacks > 0
	}
	if rollbacks {
		fmt.Fprintln(out, "\nstatement latencies in milliseconds, failures and the workload's own rollbacks (client, every phase):")
	} else {
		fmt.Fprintln(out, "\nstatement latencies in milliseconds and failures (client, every phase):")
	}
	script := ""
	for _, st := range s.Statements {
		if st.Script != script {
			script = st.Script
			fmt.Fprintf(out, "SQL script %s:\n", script)
		}
		if rollbacks {
			fmt.Fprintf(out, "  %12.3f  %10d  %10d  %s\n", st.AvgMs, st.Failures, st.Rollbacks, st.Name)
			continue
		}
		fmt.Fprintf(out, "  %12.3f  %10d  %s\n", st.AvgMs, st.Failures, st.Name)
	}
}

// printFaults says what went wrong during the run and how it was counted.
func printFaults(out io.Writer, s *runSummary) {
	if s.Reconnects > 0 || s.ConnLost > 0 {
		fmt.Fprintf(out, "\nconnections lost: %d transaction%s failed with a lost connection; %d reconnect%s\n",
			s.ConnLost, plural(int(s.ConnLost)), s.Reconnects, plural(int(s.Reconnects)))
	}
	if s.OutageS > 0 {
		fmt.Fprintf(out, "outage: %d s of the measured interval without a completed transaction (seconds %s)\n",
			s.OutageS, secondsList(s.OutageSeconds))
	}
	if len(s.StuckVUs) > 0 {
		fmt.Fprintf(out, "stuck: virtual user%s %v still inside a transaction when the stop timeout ran out; their statements were cancelled and what they measured is not counted\n",
			plural(len(s.StuckVUs)), s.StuckVUs)
	}
}

// secondsList shortens a list of seconds into ranges: "3-7, 12".
func secondsList(secs []int) string {
	var b strings.Builder
	for i := 0; i < len(secs); {
		j := i
		for j+1 < len(secs) && secs[j+1] == secs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", secs[i], secs[j])
		} else {
			fmt.Fprintf(&b, "%d", secs[i])
		}
		i = j + 1
	}
	return b.String()
}

// transactionType is pgbench's "transaction type" line, from workloads that
// have one (workload.Describer); empty for TPC-C.
func transactionType(w workload.Workload) string {
	if d, ok := w.(workload.Describer); ok {
		return d.Description()
	}
	return ""
}

// homeWarehouser is a workload whose virtual users have home warehouses
// (TPC-C).
type homeWarehouser interface {
	HomeWarehouses(vus int) (homes []int, all bool)
}

// warehousesText says which home warehouses the VUs use: "2 VUs on home
// warehouses 1–2 of 4; --all-warehouses spreads them over all 4"; "" with
// one warehouse.
// --all-warehouses only makes a difference with fewer VUs than
// warehouses, so it is read from the list.
func warehousesText(vus int, homes []int, warehouses int) string {
	if warehouses <= 1 || len(homes) == 0 {
		return "" // nothing to choose from
	}
	who := fmt.Sprintf("%d VU%s", vus, plural(vus))
	switch {
	case len(homes) < warehouses:
		return fmt.Sprintf("%s on home warehouse%s %s of %d; --all-warehouses spreads them over all %d",
			who, plural(len(homes)), rangesText(homes), warehouses, warehouses)
	case vus < warehouses:
		return fmt.Sprintf("%s spread over all %d warehouses (--all-warehouses: each picks a home warehouse from its list before every transaction)",
			who, warehouses)
	}
	return fmt.Sprintf("%s on home warehouses %s of %d", who, rangesText(homes), warehouses)
}

// rangesText shortens ascending numbers into ranges: "1–4, 7".
func rangesText(ns []int) string {
	var b strings.Builder
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if j > i {
			fmt.Fprintf(&b, "%d–%d", ns[i], ns[j])
		} else {
			fmt.Fprintf(&b, "%d", ns[i])
		}
		i = j + 1
	}
	return b.String()
}
