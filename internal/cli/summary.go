package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
)

// The result's types are runner's; the text printing of them is here.
type (
	runSummary      = runner.RunSummary
	txJSON          = runner.TxJSON
	costJSON        = runner.CostJSON
	serverCostJSON  = runner.ServerCostJSON
	serverWaitsJSON = runner.ServerWaitsJSON
	connWaitJSON    = runner.ConnWaitJSON
	stmtJSON        = runner.StmtJSON
	thresholdJSON   = runner.ThresholdJSON
)

func newFlagSet() *pflag.FlagSet { return pflag.NewFlagSet("", pflag.ContinueOnError) }

func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printSummary(out io.Writer, s *runSummary) {
	if !printHead(out, s) {
		return
	}
	style := workload.ReportOf(s.Workload)
	if style == workload.ReportPgbench {
		printPgbench(out, s)
	}
	printBody(out, s)
	printAnalytic(out, s.Analytic)
	printStatements(out, s)
	printTail(out, s)
}

// printAnalytic prints a mixed run's analytic streams (CH-benCHmark): the
// queries that ended inside the same measured interval, and each query's
// times, as sledge measured them.
func printAnalytic(out io.Writer, a *runner.MixedJSON) {
	if a == nil {
		return
	}
	fmt.Fprintf(out, "\nanalytic: %d stream%s beside the terminals, %s queries ended in the measured interval",
		a.Streams, plural(a.Streams), thousands(a.Queries))
	if a.Failed > 0 {
		fmt.Fprintf(out, " (%s failed)", thousands(a.Failed))
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "%-5s %12.1f   queries per hour, counted by sledge (QphH-like: not TPC-H's QphH@Size)\n", "QphH", a.QueriesPerHour)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "query\tcount\tfailed\tmean s\tmin s\tmax s\trows\t")
	for _, q := range a.PerQuery {
		if q.Count == 0 && q.Failed == 0 {
			fmt.Fprintf(tw, "%s\t0\t0\t-\t-\t-\t-\t\n", q.Query)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.3f\t%.3f\t%.3f\t%s\t\n", q.Query, thousands(q.Count), thousands(q.Failed), q.AvgS, q.MinS, q.MaxS, thousands(q.Rows))
	}
	tw.Flush()
	fmt.Fprintln(out, "query times measured by sledge per query, from sending it to its last row; a query in flight when the interval ended is not counted")
	for _, e := range a.Errors {
		fmt.Fprintf(out, "analytic error: %s\n", oneLine(e))
	}
}

// printHead prints the summary's first lines: the run's database, mode,
// virtual users and seed, and what was measured; false when nothing was.
func printHead(out io.Writer, s *runSummary) bool {
	scale := ""
	if s.Scale != "" {
		scale = ", " + s.Scale
	}
	how := "mode " + s.Mode
	if s.Protocol != "" {
		how = "protocol " + s.Protocol
	}
	fmt.Fprintf(out, "\n%s on %s %s (%s) · %s · %s%s · seed %d\n",
		s.Workload, s.Driver, s.DBVersion, s.Transport, how, vusText(s.VUs, pooledConnections(s)), scale, s.Seed)
	if s.Warehouses != nil {
		if t := warehousesText(s.VUs, s.HomeWarehouses, *s.Warehouses); t != "" {
			fmt.Fprintln(out, t)
		}
		if t := terminalsNote(s.Workload, s.VUs, *s.Warehouses); t != "" {
			fmt.Fprintln(out, t)
		}
	}
	printWorkers(out, s.Workers)
	switch {
	case s.MeasuredS == 0:
		fmt.Fprintln(out, "nothing was measured: the run stopped before the measured interval began")
		return false
	case s.Iterations > 0:
		fmt.Fprintf(out, "measured %.1f s: %d transactions per virtual user%s\n", s.MeasuredS, s.Iterations, interrupted(s))
	default:
		fmt.Fprintf(out, "measured %.1f s after %.0f s of ramp-up%s\n", s.MeasuredS, s.RampupS, interrupted(s))
	}
	return true
}

