package dbgen

import (
	"strings"
	"testing"
)

func supplierVals(s *Supplier) []string {
	return []string{itoa(s.SuppKey), s.Name, s.Address, itoa(s.NationKey), s.Phone, cents(s.AcctBal), s.Comment}
}
func customerVals(c *Customer) []string {
	return []string{itoa(c.CustKey), c.Name, c.Address, itoa(c.NationKey), c.Phone, cents(c.AcctBal), c.MktSegment, c.Comment}
}

func init() {
	vectors = append(vectors,
		vector{"supplier", func(Scale) []string {
			var s Supplier
			NewSupplierGen(1).Next(&s)
			return supplierVals(&s)
		}, "1|Supplier#000000001| N kD4on9OM Ipw3,gf0JBoQDd7tgrzrddZ|17|27-918-335-1736|5755.94|each slyly above the careful"},
		vector{"customer", func(Scale) []string {
			var c Customer
			NewCustomerGen(1).Next(&c)
			return customerVals(&c)
		}, "1|Customer#000000001|IVhzIApeRb ot,c,E|15|25-989-741-2988|711.56|BUILDING|to the even, regular platelets. regular, ironic epitaphs nag e"},
	)
	tableRows["supplier"] = func(sc Scale, emit func([]string)) {
		var s Supplier
		g := NewSupplierGen(1)
		for range sc.Suppliers {
			g.Next(&s)
			emit(supplierVals(&s))
		}
	}
	tableRows["customer"] = func(sc Scale, emit func([]string)) {
		var c Customer
		g := NewCustomerGen(1)
		for range sc.Customers {
			g.Next(&c)
			emit(customerVals(&c))
		}
	}
}

// tpch.md part 4.7 (checked on dbgen's SF 1 suppliers): the "Better
// Business Bureau" rule rewrites 9 of 10,000 comments, keeping their length.
func TestSupplierBBB(t *testing.T) {
	var s Supplier
	g := NewSupplierGen(1)
	n := 0
	for range 10_000 {
		g.Next(&s)
		if i := strings.Index(s.Comment, "Customer "); i >= 0 {
			n++
			if !strings.Contains(s.Comment[i:], "Complaints") && !strings.Contains(s.Comment[i:], "Recommends") {
				t.Errorf("supplier %d: %q", s.SuppKey, s.Comment)
			}
		}
	}
	if n != 9 {
		t.Errorf("%d rewritten comments at SF 1, want 9", n)
	}
}
