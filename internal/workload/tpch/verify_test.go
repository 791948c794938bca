package tpch

import (
	"testing"

	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/tpch/dbgen"
)

// When the answers cannot be checked, the note says why and the one
// command that gets a verified run: at a scale factor with references,
// on a database as built, with the run's --db and password note.
func TestUnverifiableSaysHow(t *testing.T) {
	suggest := func(cmd string) (string, string) {
		return cmd + " --db postgres://u@h/x", " (with the password in PGPASSWORD)"
	}
	for _, c := range []struct {
		name    string
		sf      float64
		next    int64
		suggest func(string) (string, string)
		want    string
	}{
		{"as built", 0.1, 1, suggest, ""},
		{"a refresh set applied", 0.1, 2, suggest, "not verified (refresh set 1 has changed the data since the build); a verified run: " +
			"sledge drop tpch --db postgres://u@h/x && sledge build tpch --db postgres://u@h/x --scale 0.1 && sledge run tpch --db postgres://u@h/x (with the password in PGPASSWORD)"},
		{"three sets, the embedded default", 0.01, 4, nil, "not verified (refresh sets 1..3 have changed the data since the build); a verified run: " +
			"sledge drop tpch && sledge build tpch --scale 0.01 && sledge run tpch"},
		{"no references above SF 1", 10, 1, nil, "not verified (no reference answers for SF 10; there are for 0.01, 0.1 and 1); a verified run: " +
			"sledge drop tpch && sledge build tpch --scale 1 && sledge run tpch"},
		{"no references between", 0.5, 1, nil, "not verified (no reference answers for SF 0.5; there are for 0.01, 0.1 and 1); a verified run: " +
			"sledge drop tpch && sledge build tpch --scale 0.1 && sledge run tpch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc, err := dbgen.NewScale(c.sf)
			if err != nil {
				t.Fatal(err)
			}
			r := &run{w: &Workload{sc: sc, nextSet: c.next}, env: workload.AnalyticEnv{Suggest: c.suggest}}
			if got := r.unverifiable(); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}
