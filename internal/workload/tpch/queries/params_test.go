package queries

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/workload/tpch/dbgen"
)

// The Park–Miller stream as docs/tpch.md part 4.1 gives it.
func TestStream(t *testing.T) {
	r := dbgen.NewStream(1)
	if got := r.Next(); got != 16807 {
		t.Errorf("first step from 1: %d, want 16807", got)
	}
	for i := 0; i < 10000; i++ {
		if v := r.Int(60, 120); v < 60 || v > 120 {
			t.Fatalf("U[60..120] gave %d", v)
		}
	}
	if p := dbgen.NewStream(5).Pick("Q13a"); p != "special" && p != "pending" && p != "unusual" && p != "express" {
		t.Errorf("Q13a pick %q", p)
	}
}

// A seed always yields the same parameters, each stream its own, within
// the specification's ranges; every random query renders and runs.
func TestRandomParams(t *testing.T) {
	draw := func(seed int64, stream int) [Queries + 1]Params {
		var out [Queries + 1]Params
		seeds := Seeds(seed, stream)
		for q := 1; q <= Queries; q++ {
			out[q] = Random(q, 0.01, seeds[q])
		}
		return out
	}
	a, b, c := draw(1125, 1), draw(1125, 1), draw(1125, 2)
	if !reflect.DeepEqual(a, b) {
		t.Error("the same seed and stream drew other parameters")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("streams 1 and 2 drew the same parameters")
	}
	for s := 0; s < 50; s++ {
		p := draw(int64(7000+s), s%5)
		if d := p[1]["DELTA"].(int); d < 60 || d > 120 {
			t.Errorf("Q1 DELTA %d", d)
		}
		if p[7]["NATION1"] == p[7]["NATION2"] || p[12]["SHIPMODE1"] == p[12]["SHIPMODE2"] {
			t.Errorf("Q7/Q12 drew the same value twice: %v %v", p[7], p[12])
		}
		if p[8]["REGION"] == "" {
			t.Errorf("Q8 NATION %v has no region", p[8]["NATION"])
		}
		for _, k := range []string{"DATE"} {
			for _, q := range []int{4, 10, 14, 15} {
				d := p[q][k].(string)
				if d < "1993-01-01" || d > "1997-12-01" {
					t.Errorf("Q%d DATE %s", q, d)
				}
			}
		}
		if d := p[4]["DATE"].(string); d < "1993-02-01" || d > "1997-11-01" {
			t.Errorf("Q4 DATE %s outside 1993-02..1997-11", d)
		}
		sizes := p[16]["SIZES"].([]int)
		seen := map[int]bool{}
		for _, x := range sizes {
			if x < 1 || x > 50 || seen[x] {
				t.Errorf("Q16 sizes %v", sizes)
			}
			seen[x] = true
		}
		codes := p[22]["CODES"].([]string)
		if len(codes) != 7 {
			t.Errorf("Q22 codes %v", codes)
		}
		for _, x := range codes {
			if x < "10" || x > "34" {
				t.Errorf("Q22 code %s outside 10..34 (qgen 2.14's bug)", x)
			}
		}
	}
	db := open(t, SQLite)
	for _, st := range fixture(SQLite) {
		if _, err := db.Exec(st); err != nil {
			t.Fatal(err)
		}
	}
	for q := 1; q <= Queries; q++ {
		sts, err := Render(SQLite, q, 1, a[q])
		if err != nil {
			t.Fatalf("Q%d %v: %v", q, a[q], err)
		}
		for i, st := range sts {
			if i == Answer(q) {
				rows(t, db, st)
			} else if _, err := db.Exec(st); err != nil {
				t.Fatalf("Q%d: %v\n%s", q, err, st)
			}
		}
		if q == 16 && !strings.Contains(strings.Join(sts, " "), fmt.Sprint(a[16]["SIZES"].([]int)[0])) {
			t.Errorf("Q16 text lacks its sizes: %s", sts[0])
		}
	}
}
