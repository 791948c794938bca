// Package sqlite runs workloads on SQLite, the embedded default database:
// one file, in-process, no server. It has no stored procedures and no round
// trips, so it supports --mode client (values as literals, every statement
// parsed each time), --mode prepared (prepared once per connection) and
// --mode batched (set-oriented statements, prepared likewise: fewer
// statements to step, which is what a call costs in process).
//
// The Go driver is chosen at build time: github.com/mattn/go-sqlite3 (cgo,
// measured faster) wherever cgo can build, else modernc.org/sqlite (pure Go;
// -tags sqlite_modernc forces it). Both store and return the same values;
// Info says which one ran.
package sqlite

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// sqlFS holds the SQL of every workload: sql/<workload>/{tables,indexes,
// statements,checks,drop}.sql.
//
//go:embed sql
var sqlFS embed.FS

func init() { db.Register(driver{}, "sqlite", "sqlite3") }

// setting is one per-connection PRAGMA; values lists the words it takes
// (nil: an integer).
type setting struct {
	name, value string
	values      []string
}

// tuning is what every connection runs when it opens, in this order: a
// benchmark configuration, not SQLite's conservative defaults. The URL's
// query may override any of these (?synchronous=FULL&cache_size=-200000).
// docs/sqlite.md explains each choice.
var tuning = []setting{
	// First, so that the PRAGMAs below wait for a lock instead of failing.
	// A writer that finds the database locked by another process waits up
	// to 60s rather than failing at once with SQLITE_BUSY.
	{name: "busy_timeout", value: "60000"},
	// Only set when the URL asks for it; it must come before the switch to
	// WAL and only takes effect on a new, empty file.
	{name: "page_size"},
	// Write-ahead log: readers never block the writer and the writer never
	// blocks readers; a commit appends to the log instead of rewriting pages.
	{name: "journal_mode", value: "WAL", values: []string{"WAL", "DELETE", "TRUNCATE", "PERSIST", "MEMORY", "OFF"}},
	// In WAL mode NORMAL syncs the log at checkpoints, not at every commit:
	// the database can never be corrupted, but a power loss (not a crash of
	// sledge) may lose the last transactions. FULL makes every commit
	// durable at the price of an fsync each.
	{name: "synchronous", value: "NORMAL", values: []string{"OFF", "NORMAL", "FULL", "EXTRA", "0", "1", "2", "3"}},
	// 64 MiB of page cache per connection (negative means KiB).
	{name: "cache_size", value: "-65536"},
	// Sorts and temporary indexes in memory, not in temp files.
	{name: "temp_store", value: "MEMORY", values: []string{"MEMORY", "FILE", "DEFAULT", "0", "1", "2"}},
	// Read pages through a 1 GiB memory map: readers share the OS page cache
	// instead of copying pages into each connection's cache.
	{name: "mmap_size", value: "1073741824"},
	// The benchmark schemas declare no foreign keys; say so explicitly.
	{name: "foreign_keys", value: "OFF", values: []string{"OFF", "ON", "0", "1"}},
	// SQLite's default: checkpoint when the log reaches 1000 pages, so the
	// WAL file stays small during a run.
	{name: "wal_autocheckpoint", value: "1000"},
}

// loadSynchronous is the load connection's synchronous setting: a failed
// build is redone from scratch, so the load never waits for the disk.
const loadSynchronous = "OFF"

// settingNames is the list of URL query keys, for error messages.
func settingNames() []string {
	names := make([]string, 0, len(tuning))
	for _, s := range tuning {
		names = append(names, s.name)
	}
	sort.Strings(names)
	return names
}

// driver opens sqlite: URLs.
type driver struct{}

// Open opens or creates the database file a URL names:
// sqlite:///abs/path/file.db, sqlite:relative/file.db or sqlite://./rel.db.
func (driver) Open(ctx context.Context, u *url.URL) (db.DB, error) {
	path, set, err := parseURL(u)
	if err != nil {
		return nil, db.BadURL(err)
	}
	return open(ctx, path, set, db.SQLFiles{FS: sqlFS})
}

