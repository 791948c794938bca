package tpcc

import (
	"cmp"
	"slices"

	"github.com/sledge-bench/sledge/internal/workload"
)

// deckSize is the number of cards in one pass: the Mix weights sum to 100.
const deckSize = 100

// terminal is one virtual user (§2.4.1.1 ff.): a home warehouse, a fixed
// Stock-Level district, a deck of cards and its own random stream.
type terminal struct {
	r          rng
	warehouses int
	home       int64   // home warehouse (§2.4.1.1), when homes is empty
	homes      []int64 // --all-warehouses: HammerDB's round-robin list
	slevD      int64   // Stock-Level district (§2.8.1.1)
	k          runConstants
	deck       [deckSize]uint8
	next       int // next card; deckSize means "reshuffle first"
	// One transaction per kind, its statements bound once, reused by
	// Next: a transaction allocates nothing (issue 26).
	no   *newOrder
	pay  *payment
	os   *orderStatus
	del  *delivery
	slev *stockLevel
}

var _ workload.Terminal = (*terminal)(nil)

// NewTerminal makes virtual user vu's state (0-based, of vus in all); seed
// is the run seed.
//
// Home warehouse: VU v gets warehouse (v mod W)+1 and the Stock-Level
// district ((v div W) mod 10)+1. This is deterministic, spreads the VUs
// evenly over the warehouses (the spec's 10 terminals per warehouse when
// vus = 10·W), and gives every terminal of a warehouse its own Stock-Level
// district for up to 10·W VUs (§2.8.1.1). HammerDB instead draws both at
// random, so two VUs may share everything (docs/tpcc.md part 11).
//
// With --all-warehouses, VU v gets HammerDB's list (v + j·vus) mod W + 1 for
// j = 0..⌈W/vus⌉−1 and picks from it at random before every transaction
// (docs/tpcc.md part 10).
func (w *Workload) NewTerminal(vu, vus int, seed uint64) workload.Terminal {
	if vu < 0 || vus < 1 {
		panic("tpcc: NewTerminal needs vu >= 0 and vus >= 1") // programmer error
	}
	wh := w.warehouses
	t := &terminal{
		r:          newRNG(seed, "terminal", uint64(vu)),
		warehouses: wh,
		home:       int64(vu%wh + 1),
		slevD:      int64(vu/wh%districtsPerWH + 1),
		k:          newRunConstants(seed, w.cLoad),
		next:       deckSize,
		no:         &newOrder{},
		pay:        &payment{},
		os:         &orderStatus{},
		del:        &delivery{},
		slev:       &stockLevel{},
	}
	t.no.bind()
	t.pay.bind()
	t.os.bind()
	t.del.bind()
	t.slev.bind()
	if w.cfg.AllWarehouses {
		for j := range ceilDiv(wh, vus) {
			t.homes = append(t.homes, int64((vu+j*vus)%wh+1))
		}
	}
	n := 0
	for kind, tx := range w.Mix() {
		for range tx.Weight {
			t.deck[n] = uint8(kind)
			n++
		}
	}
	return t
}

// Next draws the next card and makes that transaction's inputs. All inputs
// are drawn afresh for every transaction (§2.4.1.4 comment), into the
// terminal's own transaction of that kind: it is valid until the next call.
func (t *terminal) Next() workload.Txn {
	if t.next == deckSize {
		// §5.2.4: the deck is reshuffled after each pass.
		for i := deckSize - 1; i > 0; i-- {
			j := t.r.intn(i + 1)
			t.deck[i], t.deck[j] = t.deck[j], t.deck[i]
		}
		t.next = 0
	}
	kind := t.deck[t.next]
	t.next++
	w := t.home
	if len(t.homes) > 0 {
		w = t.homes[t.r.intn(len(t.homes))]
	}
	switch kind {
	case kindNewOrder:
		return t.newOrder(w)
	case kindPayment:
		return t.payment(w)
	case kindDelivery:
		return t.delivery(w)
	case kindStockLevel:
		return t.stockLevel(w)
	default:
		return t.orderStatus(w)
	}
}

// remote draws a warehouse uniformly among the W−1 others than w
// (§2.4.1.5, §2.5.1.2); callers only ask when W > 1.
func (t *terminal) remote(w int64) int64 {
	o := int64(t.r.intn(t.warehouses-1) + 1)
	if o >= w {
		o++
	}
	return o
}

// customerID is NURand(1023, 1, 3000) (§2.4.1.2, §2.5.1.2, §2.6.1.2).
func (t *terminal) customerID() int64 {
	return int64(t.r.nurand(cIDA, 1, customersPerDist, t.k.cID))
}

