package tpcc

import (
	"fmt"
	"reflect"
	"testing"
)

// TestDeck: every pass of 100 cards holds exactly the Mix weights.
func TestDeck(t *testing.T) {
	w := New(Config{Warehouses: 2, Seed: 1})
	term := w.NewTerminal(0, 1, 5)
	var first []int
	for pass := range 20 {
		got := make([]int, numKinds)
		var order []int
		for range deckSize {
			k := term.Next().Kind()
			got[k]++
			order = append(order, k)
		}
		for k, tx := range w.Mix() {
			if got[k] != tx.Weight {
				t.Fatalf("pass %d: %d %s cards, want %d", pass, got[k], tx.Name, tx.Weight)
			}
		}
		if pass == 0 {
			first = order
		} else if reflect.DeepEqual(order, first) {
			t.Fatalf("pass %d has the same order as pass 0: not reshuffled", pass)
		}
	}
}

func TestMix(t *testing.T) {
	want := []struct {
		name           string
		weight         int
		keying, thinkS int
	}{{"neword", 45, 18, 12}, {"payment", 43, 3, 12}, {"delivery", 4, 2, 5}, {"slev", 4, 2, 5}, {"ostat", 4, 2, 10}}
	mix := New(Config{Warehouses: 1}).Mix()
	if len(mix) != len(want) {
		t.Fatalf("%d types", len(mix))
	}
	sum := 0
	for i, w := range want {
		m := mix[i]
		if m.Name != w.name || m.Weight != w.weight || m.Keying.Seconds() != float64(w.keying) || m.Think.Seconds() != float64(w.thinkS) {
			t.Errorf("mix[%d] = %+v, want %+v", i, m, w)
		}
		sum += m.Weight
	}
	if sum != deckSize {
		t.Errorf("weights sum to %d", sum)
	}
}

// TestHomeWarehouse: VU v → warehouse v mod W + 1, Stock-Level district
// (v div W) mod 10 + 1; with 10·W VUs each warehouse has 10 terminals with
// distinct districts.
func TestHomeWarehouse(t *testing.T) {
	for _, wh := range []int{1, 3, 7} {
		t.Run(fmt.Sprintf("warehouses=%d", wh), func(t *testing.T) {
			w := New(Config{Warehouses: wh, Seed: 1})
			vus := 10 * wh
			dists := map[int64]map[int64]bool{}
			for vu := range vus {
				term := w.NewTerminal(vu, vus, 1).(*terminal)
				if term.home != int64(vu%wh+1) || term.slevD != int64(vu/wh%10+1) || term.homes != nil {
					t.Fatalf("vu %d: home %d district %d", vu, term.home, term.slevD)
				}
				if dists[term.home] == nil {
					dists[term.home] = map[int64]bool{}
				}
				dists[term.home][term.slevD] = true
			}
			for h, ds := range dists {
				if len(ds) != 10 {
					t.Errorf("warehouse %d: %d distinct Stock-Level districts", h, len(ds))
				}
			}
			if len(dists) != wh {
				t.Errorf("%d warehouses used", len(dists))
			}
		})
	}
}

// TestAllWarehouses: HammerDB's lists (v + j·N) mod W + 1, j < ⌈W/N⌉, and a
// pick from the list before every transaction.
func TestAllWarehouses(t *testing.T) {
	cases := []struct {
		wh, vus int
		want    [][]int64
	}{
		{10, 4, [][]int64{{1, 5, 9}, {2, 6, 10}, {3, 7, 1}, {4, 8, 2}}},
		{3, 5, [][]int64{{1}, {2}, {3}, {1}, {2}}},
		{4, 2, [][]int64{{1, 3}, {2, 4}}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("warehouses=%d/vus=%d", tc.wh, tc.vus), func(t *testing.T) {
			w := New(Config{Warehouses: tc.wh, AllWarehouses: true, Seed: 1})
			for vu, want := range tc.want {
				term := w.NewTerminal(vu, tc.vus, 1).(*terminal)
				if !reflect.DeepEqual(term.homes, want) {
					t.Fatalf("vu %d: list %v, want %v", vu, term.homes, want)
				}
				used := map[int64]int{}
				for range 3000 {
					used[homeOf(term.Next())]++
				}
				for _, h := range want {
					if used[h] < 3000/len(want)/2 {
						t.Errorf("vu %d: warehouse %d used %d times of 3000: %v", vu, h, used[h], used)
					}
				}
				if len(used) != len(uniq(want)) {
					t.Errorf("vu %d used %v, list %v", vu, used, want)
				}
			}
		})
	}
}

