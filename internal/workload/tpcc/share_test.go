package tpcc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/workload"
)

// Together the workers run every VU once; each one's VUs have their home
// warehouses in its own contiguous range.
func TestShareByWarehouse(t *testing.T) {
	cases := []struct{ warehouses, vus, workers int }{
		{1, 1, 1}, {4, 4, 4}, {4, 8, 2}, {10, 25, 3}, {10, 100, 10}, {7, 7, 2}, {3, 10, 3},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%dwh_%dvus_%dworkers", tc.warehouses, tc.vus, tc.workers), func(t *testing.T) {
			w := &Workload{warehouses: tc.warehouses}
			seen := make([]int, tc.vus)
			nextWH := 1
			for k := range tc.workers {
				ids, desc, err := workload.Share(w, k, tc.workers, tc.vus)
				if err != nil {
					t.Fatal(err)
				}
				// "warehouses 3-5", or "warehouse 3" alone (not "3-3").
				var lo, hi int
				if _, err := fmt.Sscanf(desc, "warehouse %d", &lo); err == nil {
					hi = lo
				} else if _, err := fmt.Sscanf(desc, "warehouses %d-%d", &lo, &hi); err != nil || lo == hi {
					t.Fatalf("worker %d: %q, want \"warehouse N\" or \"warehouses N-M\"", k, desc)
				}
				if lo != nextWH {
					t.Fatalf("worker %d: %q, want warehouses from %d", k, desc, nextWH)
				}
				nextWH = hi + 1
				for _, vu := range ids {
					seen[vu]++
					if home := vu%tc.warehouses + 1; home < lo || home > hi {
						t.Errorf("worker %d (%s): VU %d's home warehouse is %d", k, desc, vu, home)
					}
				}
			}
			if nextWH != tc.warehouses+1 {
				t.Errorf("the ranges end at warehouse %d of %d", nextWH-1, tc.warehouses)
			}
			for vu, n := range seen {
				if n != 1 {
					t.Errorf("VU %d runs in %d workers", vu, n)
				}
			}
		})
	}
}

func TestShareRefuses(t *testing.T) {
	cases := []struct {
		warehouses, vus, workers int
		want                     string
	}{
		{2, 4, 3, "more than the 2 warehouses"},
		{1, 2, 2, "--workers 2 is more than the 1 warehouse: each worker"},
		{4, 2, 2, "worker 1 of 2 would have no virtual user"},
		{4, 2, 3, "--workers 3 is more than --vus 2"},
	}
	for _, tc := range cases {
		w := &Workload{warehouses: tc.warehouses}
		var err error
		for k := 0; k < tc.workers && err == nil; k++ {
			_, _, err = workload.Share(w, k, tc.workers, tc.vus)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc, err, tc.want)
		}
	}
}
