package tpch

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/sledge-bench/sledge/internal/workload"
)

// Label is what every result says it is.
const Label = "TPC-H-derived: not a TPC-H result (no audit, no pricing; not comparable with published TPC-H results)"

// Result is a run's result. The keys workload, scale, streams, power,
// throughput, qphh, throughput_seconds, queries and refresh are the
// --json contract (tpch.md part 9.1, docs/contracts.md); power,
// throughput and qphh are null for a test that did not run or did not
// finish.
type Result struct {
	Workload          string        `json:"workload"`
	Scale             float64       `json:"scale"`
	Streams           int           `json:"streams"`
	Power             *float64      `json:"power"`
	Throughput        *float64      `json:"throughput"`
	QphH              *float64      `json:"qphh"`
	ThroughputSeconds *float64      `json:"throughput_seconds"`
	Queries           []QueryTime   `json:"queries"`
	Refresh           []RefreshTime `json:"refresh"`

	// Beside the contract.
	Label        string      `json:"label"`
	Test         string      `json:"test"`
	Params       string      `json:"params"`
	Seed         uint64      `json:"seed"`
	NoRefresh    bool        `json:"no_refresh"`
	Subset       []int       `json:"subset,omitempty"` // --queries
	Database     string      `json:"database"`
	DatabaseInfo string      `json:"database_info"`
	Verified     *bool       `json:"verified"` // answers checked against the references; null: not checked
	VerifyNote   string      `json:"verify_note,omitempty"`
	Validation   []QueryTime `json:"validation,omitempty"` // the validation pass before the tests
	Plans        []Plan      `json:"plans,omitempty"`      // --explain
	TotalSeconds float64     `json:"total_seconds"`
	Notes        []string    `json:"notes,omitempty"`
	Error        string      `json:"error,omitempty"`
	Interrupted  bool        `json:"interrupted,omitempty"`
	JobID        int64       `json:"job_id,omitempty"`
}

// QueryTime is one executed query: stream 0 is the power test's.
type QueryTime struct {
	Stream  int     `json:"stream"`
	Query   int     `json:"query"`
	Seconds float64 `json:"seconds"`
	Rows    int64   `json:"rows"` // rows fetched
	At      float64 `json:"at"`   // seconds since the run started, at its end
}

// RefreshTime is one refresh function: stream 0 is the power test's
// pair, stream k the throughput test's k-th pair.
type RefreshTime struct {
	Stream   int     `json:"stream"`
	Function string  `json:"function"` // RF1, RF2
	Seconds  float64 `json:"seconds"`
	Set      int64   `json:"set"` // the update set
}

// Plan is one query's plan as the database showed it (--explain).
type Plan struct {
	Query int    `json:"query"`
	Plan  string `json:"plan"`
}

