package runner

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

func tpchWorkload(t *testing.T) workload.Analytic {
	t.Helper()
	m, err := workload.Lookup("tpch")
	if err != nil {
		t.Fatal(err)
	}
	w, err := m.Flags("run", pflag.NewFlagSet("", pflag.ContinueOnError))(1)
	if err != nil {
		t.Fatal(err)
	}
	return w.(workload.Analytic)
}

// compare's --db repeats: every URL in order, the first also the common
// flag's; the job's spec keeps them all (redacted), its command line and
// Args repeat them.
func TestCompareDBFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		dbs  []string
	}{
		{"one", []string{"--db", "sqlite:///a.db"}, []string{"sqlite:///a.db"}},
		{"two", []string{"--db", "sqlite:///a.db", "--db", "postgres://u:secret@h/x"}, []string{"sqlite:///a.db", "postgres://u:secret@h/x"}},
		{"none", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
			var c Common
			var o CompareOptions
			CommonFlags(fs, &c, "run", 0)
			CompareFlags(fs, &o)
			if err := fs.Parse(append([]string{"tpch"}, tc.args...)); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(o.DBs, tc.dbs) {
				t.Errorf("DBs %v, want %v", o.DBs, tc.dbs)
			}
			want := ""
			if len(tc.dbs) > 0 {
				want = tc.dbs[0]
			}
			if c.DB != want {
				t.Errorf("--db is %q, want the first URL", c.DB)
			}
			cmd := CompareCommand(fs, 9, nil)
			spec := SpecOf(fs, "compare", "tpch", c.DB)
			if strings.Contains(cmd, "secret") || strings.Contains(fmt.Sprint(spec.Options), "secret") {
				t.Errorf("a password shows: %s %v", cmd, spec.Options)
			}
			if spec.DB == "" {
				return
			}
			args, err := spec.Args(true)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, a := range args {
				if a == "--db" {
					got = append(got, args[i+1])
				}
			}
			if len(got) != len(tc.dbs) || strings.Count(cmd, "--db ") != len(tc.dbs) {
				t.Errorf("Args %v, command %q: want every --db of %v", args, cmd, tc.dbs)
			}
		})
	}
}

// The result of a compare across databases: each query's seconds by
// database (the power test's, else the streams' mean), and the ratio of
// the first database's headline figure.
func TestAnalyticResult(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cell := func(key string, power, qphh *float64, qs string) *analyticCell {
		return &analyticCell{key: key, info: db.Info{Driver: "sqlite"}, res: &analyticRun{Power: power, QphH: qphh, Queries: json.RawMessage(qs)}}
	}
	for _, tc := range []struct {
		name   string
		cells  []*analyticCell
		ratios []string
		source string
		q1     map[string]float64
	}{
		{"power tests", []*analyticCell{
			cell("a", f(100), nil, `[{"stream":0,"query":1,"seconds":0.5}]`),
			cell("b", f(50), nil, `[{"stream":0,"query":1,"seconds":2}]`)},
			[]string{"1", "0.5"}, "power", map[string]float64{"a": 0.5, "b": 2}},
		{"both tests: QphH, and the power test's seconds", []*analyticCell{
			cell("a", f(100), f(40), `[{"stream":0,"query":1,"seconds":1},{"stream":1,"query":1,"seconds":9}]`),
			cell("b", f(50), f(80), `[{"stream":0,"query":1,"seconds":3},{"stream":1,"query":1,"seconds":9}]`)},
			[]string{"1", "2"}, "power", map[string]float64{"a": 1, "b": 3}},
		{"B's throughput test did not finish: no QphH to compare", []*analyticCell{
			cell("a", f(100), f(40), `[{"stream":0,"query":1,"seconds":1}]`),
			cell("b", f(50), nil, `[{"stream":0,"query":1,"seconds":3}]`)},
			[]string{"1", "null"}, "power", map[string]float64{"a": 1, "b": 3}},
		{"throughput test: the streams' mean", []*analyticCell{
			cell("a", nil, nil, `[{"stream":1,"query":1,"seconds":1},{"stream":2,"query":1,"seconds":3}]`),
			cell("b", nil, nil, `null`)},
			[]string{"null", "null"}, "throughput", map[string]float64{"a": 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := analyticResult(tpchWorkload(t), &CompareOptions{Seed: 3}, tc.cells, false, nil)
			var ratios []string
			for _, c := range out.Cells {
				if c.Ratio == nil {
					ratios = append(ratios, "null")
				} else {
					ratios = append(ratios, fmt.Sprint(*c.Ratio))
				}
				if string(c.Queries) == "null" || len(c.Queries) == 0 {
					t.Errorf("cell %s: queries %q, want an array", c.Database, c.Queries)
				}
			}
			if !slices.Equal(ratios, tc.ratios) || out.Source != tc.source || out.Workload != "tpch" || out.Seed != 3 {
				t.Errorf("ratios %v, source %q; want %v, %q", ratios, out.Source, tc.ratios, tc.source)
			}
			if len(out.Queries) != 1 || out.Queries[0].Query != 1 || fmt.Sprint(out.Queries[0].Seconds) != fmt.Sprint(tc.q1) {
				t.Errorf("queries %+v, want Q1 %v", out.Queries, tc.q1)
			}
		})
	}
}
