package dbgen

import (
	"fmt"
	"math"
	"time"
)

// Base row counts at SF 1 (tpch.md part 1).
const (
	baseSupplier = 10_000
	basePart     = 200_000
	baseCustomer = 150_000
	baseOrders   = 1_500_000
)

// Scale is a validated scale factor and the row counts it implies.
type Scale struct {
	SF        float64
	Suppliers int64
	Parts     int64
	Customers int64
	Orders    int64
	Clerks    int64 // o_clerk is Clerk#U[1..Clerks]
}

// NewScale checks sf and computes the counts the way dbgen does: below 1
// every base count is multiplied by ⌊1000·SF⌋/1000 (at least 1 row) and
// everything else is as at SF 1; from 1 up SF must be a whole number, below
// 30,000.
func NewScale(sf float64) (Scale, error) {
	if !(sf > 0) || math.IsInf(sf, 0) {
		return Scale{}, fmt.Errorf("dbgen: scale factor %v must be positive", sf)
	}
	sc := Scale{SF: sf}
	count := func(base int64) int64 { return base * int64(sf) }
	mult := int64(sf)
	if sf < 1 {
		milli := int64(1000 * sf)
		if milli < 1 {
			return Scale{}, fmt.Errorf("dbgen: scale factor %v is below 0.001", sf)
		}
		count = func(base int64) int64 { return max(base*milli/1000, 1) }
		mult = 1
	} else if sf != math.Trunc(sf) {
		return Scale{}, fmt.Errorf("dbgen: scale factor %v above 1 must be a whole number", sf)
	} else if sf >= 30_000 {
		// From SF 30,000 dbgen draws o_custkey and l_partkey from a 64-bit
		// generator (tpch.md 4.1), which this package does not implement.
		return Scale{}, fmt.Errorf("dbgen: scale factor %v is not supported (at most 10000)", sf)
	}
	sc.Suppliers = count(baseSupplier)
	sc.Parts = count(basePart)
	sc.Customers = count(baseCustomer)
	sc.Orders = count(baseOrders)
	sc.Clerks = 1000 * mult
	return sc, nil
}

// PartSupps is the partsupp row count: four per part.
func (sc Scale) PartSupps() int64 { return 4 * sc.Parts }

// RefreshCount is dbgen's refresh set size (orders per set, part 6):
// ⌊orders/10,000⌋·10, which is 10 rather than 15 at SF 0.01.
func (sc Scale) RefreshCount() int64 { return sc.Orders / 10_000 * 10 }

// Dates: dbgen's calendar runs 1992-01-01..1998-12-31 (2,557 days).
const (
	numDates    = 2557
	currentDate = 1263 // 1995-06-17 as a day index from 1992-01-01
)

var dates = func() [numDates]string {
	var d [numDates]string
	t0 := time.Date(1992, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range d {
		d[i] = t0.AddDate(0, 0, i).Format(time.DateOnly)
	}
	return d
}()

// Date returns day index d (days from 1992-01-01) as YYYY-MM-DD.
func Date(d int) string { return dates[d] }

// vstr draws dbgen's random alphanumeric string of average length avg
// (addresses), appending it to b.
func vstr(b []byte, s *stream, avg int64) []byte {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ,"
	n := s.unif(avg*4/10, avg*16/10)
	var r int64
	for k := range n {
		if k%5 == 0 {
			r = s.unif(0, math.MaxInt32)
		}
		b = append(b, alphabet[r&63])
		r >>= 6
	}
	return b
}

// phone draws CC-AAA-EEE-NNNN for a nation (three draws).
func phone(s *stream, nation int64) string {
	var b [15]byte
	put := func(at int, v int64, w int) {
		for i := at + w - 1; i >= at; i-- {
			b[i] = byte('0' + v%10)
			v /= 10
		}
	}
	put(0, 10+nation, 2)
	b[2] = '-'
	put(3, s.unif(100, 999), 3)
	b[6] = '-'
	put(7, s.unif(100, 999), 3)
	b[10] = '-'
	put(11, s.unif(1000, 9999), 4)
	return string(b[:])
}

// padded returns prefix followed by n as %09d.
func padded(prefix string, n int64) string {
	b := make([]byte, len(prefix)+9)
	copy(b, prefix)
	for i := len(b) - 1; i >= len(prefix); i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b)
}

// RetailPrice is p_retailprice of a part key, in cents.
func RetailPrice(partkey int64) int64 {
	return 90000 + (partkey/10)%20001 + 100*(partkey%1000)
}

// SuppKey is the i-th (0..3) supplier of part p among s suppliers.
func SuppKey(p, i, s int64) int64 {
	return (p+i*(s/4+(p-1)/s))%s + 1
}

// OrderKey is dbgen's sparse key of order row i; seq is 0 for the initial
// load and 1 for refresh inserts.
func OrderKey(i, seq int64) int64 {
	return (((i>>3)<<2)|seq)<<3 | (i & 7)
}
