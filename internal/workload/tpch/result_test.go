package tpch

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/workload"
)

// The figures jobs list and jobs diff read from a stored result, through
// the result type tpch registers.
func TestResultFigures(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	q := func(stream, query int, s float64) QueryTime {
		return QueryTime{Stream: stream, Query: query, Seconds: s}
	}
	for _, tc := range []struct {
		name     string
		r        Result
		headline string
		want     string // the figures, name=value
	}{
		{"both tests", Result{Power: f(100), Throughput: f(25), QphH: f(50), ThroughputSeconds: f(3),
			Queries: []QueryTime{q(0, 2, 0.5), q(0, 1, 0.25), q(1, 1, 9), q(2, 1, 7)}},
			"QphH", "power=100 throughput=25 qphh=50 throughput_seconds=3 Q1.seconds=0.25 Q2.seconds=0.5"},
		{"power test", Result{Power: f(100), Queries: []QueryTime{q(0, 14, 0.125)}}, "Power", "power=100 Q14.seconds=0.125"},
		{"throughput test: the streams' mean", Result{Throughput: f(25), ThroughputSeconds: f(3), Queries: []QueryTime{q(1, 3, 1), q(2, 3, 2)}},
			"", "throughput=25 throughput_seconds=3 Q3.seconds=1.5"},
		{"nothing measured", Result{}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Stored as JSON and read back as jobs does.
			b, err := json.Marshal(&tc.r)
			if err != nil {
				t.Fatal(err)
			}
			m, err := workload.Lookup(Name)
			if err != nil || m.NewResult == nil {
				t.Fatalf("tpch registers no NewResult: %v", err)
			}
			res := m.NewResult()
			if err := json.Unmarshal(b, res); err != nil {
				t.Fatal(err)
			}
			af, ok := res.(workload.AnalyticFigures)
			if !ok {
				t.Fatalf("%T is not a workload.AnalyticFigures", res)
			}
			var got []string
			for _, x := range af.Figures() {
				got = append(got, fmt.Sprintf("%s=%g", x.Name, x.Value))
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("figures %q, want %q", strings.Join(got, " "), tc.want)
			}
			name, v := af.Headline()
			if name != tc.headline || (v == nil) != (name == "") {
				t.Errorf("headline %q %v, want %q", name, v, tc.headline)
			}
		})
	}
}
