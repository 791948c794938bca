package tpcb

import (
	"slices"
	"strings"

	"github.com/sledge-bench/sledge/internal/workload"
)

// batchRows is the number of rows per batch of accounts and tellers.
const batchRows = 10_000

// Column lists as pgbench's DDL has them (docs/tpcb.md part 1).
var (
	accountsColumns = []string{"aid", "bid", "abalance", "filler"}
	tellersColumns  = []string{"tid", "bid", "tbalance", "filler"}
	branchesColumns = []string{"bid", "bbalance", "filler"}
)

// accountsFiller is what pgbench loads into pgbench_accounts.filler: the
// empty string into a char(84), which PostgreSQL and MariaDB store
// blank-padded to 84 characters. Sending the padded value stores exactly
// the same there, and gives SQLite (whose CHAR(84) keeps any length) rows
// of the same size.
var accountsFiller any = strings.Repeat(" ", 84)

// zero is the boxed initial balance: every balance starts at 0.
var zero any = int64(0)

// Tables is pgbench's initial population (pgbench -i, step g) in load
// order: accounts, tellers, and branches last, so a schema whose branches
// are loaded is a complete build (Attach reads the scale from them).
// pgbench_history starts empty and has no batch. There is nothing random:
// every row is a function of its table and index.
//
// Accounts and tellers come in batches of 10,000 rows; branches (at most
// 20,000) in one batch, so that the marker is loaded in one transaction.
func (w *Workload) Tables() []workload.Table {
	s := w.scale
	return []workload.Table{
		{Name: "pgbench_accounts", Columns: slices.Clone(accountsColumns), Batches: ceilDiv(s*accountsPerScale, batchRows),
			Rows: int64(s) * accountsPerScale, Fill: fillRange(s*accountsPerScale, batchRows, len(accountsColumns), accountRow)},
		{Name: "pgbench_tellers", Columns: slices.Clone(tellersColumns), Batches: ceilDiv(s*tellersPerScale, batchRows),
			Rows: int64(s) * tellersPerScale, Fill: fillRange(s*tellersPerScale, batchRows, len(tellersColumns), tellerRow)},
		{Name: "pgbench_branches", Columns: slices.Clone(branchesColumns), Batches: 1,
			Rows: int64(s) * branchesPerScale, Fill: fillRange(s*branchesPerScale, s*branchesPerScale, len(branchesColumns), branchRow)},
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// fillRange makes the Fill of a table of n rows of width cells with ids
// 1..n, per rows to a batch: batch i holds ids i·per+1 .. min((i+1)·per,
// n), each row set by row.
func fillRange(n, per, width int, row func(id int64, cells []any)) func(i int, buf [][]any) [][]any {
	return func(i int, buf [][]any) [][]any {
		first := i*per + 1
		last := min((i+1)*per, n)
		if first > last {
			return buf[:0]
		}
		buf = rows(buf, last-first+1, width)
		for k := range buf {
			row(int64(first+k), buf[k])
		}
		return buf
	}
}

// rows resizes buf to cnt rows of width cells, reusing the row slices of
// an earlier batch (the caller is done with them when it hands buf back);
// new ones are carved from one allocation.
func rows(buf [][]any, cnt, width int) [][]any {
	if cap(buf) < cnt {
		nb := make([][]any, cnt)
		copy(nb, buf[:cap(buf)])
		buf = nb
	}
	buf = buf[:cnt]
	var cells []any
	for i := range buf {
		if cap(buf[i]) >= width {
			buf[i] = buf[i][:width]
			continue
		}
		if len(cells) < width {
			cells = make([]any, width*(cnt-i))
		}
		buf[i], cells = cells[:width:width], cells[width:]
	}
	return buf
}

// accountRow: account aid of branch (aid−1)/100,000+1, balance 0, filler
// the empty string blank-padded (what pgbench -I G selects for each aid).
func accountRow(aid int64, c []any) {
	c[0], c[1], c[2], c[3] = aid, (aid-1)/accountsPerScale+1, zero, accountsFiller
}

// tellerRow: teller tid of branch (tid−1)/10+1, balance 0, filler NULL.
func tellerRow(tid int64, c []any) {
	c[0], c[1], c[2], c[3] = tid, (tid-1)/tellersPerScale+1, zero, nil
}

// branchRow: branch bid, balance 0, filler NULL.
func branchRow(bid int64, c []any) {
	c[0], c[1], c[2] = bid, zero, nil
}
