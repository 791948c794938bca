//go:build cgo

// Package duckdb runs workloads on DuckDB, the embedded analytic database:
// one file (or memory), in-process, no server, through DuckDB's official Go
// driver (github.com/duckdb/duckdb-go, cgo with prebuilt static libraries).
// It runs --mode client (values as literals), --mode prepared (statements
// prepared once per session) and --mode batched (set-oriented statements,
// prepared likewise); DuckDB has no stored procedures and in process no
// round trips to save, so procedure, block and pipeline are refused. Loads go through DuckDB's appender. docs/duckdb.md.
package duckdb

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strings"

	duck "github.com/duckdb/duckdb-go/v2"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// sqlFS holds the SQL of every workload: sql/<workload>/{tables,indexes,
// statements,checks,drop}.sql.
//
//go:embed sql
var sqlFS embed.FS

func init() { db.Register(driver{}, "duckdb") }

// goDriver is the Go driver's module path, for Info.
const goDriver = "github.com/duckdb/duckdb-go/v2"

// memory is the path of the in-memory database: duckdb::memory:.
const memory = ":memory:"

// settings are the URL query keys sledge passes on to DuckDB's
// configuration (?threads=2&memory_limit=4GB); DuckDB checks the values.
var settings = []string{"threads", "memory_limit"}

// driver opens duckdb: URLs.
type driver struct{}

// Open opens or creates the database a URL names: duckdb:///abs/path.db,
// duckdb:rel.db or duckdb::memory:.
func (driver) Open(ctx context.Context, u *url.URL) (db.DB, error) {
	path, cfg, err := parseURL(u)
	if err != nil {
		return nil, db.BadURL(err)
	}
	return open(ctx, path, cfg, db.SQLFiles{FS: sqlFS})
}

