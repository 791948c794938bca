package workload

import (
	"slices"
	"testing"
)

type plainWorkload struct{ Workload } // no Sharer: the default share

func TestShareContiguousClients(t *testing.T) {
	cases := []struct {
		vus, workers int
		want         [][]int
		desc         []string
	}{
		{4, 1, [][]int{{0, 1, 2, 3}}, []string{"clients 0-3"}},
		{8, 4, [][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}}, []string{"clients 0-1", "clients 2-3", "clients 4-5", "clients 6-7"}},
		{5, 2, [][]int{{0, 1}, {2, 3, 4}}, []string{"clients 0-1", "clients 2-4"}},
		{3, 3, [][]int{{0}, {1}, {2}}, []string{"client 0", "client 1", "client 2"}},
	}
	for _, tc := range cases {
		for k := range tc.workers {
			ids, desc, err := Share(plainWorkload{}, k, tc.workers, tc.vus)
			if err != nil || !slices.Equal(ids, tc.want[k]) || desc != tc.desc[k] {
				t.Errorf("%d VUs, worker %d of %d: %v %q %v; want %v %q", tc.vus, k, tc.workers, ids, desc, err, tc.want[k], tc.desc[k])
			}
		}
	}
	for _, bad := range []struct{ k, n, vus int }{{0, 3, 2}, {2, 2, 4}, {-1, 2, 4}, {0, 0, 4}} {
		if _, _, err := Share(plainWorkload{}, bad.k, bad.n, bad.vus); err == nil {
			t.Errorf("worker %d of %d with %d VUs: want an error", bad.k, bad.n, bad.vus)
		}
	}
}
