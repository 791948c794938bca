package tpcc

import (
	"fmt"

	"github.com/sledge-bench/sledge/internal/workload"
)

// Share gives worker k of n the VUs whose home warehouse (vu%W + 1, as
// NewTerminal sets it) lies in the k-th of n contiguous ranges of the W
// warehouses (workload.Sharer), so workers do not share home warehouses.
func (w *Workload) Share(k, n, vus int) ([]int, string, error) {
	wh := w.warehouses
	if n > wh {
		of := fmt.Sprintf("the %d warehouses", wh)
		if wh == 1 {
			of = "the 1 warehouse"
		}
		return nil, "", fmt.Errorf("--workers %d is more than %s: each worker takes whole warehouses", n, of)
	}
	lo, hi := k*wh/n, (k+1)*wh/n // 0-based warehouses [lo, hi)
	var ids []int
	for vu := range vus {
		if h := vu % wh; h >= lo && h < hi {
			ids = append(ids, vu)
		}
	}
	if len(ids) == 0 {
		return nil, "", fmt.Errorf("worker %d of %d would have no virtual user: with %d warehouses, give at least %d virtual users (--vus) or fewer workers", k, n, wh, (n-1)*wh/n+1)
	}
	return ids, workload.RangeText("warehouse", "warehouses", lo+1, hi), nil
}
