package tpcb

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// dialects are the database packages that own a sql/tpcb/ folder, the
// modes they run and what else their files may define.
var dialects = []struct {
	name    string
	modes   []workload.Mode
	extra   []string // database-side statements (stmts.go)
	scripts []string // sql/tpcb/<script>.sql files
	param   *regexp.Regexp
}{
	{"sqlite", []workload.Mode{workload.ModeClient, workload.ModePrepared}, nil,
		[]string{"tables", "drop"}, regexp.MustCompile(`\?(\d+)`)},
	{"duckdb", []workload.Mode{workload.ModeClient, workload.ModePrepared}, nil,
		[]string{"tables", "indexes", "drop"}, regexp.MustCompile(`\$(\d+)`)},
	{"postgres", []workload.Mode{workload.ModeProcedure, workload.ModeClient, workload.ModePrepared},
		[]string{"schema.built", "tpcb-like.call_procedure", "simple-update.call_procedure"},
		[]string{"tables", "indexes", "procedures", "drop"}, regexp.MustCompile(`\$(\d+)`)},
	{"mysql", []workload.Mode{workload.ModeProcedure, workload.ModeClient, workload.ModePrepared},
		[]string{"schema.built"},
		[]string{"tables", "indexes", "procedures", "drop"}, regexp.MustCompile(`\?()`)},
}

// args is the number of arguments of each statement (stmts.go).
var args = map[string]int{
	stmtScale: 0, "schema.built": 0, "check.1": 0, "check.2": 0, "check.3": 0,
	stmtAccountUpdate: 2, stmtAccountSelect: 1, stmtTellerUpdate: 2, stmtBranchUpdate: 2, stmtHistoryInsert: 4,
	stmtTPCBLikeCall: 4, stmtSimpleUpdateCall: 4, "tpcb-like.call_procedure": 4, "simple-update.call_procedure": 4,
}

func files(name string) db.SQLFiles {
	return db.SQLFiles{FS: os.DirFS(filepath.Join("..", "..", "db", name))}
}

// TestDialectsDefineExactlyStatements: each database's files define the
// statements of the modes it runs and nothing else but its own extras,
// with the contract's number of arguments, each once and in order.
func TestDialectsDefineExactlyStatements(t *testing.T) {
	w := New(Config{Scale: 1})
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			named, err := files(d.name).Named("tpcb")
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{}
			for _, m := range d.modes {
				for _, s := range w.Statements(m) {
					want[s] = true
				}
			}
			for _, s := range d.extra {
				want[s] = true
			}
			var missing, extra []string
			for s := range want {
				if _, ok := named[s]; !ok {
					missing = append(missing, s)
				}
			}
			for s := range named {
				if !want[s] {
					extra = append(extra, s)
				}
			}
			sort.Strings(missing)
			sort.Strings(extra)
			if len(missing) > 0 || len(extra) > 0 {
				t.Errorf("missing %v, unknown %v", missing, extra)
			}
			for name, sql := range named {
				n, ok := args[name]
				if !ok {
					t.Errorf("%s: no argument count in the test", name)
					continue
				}
				var got []int
				for i, m := range d.param.FindAllStringSubmatch(sql, -1) {
					k := i + 1
					if m[1] != "" {
						k, _ = strconv.Atoi(m[1])
					}
					got = append(got, k)
				}
				if len(got) != n || !slices.IsSorted(got) || (n > 0 && (got[0] != 1 || got[n-1] != n)) {
					t.Errorf("%s: parameters %v, want 1..%d in order, each once", name, got, n)
				}
			}
		})
	}
}

// TestDialectScripts: the scripts the build and drop run exist and split
// into statements (MariaDB's procedures through DELIMITER blocks); the
// ones a database has nothing to do for are absent.
func TestDialectScripts(t *testing.T) {
	for _, d := range dialects {
		for _, s := range []string{"tables", "indexes", "procedures", "drop"} {
			stmts, ok, err := files(d.name).Script("tpcb", s)
			if err != nil {
				t.Errorf("%s %s.sql: %v", d.name, s, err)
				continue
			}
			if want := slices.Contains(d.scripts, s); ok != want || (ok && len(stmts) == 0) {
				t.Errorf("%s %s.sql: present %v (%d statements), want %v", d.name, s, ok, len(stmts), want)
			}
			if s == "drop" && ok && !strings.Contains(stmts[0], "pgbench_branches") {
				t.Errorf("%s drop.sql drops %q first; pgbench_branches, the marker of a build, must go first", d.name, stmts[0])
			}
		}
	}
}
