package runner

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sledge-bench/sledge/internal/workload"
)

// Threshold is one --threshold: a figure of the result, a comparison and a
// limit, as k6 users write them ("nopm>=10000", "p95(new_order)<50ms").
type Threshold struct {
	expr  string
	agg   string // nopm, tpm, tps, failed, retries, error_rate, p50…p99, mean, max
	typ   string // the transaction type of a latency, as the user wrote it; "": all
	op    string
	limit float64 // milliseconds for latencies
}

// ThresholdJSON is one threshold's outcome in the result ("thresholds").
type ThresholdJSON struct {
	Threshold string   `json:"threshold"`
	Value     *float64 `json:"value"`          // null: the run did not measure the figure
	Unit      string   `json:"unit,omitempty"` // "ms" for latencies
	OK        bool     `json:"ok"`
}

var thresholdRe = regexp.MustCompile(`^\s*([a-z_0-9]+)\s*(?:\(\s*([A-Za-z_0-9-]+)\s*\))?\s*(<=|>=|==|!=|<|>)\s*([0-9]*\.?[0-9]+)\s*(us|µs|ms|s)?\s*$`)

// latencyAggs are the latency figures a threshold may name; each takes an
// optional transaction type.
var latencyAggs = map[string]bool{"p50": true, "p90": true, "p95": true, "p99": true, "mean": true, "avg": true, "max": true}

// rateAggs are the figures of the whole run, without a type.
var rateAggs = map[string]bool{"nopm": true, "tpm": true, "tps": true, "failed": true, "retries": true, "error_rate": true}

// ParseThreshold reads one --threshold and checks it against the workload:
// its transaction types and whether it has a NOPM.
func ParseThreshold(s string, w workload.Workload) (Threshold, error) {
	m := thresholdRe.FindStringSubmatch(s)
	if m == nil {
		return Threshold{}, fmt.Errorf("--threshold %q: want FIGURE OP NUMBER, such as 'nopm>=10000' or 'p95(new_order)<50ms'", s)
	}
	t := Threshold{expr: strings.TrimSpace(s), agg: m[1], typ: m[2], op: m[3]}
	t.limit, _ = strconv.ParseFloat(m[4], 64)
	switch {
	case latencyAggs[t.agg]:
		switch m[5] {
		case "s":
			t.limit *= 1000
		case "us", "µs":
			t.limit /= 1000
		}
		if t.typ != "" && typeIndex(w, t.typ) < 0 {
			return Threshold{}, fmt.Errorf("--threshold %q: %s has no transaction type %q (%s)", s, w.Name(), t.typ, typeNames(w))
		}
	case rateAggs[t.agg]:
		if t.typ != "" || m[5] != "" {
			return Threshold{}, fmt.Errorf("--threshold %q: %s is a figure of the whole run, a plain number without a type or unit", s, t.agg)
		}
		if _, ok := w.(workload.Meter); t.agg == "nopm" && !ok {
			return Threshold{}, fmt.Errorf("--threshold %q: %s counts no new orders; use tpm or tps", s, w.Name())
		}
	default:
		return Threshold{}, fmt.Errorf("--threshold %q: unknown figure %q: use nopm, tpm, tps, failed, retries, error_rate, or p50, p90, p95, p99, mean, max with an optional (type)", s, t.agg)
	}
	return t, nil
}

// typeIndex finds a transaction type by its name or its --json key
// ("neword" or "new_order"); -1 when there is none.
func typeIndex(w workload.Workload, name string) int {
	for i, tx := range w.Mix() {
		if strings.EqualFold(tx.Name, name) || (tx.Key != "" && strings.EqualFold(tx.Key, name)) {
			return i
		}
	}
	return -1
}

func typeNames(w workload.Workload) string {
	var out []string
	for _, tx := range w.Mix() {
		n := tx.Name
		if tx.Key != "" && tx.Key != tx.Name {
			n += " or " + tx.Key
		}
		out = append(out, n)
	}
	return strings.Join(out, ", ")
}

// value is the figure t names in the result; nil when it was not measured.
func (t Threshold) value(w workload.Workload, s *RunSummary) *float64 {
	f := func(v float64) *float64 { return &v }
	switch t.agg {
	case "nopm":
		return s.NOPM
	case "tpm":
		return f(s.TPM)
	case "tps":
		return f(s.TPS)
	case "failed":
		return f(float64(s.Failed))
	case "retries":
		return f(float64(s.Retries))
	case "error_rate":
		if n := s.Processed + s.Failed; n > 0 {
			return f(float64(s.Failed) / float64(n))
		}
		return nil
	}
	tx := s.Total
	if t.typ != "" {
		i := typeIndex(w, t.typ)
		if i < 0 || i >= len(s.Types) {
			return nil
		}
		tx = s.Types[i]
	}
	if tx.Count == 0 {
		return nil // no latency was measured
	}
	switch t.agg {
	case "p50":
		return f(tx.P50Ms)
	case "p90":
		return f(tx.P90Ms)
	case "p95":
		return f(tx.P95Ms)
	case "p99":
		return f(tx.P99Ms)
	case "mean", "avg":
		return f(tx.MeanMs)
	}
	return f(tx.MaxMs)
}

// holds says whether v meets the threshold.
func (t Threshold) holds(v float64) bool {
	switch t.op {
	case "<":
		return v < t.limit
	case "<=":
		return v <= t.limit
	case ">":
		return v > t.limit
	case ">=":
		return v >= t.limit
	case "==":
		return v == t.limit
	}
	return v != t.limit
}

// EvalThresholds judges the result against every threshold: a figure the
// run did not measure fails its threshold.
func EvalThresholds(ts []Threshold, w workload.Workload, s *RunSummary) []ThresholdJSON {
	var out []ThresholdJSON
	for _, t := range ts {
		v := t.value(w, s)
		j := ThresholdJSON{Threshold: t.expr, Value: v, OK: v != nil && t.holds(*v)}
		if latencyAggs[t.agg] {
			j.Unit = "ms"
		}
		out = append(out, j)
	}
	return out
}

// ThresholdErr is exit 99 when a threshold was missed: the result is out.
func ThresholdErr(ts []ThresholdJSON) error {
	var missed []string
	for _, t := range ts {
		if !t.OK {
			missed = append(missed, t.Threshold)
		}
	}
	if len(missed) == 0 {
		return nil
	}
	return &ExitError{Code: ExitThreshold, Err: fmt.Errorf("threshold%s missed: %s", plural(len(missed)), strings.Join(missed, ", "))}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
