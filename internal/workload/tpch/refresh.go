package tpch

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/tpch/dbgen"
	"github.com/sledge-bench/sledge/internal/workload/tpch/queries"
)

// rowsPerInsert bounds one multi-row INSERT's text (about 200 bytes a
// line): well inside MariaDB's max_allowed_packet.
const rowsPerInsert = 500

// rf1 is refresh function 1 (new sales, tpch.md part 6) with the next
// unused update set: its orders and their lines in one transaction, which
// also advances the metadata table's next set, so that no later run
// inserts the same keys again.
func (r *run) rf1(ctx context.Context, c workload.SQLConn, stream int) (RefreshTime, error) {
	set := r.w.nextSet
	rt := RefreshTime{Stream: stream, Function: "RF1", Set: set}
	// The set's rows are made before the clock starts, as dbgen -U writes
	// them to files before a run: the function's time is the database's.
	var stmts []string
	for _, t := range dbgen.RefreshTables(r.w.sc, set) {
		var buf [][]any
		for i := range t.Batches {
			buf = t.Fill(i, buf)
			for lo := 0; lo < len(buf); lo += rowsPerInsert {
				stmts = append(stmts, insertText(t.Name, buf[lo:min(lo+rowsPerInsert, len(buf))]))
			}
		}
	}
	stmts = append(stmts, fmt.Sprintf("UPDATE %s SET value = '%d' WHERE name = 'next_set'", metaTable, set+1))
	r.begin(stream, -1)
	defer r.end(stream, -1)
	start := time.Now()
	err := r.inTx(ctx, c, func() error {
		for _, st := range stmts {
			if err := c.ExecSQL(ctx, st); err != nil {
				return fmt.Errorf("%s: %w", st[:min(len(st), 24)], err)
			}
		}
		return nil
	})
	if err != nil {
		return rt, fmt.Errorf("stream %d RF1 (set %d): %w", stream, set, err)
	}
	rt.Seconds = time.Since(start).Seconds()
	r.w.nextSet = set + 1
	r.addRefresh(rt)
	r.progress("stream %d  RF1 %8.4f s  set %d: %d orders added", stream, rt.Seconds, set, r.w.sc.RefreshCount())
	return rt, nil
}

// rf2 is refresh function 2 (old sales): it deletes the original orders
// of the set RF1 last inserted, and their lines, in one transaction.
func (r *run) rf2(ctx context.Context, c workload.SQLConn, stream int) (RefreshTime, error) {
	set := r.w.nextSet - 1
	rt := RefreshTime{Stream: stream, Function: "RF2", Set: set}
	keys := r.w.sc.RefreshDeletes(set)
	r.begin(stream, -2)
	defer r.end(stream, -2)
	start := time.Now()
	err := r.inTx(ctx, c, func() error {
		for lo := 0; lo < len(keys); lo += rowsPerInsert {
			in := inList(keys[lo:min(lo+rowsPerInsert, len(keys))])
			if err := c.ExecSQL(ctx, "DELETE FROM lineitem WHERE l_orderkey IN ("+in+")"); err != nil {
				return fmt.Errorf("delete lineitem: %w", err)
			}
			if err := c.ExecSQL(ctx, "DELETE FROM orders WHERE o_orderkey IN ("+in+")"); err != nil {
				return fmt.Errorf("delete orders: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return rt, fmt.Errorf("stream %d RF2 (set %d): %w", stream, set, err)
	}
	rt.Seconds = time.Since(start).Seconds()
	r.addRefresh(rt)
	r.progress("stream %d  RF2 %8.4f s  set %d: %d orders deleted", stream, rt.Seconds, set, len(keys))
	return rt, nil
}

func (r *run) addRefresh(rt RefreshTime) {
	r.mu.Lock()
	r.res.Refresh = append(r.res.Refresh, rt)
	r.mu.Unlock()
}

// inTx runs fn between BEGIN and COMMIT as text; SQLite's writer takes
// its write lock at once (IMMEDIATE), so it waits for none of the
// readers' snapshots to upgrade.
func (r *run) inTx(ctx context.Context, c workload.SQLConn, fn func() error) error {
	begin := "BEGIN"
	if r.d == queries.SQLite {
		begin = "BEGIN IMMEDIATE"
	}
	if err := c.ExecSQL(ctx, begin); err != nil {
		return err
	}
	if err := fn(); err != nil {
		_ = c.ExecSQL(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	return c.ExecSQL(ctx, "COMMIT")
}

// insertText is a multi-row INSERT of rows into table t with the values
// as literals: integers, decimals with two places, quoted text and dates.
func insertText(t string, rows [][]any) string {
	var b strings.Builder
	b.Grow(len(rows) * 200)
	b.WriteString("INSERT INTO ")
	b.WriteString(t)
	b.WriteString(" VALUES ")
	var scratch [32]byte
	for i, row := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for j, v := range row {
			if j > 0 {
				b.WriteByte(',')
			}
			switch x := v.(type) {
			case int64:
				b.Write(strconv.AppendInt(scratch[:0], x, 10))
			case float64:
				b.Write(strconv.AppendFloat(scratch[:0], x, 'f', 2, 64))
			case string:
				b.WriteByte('\'')
				b.WriteString(strings.ReplaceAll(x, "'", "''"))
				b.WriteByte('\'')
			default:
				b.WriteString("NULL")
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

func inList(keys []int64) string {
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(k, 10))
	}
	return b.String()
}
