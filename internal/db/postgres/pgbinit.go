package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// PgbenchInit is what `pgbench -i` runs on PostgreSQL: its steps in the
// order given, each step's SQL from the caller (tpcb.PgbenchStepSQL), the
// client-side data (step g) made here.
type PgbenchInit struct {
	Steps      string            // step letters, spaces removed
	Scale      int               // -s
	Quiet      bool              // -q: a progress line about every 5 s, not every 100,000 rows
	Freeze     bool              // COPY … WITH (FREEZE ON): pgbench_accounts is not partitioned
	Partitions int               // --partitions: step t says "creating N partitions..." before making them
	SQL        map[byte][]string // the statements of steps d, t, G, v, p and f
}

// PgbenchStepError is a failed statement of pgbench -i, which pgbench
// reports as "query failed: …" with the query as the detail.
type PgbenchStepError struct {
	Query string
	Err   error
}

func (e *PgbenchStepError) Error() string {
	msg := e.Err.Error()
	var pe *pgconn.PgError
	if errors.As(e.Err, &pe) {
		msg = pe.Severity + ":  " + pe.Message // libpq's words
	}
	return "query failed: " + msg
}

func (e *PgbenchStepError) Unwrap() error { return e.Err }

// pgbStepNames are pgbench 15's names of the steps in its "done in" line.
var pgbStepNames = map[byte]string{
	'd': "drop tables", 't': "create tables", 'g': "client-side generate",
	'G': "server-side generate", 'v': "vacuum", 'p': "primary keys", 'f': "foreign keys",
}

// pgbStepMessages are the lines pgbench prints as a step starts.
var pgbStepMessages = map[byte]string{
	'd': "dropping old tables...", 't': "creating tables...", 'g': "generating data (client-side)...",
	'G': "generating data (server-side)...", 'v': "vacuuming...", 'p': "creating primary keys...",
	'f': "creating foreign keys...",
}

// pgbTruncate empties the four tables in the load's transaction, as
// pgbench does (it also lets COPY … FREEZE write frozen rows).
const pgbTruncate = "TRUNCATE TABLE pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers"

// RunPgbenchInit runs pgbench -i's steps on one connection as pgbench 15's
// runInitSteps does, writing pgbench's lines (and the server's notices, as
// libpq prints them) to w.
func (d *DB) RunPgbenchInit(ctx context.Context, in PgbenchInit, w io.Writer) error {
	cfg := d.cfg.Copy()
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		fmt.Fprintf(w, "%s:  %s\n", n.Severity, n.Message)
	}
	c, err := d.connect(ctx, cfg, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	pc := c.PgConn()
	exec := func(q string) error {
		if _, err := pc.Exec(ctx, q).ReadAll(); err != nil {
			return &PgbenchStepError{Query: q, Err: err}
		}
		return nil
	}
	var stats []string
	var total time.Duration
	for i := 0; i < len(in.Steps); i++ {
		step := in.Steps[i]
		name, ok := pgbStepNames[step]
		if !ok {
			continue // checked by the caller; spaces are skipped, as pgbench
		}
		start := time.Now()
		fmt.Fprintln(w, pgbStepMessages[step])
		var err error
		switch step {
		case 'g':
			err = d.pgbClientLoad(ctx, pc, in, w, exec)
		case 'G':
			err = inTx(exec, append([]string{pgbTruncate}, in.SQL['G']...))
		default:
			said := false
			for _, q := range in.SQL[step] {
				// pgbench's createPartitions says so before its first.
				if step == 't' && in.Partitions > 0 && !said && strings.Contains(q, " PARTITION OF ") {
					fmt.Fprintf(w, "creating %d partitions...\n", in.Partitions)
					said = true
				}
				if err = exec(q); err != nil {
					break
				}
			}
		}
		if err != nil {
			return err
		}
		el := time.Since(start)
		total += el
		stats = append(stats, fmt.Sprintf("%s %.2f s", name, el.Seconds()))
	}
	fmt.Fprintf(w, "done in %.2f s (%s).\n", total.Seconds(), strings.Join(stats, ", "))
	return nil
}