// parseURL returns the file path and the tuning with the URL's overrides.
func parseURL(u *url.URL) (string, []setting, error) {
	var path string
	if u.Opaque != "" {
		p, err := url.PathUnescape(u.Opaque)
		if err != nil {
			return "", nil, fmt.Errorf("sqlite URL: bad path %q: %w", u.Opaque, err)
		}
		path = p
	} else {
		path = u.Host + u.Path // sqlite://./rel.db: host ".", path "/rel.db"
	}
	if path == "" {
		return "", nil, errors.New("sqlite URL has no file path: use sqlite:///path/to/file.db")
	}
	if path == ":memory:" || strings.HasPrefix(path, "file:") {
		return "", nil, fmt.Errorf("sqlite URL path %q is not a file: use sqlite:///path/to/file.db (every connection of an in-memory database would see its own)", path)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", nil, fmt.Errorf("sqlite URL: bad query %q: %w", db.RedactQuery(u.RawQuery), db.RedactQueryErr(err))
	}
	set := slices.Clone(tuning)
	var unknown []string
	for k, vs := range q {
		i := slices.IndexFunc(set, func(s setting) bool { return strings.EqualFold(s.name, k) })
		if i < 0 {
			unknown = append(unknown, k)
			continue
		}
		if len(vs) != 1 || !validValue(set[i], vs[0]) {
			want := "an integer"
			if set[i].values != nil {
				want = "one of " + strings.Join(set[i].values, ", ")
			}
			return "", nil, fmt.Errorf("sqlite URL: bad value %q for %s: use %s", strings.Join(vs, ","), k, want)
		}
		set[i].value = vs[0]
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return "", nil, fmt.Errorf("sqlite URL: unknown parameter %s: known are %s",
			strings.Join(unknown, ", "), strings.Join(settingNames(), ", "))
	}
	return path, set, nil
}

// validValue accepts the words or the integer a setting takes: SQLite
// ignores a bad PRAGMA value silently, and nothing else may reach the
// "PRAGMA name = value" text.
func validValue(s setting, v string) bool {
	if s.values != nil {
		return slices.ContainsFunc(s.values, func(w string) bool { return strings.EqualFold(w, v) })
	}
	_, err := strconv.ParseInt(v, 10, 64)
	return err == nil
}

// checkPath makes sure the database file can be written, so that a bad path
// is one clear line at Open instead of an obscure error mid-build. It
// creates the file when missing.
func checkPath(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("sqlite: directory %s does not exist: create it or choose another path", dir)
	case err != nil:
		return fmt.Errorf("sqlite: %w", err)
	case !st.IsDir():
		return fmt.Errorf("sqlite: %s is not a directory", dir)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("sqlite: %s is a directory: give a file path such as %s", path, filepath.Join(path, "sledge.db"))
	}
	// WAL mode creates <file>-wal and <file>-shm next to the database.
	probe, err := os.CreateTemp(dir, ".sledge-probe-*")
	if err != nil {
		return fmt.Errorf("sqlite: directory %s is not writable (SQLite creates its -wal and -shm files there)", dir)
	}
	probe.Close()
	os.Remove(probe.Name())
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("sqlite: %s is not writable", path)
		}
		return fmt.Errorf("sqlite: %w", err)
	}
	return f.Close()
}

// DB is an open SQLite database file.
type DB struct {
	path  string
	set   []setting
	pool  *sql.DB // VU sessions, scripts, Info: no pool limit
	files db.SQLFiles

	// writer is SQLite's one write lock, mirrored in Go: writing
	// transactions and loads take it before BEGIN IMMEDIATE, so writers of
	// this process queue on a channel (microseconds) instead of polling the
	// file lock in the busy handler (sleeps of up to 100ms). busy_timeout
	// still covers writers in other processes.
	writer chan struct{}

	load loader

	named    db.NamedCache    // workload -> statement -> SQL, parsed once
	repeated db.RepeatedCache // workload -> statements with repeated groups
}

var _ db.DB = (*DB)(nil)

func open(ctx context.Context, path string, set []setting, files db.SQLFiles) (*DB, error) {
	if err := checkPath(path); err != nil {
		return nil, err
	}
	d := &DB{
		path:   path,
		set:    set,
		files:  files,
		writer: make(chan struct{}, 1),
	}
	d.pool = sql.OpenDB(newConnector(path, set))
	d.pool.SetMaxIdleConns(8)
	if err := d.check(ctx); err != nil {
		d.pool.Close()
		return nil, err
	}
	return d, nil
}

// check opens a first connection, which applies the tuning, and makes sure
// the journal mode took: SQLite keeps the old mode without an error when it
// cannot switch (WAL needs shared memory, which some file systems lack).
func (d *DB) check(ctx context.Context) error {
	var mode string
	if err := d.pool.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", d.path, err)
	}
	for _, s := range d.set {
		if s.name == "journal_mode" && !strings.EqualFold(s.value, mode) {
			return fmt.Errorf("sqlite: open %s: journal_mode is %s, not %s: the file system may not support it", d.path, mode, s.value)
		}
	}
	return nil
}

// connector opens driver connections and runs the tuning PRAGMAs on each,
// in order, the same way for both Go drivers (a connect hook of our own: the
// DSN is only the file).
type connector struct {
	drv     sqldriver.Driver
	dsn     string
	pragmas []string
}

