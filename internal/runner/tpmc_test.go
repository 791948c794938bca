package runner

import "testing"

// The summary says a tpcc run is no TPC-C result when NOPM is above the
// ceiling for its warehouses or it had no keying and think times, and
// says nothing more when neither holds.
func TestTPMCNote(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name       string
		nopm       *float64
		warehouses int
		keying     bool
		want       string
	}{
		{"one warehouse, no keying, far above", f(15500), 1, false,
			"NOPM 15,500 is above TPC-C's ceiling of about 12.86 for 1 warehouse, and the run had no keying or think times (--keying-thinking): this is not a TPC-C result and cannot be called tpmC"},
		{"keying, above (more terminals than 10 per warehouse)", f(300), 10, true,
			"NOPM 300 is above TPC-C's ceiling of about 128.6 for 10 warehouses, 12.86 each: this is not a TPC-C result and cannot be called tpmC"},
		{"no keying, below", f(100), 10, false,
			"the run had no keying or think times (--keying-thinking): this is not a TPC-C result and cannot be called tpmC"},
		{"no keying, NOPM not measured", nil, 1, false,
			"the run had no keying or think times (--keying-thinking): this is not a TPC-C result and cannot be called tpmC"},
		{"keying, at the ceiling", f(128.6), 10, true, ""},
		{"keying, below", f(12), 1, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := tpmcNote(c.nopm, NOPMPerWarehouse*float64(c.warehouses), c.warehouses, c.keying); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}
