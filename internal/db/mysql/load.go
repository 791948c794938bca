package mysql

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"golang.org/x/sync/errgroup"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

const (
	// rowsPerInsert is the size of one multi-row INSERT: a few hundred
	// rows amortise the per-statement cost; more only grows the packet.
	rowsPerInsert = 500
	// maxParams is the protocol's limit on placeholders per statement.
	maxParams = 65535
	// writersPerLoad splits each Load call over this many connections, so
	// that a build with few build VUs still keeps the server's threads
	// busy (InnoDB parses and inserts one statement per thread).
	writersPerLoad = 2
	// minRowsPerWriter keeps small batches on one connection.
	minRowsPerWriter = 2000
	// loadTimeLayout is how a loaded time.Time is written (UTC), a DATETIME.
	loadTimeLayout = "2006-01-02 15:04:05"
)

// Server and client errors that mean LOAD DATA LOCAL is switched off.
const (
	erNotAllowedCommand = 1148 // ER_NOT_ALLOWED_COMMAND (local_infile=OFF)
	erLocalInfileOff    = 3948 // MySQL 8: loading local data is disabled
	crLoadDataRejected  = 2068 // client: LOCAL INFILE request rejected
)

// loader loads initial data with the faster of two methods (docs/
// databases.md has the figures): LOAD DATA LOCAL INFILE streamed from the
// rows (default), or prepared multi-row INSERTs.
type loader struct {
	d         *DB
	infileOff atomic.Bool // the server refused LOCAL INFILE once: use INSERT
}

// readerSeq names the driver's reader handlers, which are registered
// process-wide: two loaders in one process (two builds at once, as serve
// runs them) must never share a name, or one deregisters the other's.
var readerSeq atomic.Int64

// Load inserts rows into table t, split over a few connections, each part
// in one transaction. Rows arrive in primary-key order and each part keeps
// that order, so InnoDB appends to its clustered index.
func (d *DB) Load(ctx context.Context, t *workload.Table, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	if n := len(t.Columns); n == 0 || n > maxParams {
		return fmt.Errorf("mysql: load %s: table has %d columns", t.Name, n)
	}
	parts := min(writersPerLoad, max(1, len(rows)/minRowsPerWriter))
	g, gctx := errgroup.WithContext(ctx)
	for p := range parts {
		part := rows[len(rows)*p/parts : len(rows)*(p+1)/parts]
		g.Go(func() error { return d.load.part(gctx, t, part) })
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("mysql: load %s: %w", t.Name, err)
	}
	return nil
}

// part loads rows on one connection.
func (l *loader) part(ctx context.Context, t *workload.Table, rows [][]any) error {
	c, err := l.d.pool.Conn(ctx)
	if err != nil {
		return l.d.connErr(err)
	}
	defer c.Close()
	if l.d.cfg.load == loadInfile && !l.infileOff.Load() {
		err := l.infile(ctx, c, t, rows)
		if !infileRefused(err) {
			return classify(err)
		}
		l.infileOff.Store(true)
	}
	return classify(l.insert(ctx, c, t, rows))
}

func infileRefused(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == erNotAllowedCommand || me.Number == erLocalInfileOff || me.Number == crLoadDataRejected
	}
	return false
}

// infile sends the rows as tab-separated text through LOAD DATA LOCAL
// INFILE: one statement, one transaction, no per-row parameters.
func (l *loader) infile(ctx context.Context, c *sql.Conn, t *workload.Table, rows [][]any) error {
	var buf bytes.Buffer
	buf.Grow(len(rows) * 64 * len(t.Columns) / 4)
	for _, r := range rows {
		if len(r) != len(t.Columns) {
			return fmt.Errorf("row has %d values for %d columns", len(r), len(t.Columns))
		}
		for i, v := range r {
			if i > 0 {
				buf.WriteByte('\t')
			}
			if err := writeField(&buf, v); err != nil {
				return fmt.Errorf("column %s: %w", t.Columns[i], err)
			}
		}
		buf.WriteByte('\n')
	}
	name := "sledge-" + strconv.FormatInt(readerSeq.Add(1), 10)
	data := buf.Bytes()
	mysql.RegisterReaderHandler(name, func() io.Reader { return bytes.NewReader(data) })
	defer mysql.DeregisterReaderHandler(name)
	cols := make([]string, len(t.Columns))
	for i, col := range t.Columns {
		cols[i] = quoteIdent(col)
	}
	// The defaults: fields end at a tab, lines at a newline, backslash
	// escapes, \N is NULL.
	q := "LOAD DATA LOCAL INFILE 'Reader::" + name + "' INTO TABLE " + quoteIdent(t.Name) +
		" CHARACTER SET utf8mb4 (" + strings.Join(cols, ", ") + ")"
	_, err := c.ExecContext(ctx, q)
	return err
}

// writeField writes one value in LOAD DATA's default text format.
func writeField(b *bytes.Buffer, v any) error {
	var tmp [32]byte
	switch x := v.(type) {
	case nil:
		b.WriteString(`\N`)
	case int64:
		b.Write(strconv.AppendInt(tmp[:0], x, 10))
	case int:
		b.Write(strconv.AppendInt(tmp[:0], int64(x), 10))
	case float64:
		b.Write(strconv.AppendFloat(tmp[:0], x, 'f', -1, 64))
	case string:
		writeEscaped(b, x)
	case []byte:
		writeEscaped(b, string(x))
	case time.Time:
		b.Write(x.UTC().AppendFormat(tmp[:0], loadTimeLayout))
	default:
		return fmt.Errorf("unsupported value type %T", v)
	}
	return nil
}

// writeEscaped escapes what LOAD DATA would read as syntax.
func writeEscaped(b *bytes.Buffer, s string) {
	if !strings.ContainsAny(s, "\\\t\n\r\x00") {
		b.WriteString(s)
		return
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case 0:
			b.WriteString(`\0`)
		default:
			b.WriteByte(c)
		}
	}
}

// insert sends the rows as prepared multi-row INSERTs in one transaction.
func (l *loader) insert(ctx context.Context, c *sql.Conn, t *workload.Table, rows [][]any) (err error) {
	ncol := len(t.Columns)
	per := min(rowsPerInsert, maxParams/ncol)
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_, _ = c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	stmts := map[int]*sql.Stmt{}
	defer func() {
		for _, st := range stmts {
			st.Close()
		}
	}()
	args := make([]any, 0, per*ncol)
	for len(rows) > 0 {
		n := min(per, len(rows))
		st, ok := stmts[n]
		if !ok {
			if st, err = c.PrepareContext(ctx, insertSQL(t.Name, t.Columns, n)); err != nil {
				return err
			}
			stmts[n] = st
		}
		args = args[:0]
		for _, r := range rows[:n] {
			if len(r) != ncol {
				return fmt.Errorf("row has %d values for %d columns", len(r), ncol)
			}
			args = append(args, r...)
		}
		if _, err = st.ExecContext(ctx, args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	_, err = c.ExecContext(ctx, "COMMIT")
	return err
}

// insertSQL is INSERT INTO t (c1, c2) VALUES (?,?),(?,?)… for n rows.
func insertSQL(table string, cols []string, n int) string {
	return db.InsertSQL(table, cols, n, quoteIdent)
}
