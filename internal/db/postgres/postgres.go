// Package postgres runs workloads on PostgreSQL (and wire-compatible
// servers) through pgx v5, one pgx.Conn per virtual user:
//
//   - procedure (default): one SELECT of a PL/pgSQL function per
//     transaction (HammerDB's default), or one CALL of a PROCEDURE with the
//     URL parameter routines=procedures (HammerDB pg_storedprocs), as a
//     cached prepared statement;
//   - client: every statement its own round trip, values written into the
//     text by pgx (simple protocol: the server parses every statement);
//   - prepared: every statement its own round trip as a server-side
//     prepared statement, prepared once per connection (pgx
//     QueryExecModeCacheStatement);
//   - block: one DO block per transaction made of the function's own body,
//     its arguments written in as literals, parsed and compiled every time
//     (block.go).
//   - batched: set-oriented statements (IN lists, multi-row INSERT, UPDATE …
//     FROM VALUES), prepared like prepared mode's, one per repeat count of
//     their {{…}} groups (db.Repeated).
//
// The build loads through COPY (pgx CopyFrom) on a few connections of its
// own, then creates the primary keys, the secondary indexes and the
// routines. docs/databases.md is the user's guide.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// sqlFS holds the SQL of every workload: sql/<workload>/{tables,indexes,
// procedures,statements,checks,drop}.sql.
//
//go:embed sql
var sqlFS embed.FS

func init() { db.Register(driver{}, "postgres", "postgresql") }

// connectTimeout is added to URLs without connect_timeout, so that an
// unreachable host fails in seconds, not after the kernel's TCP timeout.
const connectTimeout = "5"

// Routines is how procedure mode calls the server-side transactions.
type Routines int

const (
	// Functions are called with SELECT neword($1,…): HammerDB's default,
	// any PostgreSQL version.
	Functions Routines = iota
	// Procedures are called with CALL neword($1,…, NULL), the result in an
	// INOUT argument: PostgreSQL 11 and later (HammerDB pg_storedprocs).
	Procedures
)

func (r Routines) String() string {
	if r == Procedures {
		return "procedures"
	}
	return "functions"
}

// prokind is pg_proc.prokind of the routines.
func (r Routines) prokind() string {
	if r == Procedures {
		return "p"
	}
	return "f"
}

type driver struct{}

// PasswordEnv: pgx reads PGPASSWORD when the URL has no password, as libpq does.
func (driver) PasswordEnv() string { return "PGPASSWORD" }

// TakesIO: sessions wait as the io= option says (db.IOOption).
func (driver) TakesIO() bool { return true }

// Open parses the URL; it does not connect, so build can create a missing
// database first (EnsureDatabase).
func (driver) Open(ctx context.Context, u *url.URL) (db.DB, error) {
	fastPath, wire := true, true
	if v := u.Query()["api"]; len(v) > 0 {
		switch {
		case len(v) == 1 && v[0] == "wire":
		case len(v) == 1 && v[0] == "pgconn":
			wire = false
		case len(v) == 1 && v[0] == "pgx":
			fastPath, wire = false, false
		default:
			return nil, db.BadURL(fmt.Errorf("postgres URL: bad value %q for api: use wire, pgconn or pgx", strings.Join(v, ",")))
		}
	}
	cfg, routines, err := parseURL(u)
	if err != nil {
		return nil, db.BadURL(err)
	}
	return &DB{
		cfg:      cfg,
		routines: routines,
		files:    db.SQLFiles{FS: sqlFS},
		fast:     fastPath,
		wire:     wire,
	}, nil
}