func newConnector(path string, set []setting) *connector {
	c := &connector{drv: newDriver(), dsn: fileURI(path)}
	for _, s := range set {
		if s.value != "" {
			c.pragmas = append(c.pragmas, "PRAGMA "+s.name+" = "+s.value)
		}
	}
	return c
}

// OpenFile opens the SQLite file at path with this build's Go driver, running
// the given PRAGMAs on every new connection, in order. For sledge's own files
// (the job store) that need SQLite but not a benchmark database.
func OpenFile(path string, pragmas ...string) *sql.DB {
	return sql.OpenDB(&connector{drv: newDriver(), dsn: fileURI(path), pragmas: pragmas})
}

// fileURI makes a SQLite URI filename, so that '?', '#' and '%' in a path
// are taken literally by both drivers.
func fileURI(path string) string {
	return "file:" + (&url.URL{Path: filepath.ToSlash(filepath.Clean(path))}).EscapedPath()
}

func (c *connector) Connect(ctx context.Context) (sqldriver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	ex, ok := conn.(sqldriver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, errors.New("sqlite driver cannot execute statements directly")
	}
	for _, p := range c.pragmas {
		if _, err := ex.ExecContext(ctx, p, nil); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return conn, nil
}

func (c *connector) Driver() sqldriver.Driver { return c.drv }

// lockWriter takes the process-wide write lock, or gives up with ctx.
func (d *DB) lockWriter(ctx context.Context) error {
	select {
	case d.writer <- struct{}{}:
		return nil
	default:
	}
	select {
	case d.writer <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *DB) unlockWriter() { <-d.writer }

// Supports says which modes SQLite can run: client, prepared and batched
// (in process, batched saves no round trips, but SQLite steps fewer
// statements, each over many rows).
func (d *DB) Supports(w string, m workload.Mode) error { return db.EmbeddedSupports("sqlite", m) }

// DefaultMode is prepared: what an application embedding SQLite does.
func (d *DB) DefaultMode() workload.Mode { return workload.ModePrepared }

// Script runs each statement of sql/<w>/<name>.sql on one connection.
func (d *DB) Script(ctx context.Context, w, name string) error {
	stmts, ok, err := d.files.Script(w, name)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if !ok {
		return nil
	}
	if err := db.ExecScript(ctx, d.pool, "sqlite", w, name, stmts, classify); err != nil {
		return err
	}
	return nil
}

// statements returns the named statements of workload w, parsed once.
func (d *DB) statements(w string) (map[string]string, error) {
	return d.named.Get(d.files, "sqlite", w)
}

// Counters: SQLite keeps no transaction counters; the engine counts on the
// client.
func (d *DB) Counters(ctx context.Context) (db.Counters, bool, error) {
	return db.Counters{}, false, nil
}

// Info reports the SQLite library and Go driver versions and the settings a
// connection actually runs with.
func (d *DB) Info(ctx context.Context) (db.Info, error) {
	c, err := d.pool.Conn(ctx)
	if err != nil {
		return db.Info{}, fmt.Errorf("sqlite: info: %w", err)
	}
	defer c.Close()
	var version string
	if err := c.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&version); err != nil {
		return db.Info{}, fmt.Errorf("sqlite: info: %w", err)
	}
	info := db.Info{
		Driver:    "sqlite",
		Version:   version + " (" + goDriverVersion() + ")",
		Transport: "embedded",
		Settings:  map[string]string{"driver": goDriverVersion()},
	}
	for _, p := range []string{"journal_mode", "synchronous", "cache_size", "mmap_size", "busy_timeout",
		"page_size", "temp_store", "foreign_keys", "wal_autocheckpoint"} {
		var v string
		if err := c.QueryRowContext(ctx, "PRAGMA "+p).Scan(&v); err != nil {
			return db.Info{}, fmt.Errorf("sqlite: info: PRAGMA %s: %w", p, err)
		}
		info.Settings[p] = pragmaName(p, v)
	}
	return info, nil
}

// pragmaName spells the enumerated PRAGMAs as their names, not numbers.
func pragmaName(p, v string) string {
	names := map[string][]string{
		"synchronous": {"OFF", "NORMAL", "FULL", "EXTRA"},
		"temp_store":  {"DEFAULT", "FILE", "MEMORY"},
	}[p]
	if len(v) == 1 && v[0] >= '0' && int(v[0]-'0') < len(names) {
		return names[v[0]-'0']
	}
	if p == "journal_mode" {
		return strings.ToUpper(v)
	}
	return v
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

// Close closes the load connection and the pool. Sessions still open are
// closed when they are released.
func (d *DB) Close() error {
	err := d.load.close()
	return errors.Join(err, d.pool.Close())
}
