// Package rules holds the execution rules of the TPC-H-derived workload
// that need no database (docs/tpch.md parts 7.2, 8 and 9): the order in
// which each stream runs the 22 queries, the minimum number of throughput
// streams for a scale factor, and the composite figures with the floor
// rule. Results computed with them are TPC-H-derived, never TPC-H results.
package rules

import (
	"errors"
	"fmt"
	"math"
)

// Queries is the number of queries in a stream.
const Queries = 22

// Order is the order in which stream s runs the queries (1..22): row
// s mod 41 of Appendix A; stream 0 is the power test.
func Order(s int) [Queries]int {
	if s < 0 {
		s = -s
	}
	return orders[s%len(orders)]
}

// MinStreams is the smallest number of query streams the throughput test
// may run at scale factor sf (§5.3); below SF 1, 2.
func MinStreams(sf float64) int {
	steps := []struct {
		sf float64
		s  int
	}{{100000, 11}, {30000, 10}, {10000, 9}, {3000, 8}, {1000, 7}, {300, 6}, {100, 5}, {30, 4}, {10, 3}}
	for _, st := range steps {
		if sf >= st.sf {
			return st.s
		}
	}
	return 2
}

// Floor applies the floor rule (§5.4) to the power test's timings: when
// the longest is more than 1,000 times the shortest, every timing below
// longest/1000 is raised to it. It returns a new slice.
func Floor(secs []float64) []float64 {
	out := append([]float64(nil), secs...)
	if len(out) == 0 {
		return out
	}
	lo, hi := out[0], out[0]
	for _, v := range out {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if hi > 1000*lo {
		floor := hi / 1000
		for i, v := range out {
			if v < floor {
				out[i] = floor
			}
		}
	}
	return out
}

// Power is Power@Size = 3600·SF / (Π QI(i,0) · Π RI(j,0))^(1/n) over the
// power test's query and refresh timings in seconds (n = 24, or 22 when
// the refresh functions were skipped), after the floor rule.
func Power(sf float64, queries, refresh []float64) (float64, error) {
	if len(queries) != Queries {
		return 0, fmt.Errorf("power: %d query timings, want %d", len(queries), Queries)
	}
	if len(refresh) != 0 && len(refresh) != 2 {
		return 0, fmt.Errorf("power: %d refresh timings, want 2 or none", len(refresh))
	}
	all := append(append([]float64(nil), queries...), refresh...)
	for _, v := range all {
		// A timing of 0 is a clock that failed, not a fast query.
		if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, errors.New("power: a timing is not a positive number of seconds")
		}
	}
	var logSum float64
	for _, v := range Floor(all) {
		logSum += math.Log(v)
	}
	return 3600 * sf / math.Exp(logSum/float64(len(all))), nil
}

// Throughput is Throughput@Size = (S · 22 · 3600 / Ts) · SF, with Ts the
// throughput test's elapsed seconds.
func Throughput(sf float64, streams int, ts float64) (float64, error) {
	if streams < 1 || ts <= 0 || math.IsNaN(ts) || math.IsInf(ts, 0) {
		return 0, fmt.Errorf("throughput: %d streams in %g s", streams, ts)
	}
	return float64(streams) * Queries * 3600 / ts * sf, nil
}

// QphH is the composite, √(Power@Size · Throughput@Size).
func QphH(power, throughput float64) float64 { return math.Sqrt(power * throughput) }