// inTx runs qs in one transaction; a failed one rolls it back.
func inTx(exec func(string) error, qs []string) error {
	if err := exec("BEGIN"); err != nil {
		return err
	}
	for _, q := range qs {
		if err := exec(q); err != nil {
			_ = exec("ROLLBACK")
			return err
		}
	}
	return exec("COMMIT")
}

// pgbClientLoad is step g: the tables emptied, then branches, tellers and
// accounts sent with COPY in text form in one transaction, a progress line
// every 100,000 accounts (with -q: about every 5 s), as pgbench's
// initGenerateDataClientSide.
func (d *DB) pgbClientLoad(ctx context.Context, pc *pgconn.PgConn, in PgbenchInit, w io.Writer, exec func(string) error) error {
	if err := exec("BEGIN"); err != nil {
		return err
	}
	with := ""
	if in.Freeze {
		with = " WITH (FREEZE ON)"
	}
	scale := int64(in.Scale)
	copies := []struct {
		q    string
		n    int64
		line func(b []byte, id int64) []byte
	}{
		{"COPY pgbench_branches (bid, bbalance) FROM STDIN" + with, scale * 1, func(b []byte, id int64) []byte {
			return append(strconv.AppendInt(b, id, 10), "\t0\n"...)
		}},
		{"COPY pgbench_tellers (tid, bid, tbalance) FROM STDIN" + with, scale * 10, func(b []byte, id int64) []byte {
			b = append(strconv.AppendInt(b, id, 10), '\t')
			return append(strconv.AppendInt(b, (id-1)/10+1, 10), "\t0\n"...)
		}},
		// filler is the empty string, stored blank-padded, as pgbench's.
		{"COPY pgbench_accounts (aid, bid, abalance, filler) FROM STDIN" + with, scale * 100_000, func(b []byte, id int64) []byte {
			b = append(strconv.AppendInt(b, id, 10), '\t')
			return append(strconv.AppendInt(b, (id-1)/100_000+1, 10), "\t0\t\n"...)
		}},
	}
	if err := exec(pgbTruncate); err != nil {
		_ = exec("ROLLBACK")
		return err
	}
	for k, cp := range copies {
		r := &pgbRows{n: cp.n, line: cp.line}
		if k == len(copies)-1 {
			r.progress = pgbProgress(w, cp.n, in.Quiet)
		}
		if _, err := pc.CopyFrom(ctx, r, cp.q); err != nil {
			_ = exec("ROLLBACK")
			return &PgbenchStepError{Query: cp.q, Err: err}
		}
	}
	return exec("COMMIT")
}

// pgbProgress returns the progress of loading n accounts: pgbench's line
// every 100,000 rows, or with quiet at the end and when 5 s more have
// passed (checked every 100 rows, as pgbench).
func pgbProgress(w io.Writer, n int64, quiet bool) func(j int64) {
	start := time.Now()
	interval := 1
	return func(j int64) {
		if !quiet && j%100_000 != 0 || quiet && j%100 != 0 {
			return
		}
		el := time.Since(start).Seconds()
		if quiet {
			if j != n && el < float64(interval)*5 {
				return
			}
			interval = int(el/5) + 1
		}
		fmt.Fprintf(w, "%d of %d tuples (%d%%) done (elapsed %.2f s, remaining %.2f s)\n",
			j, n, j*100/n, el, float64(n-j)*el/float64(j))
	}
}

// pgbRows is a COPY text stream of ids 1..n, one line each, made as read.
type pgbRows struct {
	n, next  int64 // next: the last id written
	line     func(b []byte, id int64) []byte
	progress func(j int64)
	buf      []byte
}

func (r *pgbRows) Read(p []byte) (int, error) {
	if r.next >= r.n && len(r.buf) == 0 {
		return 0, io.EOF
	}
	// Fill whole lines up to len(p), keeping any left over for the next read.
	for len(r.buf) < len(p) && r.next < r.n {
		r.next++
		r.buf = r.line(r.buf, r.next)
		if r.progress != nil {
			r.progress(r.next)
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[:copy(r.buf, r.buf[n:])]
	return n, nil
}
