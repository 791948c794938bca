package tpcb

import (
	"reflect"
	"strings"
	"testing"
)

// TestPopulation: at scale 3, every table has its rows once, in id order,
// owned as pgbench owns them, with zero balances and pgbench's fillers;
// branches come last, in one batch.
func TestPopulation(t *testing.T) {
	const scale = 3
	w := New(Config{Scale: scale})
	tables := w.Tables()
	var names []string
	for _, tb := range tables {
		names = append(names, tb.Name)
	}
	if want := []string{"pgbench_accounts", "pgbench_tellers", "pgbench_branches"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("tables %v, want %v (branches last: the marker of a finished build)", names, want)
	}
	pad := strings.Repeat(" ", 84)
	cases := []struct {
		rows, batches int
		cols          []string
		owner         func(id int64) any // the bid column, or nil for branches
		filler        any
	}{
		{scale * 100_000, 30, []string{"aid", "bid", "abalance", "filler"}, func(id int64) any { return (id-1)/100_000 + 1 }, pad},
		{scale * 10, 1, []string{"tid", "bid", "tbalance", "filler"}, func(id int64) any { return (id-1)/10 + 1 }, nil},
		{scale, 1, []string{"bid", "bbalance", "filler"}, nil, nil},
	}
	for i, tb := range tables {
		c := cases[i]
		if tb.Rows != int64(c.rows) || tb.Batches != c.batches || !reflect.DeepEqual(tb.Columns, c.cols) {
			t.Errorf("%s: %d rows in %d batches, columns %v; want %d in %d, %v", tb.Name, tb.Rows, tb.Batches, tb.Columns, c.rows, c.batches, c.cols)
			continue
		}
		var buf [][]any
		next := int64(1)
		for b := range tb.Batches {
			buf = tb.Fill(b, buf)
			if len(buf) > batchRows {
				t.Fatalf("%s batch %d: %d rows", tb.Name, b, len(buf))
			}
			for _, row := range buf {
				if len(row) != len(c.cols) {
					t.Fatalf("%s: row %v has %d cells", tb.Name, row, len(row))
				}
				want := []any{next}
				if c.owner != nil {
					want = append(want, c.owner(next))
				}
				want = append(want, int64(0), c.filler)
				if !reflect.DeepEqual(row, want) {
					t.Fatalf("%s row %d: %#v, want %#v", tb.Name, next, row, want)
				}
				next++
			}
		}
		if next-1 != int64(c.rows) {
			t.Errorf("%s: %d rows filled, want %d", tb.Name, next-1, c.rows)
		}
	}
}

// TestOwnershipEdges: the last account and teller of a branch belong to
// it, the next ones to the next branch.
func TestOwnershipEdges(t *testing.T) {
	w := New(Config{Scale: 2})
	tables := w.Tables()
	accounts := tables[0].Fill(9, nil) // aids 90,001..100,000
	if last := accounts[len(accounts)-1]; last[0] != int64(100_000) || last[1] != int64(1) {
		t.Errorf("last account of branch 1: %v", last)
	}
	accounts = tables[0].Fill(10, nil)
	if first := accounts[0]; first[0] != int64(100_001) || first[1] != int64(2) {
		t.Errorf("first account of branch 2: %v", first)
	}
	tellers := tables[1].Fill(0, nil)
	if tellers[9][0] != int64(10) || tellers[9][1] != int64(1) || tellers[10][0] != int64(11) || tellers[10][1] != int64(2) {
		t.Errorf("tellers 10 and 11: %v %v", tellers[9], tellers[10])
	}
}

// TestFillIsPure: a batch is a function of its index alone, whatever
// buffer it is given and whatever was filled before.
func TestFillIsPure(t *testing.T) {
	tb := New(Config{Scale: 2}).Tables()[0]
	fresh := clone(tb.Fill(7, nil))
	var buf [][]any
	for _, b := range []int{3, 19, 7} {
		buf = tb.Fill(b, buf)
	}
	if !reflect.DeepEqual(buf, fresh) {
		t.Fatal("batch 7 differs after other batches in the same buffer")
	}
	small := tb.Fill(7, make([][]any, 0, 3))
	if !reflect.DeepEqual(small, fresh) {
		t.Fatal("batch 7 differs in a small buffer")
	}
}

func clone(rows [][]any) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = append([]any(nil), r...)
	}
	return out
}

// TestBranchesInOneBatch: up to the largest scale, branches load in one
// batch (one transaction), so a crash cannot leave part of the marker.
func TestBranchesInOneBatch(t *testing.T) {
	tb := New(Config{Scale: maxScale}).Tables()[2]
	if tb.Batches != 1 || tb.Rows != maxScale {
		t.Fatalf("%d batches, %d rows", tb.Batches, tb.Rows)
	}
	rows := tb.Fill(0, nil)
	if len(rows) != maxScale || rows[maxScale-1][0] != int64(maxScale) {
		t.Fatalf("%d rows, last %v", len(rows), rows[len(rows)-1])
	}
}