// customerLast is a C_LAST from NURand(255, 0, 999) with C_RUN (§2.5.1.2).
func (t *terminal) customerLast() string {
	return lastName(t.r.nurand(cLastA, 0, 999, t.k.cLast))
}

// newOrder draws New-Order inputs (§2.4.1).
func (t *terminal) newOrder(w int64) *newOrder {
	n := t.r.between(5, 15) // §2.4.1.3
	tx := t.no
	tx.w = w
	tx.d = int64(t.r.between(1, districtsPerWH))
	tx.c = t.customerID()
	tx.lines = tx.lineBuf[:n]
	tx.visit = tx.visitBuf[:n]
	tx.allLocal = 1
	// §2.4.1.4: 1% of New-Orders carry an unused item id on the last line
	// and must roll back.
	rbk := t.r.between(1, 100) == 1
	for i := range tx.lines {
		l := &tx.lines[i]
		l.item = int64(t.r.nurand(olIIDA, 1, items, t.k.olIID))
		if rbk && i == n-1 {
			l.item = unusedItem
		}
		// §2.4.1.5: 1% of lines are supplied by a remote warehouse.
		l.supply = w
		if t.r.between(1, 100) == 1 && t.warehouses > 1 {
			l.supply = t.remote(w)
			tx.allLocal = 0
		}
		l.qty = int64(t.r.between(1, 10))
		tx.visit[i] = uint8(i)
	}
	sortVisit(tx)
	return tx
}

// sortVisit orders tx.visit by item, then supplying warehouse. §2.3.1 lets
// us visit the stock rows in item order: concurrent New-Orders then lock
// them in the same order, which avoids deadlocks. The unused item is the
// largest id, so it stays last.
func sortVisit(tx *newOrder) {
	slices.SortStableFunc(tx.visit, func(a, b uint8) int {
		la, lb := tx.lines[a], tx.lines[b]
		return cmp.Or(cmp.Compare(la.item, lb.item), cmp.Compare(la.supply, lb.supply))
	})
}

// payment draws Payment inputs (§2.5.1).
func (t *terminal) payment(w int64) *payment {
	tx := t.pay
	tx.w, tx.d = w, int64(t.r.between(1, districtsPerWH))
	tx.byName, tx.cID, tx.cLast = false, 0, ""
	// §2.5.1.2: 85% pay at home, 15% through a remote warehouse with a
	// random district.
	tx.cw, tx.cd = tx.w, tx.d
	if t.r.between(1, 100) > 85 && t.warehouses > 1 {
		tx.cw = t.remote(w)
		tx.cd = int64(t.r.between(1, districtsPerWH))
	}
	// §2.5.1.2: 60% by last name, 40% by number.
	if t.r.between(1, 100) <= 60 {
		tx.byName = true
		tx.cLast = t.customerLast()
	} else {
		tx.cID = t.customerID()
	}
	tx.amount = int64(t.r.between(100, 500_000)) // §2.5.1.3: [1.00..5,000.00]
	return tx
}

// orderStatus draws Order-Status inputs (§2.6.1).
func (t *terminal) orderStatus(w int64) *orderStatus {
	tx := t.os
	tx.w, tx.d = w, int64(t.r.between(1, districtsPerWH))
	tx.byName, tx.cID, tx.cLast = false, 0, ""
	if t.r.between(1, 100) <= 60 { // §2.6.1.2
		tx.byName = true
		tx.cLast = t.customerLast()
	} else {
		tx.cID = t.customerID()
	}
	return tx
}

// delivery draws Delivery inputs (§2.7.1).
func (t *terminal) delivery(w int64) *delivery {
	t.del.w, t.del.carrier = w, int64(t.r.between(1, 10))
	return t.del
}

// stockLevel draws Stock-Level inputs (§2.8.1): the terminal's own
// district and a threshold in [10..20].
func (t *terminal) stockLevel(w int64) *stockLevel {
	t.slev.w, t.slev.d, t.slev.threshold = w, t.slevD, int64(t.r.between(10, 20))
	return t.slev
}

// HomeWarehouses lists, in ascending order, the home warehouses vus
// virtual users draw from, as NewTerminal assigns them: warehouses
// 1..min(vus, W), or all W with --all-warehouses. all reports
// --all-warehouses.
func (w *Workload) HomeWarehouses(vus int) (homes []int, all bool) {
	wh := w.warehouses
	used := make([]bool, wh+1)
	for vu := range vus {
		if w.cfg.AllWarehouses {
			for j := range ceilDiv(wh, vus) {
				used[(vu+j*vus)%wh+1] = true
			}
		} else {
			used[vu%wh+1] = true
		}
	}
	for n := 1; n <= wh; n++ {
		if used[n] {
			homes = append(homes, n)
		}
	}
	return homes, w.cfg.AllWarehouses
}