// printBody prints the meters (NOPM, TPM), the table of transaction types
// and the cost per transaction.
func printBody(out io.Writer, s *runSummary) {
	style := workload.ReportOf(s.Workload)
	if s.NOPM != nil {
		fmt.Fprintf(out, "%-5s %12s   new orders per minute, from the database (Σ district.d_next_o_id)\n",
			s.MeterName, thousands(int64(*s.NOPM+0.5)))
	}
	if s.TPMCNote != "" {
		fmt.Fprintf(out, "note: %s\n", s.TPMCNote)
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
}

// printTail prints what went wrong (faults, stopped virtual users,
// errors) and the thresholds.
func printTail(out io.Writer, s *runSummary) {
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
func pooledConnections(s *runSummary) int {
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
	if workload.ReportOf(wl) != workload.ReportTPCC || warehouses < 1 || vus <= 10*warehouses {
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
	} else {
		whole := "the whole sledge process"
		if len(s.Workers) > 0 {
			whole = fmt.Sprintf("the %d worker processes together", len(s.Workers))
		}
		if perType {
			fmt.Fprintf(out, "CPU and context switches: per type on each virtual user's own thread; all: %s\n", whole)
		} else {
			fmt.Fprintf(out, "CPU and context switches: %s (per type: --per-type-cpu)\n", whole)
		}
		if p := s.PerTxn; p.ClientCPUUserUs != nil && p.ClientCPUSysUs != nil && p.ClientRunQueueDelayUs != nil {
			fmt.Fprintf(out, "client CPU µs: user %.1f, system %.1f; run-queue delay µs %.1f (/proc of the sledge process's threads)\n",
				*p.ClientCPUUserUs, *p.ClientCPUSysUs, *p.ClientRunQueueDelayUs)
		}
	}
	if c := s.ServerPerTxn; c != nil && c.BytesSent != nil && c.BytesReceived != nil {
		fmt.Fprintf(out, "server: %s bytes received, %s bytes sent per transaction (%s global status: every session)\n",
			thousands(int64(*c.BytesReceived+0.5)), thousands(int64(*c.BytesSent+0.5)), s.Driver)
	}
	printServerCost(out, s)
	printClientHost(out, s)
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
	pct := func(n int64) string { return pgbPercent(n, s) }
	printPgbFailed(out, s)
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
	if s.ConnectionAvgMs != nil { // -C
		fmt.Fprintf(out, "average connection time = %.3f ms\n", *s.ConnectionAvgMs)
		fmt.Fprintf(out, "tps = %f (including reconnection times; counted by sledge over the measured interval)\n\n", s.TPS)
		return
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

// printPgbFailed prints pgbench's line of failed transactions and, with
// --failures-detailed, its two classes' lines.
func printPgbFailed(out io.Writer, s *runSummary) {
	pct := func(n int64) string { return pgbPercent(n, s) }
	fmt.Fprintf(out, "number of failed transactions: %d (%s)\n", s.Failed, pct(s.Failed))
	if s.FailuresDetailed {
		fmt.Fprintf(out, "number of serialization failures: %d (%s)\n", s.SerializationFailures, pct(s.SerializationFailures))
		fmt.Fprintf(out, "number of deadlock failures: %d (%s)\n", s.DeadlockFailures, pct(s.DeadlockFailures))
	}
}

// pgbPercent is n as pgbench's share of the transactions that ended
// (processed, skipped or failed): "1.234%".
func pgbPercent(n int64, s *runner.RunSummary) string {
	return pgbShare(n, s.Processed+s.Skipped+s.Failed)
}

// pgbShare is n as a share of den, as pgbench prints it: "1.234%", and
// "0.000%" when den is 0.
func pgbShare(n, den int64) string {
	if den == 0 {
		return "0.000%"
	}
	return fmt.Sprintf("%.3f%%", 100*float64(n)/float64(den))
}