// parseURL returns pgx's configuration and sledge's own routines= choice,
// which pgx must not see (it would send it to the server as a setting).
func parseURL(u *url.URL) (*pgx.ConnConfig, Routines, error) {
	v := *u
	q, err := url.ParseQuery(v.RawQuery)
	if err != nil {
		return nil, 0, fmt.Errorf("postgres URL: bad query %q: %w", db.RedactQuery(v.RawQuery), db.RedactQueryErr(err))
	}
	routines := Functions
	if r, ok := q["routines"]; ok {
		switch {
		case len(r) == 1 && strings.EqualFold(r[0], "functions"):
		case len(r) == 1 && strings.EqualFold(r[0], "procedures"):
			routines = Procedures
		default:
			return nil, 0, fmt.Errorf("postgres URL: bad value %q for routines: use functions or procedures", strings.Join(r, ","))
		}
		q.Del("routines")
	}
	q.Del("api") // read by Open
	io, err := db.IOOption(q, "postgres")
	if err != nil {
		return nil, 0, err
	}
	if q.Get("connect_timeout") == "" {
		q.Set("connect_timeout", connectTimeout)
	}
	v.RawQuery = q.Encode()
	cfg, err := pgx.ParseConfig(v.String())
	if err != nil {
		// pgx's message may quote the URL: say what is wrong without it.
		return nil, 0, fmt.Errorf("postgres URL %s cannot be used: %s", db.Redact(u.String()), redactErr(err, u))
	}
	countDials(cfg, io)
	return cfg, routines, nil
}

// redactErr is err's text without the URL's password.
func redactErr(err error, u *url.URL) string {
	s := err.Error()
	if u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			s = strings.ReplaceAll(s, pw, "REDACTED")
		}
	}
	// pgx masks password= in a keyword/value string it quotes, not passwd=.
	return db.RedactQueryErr(errors.New(db.Redact(s))).Error()
}

// DB is a PostgreSQL database named by a URL.
type DB struct {
	cfg      *pgx.ConnConfig
	routines Routines
	files    db.SQLFiles

	// admin holds idle connections for Load, Script, Info and Counters;
	// build workers each take one, so the pool grows to the number of
	// concurrent callers and no further.
	adminMu sync.Mutex
	admin   []*pgx.Conn
	closed  bool

	named    db.NamedCache    // workload -> statement -> SQL, parsed once
	repeated db.RepeatedCache // workload -> statements with repeated groups

	// fast runs virtual users' named statements on pgconn directly
	// (fast.go); URL option api=pgx turns it off, for comparison.
	fast bool
	// wire has procedure, prepared and client sessions speak the protocol
	// themselves once connected (pgwire.go); api=pgconn or api=pgx turn it
	// off, for comparison.
	wire bool
}

var (
	_ db.DB      = (*DB)(nil)
	_ db.Creator = (*DB)(nil)
)

// where names the server for messages: host:port or the socket file.
func (d *DB) where() string {
	if d.transport() == "unix" {
		return fmt.Sprintf("%s/.s.PGSQL.%d", d.cfg.Host, d.cfg.Port)
	}
	return fmt.Sprintf("%s:%d", d.cfg.Host, d.cfg.Port)
}

func (d *DB) transport() string {
	if strings.HasPrefix(d.cfg.Host, "/") {
		return "unix"
	}
	return "tcp"
}

// connect opens a connection in the given mode; errors are one line.
func (d *DB) connect(ctx context.Context, cfg *pgx.ConnConfig, mode pgx.QueryExecMode) (*pgx.Conn, error) {
	cfg = cfg.Copy()
	cfg.DefaultQueryExecMode = mode
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, d.connectErr(cfg, err)
	}
	c.TypeMap().RegisterType(&pgtype.Type{Name: "timestamptz", OID: pgtype.TimestamptzOID, Codec: &timeTextCodec{}})
	return c, nil
}

// connectErr turns a failed connection into one line that says what to do,
// never with the password (pgx's own text carries none either).
func (d *DB) connectErr(cfg *pgx.ConnConfig, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01", "28000":
			return &connError{msg: fmt.Sprintf("password authentication failed for user %q at %s: check the user and password in the URL", cfg.User, d.where()), err: err}
		case "3D000":
			return &connError{msg: fmt.Sprintf("database %q does not exist at %s: `sledge build` creates it", cfg.Database, d.where()), err: err}
		case "53300":
			return &connError{msg: fmt.Sprintf("too many connections to %s: raise max_connections or use fewer --vus", d.where()), err: err}
		}
		return &connError{msg: fmt.Sprintf("cannot connect to PostgreSQL at %s: %s (SQLSTATE %s)", d.where(), pe.Message, pe.Code), err: err}
	}
	var reason string
	switch {
	case errors.Is(err, errConnRefused):
		reason = "connection refused"
	case errors.Is(err, errNoSocket):
		reason = "no such socket (is the server running, and is host= its unix_socket_directories?)"
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		reason = "timed out"
	case errors.Is(err, context.Canceled):
		return &connError{msg: "connect to PostgreSQL: interrupted", err: err}
	default:
		reason = lastPart(err.Error())
	}
	return &connError{msg: fmt.Sprintf("cannot reach PostgreSQL at %s: %s", d.where(), reason), err: err}
}

