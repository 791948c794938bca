package tpcc

import "time"

// SetLoadTime fixes the time Tables stamps on the dates of the initial
// population (§4.3.3.1 "time of loading"), which is otherwise the time
// Tables is called: CH-benCHmark's reference answers are computed on rows
// loaded at a fixed time (internal/workload/ch).
func (w *Workload) SetLoadTime(t time.Time) { w.now = func() time.Time { return t } }