// WriteText writes the summary a terminal shows: the composite figures,
// then each query's time per stream.
func (r *Result) WriteText(w io.Writer) {
	fmt.Fprintf(w, "tpch at SF %g on %s — %s\n", r.Scale, r.Database, Label)
	fig := func(name string, v *float64, unit string) {
		if v == nil {
			fmt.Fprintf(w, "  %-22s —\n", name)
			return
		}
		fmt.Fprintf(w, "  %-22s %.1f %s\n", name, *v, unit)
	}
	fmt.Fprintf(w, "parameters %s, seed %d", r.Params, r.Seed)
	if r.Streams > 0 {
		fmt.Fprintf(w, "; %d query streams in the throughput test", r.Streams)
	}
	fmt.Fprintln(w)
	fig("Power@Size", r.Power, "queries per hour × SF (power test, floor rule applied)")
	fig("Throughput@Size", r.Throughput, "queries per hour × SF (throughput test)")
	fig("QphH@Size", r.QphH, "(geometric mean of the two; TPC-H-derived)")
	if r.ThroughputSeconds != nil {
		fmt.Fprintf(w, "  %-22s %.3f s\n", "throughput test Ts", *r.ThroughputSeconds)
	}
	// Query × stream table, seconds measured by sledge's client clock.
	streams := map[int]bool{}
	byQ := map[int]map[int]QueryTime{}
	for _, q := range r.Queries {
		streams[q.Stream] = true
		if byQ[q.Query] == nil {
			byQ[q.Query] = map[int]QueryTime{}
		}
		byQ[q.Query][q.Stream] = q
	}
	var ss []int
	for s := range streams {
		ss = append(ss, s)
	}
	sort.Ints(ss)
	if len(ss) > 0 {
		fmt.Fprintf(w, "\nquery seconds (client clock, submit to last row)\n  query")
		for _, s := range ss {
			if s == 0 {
				fmt.Fprintf(w, " %10s", "power")
			} else {
				fmt.Fprintf(w, " %10s", fmt.Sprintf("stream %d", s))
			}
		}
		rowsOf := "power rows"
		if ss[0] != 0 {
			rowsOf = fmt.Sprintf("s%d rows", ss[0])
		}
		fmt.Fprintf(w, " %11s\n", rowsOf)
		for q := 1; q <= 22; q++ {
			m := byQ[q]
			if m == nil {
				continue
			}
			fmt.Fprintf(w, "  Q%-4d", q)
			var rows int64 = -1
			for _, s := range ss {
				if t, ok := m[s]; ok {
					fmt.Fprintf(w, " %10.4f", t.Seconds)
					if rows < 0 {
						rows = t.Rows
					}
				} else {
					fmt.Fprintf(w, " %10s", "")
				}
			}
			fmt.Fprintf(w, " %11d\n", rows)
		}
	}
	if len(r.Refresh) > 0 {
		var parts []string
		for _, f := range r.Refresh {
			parts = append(parts, fmt.Sprintf("%s set %d (stream %d) %.3f s", f.Function, f.Set, f.Stream, f.Seconds))
		}
		fmt.Fprintf(w, "\nrefresh: %s\n", strings.Join(parts, "; "))
	} else if r.NoRefresh {
		fmt.Fprintf(w, "\nrefresh: skipped (--no-refresh)\n")
	}
	switch {
	case r.Verified != nil && *r.Verified:
		fmt.Fprintf(w, "answers: verified (%s)\n", r.VerifyNote)
	case r.Verified != nil:
		fmt.Fprintf(w, "answers: DIFFER from the references\n")
	case r.VerifyNote != "":
		fmt.Fprintf(w, "answers: %s\n", r.VerifyNote) // "not verified (why); a verified run: …"
	default:
		fmt.Fprintf(w, "answers: not verified\n")
	}
	if len(r.Plans) > 0 {
		fmt.Fprintf(w, "plans: %d stored with the run (sledge jobs show --json)\n", len(r.Plans))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if r.JobID > 0 {
		fmt.Fprintf(w, "job %d\n", r.JobID)
	}
}

// Headline is QphH@Size, else Power@Size (only the power test ran or
// finished); nil when neither was measured.
func (r *Result) Headline() (string, *float64) {
	if r.QphH != nil {
		return "QphH", r.QphH
	}
	if r.Power != nil {
		return "Power", r.Power
	}
	return "", nil
}

// Figures are the composite figures measured, then each query's seconds:
// the power test's, else the mean over the throughput test's streams.
func (r *Result) Figures() []workload.Figure {
	var out []workload.Figure
	for _, f := range []struct {
		name string
		v    *float64
	}{{"power", r.Power}, {"throughput", r.Throughput}, {"qphh", r.QphH}, {"throughput_seconds", r.ThroughputSeconds}} {
		if f.v != nil {
			out = append(out, workload.Figure{Name: f.name, Value: *f.v})
		}
	}
	power := map[int]float64{}
	sum, n := map[int]float64{}, map[int]int{}
	for _, q := range r.Queries {
		if q.Stream == 0 {
			power[q.Query] = q.Seconds
		} else {
			sum[q.Query] += q.Seconds
			n[q.Query]++
		}
	}
	for q := 1; q <= 22; q++ {
		if s, ok := power[q]; ok {
			out = append(out, workload.Figure{Name: fmt.Sprintf("Q%d.seconds", q), Value: s})
		} else if n[q] > 0 && len(power) == 0 {
			out = append(out, workload.Figure{Name: fmt.Sprintf("Q%d.seconds", q), Value: sum[q] / float64(n[q])})
		}
	}
	return out
}

// SetJobID records the job that keeps the run, for the summary.
func (r *Result) SetJobID(id int64) { r.JobID = id }