// connError is a failed connection: a message for the user, and the
// original error for errors.Is/As.
type connError struct {
	msg string
	err error
}

func (e *connError) Error() string { return "postgres: " + e.msg }
func (e *connError) Unwrap() error { return e.err }

// lastPart keeps the end of a pgconn error chain ("failed to connect to
// …: dial error: x"), the part that says what happened.
func lastPart(s string) string {
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		return s[i+2:]
	}
	return s
}

// EnsureDatabase implements db.Creator: when the URL's database does not
// exist, it connects to the postgres maintenance database as the same user
// and creates it.
func (d *DB) EnsureDatabase(ctx context.Context) error {
	c, err := d.connect(ctx, d.cfg, pgx.QueryExecModeSimpleProtocol)
	if err == nil {
		return c.Close(ctx)
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "3D000" {
		return err
	}
	var admin *pgx.Conn
	for _, maint := range []string{"postgres", "template1"} {
		cfg := d.cfg.Copy()
		cfg.Database = maint
		if admin, err = d.connect(ctx, cfg, pgx.QueryExecModeSimpleProtocol); err == nil {
			break
		}
		if !errors.As(err, &pe) || pe.Code != "3D000" {
			return err
		}
	}
	if admin == nil {
		return err
	}
	defer admin.Close(context.WithoutCancel(ctx))
	_, err = admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{d.cfg.Database}.Sanitize())
	if errors.As(err, &pe) {
		switch pe.Code {
		case "42P04": // created meanwhile by another build
			return nil
		case "42501":
			return fmt.Errorf("postgres: user %q may not create database %q: create it as a superuser, or grant CREATEDB", d.cfg.User, d.cfg.Database)
		}
	}
	if err != nil {
		return fmt.Errorf("postgres: create database %q: %w", d.cfg.Database, classify(err))
	}
	return nil
}

// getAdmin takes an idle admin connection or opens one.
func (d *DB) getAdmin(ctx context.Context) (*pgx.Conn, error) {
	d.adminMu.Lock()
	if d.closed {
		d.adminMu.Unlock()
		return nil, errors.New("postgres: database is closed")
	}
	if n := len(d.admin); n > 0 {
		c := d.admin[n-1]
		d.admin = d.admin[:n-1]
		d.adminMu.Unlock()
		return c, nil
	}
	d.adminMu.Unlock()
	return d.connect(ctx, d.cfg, pgx.QueryExecModeCacheStatement)
}

// putAdmin gives a connection back; a broken one, or one whose state an
// error may have left dirty, is closed instead.
func (d *DB) putAdmin(c *pgx.Conn, err error) {
	d.adminMu.Lock()
	if d.closed || err != nil || c.IsClosed() || c.PgConn().TxStatus() != 'I' {
		var stale []*pgx.Conn
		if lostConnection(err) || c.IsClosed() {
			// The server went away (a restart): the idle ones are gone too.
			stale, d.admin = d.admin, nil
		}
		d.adminMu.Unlock()
		_ = c.Close(context.Background())
		for _, s := range stale {
			_ = s.Close(context.Background())
		}
		return
	}
	d.admin = append(d.admin, c)
	d.adminMu.Unlock()
}

// Supports: every mode.
func (d *DB) Supports(w string, m workload.Mode) error {
	switch m {
	case workload.ModeProcedure, workload.ModeClient, workload.ModePrepared, workload.ModeBatched, workload.ModePipeline, workload.ModeBlock:
		return nil
	}
	return fmt.Errorf("postgres: unknown mode %v; use %s", m, workload.ModeList())
}

