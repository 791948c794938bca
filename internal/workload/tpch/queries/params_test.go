package queries

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// specLists are the lists of the specification's §4.2.2.13 and §4.2.3,
// picked uniformly: enough to check qgen's rules (ranges, distinct
// picks, determinism). The workload picks with dbgen's weights.
type specLists map[string][]string

func (l specLists) Pick(list string, r *Stream) string {
	xs := l[list]
	return xs[r.Int(0, int64(len(xs)-1))]
}

func newSpecLists() specLists {
	var types, cntr []string
	for _, a := range []string{"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"} {
		for _, b := range []string{"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"} {
			for _, c := range []string{"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"} {
				types = append(types, a+" "+b+" "+c)
			}
		}
	}
	for _, a := range []string{"SM", "LG", "MED", "JUMBO", "WRAP"} {
		for _, b := range []string{"CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"} {
			cntr = append(cntr, a+" "+b)
		}
	}
	return specLists{
		"regions": {"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"},
		"nations": {"ALGERIA", "ARGENTINA", "BRAZIL", "CANADA", "EGYPT", "ETHIOPIA", "FRANCE", "GERMANY", "INDIA",
			"INDONESIA", "IRAN", "IRAQ", "JAPAN", "JORDAN", "KENYA", "MOROCCO", "MOZAMBIQUE", "PERU", "CHINA",
			"ROMANIA", "SAUDI ARABIA", "VIETNAM", "RUSSIA", "UNITED KINGDOM", "UNITED STATES"},
		"msegmnt": {"AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD"},
		"smode":   {"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"},
		"p_types": types, "p_cntr": cntr,
		"colors": {"almond", "forest", "green", "red", "blue"},
		"Q13a":   {"special", "pending", "unusual", "express"},
		"Q13b":   {"packages", "requests", "accounts", "deposits"},
	}
}

// The Park–Miller stream and UnifInt as docs/tpch.md part 4.1 gives them.
func TestStream(t *testing.T) {
	r := NewStream(1)
	if got := r.next(); got != 16807 {
		t.Errorf("first step from 1: %d, want 16807", got)
	}
	r = NewStream(1)
	for i := 0; i < 10000; i++ {
		if v := r.Int(60, 120); v < 60 || v > 120 {
			t.Fatalf("U[60..120] gave %d", v)
		}
	}
}

// A seed always yields the same parameters, each stream its own, within
// the specification's ranges; every random query renders and runs.
func TestRandomParams(t *testing.T) {
	l := newSpecLists()
	draw := func(seed int64, stream int) [Queries + 1]Params {
		var out [Queries + 1]Params
		seeds := Seeds(seed, stream)
		for q := 1; q <= Queries; q++ {
			out[q] = Random(q, 0.01, seeds[q], l)
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
