package dbgen

import (
	_ "embed"
	"strconv"
	"strings"
	"sync"
)

// dists.dss is TPC's data file of word lists and weights (see README.md).
//
//go:embed dists.dss
var distsFile string

// dist is one distribution of dists.dss with cumulative weights.
type dist struct {
	names []string
	cum   []int64
	at    []uint8 // at[j−1] is the entry pick returns for j (small lists)
}

func (d *dist) total() int64 { return d.cum[len(d.cum)-1] }

// pick is dbgen's weighted pick: j = U[1..total], the first entry whose
// cumulative weight is ≥ j. One draw.
func (d *dist) pick(s *stream) int {
	j := s.unif(1, d.total())
	if d.at != nil {
		return int(d.at[j-1])
	}
	for i, c := range d.cum {
		if c >= j {
			return i
		}
	}
	return len(d.cum) - 1
}

// index builds the lookup table of pick for lists with non-decreasing
// cumulative weights and a small total (all but nations, whose weights are
// region-key steps).
func (d *dist) index() {
	if len(d.cum) == 0 || len(d.cum) > 256 || d.total() > 4096 {
		return
	}
	at := make([]uint8, 0, d.total())
	var prev int64
	for i, c := range d.cum {
		if c < prev {
			return
		}
		for ; prev < c; prev++ {
			at = append(at, uint8(i))
		}
	}
	d.at = at
}

var (
	distsOnce sync.Once
	distsMap  map[string]*dist
)

func parseDists(text string) map[string]*dist {
	m := map[string]*dist{}
	var cur *dist
	var name string
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, " \t\r\n")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		low := strings.ToLower(line)
		switch {
		case strings.HasPrefix(low, "begin "):
			name = strings.TrimSpace(line[len("begin "):])
			cur = &dist{}
			continue
		case strings.HasPrefix(low, "end "):
			if cur != nil {
				cur.index()
				m[name] = cur
			}
			cur = nil
			continue
		}
		if cur == nil {
			continue
		}
		bar := strings.LastIndexByte(line, '|')
		if bar < 0 {
			continue
		}
		word, w := line[:bar], line[bar+1:]
		if strings.EqualFold(word, "count") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(w), 10, 64)
		if err != nil {
			panic("dbgen: dists.dss: bad weight in " + line)
		}
		var prev int64
		if len(cur.cum) > 0 {
			prev = cur.cum[len(cur.cum)-1]
		}
		cur.names = append(cur.names, word)
		cur.cum = append(cur.cum, prev+n)
	}
	return m
}

func dists() map[string]*dist {
	distsOnce.Do(func() { distsMap = parseDists(distsFile) })
	return distsMap
}

func getDist(name string) *dist {
	d := dists()[name]
	if d == nil {
		panic("dbgen: dists.dss has no distribution " + name)
	}
	return d
}
