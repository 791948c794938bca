package ch

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"

	"github.com/sledge-bench/sledge/internal/workload"
)

// The three tables CH-benCHmark adds to TPC-C's nine (docs/ch.md part 2).
const (
	suppliers = 10_000 // su_suppkey 0..9999: the values of mod(s_w_id * s_i_id, 10000)
	nations   = 62
	regions   = 5
)

var (
	supplierColumns = []string{"su_suppkey", "su_name", "su_address", "su_nationkey", "su_phone", "su_acctbal", "su_comment"}
	nationColumns   = []string{"n_nationkey", "n_name", "n_regionkey", "n_comment"}
	regionColumns   = []string{"r_regionkey", "r_name", "r_comment"}
)

// regionNames are the benchmark's five regions, keys 1..5.
var regionNames = [regions]string{"Africa", "America", "Asia", "Australia", "Europe"}

// nationList are the benchmark's 62 nations in key order: the keys are
// the ASCII codes of '0'..'9', 'A'..'Z', 'a'..'z', so that the first
// letter of a customer's c_state names its nation (ascii(c_state) =
// n_nationkey), with each nation's region key.
var nationList = [nations]struct {
	name   string
	region int
}{
	{"Australia", 4}, {"Belgium", 5}, {"Cameroon", 1}, {"Denmark", 5}, {"Ecuador", 2},
	{"France", 5}, {"Germany", 5}, {"Hungary", 5}, {"Italy", 5}, {"Japan", 3},
	{"Kenya", 1}, {"Lithuania", 5}, {"Mexico", 2}, {"Netherlands", 5}, {"Oman", 1},
	{"Portugal", 5}, {"Qatar", 1}, {"Rwanda", 1}, {"Serbia", 5}, {"Togo", 1},
	{"United States", 2}, {"Vietnam", 3}, {"Singapore", 3}, {"Cambodia", 3}, {"Yemen", 1},
	{"Zimbabwe", 1}, {"Argentina", 2}, {"Bolivia", 2}, {"Canada", 2}, {"Dominican Republic", 2},
	{"Egypt", 1}, {"Finnland", 5}, {"Ghana", 1}, {"Haiti", 2}, {"India", 3},
	{"Jamaica", 4}, {"Kazakhstan", 3}, {"Luxembourg", 5}, {"Morocco", 1}, {"Norway", 5},
	{"Poland", 5}, {"Peru", 2}, {"Nicaragua", 2}, {"Romania", 5}, {"South Africa", 1},
	{"Thailand", 3}, {"United Kingdom", 5}, {"Venezuela", 2}, {"Liechtenstein", 5}, {"Austria", 5},
	{"Laos", 3}, {"Zambia", 1}, {"Switzerland", 5}, {"China", 3}, {"Papua New Guinea", 4},
	{"East Timor", 4}, {"Bulgaria", 5}, {"Brazil", 2}, {"Albania", 5}, {"Andorra", 5},
	{"Belize", 2}, {"Botswana", 1},
}

// nationKey is the key of the nation at index i (0..61) of nationList.
func nationKey(i int) int {
	switch {
	case i < 10:
		return '0' + i
	case i < 36:
		return 'A' + i - 10
	}
	return 'a' + i - 36
}

// rng is a table's own random stream, a pure function of the seed and the
// table's name.
func rng(seed uint64, table string) *rand.Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(table))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// astring is a random alphanumeric string of lo..hi characters.
func astring(r *rand.Rand, lo, hi int) string {
	b := make([]byte, lo+r.IntN(hi-lo+1))
	for i := range b {
		b[i] = alnum[r.IntN(len(alnum))]
	}
	return string(b)
}

// nstring is a random string of n digits.
func nstring(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	return string(b)
}

// badEvery: one supplier in this many has "bad" in its comment, so that
// Q16's NOT IN (… su_comment like '%bad%') excludes some (TPC-H's
// "Customer Complaints" suppliers play that part there).
const badEvery = 200

// fillSupplier: the 10,000 suppliers in one batch.
func fillSupplier(seed uint64) func(int, [][]any) [][]any {
	return func(_ int, buf [][]any) [][]any {
		r := rng(seed, "supplier")
		buf = buf[:0]
		for k := range suppliers {
			comment := astring(r, 51, 101)
			if k%badEvery == badEvery/2 {
				p := r.IntN(len(comment) - 2)
				comment = comment[:p] + "bad" + comment[p+3:]
			}
			buf = append(buf, []any{
				int64(k),
				fmt.Sprintf("Supplier#%09d", k),
				astring(r, 20, 40),
				int64(nationKey(r.IntN(nations))),
				nstring(r, 15),
				float64(r.IntN(1_099_999)-99_999) / 100, // -999.99..9,999.99, TPC-H's S_ACCTBAL
				comment,
			})
		}
		return buf
	}
}

// fillNation: the 62 nations, names and regions fixed, comments random.
func fillNation(seed uint64) func(int, [][]any) [][]any {
	return func(_ int, buf [][]any) [][]any {
		r := rng(seed, "nation")
		buf = buf[:0]
		for i, n := range nationList {
			buf = append(buf, []any{int64(nationKey(i)), n.name, int64(n.region), astring(r, 31, 114)})
		}
		return buf
	}
}

// fillRegion: the 5 regions, keys 1..5, comments random.
func fillRegion(seed uint64) func(int, [][]any) [][]any {
	return func(_ int, buf [][]any) [][]any {
		r := rng(seed, "region")
		buf = buf[:0]
		for i, name := range regionNames {
			buf = append(buf, []any{int64(i + 1), name, astring(r, 31, 115)})
		}
		return buf
	}
}

// ownTables are the three tables, in load order.
func ownTables(seed uint64) []workload.Table {
	return []workload.Table{
		{Name: "region", Columns: regionColumns, Batches: 1, Rows: regions, Fill: fillRegion(seed), PlainText: true},
		{Name: "nation", Columns: nationColumns, Batches: 1, Rows: nations, Fill: fillNation(seed), PlainText: true},
		{Name: "supplier", Columns: supplierColumns, Batches: 1, Rows: suppliers, Fill: fillSupplier(seed), PlainText: true},
	}
}

// marker is ch's row of sledge_meta, loaded last: a schema with it has
// ch's tables complete.
var marker = [2]string{"ch", "1"}

// markerTable loads ch's row alone into the base's sledge_meta (a build
// that adds ch's tables to a complete TPC-C build).
func markerTable() workload.Table {
	return workload.Table{
		Name: "sledge_meta", Columns: []string{"name", "value"}, Batches: 1, Rows: 1, PlainText: true,
		Fill: func(_ int, buf [][]any) [][]any { return append(buf[:0], []any{marker[0], marker[1]}) },
	}
}
