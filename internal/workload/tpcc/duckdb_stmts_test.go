package tpcc

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// TestDuckDBDefinesExactlyStatements: DuckDB's files define exactly the
// statements of the modes DuckDB runs (client, prepared, batched: the
// names SQLite's have, which CH-benCHmark's terminals use too), with the
// arguments as $1..$n, each once, in order, and no row locks.
func TestDuckDBDefinesExactlyStatements(t *testing.T) {
	got, err := db.SQLFiles{FS: os.DirFS("../../db/duckdb")}.Named("tpcc")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, s := range sqliteStatementNames(t) {
		want[s] = true
	}
	for s := range want {
		if _, ok := got[s]; !ok {
			t.Errorf("DuckDB files lack statement %q", s)
		}
	}
	dollar := regexp.MustCompile(`\$(\d+)`)
	for name, sql := range got {
		if !want[name] {
			t.Errorf("DuckDB files define %q, which SQLite's do not", name)
		}
		for i, m := range dollar.FindAllStringSubmatch(sql, -1) {
			if n, _ := strconv.Atoi(m[1]); n != i+1 {
				t.Errorf("%s: placeholder $%s at position %d: want $1..$n each once in order", name, m[1], i+1)
				break
			}
		}
		if strings.Contains(strings.ToUpper(sql), "FOR UPDATE") {
			t.Errorf("%s: DuckDB has no FOR UPDATE", name)
		}
	}
	w := New(Config{Warehouses: 1})
	for _, m := range []workload.Mode{workload.ModeClient, workload.ModePrepared, workload.ModeBatched} {
		for _, s := range w.Statements(m) {
			if _, ok := got[s]; !ok {
				t.Errorf("%v mode needs %q", m, s)
			}
		}
	}
}

func sqliteStatementNames(t *testing.T) []string {
	var out []string
	for name := range sqliteStatements(t) {
		out = append(out, name)
	}
	return out
}
