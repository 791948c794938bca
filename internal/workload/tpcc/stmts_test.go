package tpcc

import (
	"slices"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/workload"
)

// TestSQLiteDefinesExactlyStatements: the SQLite files define exactly the
// statements of the modes SQLite supports (style rule 2).
func TestSQLiteDefinesExactlyStatements(t *testing.T) {
	w := New(Config{Warehouses: 1})
	want := map[string]bool{}
	for _, m := range []workload.Mode{workload.ModeClient, workload.ModePrepared, workload.ModeBatched} {
		for _, s := range w.Statements(m) {
			want[s] = true
		}
	}
	got := sqliteStatements(t)
	for s := range want {
		if _, ok := got[s]; !ok {
			t.Errorf("SQLite files lack statement %q", s)
		}
	}
	for s := range got {
		if !want[s] {
			t.Errorf("SQLite files define %q, which the workload does not use", s)
		}
	}
}

// TestStatementsPerMode: every mode lists meta, nopm and the checks; the
// transactions are the client statements or the five calls.
func TestStatementsPerMode(t *testing.T) {
	w := New(Config{Warehouses: 1})
	for _, m := range workload.Modes() {
		t.Run(m.String(), func(t *testing.T) {
			got := w.Statements(m)
			if d := dup(got); d != "" {
				t.Fatalf("%q listed twice", d)
			}
			for _, s := range []string{stmtMetaGet, stmtNOPM, "check.1", "check.12", stmtCheck11Applies} {
				if !slices.Contains(got, s) {
					t.Errorf("missing %q", s)
				}
			}
			calls := 0
			for _, s := range got {
				if strings.HasSuffix(s, ".call") {
					calls++
				}
			}
			if m.ProcedureLike() {
				if calls != 5 || slices.Contains(got, stmtNOItem) {
					t.Errorf("procedure mode: %d calls, client statements present: %v", calls, got)
				}
			} else if calls != 0 {
				t.Errorf("%v lists %d calls", m, calls)
			}
		})
	}
}

func dup(s []string) string {
	seen := map[string]bool{}
	for _, x := range s {
		if seen[x] {
			return x
		}
		seen[x] = true
	}
	return ""
}

// TestSQLitePlaceholders: arguments appear as ?1..?n, each once, in order,
// so the same argument list also fits MySQL's positional markers.
func TestSQLitePlaceholders(t *testing.T) {
	for name, sql := range sqliteStatements(t) {
		got := placeholders(t, name, sql)
		for i, n := range got {
			if n != i+1 {
				t.Errorf("%s: placeholders %v, want ?1..?%d each once in order", name, got, len(got))
				break
			}
		}
		if strings.HasPrefix(name, "check.") && len(got) > 0 {
			t.Errorf("%s takes arguments", name)
		}
		if strings.Contains(strings.ToUpper(sql), "FOR UPDATE") {
			t.Errorf("%s: SQLite has no FOR UPDATE", name)
		}
	}
}

// TestChecksMatchStatements: IDs "1".."12" in order, descriptions, and a
// Skip only on condition 11.
func TestChecksMatchStatements(t *testing.T) {
	cs := New(Config{Warehouses: 1}).Checks()
	if len(cs) != 12 {
		t.Fatalf("%d checks, want 12", len(cs))
	}
	for i, c := range cs {
		if want := itoa(i + 1); c.ID != want {
			t.Errorf("check %d has ID %q", i, c.ID)
		}
		if c.Desc == "" {
			t.Errorf("check %s has no description", c.ID)
		}
		if (c.Skip != nil) != (c.ID == "11") {
			t.Errorf("check %s: Skip set = %v", c.ID, c.Skip != nil)
		}
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return string(rune('0'+i/10)) + string(rune('0'+i%10))
}
