package dbgen

import (
	"math"
	"testing"
)

// Skipping ahead by modular exponentiation lands where stepping does.
func TestStreamSkip(t *testing.T) {
	for _, tc := range []struct {
		idx int
		row int64
	}{{sdPName, 2}, {sdLCmnt, 7}, {sdSAddr, 100}, {sdOCkey, 15001}} {
		s := stream{seed: seedTable[tc.idx].seed, budget: seedTable[tc.idx].budget}
		for range tc.row - 1 {
			s.endRow()
		}
		if got := newStream(tc.idx, tc.row); got.seed != s.seed {
			t.Errorf("stream %d row %d: skip gives %d, stepping %d", tc.idx, tc.row, got.seed, s.seed)
		}
	}
}

// U[0..2³¹−1] overflows the 32-bit range as dbgen's does: never positive.
func TestUnifNegativeQuirk(t *testing.T) {
	s := stream{seed: 1}
	for range 1000 {
		if v := s.unif(0, 1<<31-1); v > 0 {
			t.Fatalf("U[0..2³¹−1] = %d, want ≤ 0", v)
		}
	}
}

func TestScale(t *testing.T) {
	for _, tc := range []struct {
		sf                               float64
		supp, part, cust, orders, clerks int64
		refresh                          int64
	}{
		{0.01, 100, 2000, 1500, 15000, 1000, 10},
		{0.1, 1000, 20000, 15000, 150000, 1000, 150},
		{1, 10000, 200000, 150000, 1500000, 1000, 1500},
		{10, 100000, 2000000, 1500000, 15000000, 10000, 15000},
	} {
		sc, err := NewScale(tc.sf)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Suppliers != tc.supp || sc.Parts != tc.part || sc.Customers != tc.cust ||
			sc.Orders != tc.orders || sc.Clerks != tc.clerks || sc.RefreshCount() != tc.refresh {
			t.Errorf("SF %v: %+v (refresh %d)", tc.sf, sc, sc.RefreshCount())
		}
	}
	for _, bad := range []float64{0, -1, 0.0001, 1.5, 30_000, math.NaN(), math.Inf(1)} {
		if _, err := NewScale(bad); err == nil {
			t.Errorf("SF %v accepted", bad)
		}
	}
}

func TestDates(t *testing.T) {
	if Date(0) != "1992-01-01" || Date(currentDate) != "1995-06-17" || Date(numDates-1) != "1998-12-31" ||
		Date(2405) != "1998-08-02" {
		t.Error("calendar is off")
	}
}
