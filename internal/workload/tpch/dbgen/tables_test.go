package dbgen

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"
)

func cellString(t *testing.T, v any) string {
	switch v := v.(type) {
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case string:
		return v
	case time.Time:
		return v.Format(time.DateOnly)
	}
	t.Errorf("cell %v has type %T", v, v)
	return ""
}

// The row sources give the same rows as the generators: every table's
// digest at SF 0.01 matches dbgen's with the batches filled last to first
// into one reused buffer, as a loader's workers may.
func TestTablesDigests(t *testing.T) {
	sc, err := NewScale(0.01)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, tc := range digestCases {
		want[tc.table] = tc.digest[0]
	}
	var buf [][]any
	for _, tab := range Tables(sc) {
		t.Run(tab.Name, func(t *testing.T) {
			var n int64
			var d digest
			vals := make([]string, len(tab.Columns))
			for i := tab.Batches - 1; i >= 0; i-- {
				buf = tab.Fill(i, buf)
				for _, row := range buf {
					if len(row) != len(tab.Columns) {
						t.Fatalf("batch %d: row of %d cells, want %d", i, len(row), len(tab.Columns))
					}
					for k, v := range row {
						vals[k] = cellString(t, v)
					}
					d.add(vals)
					n++
				}
			}
			if n != tab.Rows {
				t.Errorf("%d rows filled, Rows says %d", n, tab.Rows)
			}
			if got := fmt.Sprintf("%016x", uint64(d)); got != want[tab.Name] {
				t.Errorf("digest %s, want %s", got, want[tab.Name])
			}
		})
	}
}

func BenchmarkFillLineItem(b *testing.B) {
	sc, err := NewScale(0.1)
	if err != nil {
		b.Fatal(err)
	}
	tab := Tables(sc)[7]
	textPool()
	b.ReportAllocs()
	var buf [][]any
	for i := 0; b.Loop(); i++ {
		buf = tab.Fill(i%tab.Batches, buf)
	}
}

// Batches filled concurrently, each worker with its own buffer, give the
// same rows as filled one by one (run with -race to check the shared text
// pool and lists).
func TestTablesConcurrent(t *testing.T) {
	sc, err := NewScale(0.01)
	if err != nil {
		t.Fatal(err)
	}
	tab := Tables(sc)[7] // lineitem
	sum := func(buf [][]any) (d digest) {
		vals := make([]string, len(tab.Columns))
		for _, row := range buf {
			for k, v := range row {
				vals[k] = cellString(t, v)
			}
			d.add(vals)
		}
		return d
	}
	want := make([]digest, tab.Batches)
	for i := range want {
		want[i] = sum(tab.Fill(i, nil))
	}
	got := make([]digest, tab.Batches)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			var buf [][]any
			for i := w; i < tab.Batches; i += 4 {
				buf = tab.Fill(i, buf)
				got[i] = sum(buf)
			}
		})
	}
	wg.Wait()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("batch %d differs when filled concurrently", i)
		}
	}
}

// Refresh set row sources: set 1 at SF 0.01 starts with part 4.7's RF1
// vectors, has 10 orders and 37 lines, and set 2's keys follow on.
func TestRefreshTables(t *testing.T) {
	sc, err := NewScale(0.01)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		set          int64
		first, lines int64
	}{{1, 9, 37}, {2, 43, 44}} {
		t.Run(fmt.Sprintf("set=%d", tc.set), func(t *testing.T) {
			tabs := RefreshTables(sc, tc.set)
			orders, lines := tabs[0].Fill(0, nil), tabs[1].Fill(0, nil)
			if int64(len(orders)) != 10 || tabs[0].Rows != 10 || tabs[0].Batches != 1 {
				t.Errorf("%d orders (Rows %d, Batches %d), want 10", len(orders), tabs[0].Rows, tabs[0].Batches)
			}
			if int64(len(lines)) != tc.lines || tabs[1].Rows != tc.lines {
				t.Errorf("%d lines (Rows %d), want %d", len(lines), tabs[1].Rows, tc.lines)
			}
			if orders[0][0] != tc.first || lines[0][0] != tc.first {
				t.Errorf("first keys %v, %v, want %d", orders[0][0], lines[0][0], tc.first)
			}
			if tc.set == 1 {
				if got := cellString(t, orders[0][3]); got != "179366.58" {
					t.Errorf("first order's total %s, want 179366.58", got)
				}
				if got := cellString(t, lines[0][15]); got != "efully final platelets are slyly" {
					t.Errorf("first line's comment %q", got)
				}
			}
		})
	}
}

// The tables keep their PlainText promise: every string cell of every
// table and refresh set at SF 0.01 is printable ASCII without a backslash.
func TestPlainText(t *testing.T) {
	sc, err := NewScale(0.01)
	if err != nil {
		t.Fatal(err)
	}
	var buf [][]any
	for _, tab := range append(Tables(sc), RefreshTables(sc, 1)...) {
		if !tab.PlainText {
			t.Errorf("%s does not promise plain text", tab.Name)
		}
		for i := range tab.Batches {
			buf = tab.Fill(i, buf)
			for _, row := range buf {
				for _, v := range row {
					s, ok := v.(string)
					if !ok {
						continue
					}
					for k := 0; k < len(s); k++ {
						if s[k] < ' ' || s[k] > '~' || s[k] == '\\' {
							t.Fatalf("%s batch %d: %q has byte %#x", tab.Name, i, s, s[k])
						}
					}
				}
			}
		}
	}
}