func uniq(s []int64) map[int64]bool {
	m := map[int64]bool{}
	for _, v := range s {
		m[v] = true
	}
	return m
}

func homeOf(tx any) int64 {
	switch x := tx.(type) {
	case *newOrder:
		return x.w
	case *payment:
		return x.w
	case *orderStatus:
		return x.w
	case *delivery:
		return x.w
	case *stockLevel:
		return x.w
	}
	panic(fmt.Sprintf("%T", tx))
}

// TestTerminalIsDeterministic: same (seed, vu) ⇒ same transactions.
func TestTerminalIsDeterministic(t *testing.T) {
	w := New(Config{Warehouses: 4, Seed: 1})
	a, b, c := w.NewTerminal(3, 8, 42), w.NewTerminal(3, 8, 42), w.NewTerminal(4, 8, 42)
	same := true
	for range 200 {
		// The inputs (inputs_test.go): each terminal's transactions are
		// its own, reused by Next, with their own bound statements.
		x, y, z := inputs(a.Next()), inputs(b.Next()), inputs(c.Next())
		if x != y {
			t.Fatal("same seed and VU, different inputs")
		}
		same = same && x == z
	}
	if same {
		t.Fatal("different VUs, same inputs")
	}
}

// inputStats draws n transactions from vus terminals and tallies the §5.5.1.5
// input statistics.
type inputStats struct {
	newOrders, rollbacks, lines, remoteLines int
	lineCounts                               [16]int
	payments, remotePayments, payByName      int
	ostats, ostatByName                      int
	otherErrors                              []string
}

func drawInputs(wh, vus, n int) inputStats {
	w := New(Config{Warehouses: wh, Seed: 3})
	var s inputStats
	for vu := range vus {
		term := w.NewTerminal(vu, vus, 17)
		for range n / vus {
			switch x := term.Next().(type) {
			case *newOrder:
				s.newOrders++
				s.lineCounts[len(x.lines)]++
				local := int64(1)
				for i, l := range x.lines {
					s.lines++
					if l.supply != x.w {
						s.remoteLines++
						local = 0
					}
					if l.item == unusedItem {
						if i != len(x.lines)-1 {
							s.otherErrors = append(s.otherErrors, "unused item not on the last line")
						}
						s.rollbacks++
					} else if l.item < 1 || l.item > items {
						s.otherErrors = append(s.otherErrors, fmt.Sprintf("item %d", l.item))
					}
					if l.qty < 1 || l.qty > 10 || l.supply < 1 || l.supply > int64(wh) {
						s.otherErrors = append(s.otherErrors, fmt.Sprintf("line %+v", l))
					}
				}
				if local != x.allLocal {
					s.otherErrors = append(s.otherErrors, "o_all_local disagrees with the lines")
				}
				if x.c < 1 || x.c > 3000 || x.d < 1 || x.d > 10 {
					s.otherErrors = append(s.otherErrors, fmt.Sprintf("new order %+v", x))
				}
			case *payment:
				s.payments++
				if x.cw != x.w {
					s.remotePayments++
				} else if x.cd != x.d {
					s.otherErrors = append(s.otherErrors, "home payment in another district")
				}
				if x.byName {
					s.payByName++
				}
				if x.amount < 100 || x.amount > 500_000 {
					s.otherErrors = append(s.otherErrors, fmt.Sprintf("h_amount %d cents", x.amount))
				}
			case *orderStatus:
				s.ostats++
				if x.byName {
					s.ostatByName++
				}
			case *delivery:
				if x.carrier < 1 || x.carrier > 10 {
					s.otherErrors = append(s.otherErrors, fmt.Sprintf("carrier %d", x.carrier))
				}
			case *stockLevel:
				if x.threshold < 10 || x.threshold > 20 {
					s.otherErrors = append(s.otherErrors, fmt.Sprintf("threshold %d", x.threshold))
				}
			}
		}
	}
	return s
}

