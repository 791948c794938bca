package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/evloop"
	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/workload"
)

// SQLSTATEs sledge acts on.
const (
	codeSerialization = "40001" // serialization_failure
	codeDeadlock      = "40P01" // deadlock_detected
	codeLockNotAvail  = "55P03" // lock_not_available (lock_timeout)
	codeUndefinedTab  = "42P01" // undefined_table
	// codeInvalidItem is raised by the neword routine for an unused item
	// (procedures.sql): TPC-C's 1% rollback, not a failure.
	codeInvalidItem = "SLD01"
)

var (
	errConnRefused = syscall.ECONNREFUSED
	errNoSocket    = syscall.ENOENT
)

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// routineNames are TPC-C's routines (sql/tpcc/procedures.sql), as the
// statement test lists them. Connect finds any workload's routines from
// its "<tx>.call" statements instead (callRoutines).
var routineNames = []string{"neword", "payment", "delivery", "slev", "ostat"}

// callRoutine finds the routine a "<tx>.call" statement calls:
// SELECT name(…) or CALL name(…).
var callRoutine = regexp.MustCompile(`(?i)^\s*(?:SELECT|CALL)\s+([a-z_][a-z0-9_]*)\s*\(`)

// callRoutines are the routines procedure mode calls for a workload: those
// its "<tx>.call" statements name, lower-cased and sorted.
func callRoutines(text map[string]string) []string {
	var out []string
	for name, q := range text {
		if strings.HasSuffix(name, ".call") {
			if m := callRoutine.FindStringSubmatch(q); m != nil {
				out = append(out, strings.ToLower(m[1]))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Connect opens one virtual user's session on its own connection. In
// procedure mode it first makes sure the routines the URL asks for
// (routines=functions|procedures) exist: it never switches silently to the
// other kind.
func (d *DB) Connect(ctx context.Context, w string, m workload.Mode) (workload.Conn, error) {
	if err := d.Supports(w, m); err != nil {
		return nil, err
	}
	text, err := d.statements(w)
	if err != nil {
		return nil, err
	}
	mode := pgx.QueryExecModeCacheStatement
	if m == workload.ModeClient {
		mode = pgx.QueryExecModeSimpleProtocol
	}
	pc, err := d.connect(ctx, d.cfg, mode)
	if err != nil {
		return nil, err
	}
	c := &conn{c: pc, mode: m, w: w, text: text, wire: metrics.WireFrom(ctx)}
	if m == workload.ModeBatched {
		// Only batched statements have repeated groups; other modes skip
		// the lookup.
		if c.rep, err = d.repeated.Get("postgres", w, text, db.Dollar); err != nil {
			_ = pc.Close(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	if d.fast {
		c.f = newFast(pc.PgConn(), m == workload.ModeClient)
	}
	if m == workload.ModeBlock {
		if err := c.startBlocks(d); err != nil {
			_ = pc.Close(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	if m == workload.ModeProcedure {
		if d.routines == Procedures {
			// CALL texts: the function's arguments plus the INOUT result.
			c.text = procedureCalls(text)
		}
		present, err := d.checkRoutines(ctx, pc, text)
		if err != nil {
			_ = pc.Close(context.WithoutCancel(ctx))
			return nil, err
		}
		if present && d.wire {
			// After the routines' check, which runs on pgx.
			if err := c.takeOver(ctx); err != nil {
				_ = pc.Close(context.WithoutCancel(ctx))
				return nil, err
			}
		}
		if present {
			if err := c.prepareCalls(ctx); err != nil {
				_ = pc.Close(context.WithoutCancel(ctx))
				return nil, fmt.Errorf("postgres: prepare routine calls: %w", classify(err))
			}
		}
	}
	if m == workload.ModePipeline {
		return &pipeConn{conn: c, g: newGroup(pc.PgConn(), text)}, nil // pipeline.go
	}
	if d.wire && hotWire(m) {
		if err := c.takeOver(ctx); err != nil {
			_ = pc.Close(context.WithoutCancel(ctx))
			return nil, err
		}
		return &stmtConn{c}, nil
	}
	return c, nil
}

// hotWire says whether mode m's sessions speak the protocol themselves
// (pgwire.go): the modes whose calls are one statement each. Pipeline,
// batched and block modes keep pgconn.
func hotWire(m workload.Mode) bool {
	return m == workload.ModeProcedure || m == workload.ModePrepared || m == workload.ModeClient
}

// takeOver hands the session's connection from pgconn to pgwire (once).
func (c *conn) takeOver(ctx context.Context) error {
	if c.pw != nil {
		return nil
	}
	pc := c.c.PgConn()
	// pgconn may still have a background read in flight (started while a
	// write of its was slow) or bytes in its buffer: either would take the
	// first response meant for pgwire.
	if err := pc.SyncConn(ctx); err != nil {
		return fmt.Errorf("postgres: take over the connection: %w", classify(err))
	}
	hc, err := pc.Hijack()
	if err != nil {
		return fmt.Errorf("postgres: take over the connection: %w", err)
	}
	c.pw = newPgwire(pc, hc, c.mode == workload.ModeClient)
	c.f = nil
	return nil
}

// prepareCalls prepares the session's routine calls now. A call runs on its
// own, outside a transaction block, so preparing it on first use would be
// one more transaction for the server's counters, inside the measured
// interval (and in the first call's latency).
func (c *conn) prepareCalls(ctx context.Context) error {
	for name, q := range c.text {
		if !strings.HasSuffix(name, ".call") {
			continue
		}
		if c.pw != nil {
			if err := c.pw.begin(ctx); err != nil {
				return err
			}
			_, err := c.pw.prepare(name, q)
			if eerr := c.pw.end(); err == nil {
				err = eerr
			}
			if err != nil {
				return err
			}
			continue
		}
		if c.f != nil {
			if _, err := c.f.pc.Prepare(ctx, name, q, nil); err != nil {
				return err
			}
			c.f.prepared[name] = true
			continue
		}
		// pgx runs a statement prepared under its own text as one.
		if _, err := c.c.Prepare(ctx, q, q); err != nil {
			return err
		}
	}
	return nil
}

// procedureCalls returns text with each "<tx>.call" replaced by its
// "<tx>.call_procedure" text (statements.sql keeps both kinds).
func procedureCalls(text map[string]string) map[string]string {
	out := make(map[string]string, len(text))
	for k, v := range text {
		out[k] = v
	}
	for k, v := range text {
		if tx, ok := strings.CutSuffix(k, ".call_procedure"); ok {
			out[tx+".call"] = v
		}
	}
	return out
}

// checkRoutines fails when the schema is built but a routine procedure
// mode needs is missing: the functions the workload's "<tx>.call"
// statements name, and with routines=procedures also the procedures of
// the same names (which call the functions). Without a schema (before
// build creates the routines, or run on an empty database) it says
// nothing: the workload reports the missing schema itself. present says
// every routine is there.
func (d *DB) checkRoutines(ctx context.Context, c *pgx.Conn, text map[string]string) (present bool, err error) {
	names := callRoutines(text)
	if len(names) == 0 {
		return false, nil
	}
	var found []string // "f neword", "p neword"
	err = c.QueryRow(ctx, `SELECT coalesce(array_agg(prokind::text || ' ' || proname::text), '{}')
FROM pg_proc WHERE prokind IN ('f', 'p') AND proname = ANY($1) AND pg_function_is_visible(oid)`,
		names).Scan(&found)
	if err != nil {
		return false, fmt.Errorf("postgres: look up routines: %w", classify(err))
	}
	kinds := []string{"function"}
	if d.routines == Procedures {
		kinds = append(kinds, "procedure")
	}
	var missing []string
	for _, k := range kinds {
		for _, r := range names {
			if !slices.Contains(found, k[:1]+" "+r) {
				missing = append(missing, k+" "+r)
			}
		}
	}
	if len(missing) == 0 {
		return true, nil
	}
	if built, err := schemaBuilt(ctx, c, text); err != nil || !built {
		return false, err
	}
	return false, fmt.Errorf("postgres: --mode procedure (routines=%s) needs routines missing from database %q: %s; rebuild with `sledge drop` then `sledge build`, or use --mode client or prepared",
		d.routines, d.cfg.Database, strings.Join(missing, ", "))
}

// schemaBuilt reports whether the workload's build has loaded its data:
// the workload's "schema.built" statement, or for workloads without one
// (tpcc) the rows of sledge_meta, which its build loads last. A missing
// table means no.
func schemaBuilt(ctx context.Context, c *pgx.Conn, text map[string]string) (bool, error) {
	q, ok := text["schema.built"]
	if !ok {
		q = "SELECT count(*) FROM sledge_meta"
	}
	var n int64
	err := c.QueryRow(ctx, q).Scan(&n)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == codeUndefinedTab {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("postgres: look for a built schema: %w", classify(err))
	}
	return n > 0, nil
}

// conn is one session: its own pgx.Conn, whose query mode is the session's
// mode (pgx caches the prepared statements per connection).
type conn struct {
	c    *pgx.Conn
	mode workload.Mode
	w    string
	text map[string]string       // shared by every session; read only
	rep  map[string]*db.Repeated // statements with repeated groups, batched mode only
	inTx bool
	wire *metrics.WireCounts // the dial counted into it (wire.go); nil: not counted
	f    *fast               // the pgconn path (fast.go); nil: pgx for everything
	pw   *pgwire             // sledge's own protocol (pgwire.go) after takeOver; then f and c are not used
	blk  *blockConn          // block mode's blocks (block.go); nil in other modes
}

func (c *conn) Mode() workload.Mode { return c.mode }

// sql returns the text of statement name for nargs arguments and the name
// to prepare it under: a statement with repeated groups has one of each per
// repeat count (db.Repeated).
func (c *conn) sql(name string, nargs int) (prepName, q string, err error) {
	if c.rep != nil {
		if r, ok := c.rep[name]; ok {
			e, err := r.For(nargs)
			if err != nil {
				return "", "", fmt.Errorf("postgres: %w", err)
			}
			return e.Name, e.Text, nil
		}
	}
	if q, ok := c.text[name]; ok {
		return name, q, nil
	}
	return "", "", fmt.Errorf("postgres: no statement %q for workload %s", name, c.w)
}

// bind makes the session's socket wait on the event loop of the virtual
// user calling (io=loop; nothing otherwise).
func (c *conn) bind(ctx context.Context) { evloop.Bind(ctx, c.c.PgConn().Conn()) }

func (c *conn) Exec(ctx context.Context, name string, args ...any) (int64, error) {
	c.bind(ctx)
	prep, q, err := c.sql(name, len(args))
	if err != nil {
		return 0, err
	}
	if c.pw != nil {
		n, err := c.pw.exec(ctx, prep, q, args, false)
		if err != nil {
			return 0, wrap("exec", name, err)
		}
		return n, nil
	}
	if c.f != nil && encodable(args) {
		n, err := c.f.exec(ctx, prep, q, args)
		if err != nil {
			return 0, wrap("exec", name, err)
		}
		return n, nil
	}
	tag, err := c.c.Exec(ctx, q, args...)
	if err != nil {
		return 0, wrap("exec", name, err)
	}
	return tag.RowsAffected(), nil
}

func (c *conn) QueryRow(ctx context.Context, name string, args ...any) workload.Row {
	c.bind(ctx)
	if c.blk != nil {
		if k := c.blk.blocks[name]; k != nil {
			return c.blk.queryRow(ctx, name, k, args)
		}
	}
	prep, q, err := c.sql(name, len(args))
	if err != nil {
		return &row{err: err}
	}
	if c.pw != nil {
		return &wireRow{p: c.pw, ctx: ctx, name: name, prep: prep, q: q, args: args}
	}
	if c.f != nil && encodable(args) {
		rs, err := c.f.query(ctx, prep, q, args)
		if err != nil {
			return &fastRow{err: wrap("query", name, err)}
		}
		return &fastRow{rows: rs}
	}
	return &row{r: c.c.QueryRow(ctx, q, args...), name: name}
}

func (c *conn) Query(ctx context.Context, name string, args ...any) (workload.Rows, error) {
	c.bind(ctx)
	prep, q, err := c.sql(name, len(args))
	if err != nil {
		return nil, err
	}
	if c.pw != nil {
		if err := c.pw.call(ctx, prep, q, args, false); err != nil {
			return nil, wrap("query", name, err)
		}
		c.pw.rows = wireRows{p: c.pw, name: name}
		if err := c.pw.rows.start(); err != nil {
			return nil, wrap("query", name, err)
		}
		return &c.pw.rows, nil
	}
	if c.f != nil && encodable(args) {
		rs, err := c.f.query(ctx, prep, q, args)
		if err != nil {
			return nil, wrap("query", name, err)
		}
		return rs, nil
	}
	rs, err := c.c.Query(ctx, q, args...)
	if err != nil {
		return nil, wrap("query", name, err)
	}
	return &rows{rs: rs, name: name}, nil
}

// InTx runs fn between BEGIN and COMMIT at the server's default isolation
// (READ COMMITTED); the statements take the row locks the transactions
// need (FOR UPDATE in statements.sql). BEGIN and COMMIT have no arguments,
// so pgx sends them as simple queries in every mode.
func (c *conn) InTx(ctx context.Context, opts workload.TxOptions, fn func(ctx context.Context) error) error {
	c.bind(ctx)
	if c.inTx {
		return errors.New("postgres: InTx called inside a transaction")
	}
	begin := "BEGIN"
	if opts.ReadOnly {
		begin = "BEGIN READ ONLY"
	}
	if err := c.simple(ctx, begin); err != nil {
		return wrap("begin", "", err)
	}
	c.inTx = true
	defer func() { c.inTx = false }()
	if err := fn(ctx); err != nil {
		return c.rollback(ctx, err)
	}
	if err := c.simple(ctx, "COMMIT"); err != nil {
		return c.rollback(ctx, wrap("commit", "", err))
	}
	return nil
}

// rollback ends the transaction after err and returns err. It runs without
// ctx's cancellation, so the session is usable again.
func (c *conn) rollback(ctx context.Context, err error) error {
	if c.Broken() {
		return err
	}
	if rerr := c.simple(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
		return fmt.Errorf("%w (and rollback failed: %w)", err, classify(rerr))
	}
	return err
}

// simple sends a statement without arguments by the simple protocol.
func (c *conn) simple(ctx context.Context, q string) error {
	if c.pw != nil {
		return c.pw.simpleExec(ctx, q)
	}
	if c.f != nil {
		return c.f.simpleExec(ctx, q)
	}
	_, err := c.c.Exec(ctx, q)
	return err
}

func (c *conn) Close(ctx context.Context) error {
	if c.f != nil {
		c.f.close()
	}
	if c.pw != nil {
		c.pw.close() // pgx's Close below does nothing on a hijacked connection
	}
	if c.blk != nil {
		c.blk.close()
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return c.c.Close(ctx)
}

// row is a single-row result whose Scan maps errors like every call.
type row struct {
	r    pgx.Row
	name string
	err  error
}

func (r *row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	if err := r.r.Scan(dest...); err != nil {
		return wrap("query", r.name, err)
	}
	normalize(dest)
	return nil
}

type rows struct {
	rs   pgx.Rows
	name string
}

func (r *rows) Next() bool { return r.rs.Next() }

func (r *rows) Scan(dest ...any) error {
	if err := r.rs.Scan(dest...); err != nil {
		return wrap("query", r.name, err)
	}
	normalize(dest)
	return nil
}

func (r *rows) Err() error {
	if err := r.rs.Err(); err != nil {
		return wrap("query", r.name, err)
	}
	return nil
}

func (r *rows) Close() error {
	r.rs.Close()
	return nil
}

// timeTextCodec is timestamptz that also scans into a *string ("YYYY-MM-DD
// HH:MM:SS[.ffffff]", UTC), which pgx's own codec refuses in the binary
// format. Registered per connection; other targets take pgx's plans.
type timeTextCodec struct{ pgtype.TimestamptzCodec }

func (c *timeTextCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*string); ok {
		if inner := c.TimestamptzCodec.PlanScan(m, oid, format, &pgtype.Timestamptz{}); inner != nil {
			return timeTextPlan{inner}
		}
	}
	return c.TimestamptzCodec.PlanScan(m, oid, format, target)
}

type timeTextPlan struct{ inner pgtype.ScanPlan }

func (p timeTextPlan) Scan(src []byte, dst any) error {
	if src == nil {
		return errors.New("cannot scan NULL into *string")
	}
	var ts pgtype.Timestamptz
	if err := p.inner.Scan(src, &ts); err != nil {
		return err
	}
	*dst.(*string) = ts.Time.UTC().Format(readTimeLayout)
	return nil
}

// normalize gives *any targets portable values: times as text (as SQLite
// returns them) and numerics as float64.
func normalize(dest []any) {
	for _, d := range dest {
		p, ok := d.(*any)
		if !ok {
			continue
		}
		switch v := (*p).(type) {
		case time.Time:
			*p = v.UTC().Format(readTimeLayout)
		case pgtype.Numeric:
			if f, err := v.Float64Value(); err == nil && f.Valid {
				*p = f.Float64
			} else {
				*p = nil
			}
		case int32:
			*p = int64(v)
		case int16:
			*p = int64(v)
		}
	}
}

// readTimeLayout is how a date reaches a *string or *any target.
const readTimeLayout = "2006-01-02 15:04:05.999999"

// wrap names the operation and classifies err. The message is built only
// when read, so an expected outcome (no rows) costs one small allocation.
func wrap(op, stmt string, err error) error {
	return &db.OpError{DB: "postgres", Op: op, Stmt: stmt, Err: err, Kind: kind(err)}
}

// kind is the workload sentinel for a PostgreSQL error, or nil.
func kind(err error) error {
	if errors.Is(err, pgx.ErrNoRows) || errors.Is(err, errNoRow) {
		return workload.ErrNoRows
	}
	if lostConnection(err) { // connlost.go
		return workload.ErrConnLost
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return nil
	}
	switch pe.Code {
	case codeSerialization, codeDeadlock, codeLockNotAvail:
		return workload.ErrRetry
	case codeUndefinedTab:
		return workload.ErrNoSchema
	case codeInvalidItem:
		return workload.ErrUserAbort
	}
	return nil
}

// FailClass is err's pgbench failure class (db.FailClasser): SQLSTATE
// 40001 a serialization failure, 40P01 a deadlock. A lock timeout (55P03)
// is neither: pgbench retries and classifies only those two.
func (*DB) FailClass(err error) workload.FailClass {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case codeSerialization:
			return workload.FailSerialization
		case codeDeadlock:
			return workload.FailDeadlock
		}
	}
	return workload.FailOther
}

// classify adds the workload sentinel err matches, if any, keeping its
// message.
func classify(err error) error { return db.Classify(err, kind(err)) }
