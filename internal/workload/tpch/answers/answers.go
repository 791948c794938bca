// Package answers holds the reference answers of the 22 TPC-H validation
// queries at scale factors 0.01, 0.1 and 1 (computed by DuckDB's engine on
// the generator's data: README.md) and checks a database's answer against
// them by the rules of docs/tpch.md part 10 (NewCheck).
package answers

import (
	"embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

//go:embed sf0.01 sf0.1 sf1
var files embed.FS

// Null is how a reference answer writes SQL NULL (Q17 at SF 0.01); no
// TPC-H answer has it as a value.
const Null = "NULL"

// Queries is the number of queries.
const Queries = 22

type answer struct {
	cols []string
	rows [][]string
}

var (
	mu    sync.Mutex
	cache = map[string]*answer{}
)

func dir(sf float64) string { return "sf" + strconv.FormatFloat(sf, 'f', -1, 64) }

// Has tells whether there are reference answers for scale factor sf.
func Has(sf float64) bool {
	_, err := files.ReadDir(dir(sf))
	return err == nil
}

// Reference is the answer of query q (1..22) with the validation values
// at scale factor sf: its column names and rows, every value as text
// (Null for NULL). ok is false where there is none. The slices are
// shared: do not change them.
func Reference(sf float64, q int) (cols []string, rows [][]string, ok bool) {
	a := load(sf, q)
	if a == nil {
		return nil, nil, false
	}
	return a.cols, a.rows, true
}

func load(sf float64, q int) *answer {
	if q < 1 || q > Queries {
		return nil
	}
	name := fmt.Sprintf("%s/q%02d.txt", dir(sf), q)
	mu.Lock()
	defer mu.Unlock()
	if a, ok := cache[name]; ok {
		return a
	}
	b, err := files.ReadFile(name)
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	a := &answer{cols: strings.Split(lines[0], "|")}
	for _, l := range lines[1:] {
		a.rows = append(a.rows, strings.Split(l, "|"))
	}
	cache[name] = a
	return a
}