// TestInputStatistics: §5.5.1.5 bounds over many draws.
func TestInputStatistics(t *testing.T) {
	s := drawInputs(5, 10, 400_000)
	for _, e := range s.otherErrors[:min(len(s.otherErrors), 5)] {
		t.Error(e)
	}
	ratio := func(a, b int) float64 { return float64(a) / float64(b) }
	bounds := []struct {
		what   string
		got    float64
		lo, hi float64
	}{
		{"New-Order rollbacks", ratio(s.rollbacks, s.newOrders), 0.009, 0.011},
		{"lines per order", ratio(s.lines, s.newOrders), 9.5, 10.5},
		{"remote order lines", ratio(s.remoteLines, s.lines), 0.0095, 0.0105},
		{"remote payments", ratio(s.remotePayments, s.payments), 0.14, 0.16},
		{"payments by name", ratio(s.payByName, s.payments), 0.57, 0.63},
		{"order-status by name", ratio(s.ostatByName, s.ostats), 0.57, 0.63},
	}
	for _, b := range bounds {
		if b.got < b.lo || b.got > b.hi {
			t.Errorf("%s = %.4f, want [%.4f..%.4f]", b.what, b.got, b.lo, b.hi)
		}
	}
	for n := 5; n <= 15; n++ { // uniform over 5..15
		within(t, fmt.Sprintf("orders with %d lines", n), ratio(s.lineCounts[n], s.newOrders), 1.0/11, 0.05)
	}
}

// TestSingleWarehouseIsAllHome: with W=1 there is no remote warehouse.
func TestSingleWarehouseIsAllHome(t *testing.T) {
	s := drawInputs(1, 3, 60_000)
	if s.remoteLines != 0 || s.remotePayments != 0 || len(s.otherErrors) != 0 {
		t.Fatalf("W=1: %d remote lines, %d remote payments, %v", s.remoteLines, s.remotePayments, s.otherErrors)
	}
	if s.payments == 0 || s.newOrders == 0 {
		t.Fatal("no transactions drawn")
	}
}

// TestRemoteIsUniform: remote warehouses are the W−1 others, evenly.
func TestRemoteIsUniform(t *testing.T) {
	w := New(Config{Warehouses: 5, Seed: 1})
	term := w.NewTerminal(2, 5, 1).(*terminal) // home 3
	hits := map[int64]int{}
	for range 40_000 {
		hits[term.remote(term.home)]++
	}
	if len(hits) != 4 || hits[3] != 0 {
		t.Fatalf("remote warehouses %v", hits)
	}
	for wh, n := range hits {
		within(t, fmt.Sprintf("remote warehouse %d", wh), float64(n), 10_000, 0.05)
	}
}

// TestHomeWarehousesAreTheOnesUsed: HomeWarehouses lists exactly the home
// warehouses the terminals draw their transactions' warehouse from.
func TestHomeWarehousesAreTheOnesUsed(t *testing.T) {
	cases := []struct {
		wh, vus int
		all     bool
		want    []int
	}{
		{4, 2, false, []int{1, 2}},
		{4, 2, true, []int{1, 2, 3, 4}},
		{4, 8, false, []int{1, 2, 3, 4}},
		{1, 3, false, []int{1}},
		{10, 4, true, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{10, 3, false, []int{1, 2, 3}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("warehouses=%d/vus=%d/all=%v", tc.wh, tc.vus, tc.all), func(t *testing.T) {
			w := New(Config{Warehouses: tc.wh, AllWarehouses: tc.all, Seed: 1})
			got, all := w.HomeWarehouses(tc.vus)
			if !reflect.DeepEqual(got, tc.want) || all != tc.all {
				t.Fatalf("HomeWarehouses(%d) = %v, %v; want %v, %v", tc.vus, got, all, tc.want, tc.all)
			}
			used := map[int]bool{}
			for vu := range tc.vus {
				term := w.NewTerminal(vu, tc.vus, 1)
				for range 500 {
					used[int(homeOf(term.Next()))] = true
				}
			}
			for _, h := range got {
				if !used[h] {
					t.Errorf("warehouse %d listed but not used", h)
				}
				delete(used, h)
			}
			if len(used) != 0 {
				t.Errorf("warehouses used but not listed: %v", used)
			}
		})
	}
}
