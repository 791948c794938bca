package dbgen

import (
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func cents(c int64) string {
	neg := c < 0
	if neg {
		c = -c
	}
	s := fmt.Sprintf("%d.%02d", c/100, c%100)
	if neg {
		s = "-" + s
	}
	return s
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// Normalised values (tpch.md part 4.7) in the column order of the spec.
func regionVals(r *Region) []string { return []string{itoa(r.RegionKey), r.Name, r.Comment} }
func nationVals(n *Nation) []string {
	return []string{itoa(n.NationKey), n.Name, itoa(n.RegionKey), n.Comment}
}

// vector is one test vector of tpch.md part 4.7: row 1 of a table as
// dbgen prints it at SF 0.01.
type vector struct {
	name string
	got  func(sc Scale) []string
	want string
}

var vectors = []vector{
	{"region", func(Scale) []string { return regionVals(&Regions()[0]) },
		"0|AFRICA|lar deposits. blithely final packages cajole. regular waters are final requests. regular accounts are according to "},
	{"nation", func(Scale) []string { return nationVals(&Nations()[0]) },
		"0|ALGERIA|0| haggle. carefully final deposits detect slyly agai"},
}

func TestVectors(t *testing.T) {
	sc, err := NewScale(0.01)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range vectors {
		if got := strings.Join(tc.got(sc), "|"); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

type digest uint64

func (d *digest) add(vals []string) {
	h := sha1.Sum([]byte(strings.Join(vals, "|")))
	*d += digest(binary.BigEndian.Uint64(h[:8]))
}

// tableRows emits every row of a table at a scale, as normalised values.
var tableRows = map[string]func(sc Scale, emit func([]string)){
	"region": func(_ Scale, emit func([]string)) {
		for _, r := range Regions() {
			emit(regionVals(&r))
		}
	},
	"nation": func(_ Scale, emit func([]string)) {
		for _, r := range Nations() {
			emit(nationVals(&r))
		}
	},
}

func tableDigest(sc Scale, table string) (int64, digest) {
	var n int64
	var d digest
	tableRows[table](sc, func(v []string) {
		n++
		d.add(v)
	})
	return n, d
}

var digestCases = []struct {
	table  string
	rows   [2]int64
	digest [2]string
}{
	{"region", [2]int64{5, 5}, [2]string{"3b899f00d58fb48c", "3b899f00d58fb48c"}},
	{"nation", [2]int64{25, 25}, [2]string{"c3764bbef824c23a", "c3764bbef824c23a"}},
	{"supplier", [2]int64{100, 1000}, [2]string{"54635195abdd00b4", "f2f2126cd9369cf8"}},
	{"part", [2]int64{2000, 20000}, [2]string{"2e3ddec614b5d5ad", "4ad7b6577918eb29"}},
	{"partsupp", [2]int64{8000, 80000}, [2]string{"f137bb4e4fdc5300", "3575ffb6878b9570"}},
	{"customer", [2]int64{1500, 15000}, [2]string{"2f5d46e2ff005b77", "d624bab7f20932c1"}},
	{"orders", [2]int64{15000, 150000}, [2]string{"9e309a19eab33619", "cb91fd72d1ab30ad"}},
	{"lineitem", [2]int64{60175, 600572}, [2]string{"b86d30400f49ec69", "34db5d93f1d17e28"}},
}

func checkDigests(t *testing.T, sf float64, k int) {
	sc, err := NewScale(sf)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range digestCases {
		t.Run(tc.table, func(t *testing.T) {
			if tableRows[tc.table] == nil {
				t.Fatal("no generator")
			}
			n, d := tableDigest(sc, tc.table)
			if n != tc.rows[k] {
				t.Errorf("SF %v: %d rows, want %d", sf, n, tc.rows[k])
			}
			if got := fmt.Sprintf("%016x", uint64(d)); got != tc.digest[k] {
				t.Errorf("SF %v: digest %s, want %s", sf, got, tc.digest[k])
			}
		})
	}
}

func TestDigestsSF001(t *testing.T) { checkDigests(t, 0.01, 0) }

func TestDigestsSF01(t *testing.T) {
	if testing.Short() {
		t.Skip("SF 0.1 digests under -short")
	}
	checkDigests(t, 0.1, 1)
}

// RegionOf follows the nations' region keys without the text pool.
func TestRegionOf(t *testing.T) {
	for n, want := range map[string]string{"BRAZIL": "AMERICA", "GERMANY": "EUROPE", "SAUDI ARABIA": "MIDDLE EAST",
		"JAPAN": "ASIA", "KENYA": "AFRICA", "ATLANTIS": ""} {
		if got := RegionOf(n); got != want {
			t.Errorf("RegionOf(%s) = %q, want %q", n, got, want)
		}
	}
}