// DefaultMode is procedure: the transaction runs inside the server, as
// HammerDB runs PostgreSQL by default.
func (d *DB) DefaultMode() workload.Mode { return workload.ModeProcedure }

// Script runs each statement of sql/<w>/<name>.sql on one connection, in
// order (SET lines apply to the statements after them).
func (d *DB) Script(ctx context.Context, w, name string) (err error) {
	stmts, ok, err := d.files.Script(w, name)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if !ok {
		return nil
	}
	c, err := d.getAdmin(ctx)
	if err != nil {
		return err
	}
	// Session settings of the script (maintenance_work_mem) die with it.
	defer func() { d.putAdmin(c, errors.New("discard")) }()
	for i, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			return fmt.Errorf("postgres: %s/%s.sql statement %d (%s): %w", w, name, i+1, db.FirstLine(s), classify(err))
		}
	}
	return nil
}

// statements returns the named statements of workload w, parsed once.
func (d *DB) statements(w string) (map[string]string, error) {
	return d.named.Get(d.files, "postgres", w)
}

// Counters reads the benchmark database's commits and rollbacks from
// pg_stat_database. Backends publish their counts when they go idle, at most
// once a second, so a value lags the sessions that did not publish (the
// engine has the VUs' sessions publish at the edges of the measured
// interval: publish.go). This session publishes first, so what it ran
// before, the schema checks and the last reading, counts before this one.
// Each statement is a transaction of its own, whose statistics snapshot is
// fresh.
func (d *DB) Counters(ctx context.Context) (db.Counters, bool, error) {
	c, err := d.getAdmin(ctx)
	if err != nil {
		return db.Counters{}, false, err
	}
	var out db.Counters
	if serverMajor(c.PgConn()) >= publishVersion {
		_, err = c.Exec(ctx, publishSQL)
	}
	if err == nil {
		err = c.QueryRow(ctx, `SELECT xact_commit, xact_rollback FROM pg_stat_database
WHERE datname = current_database()`).Scan(&out.Commits, &out.Rollbacks)
	}
	d.putAdmin(c, err)
	if err != nil {
		return db.Counters{}, false, fmt.Errorf("postgres: counters: %w", classify(err))
	}
	return out, true, nil
}

// infoSettings are the server settings that decide how fast a benchmark
// runs; Info reports them for the job record.
var infoSettings = []string{"shared_buffers", "synchronous_commit", "fsync", "max_connections",
	"wal_buffers", "effective_cache_size", "work_mem", "checkpoint_timeout", "max_wal_size"}

// Info reports the server version, the transport and the settings above.
func (d *DB) Info(ctx context.Context) (db.Info, error) {
	c, err := d.getAdmin(ctx)
	if err != nil {
		return db.Info{}, err
	}
	info := db.Info{Driver: "postgres", Transport: d.transport(), Settings: map[string]string{}}
	var version, full string
	err = c.QueryRow(ctx, "SELECT current_setting('server_version'), version()").Scan(&version, &full)
	if err == nil {
		info.Version = "PostgreSQL " + version
		info.Settings["version"] = full
		var rows pgx.Rows
		rows, err = c.Query(ctx, "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY($1)", infoSettings)
		if err == nil {
			var k, v string
			_, err = pgx.ForEachRow(rows, []any{&k, &v}, func() error {
				info.Settings[k] = v
				return nil
			})
		}
	}
	d.putAdmin(c, err)
	if err != nil {
		return db.Info{}, fmt.Errorf("postgres: info: %w", classify(err))
	}
	info.Settings["routines"] = d.routines.String()
	return info, nil
}

// Close closes the idle admin connections. VU sessions close themselves.
func (d *DB) Close() error {
	d.adminMu.Lock()
	conns := d.admin
	d.admin, d.closed = nil, true
	d.adminMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	for _, c := range conns {
		errs = append(errs, c.Close(ctx))
	}
	return errors.Join(errs...)
}