// parseURL returns the file path (or ":memory:") and the settings the URL
// names.
func parseURL(u *url.URL) (string, url.Values, error) {
	var path string
	if u.Opaque != "" {
		p, err := url.PathUnescape(u.Opaque)
		if err != nil {
			return "", nil, fmt.Errorf("duckdb URL: bad path %q: %w", u.Opaque, err)
		}
		path = p
	} else {
		path = u.Host + u.Path // duckdb://./rel.db: host ".", path "/rel.db"
	}
	if path == "" {
		return "", nil, errors.New("duckdb URL has no file path: use duckdb:///path/to/file.db, duckdb:rel.db or duckdb::memory:")
	}
	if strings.ContainsAny(path, "?#") {
		// The Go driver reads a '?' in its DSN as the start of settings.
		return "", nil, fmt.Errorf("duckdb URL path %q has a ? or #: choose a file name without them", path)
	}
	if strings.HasPrefix(path, ":") && path != memory {
		return "", nil, fmt.Errorf("duckdb URL path %q: the in-memory database is duckdb::memory:", path)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", nil, fmt.Errorf("duckdb URL: bad query %q: %w", db.RedactQuery(u.RawQuery), db.RedactQueryErr(err))
	}
	var unknown []string
	for k, vs := range q {
		if !slices.Contains(settings, k) {
			unknown = append(unknown, k)
			continue
		}
		if len(vs) != 1 || vs[0] == "" {
			return "", nil, fmt.Errorf("duckdb URL: give %s once, with a value", k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return "", nil, fmt.Errorf("duckdb URL: unknown parameter %s: known are %s",
			strings.Join(unknown, ", "), strings.Join(settings, ", "))
	}
	return path, q, nil
}

// checkPath makes sure the database file can be written, so that a bad path
// is one clear line at Open instead of DuckDB's message.
func checkPath(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("duckdb: directory %s does not exist: create it or choose another path", dir)
	case err != nil:
		return fmt.Errorf("duckdb: %w", err)
	case !st.IsDir():
		return fmt.Errorf("duckdb: %s is not a directory", dir)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("duckdb: %s is a directory: give a file path such as %s", path, filepath.Join(path, "sledge.db"))
	}
	// DuckDB writes its write-ahead log (<file>.wal) next to the file.
	probe, err := os.CreateTemp(dir, ".sledge-probe-*")
	if err != nil {
		return fmt.Errorf("duckdb: directory %s is not writable (DuckDB writes its .wal file there)", dir)
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// DB is an open DuckDB database: one DuckDB instance, shared by every
// session of this process.
type DB struct {
	path  string // ":memory:" for the in-memory database
	pool  *sql.DB
	files db.SQLFiles

	named    db.NamedCache    // workload -> statement -> SQL, parsed once
	repeated db.RepeatedCache // workload -> statements with repeated groups
	tables   tableCache       // table -> column kinds, for the appender
}

var _ db.DB = (*DB)(nil)

func open(ctx context.Context, path string, cfg url.Values, files db.SQLFiles) (*DB, error) {
	if path != memory {
		if err := checkPath(path); err != nil {
			return nil, err
		}
	}
	dsn := path
	if len(cfg) > 0 {
		dsn += "?" + cfg.Encode()
	}
	conn, err := duck.NewConnector(dsn, nil)
	if err != nil {
		if strings.Contains(err.Error(), "could not set invalid or local option") {
			// DuckDB refused a setting of the URL: bad input.
			return nil, db.BadURL(fmt.Errorf("duckdb URL: DuckDB refuses the setting %s", settingOf(err, cfg)))
		}
		return nil, openError(path, err)
	}
	d := &DB{path: path, pool: sql.OpenDB(conn), files: files}
	d.pool.SetMaxIdleConns(8)
	if err := d.pool.PingContext(ctx); err != nil {
		d.pool.Close()
		return nil, openError(path, err)
	}
	return d, nil
}

// settingOf names the setting of cfg that err quotes (name=value).
func settingOf(err error, cfg url.Values) string {
	for k, vs := range cfg {
		for _, v := range vs {
			if strings.Contains(err.Error(), k+"="+v) {
				return fmt.Sprintf("%s=%s", k, v)
			}
		}
	}
	return cfg.Encode()
}

// lockHolder finds the process DuckDB names in its lock error.
var lockHolder = regexp.MustCompile(`\(PID (\d+)\)`)

// openError is one line for what DuckDB says when it cannot open a file:
// above all, another process holding it (DuckDB lets one process write a
// file; --workers and a second sledge on the same file meet this).
func openError(path string, err error) error {
	msg := err.Error()
	if strings.Contains(msg, "Could not set lock on file") || strings.Contains(msg, "Conflicting lock") {
		who := "another process"
		if m := lockHolder.FindStringSubmatch(msg); m != nil {
			who = "process " + m[1]
		}
		return fmt.Errorf("duckdb: %s is open in %s: DuckDB lets one process open a database file at a time; stop that process or use another file", path, who)
	}
	if strings.Contains(msg, "not a valid DuckDB database file") || strings.Contains(msg, "is not a valid DuckDB") {
		return fmt.Errorf("duckdb: %s is not a DuckDB database file: choose another path", path)
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return fmt.Errorf("duckdb: open %s: %s", path, msg)
}

// Memory reports whether the database lives in memory only, for as long
// as this process: nothing built in it outlives the command.
func (d *DB) Memory() bool { return d.path == memory }

// Supports says which modes DuckDB can run: client, prepared and batched
// (set-oriented statements, prepared likewise: fewer statements to plan,
// which is most of what a statement costs DuckDB).
func (d *DB) Supports(w string, m workload.Mode) error { return db.EmbeddedSupports("duckdb", m) }

// DefaultMode is prepared: what an application embedding DuckDB does.
func (d *DB) DefaultMode() workload.Mode { return workload.ModePrepared }

// Script runs each statement of sql/<w>/<name>.sql on one connection.
func (d *DB) Script(ctx context.Context, w, name string) error {
	stmts, ok, err := d.files.Script(w, name)
	if err != nil {
		return fmt.Errorf("duckdb: %w", err)
	}
	if !ok {
		return nil
	}
	if err := db.ExecScript(ctx, d.pool, "duckdb", w, name, stmts, classify); err != nil {
		return err
	}
	if name == "drop" || name == "tables" {
		d.tables.reset()
	}
	return nil
}

// statements returns the named statements of workload w, parsed once.
func (d *DB) statements(w string) (map[string]string, error) {
	return d.named.Get(d.files, "duckdb", w)
}

// Counters: DuckDB keeps no transaction counters; the engine counts on the
// client.
func (d *DB) Counters(ctx context.Context) (db.Counters, bool, error) {
	return db.Counters{}, false, nil
}

// Info reports DuckDB's version, the Go driver's, and the settings that
// matter for performance.
func (d *DB) Info(ctx context.Context) (db.Info, error) {
	var version, threads, mem string
	err := d.pool.QueryRowContext(ctx,
		"SELECT version(), current_setting('threads')::VARCHAR, current_setting('memory_limit')::VARCHAR").
		Scan(&version, &threads, &mem)
	if err != nil {
		return db.Info{}, fmt.Errorf("duckdb: info: %w", err)
	}
	storage := "file"
	if d.Memory() {
		storage = "memory"
	}
	return db.Info{
		Driver:    "duckdb",
		Version:   version + " (" + goDriverVersion() + ")",
		Transport: "embedded",
		Settings: map[string]string{
			"driver":       goDriverVersion(),
			"threads":      threads,
			"memory_limit": mem,
			"storage":      storage,
		},
	}, nil
}

// goDriverVersion is the Go driver's module path and version.
func goDriverVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == goDriver {
				if m.Replace != nil {
					m = m.Replace
				}
				return goDriver + " " + m.Version
			}
		}
	}
	return goDriver
}

// TableNames lists the database's tables (db.TableLister).
func (d *DB) TableNames(ctx context.Context) ([]string, error) {
	rows, err := d.pool.QueryContext(ctx, "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' ORDER BY table_name")
	if err != nil {
		return nil, fmt.Errorf("duckdb: list tables: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("duckdb: list tables: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// Close closes the pool, and with it the DuckDB instance (a checkpoint
// writes the log into the file).
func (d *DB) Close() error { return d.pool.Close() }

// Transport: DuckDB runs in the process; there is no other way to reach it.
func (driver) Transport(*url.URL) string { return "embedded" }

// UnixURL and TCPURL are never asked for an embedded database (compare
// refuses other transports first); they return u unchanged.
func (driver) UnixURL(u *url.URL, _ string) *url.URL { return u }

func (driver) TCPURL(u *url.URL, _ string, _ int) *url.URL { return u }

var (
	_ db.Transporter = driver{}
	_ db.TableLister = (*DB)(nil)
)
