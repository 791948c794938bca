package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/workload"
)

func newFlagSet() *pflag.FlagSet { return pflag.NewFlagSet("", pflag.ContinueOnError) }

// costJSON is the cost of one transaction, averaged over the measured
// interval: "per_txn" in --json (issue 4's contract keys).
type costJSON struct {
	RoundTrips      float64 `json:"round_trips"`      // request/response exchanges on the VU's connection
	BytesSent       float64 `json:"bytes_sent"`       // on the VU's connection
	BytesReceived   float64 `json:"bytes_received"`   // on the VU's connection
	ClientCPUUs     float64 `json:"client_cpu_us"`    // user+sys CPU of the sledge process
	ContextSwitches float64 `json:"context_switches"` // voluntary+involuntary, sledge process
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
	MeanMs    float64   `json:"mean_ms"`
	P50Ms     float64   `json:"p50_ms"`
	P90Ms     float64   `json:"p90_ms"`
	P95Ms     float64   `json:"p95_ms"`
	P99Ms     float64   `json:"p99_ms"`
	MaxMs     float64   `json:"max_ms"`
	PerTxn    *costJSON `json:"per_txn,omitempty"`
}

// runSummary is the result of a run, printed as text or JSON.
type runSummary struct {
	Workload    string              `json:"workload"`
	Database    string              `json:"database"` // URL, password redacted
	Driver      string              `json:"driver"`
	DBVersion   string              `json:"db_version"`
	Transport   string              `json:"transport"`
	Mode        string              `json:"mode"`
	VUs         int                 `json:"vus"`
	Scale       string              `json:"scale,omitempty"`
	Seed        uint64              `json:"seed"`
	RampupS     float64             `json:"rampup_s"`
	DurationS   float64             `json:"duration_s"`
	Iterations  int                 `json:"iterations,omitempty"`
	MeasuredS   float64             `json:"measured_s"`
	Interrupted bool                `json:"interrupted"`
	MeterName   string              `json:"-"`
	NOPM        *float64            `json:"nopm,omitempty"`
	TPM         float64             `json:"tpm"`
	TPMSource   string              `json:"tpm_source"` // "database" or "client"
	TPMClient   float64             `json:"tpm_client"`
	Total       txJSON              `json:"total"`
	PerTxn      *costJSON           `json:"per_txn,omitempty"` // overall cost per transaction
	Types       []txJSON            `json:"transactions"`
	Errors      []engine.ErrorCount `json:"errors"`
	StoppedVUs  []int               `json:"stopped_vus,omitempty"` // --raise-error: VUs that stopped at an error
	Settings    map[string]string   `json:"db_settings,omitempty"`
}

func toJSON(s metrics.Summary) txJSON {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return txJSON{Name: s.Name, Count: s.Count, Commits: s.Commits, Rollbacks: s.Rollbacks,
		Errors: s.Errors, Retries: s.Retries, MeanMs: ms(s.Mean), P50Ms: ms(s.P50), P90Ms: ms(s.P90),
		P95Ms: ms(s.P95), P99Ms: ms(s.P99), MaxMs: ms(s.Max)}
}

func summarize(w workload.Workload, s *session, info db.Info, mode workload.Mode, o *runOpts, res *engine.Result) *runSummary {
	measured := res.Measured()
	sum := &runSummary{
		Workload: w.Name(), Database: s.url, Driver: info.Driver, DBVersion: info.Version,
		Transport: info.Transport, Mode: mode.String(), VUs: o.vus, Scale: scaleText(w), Seed: o.seed,
		RampupS: o.rampup.Seconds(), DurationS: o.duration.Seconds(), Iterations: o.iterations,
		MeasuredS: measured.Seconds(), Interrupted: res.Interrupted, Settings: info.Settings,
		Errors: res.Errors, StoppedVUs: res.Stopped,
	}
	if o.iterations > 0 {
		sum.RampupS, sum.DurationS = 0, 0
	}
	if sum.Errors == nil {
		sum.Errors = []engine.ErrorCount{}
	}
	mix := w.Mix()
	for i := range res.Stats {
		sum.Types = append(sum.Types, toJSON(res.Stats[i].Summarize(mix[i].Name)))
	}
	total := res.Stats.Total()
	sum.Total = toJSON(total.Summarize("total"))
	sum.TPMClient = metrics.PerMinute(total.Completed(), measured)
	sum.TPM, sum.TPMSource = sum.TPMClient, "client"
	if c, ok1 := res.Delta("db_commits"); ok1 {
		r, _ := res.Delta("db_rollbacks")
		sum.TPM, sum.TPMSource = metrics.PerMinute(c+r, measured), "database"
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
	fmt.Fprintf(out, "\n%s on %s %s (%s) · mode %s · %d virtual user%s%s · seed %d\n",
		s.Workload, s.Driver, s.DBVersion, s.Transport, s.Mode, s.VUs, plural(s.VUs), scale, s.Seed)
	switch {
	case s.MeasuredS == 0:
		fmt.Fprintln(out, "nothing was measured: the run stopped before the measured interval began")
		return
	case s.Iterations > 0:
		fmt.Fprintf(out, "measured %.1f s: %d transactions per virtual user%s\n", s.MeasuredS, s.Iterations, interrupted(s))
	default:
		fmt.Fprintf(out, "measured %.1f s after %.0f s of ramp-up%s\n", s.MeasuredS, s.RampupS, interrupted(s))
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
		fmt.Fprintf(out, "%-5s %12s   transactions per minute, counted by sledge (%s keeps no transaction counters)\n",
			"TPM", thousands(int64(s.TPM+0.5)), s.Driver)
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
	fmt.Fprintln(out, "latencies measured by sledge per transaction, from its first statement to its commit")
	if len(s.StoppedVUs) > 0 {
		fmt.Fprintf(out, "\n%d virtual user%s stopped at an error (--raise-error): %v\n", len(s.StoppedVUs), plural(len(s.StoppedVUs)), s.StoppedVUs)
	}
	if len(s.Errors) > 0 {
		fmt.Fprintln(out, "\nerrors:")
		for _, e := range s.Errors {
			fmt.Fprintf(out, "  %6s × %s\n", thousands(e.Count), oneLine(e.Message))
		}
	}
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
