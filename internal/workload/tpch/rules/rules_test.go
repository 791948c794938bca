package rules

import (
	"math"
	"testing"
)

func TestOrders(t *testing.T) {
	for s := range orders {
		seen := [Queries + 1]bool{}
		for _, q := range orders[s] {
			if q < 1 || q > Queries || seen[q] {
				t.Fatalf("row %d is not a permutation of 1..22: %v", s, orders[s])
			}
			seen[q] = true
		}
	}
	if o := Order(0); o[0] != 14 || o[21] != 12 {
		t.Errorf("the power test's order %v, want 14 … 12", o)
	}
	if Order(41) != Order(0) || Order(42) != Order(1) {
		t.Error("stream s runs row s mod 41")
	}
}

func TestMinStreams(t *testing.T) {
	for _, c := range []struct {
		sf   float64
		want int
	}{{0.01, 2}, {0.1, 2}, {1, 2}, {10, 3}, {30, 4}, {100, 5}, {300, 6}, {1000, 7}, {3000, 8}, {10000, 9}, {30000, 10}, {100000, 11}} {
		if got := MinStreams(c.sf); got != c.want {
			t.Errorf("SF %g: %d streams, want %d", c.sf, got, c.want)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestPower(t *testing.T) {
	ones := make([]float64, Queries)
	for i := range ones {
		ones[i] = 1
	}
	cases := []struct {
		name             string
		sf               float64
		queries, refresh []float64
		want             float64
	}{
		// Every timing 1 s: the geometric mean is 1, Power = 3600·SF.
		{"all one second", 1, ones, []float64{1, 1}, 3600},
		{"no refresh", 0.01, ones, nil, 36},
		// One query 2000 s, the rest 1 ms: 2000 > 1000·0.001, so the
		// others are raised to 2 s: mean = (2000 · 2^23)^(1/24).
		{"floor rule", 1, append([]float64{2000}, fill(21, 0.001)...), []float64{0.001, 0.001}, 3600 / math.Pow(2000*math.Pow(2, 23), 1.0/24)},
		// Within a factor of 1,000: no floor.
		{"no floor", 1, append([]float64{100}, fill(21, 0.5)...), []float64{0.5, 0.5}, 3600 / math.Pow(100*math.Pow(0.5, 23), 1.0/24)},
	}
	for _, c := range cases {
		got, err := Power(c.sf, c.queries, c.refresh)
		if err != nil || !near(got, c.want) {
			t.Errorf("%s: %v %v, want %v", c.name, got, err, c.want)
		}
	}
	if _, err := Power(1, ones[:21], nil); err == nil {
		t.Error("21 query timings accepted")
	}
	if _, err := Power(1, append(fill(21, 1), 0), nil); err == nil {
		t.Error("a zero timing accepted")
	}
}

func fill(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestThroughputAndQphH(t *testing.T) {
	got, err := Throughput(0.01, 2, 79.2)
	if err != nil || !near(got, 2*22*3600/79.2*0.01) {
		t.Errorf("throughput %v %v", got, err)
	}
	if _, err := Throughput(1, 0, 10); err == nil {
		t.Error("0 streams accepted")
	}
	if q := QphH(400, 900); !near(q, 600) {
		t.Errorf("QphH %v, want 600", q)
	}
}
