// Package mysql runs workloads on MariaDB and MySQL (and wire-compatible
// servers) over TCP or a unix socket: virtual users in procedure and
// prepared modes through sledge's own client protocol (binproto.go,
// binconn.go), everything else through github.com/go-sql-driver/mysql,
// in these modes:
//
//   - procedure (default): one CALL of a stored procedure per transaction,
//     which runs the whole transaction inside the server (sql/tpcc/
//     procedures.sql); one round trip, the CALL a prepared statement.
//   - client: every statement its own round trip, the driver writing the
//     values into the SQL text (interpolateParams); the server parses and
//     plans each one.
//   - prepared: every statement its own round trip as a server-side prepared
//     statement, prepared once per session.
//   - block (MariaDB): one BEGIN NOT ATOMIC compound statement per
//     transaction made of the procedure's own body, its arguments written
//     in as literals, parsed every time (block.go).
//   - batched: set-oriented statements (IN lists, multi-row INSERT, UPDATE
//     joined to a derived table of the rows), prepared like prepared mode's,
//     one per repeat count of their {{…}} groups (db.Repeated).
//
// SQL lives in sql/<workload>/*.sql, valid on MySQL 8 and MariaDB; files in
// sql/mariadb/<workload>/ override them when the server is MariaDB.
package mysql

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// sqlFS holds the SQL of every workload: sql/<workload>/{tables,indexes,
// procedures,statements,checks,drop}.sql, and MariaDB-only overrides under
// sql/mariadb/.
//
//go:embed sql
var sqlFS embed.FS

func init() { db.Register(driver{}, "mysql", "mariadb") }

const (
	defaultPort     = "3306"
	defaultDatabase = "tpcc"
	connectTimeout  = 5 * time.Second
)

// driverParams are the go-sql-driver DSN parameters a URL may carry; the
// driver checks their values. parseTime, interpolateParams and
// multiStatements are sledge's to set, so they are not here.
var driverParams = []string{
	"allowCleartextPasswords", "allowNativePasswords", "charset", "collation",
	"maxAllowedPacket", "readTimeout", "serverPubKey", "timeout", "tls", "writeTimeout",
}

// isolations are the values of the URL's isolation parameter.
var isolations = map[string]string{
	"repeatable-read":  "REPEATABLE READ",
	"read-committed":   "READ COMMITTED",
	"serializable":     "SERIALIZABLE",
	"read-uncommitted": "READ UNCOMMITTED",
}

// defaultIsolation is InnoDB's default, set explicitly on every session so
// that a server configured otherwise does not silently change the
// benchmark. docs/databases.md explains the choice.
const defaultIsolation = "repeatable-read"

// Load methods (URL parameter load=…).
const (
	loadInsert = "insert" // prepared multi-row INSERTs
	loadInfile = "infile" // LOAD DATA LOCAL INFILE streamed from the rows
)

// defaultLoad is the faster method measured on MariaDB 10.11 (see
// docs/databases.md); infile falls back to insert when the server refuses
// LOCAL INFILE.
const defaultLoad = loadInfile

// config is what a URL says.
type config struct {
	drv       *mysql.Config
	transport string // "tcp" or "unix"
	where     string // host:port or socket path, for messages
	isolation string // key of isolations
	load      string
	io        db.IOMode // how virtual users' sockets wait (URL option io, db.IOMode)
	wire      string    // URL option wire: wireSledge (default) or wireDriver
	charset   bool      // the URL names a charset (binUsable)
}

// Values of the URL option wire: the protocol client of virtual users'
// sessions in procedure and prepared modes.
const (
	wireSledge = "sledge" // sledge's own (binconn.go), the driver's where it cannot
	wireDriver = "driver" // go-sql-driver/mysql's
)

type driver struct{}

// PasswordEnv: like the mysql client, a URL without a password takes it
// from MYSQL_PWD (parseURL).
func (driver) PasswordEnv() string { return "MYSQL_PWD" }

// TakesIO: sessions wait as the io= option says (db.IOOption).
func (driver) TakesIO() bool { return true }

// Open parses the URL; the first call that needs the server connects (so a
// build can create the database first, with EnsureDatabase).
func (driver) Open(ctx context.Context, u *url.URL) (db.DB, error) {
	cfg, err := parseURL(u)
	if err != nil {
		return nil, db.BadURL(err)
	}
	return open(cfg)
}

// parseURL turns mysql://user:pass@host:port/db?k=v or
// mysql://user@/db?socket=/path into a driver configuration.
func parseURL(u *url.URL) (*config, error) {
	if u.Opaque != "" {
		return nil, fmt.Errorf("mysql URL %s: use mysql://user:pass@host:port/db or mysql://user@/db?socket=/path", db.Redact(u.String()))
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("mysql URL: bad query: %w", db.RedactQueryErr(err))
	}
	c := &config{isolation: defaultIsolation, load: defaultLoad, wire: wireSledge}
	if c.io, err = db.IOOption(q, "mysql"); err != nil {
		return nil, err
	}
	params := url.Values{}
	var unknown []string
	socket := ""
	for k, vs := range q {
		if len(vs) != 1 {
			return nil, fmt.Errorf("mysql URL: parameter %s given %d times", k, len(vs))
		}
		v := vs[0]
		switch {
		case k == "socket":
			socket = v
		case k == "isolation":
			if _, ok := isolations[strings.ToLower(v)]; !ok {
				return nil, fmt.Errorf("mysql URL: bad isolation %q: use repeatable-read, read-committed, serializable or read-uncommitted", v)
			}
			c.isolation = strings.ToLower(v)
		case k == "load":
			if v != loadInsert && v != loadInfile {
				return nil, fmt.Errorf("mysql URL: bad load %q: use infile or insert", v)
			}
			c.load = v
		case k == "wire":
			if v != wireSledge && v != wireDriver {
				return nil, fmt.Errorf("mysql URL: bad wire %q: use sledge or driver", v)
			}
			c.wire = v
		case slices.Contains(driverParams, k):
			params.Set(k, v)
			c.charset = c.charset || k == "charset" || k == "collation"
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		known := append([]string{"io", "isolation", "load", "socket", "wire"}, driverParams...)
		sort.Strings(known)
		return nil, fmt.Errorf("mysql URL: unknown parameter %s: known are %s", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	// The driver parses and checks the values of its own parameters.
	drv, err := mysql.ParseDSN("/?" + params.Encode())
	if err != nil {
		return nil, fmt.Errorf("mysql URL: %w", err)
	}
	if drv.Timeout == 0 {
		drv.Timeout = connectTimeout
	}
	hasPW := false
	if u.User != nil {
		drv.User = u.User.Username()
		drv.Passwd, hasPW = u.User.Password()
	}
	if !hasPW {
		// As the mysql client does; sledge suggests commands that leave
		// the password out of the URL and name this variable.
		drv.Passwd = os.Getenv("MYSQL_PWD")
	}
	if drv.User == "" {
		drv.User = "root"
	}
	drv.DBName = strings.TrimPrefix(u.Path, "/")
	if drv.DBName == "" {
		drv.DBName = defaultDatabase
	}
	if strings.ContainsAny(drv.DBName, "/`") {
		return nil, fmt.Errorf("mysql URL: bad database name %q", drv.DBName)
	}
	switch {
	case socket != "" && u.Host != "":
		return nil, fmt.Errorf("mysql URL: give a host or ?socket=, not both: mysql://user@/%s?socket=%s", drv.DBName, socket)
	case socket != "":
		drv.Net, drv.Addr, c.transport = "unix", socket, "unix"
	default:
		host, port := u.Hostname(), u.Port()
		if host == "" {
			host = "127.0.0.1"
		}
		if port == "" {
			port = defaultPort
		}
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return nil, fmt.Errorf("mysql URL: bad port %q", port)
		}
		drv.Net, drv.Addr, c.transport = "tcp", joinHostPort(host, port), "tcp"
	}
	c.where = drv.Addr
	// client mode: the driver writes the values into the text, one round
	// trip per statement. Dates stay text (scanned into *any or *string).
	drv.InterpolateParams = true
	drv.ParseTime = false
	drv.MultiStatements = false
	c.drv = drv
	return c, nil
}

func joinHostPort(host, port string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

// DB is an opened MariaDB/MySQL database.
type DB struct {
	cfg   *config
	pool  *sql.DB
	files db.SQLFiles

	flavorMu    sync.Mutex
	flavorKnown bool // files.Dirs is set

	named    db.NamedCache    // workload -> statement -> SQL, parsed once
	repeated db.RepeatedCache // workload -> statements with repeated groups

	procsOK sync.Map // workload -> true once its procedures were seen

	// binRefused: the server wanted what sledge's own session does not
	// speak (binproto.go); sessions use the driver's from then on.
	binRefused atomic.Bool

	load loader
}

var (
	_ db.DB      = (*DB)(nil)
	_ db.Creator = (*DB)(nil)
)

func open(cfg *config) (*DB, error) {
	conn, err := newConnector(cfg.drv)
	if err != nil {
		return nil, err
	}
	d := &DB{cfg: cfg}
	d.pool = sql.OpenDB(conn)
	// Sessions pin their own connection; keep the closed ones for reuse.
	d.pool.SetMaxIdleConns(64)
	d.files = db.SQLFiles{FS: sqlFS}
	d.load.d = d
	return d, nil
}

// flavor finds out once whether the server is MariaDB, which decides the
// SQL overlay. A failure is not remembered: the server may come up later.
func (d *DB) flavor(ctx context.Context) error {
	d.flavorMu.Lock()
	defer d.flavorMu.Unlock()
	if d.flavorKnown {
		return nil
	}
	var v string
	if err := d.pool.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return d.connErr(err)
	}
	if strings.Contains(strings.ToLower(v), "mariadb") {
		d.files.Dirs = []string{"sql/mariadb", "sql"}
	}
	d.flavorKnown = true
	return nil
}

// Supports: every mode: procedures, client and prepared statements,
// batched, pipeline (multi-statement texts) and blocks (which Connect
// refuses on MySQL, known only once connected).
func (d *DB) Supports(w string, m workload.Mode) error {
	switch m {
	case workload.ModeProcedure, workload.ModeClient, workload.ModePrepared, workload.ModeBatched, workload.ModePipeline, workload.ModeBlock:
		return nil
	}
	return fmt.Errorf("mysql: unknown mode %v; use %s", m, workload.ModeList())
}

// DefaultMode is procedure: one round trip per transaction, HammerDB's
// default for MariaDB and MySQL.
func (d *DB) DefaultMode() workload.Mode { return workload.ModeProcedure }

// EnsureDatabase creates the URL's database when it does not exist, over a
// connection without a default database.
func (d *DB) EnsureDatabase(ctx context.Context) error {
	cfg := d.cfg.drv.Clone()
	cfg.DBName = ""
	conn, err := newConnector(cfg)
	if err != nil {
		return err
	}
	pool := sql.OpenDB(conn)
	defer pool.Close()
	var n int
	err = pool.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?", d.cfg.drv.DBName).Scan(&n)
	if err != nil {
		return d.connErr(err)
	}
	if n > 0 {
		return nil
	}
	_, err = pool.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteIdent(d.cfg.drv.DBName))
	var me *mysql.MySQLError
	if errors.As(err, &me) && (me.Number == erDBAccessDenied || me.Number == erAccessDenied) {
		return fmt.Errorf("user %s may not create database %s: create it as an administrator or GRANT CREATE", d.cfg.drv.User, d.cfg.drv.DBName)
	}
	if err != nil {
		return fmt.Errorf("mysql: create database %s: %w", d.cfg.drv.DBName, d.connErr(err))
	}
	return nil
}

// Script runs each statement of sql/<w>/<name>.sql on one connection.
func (d *DB) Script(ctx context.Context, w, name string) error {
	if err := d.flavor(ctx); err != nil {
		return err
	}
	stmts, ok, err := d.files.Script(w, name)
	if err != nil {
		return fmt.Errorf("mysql: %w", err)
	}
	if !ok {
		return nil
	}
	c, err := d.pool.Conn(ctx)
	if err != nil {
		return d.connErr(err)
	}
	defer c.Close()
	for i, s := range stmts {
		if _, err := c.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("mysql: %s/%s.sql statement %d (%s): %w", w, name, i+1, db.FirstLine(s), classify(err))
		}
	}
	if name == "drop" {
		d.procsOK.Delete(w)
	}
	return nil
}

// statements returns the named statements of workload w, parsed once.
func (d *DB) statements(w string) (map[string]string, error) {
	return d.named.Get(d.files, "mysql", w)
}

// Counters are Com_commit and Com_rollback, HammerDB's TPM source: they
// count COMMIT and ROLLBACK statements, inside procedures too, and not the
// implicit commit of each autocommit statement (docs/databases.md).
func (d *DB) Counters(ctx context.Context) (db.Counters, bool, error) {
	rows, err := d.pool.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback')")
	if err != nil {
		return db.Counters{}, false, fmt.Errorf("mysql: counters: %w", d.connErr(err))
	}
	defer rows.Close()
	var c db.Counters
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return db.Counters{}, false, fmt.Errorf("mysql: counters: %w", err)
		}
		switch strings.ToLower(name) {
		case "com_commit":
			c.Commits = v
		case "com_rollback":
			c.Rollbacks = v
		}
	}
	if err := rows.Err(); err != nil {
		return db.Counters{}, false, fmt.Errorf("mysql: counters: %w", err)
	}
	return c, true, nil
}

// infoVariables are the server settings that matter for a benchmark.
var infoVariables = []string{
	"innodb_buffer_pool_size", "innodb_flush_log_at_trx_commit", "sync_binlog", "log_bin",
	"innodb_log_file_size", "max_connections", "transaction_isolation", "tx_isolation",
}

// Info reports the server version, the transport and key settings.
func (d *DB) Info(ctx context.Context) (db.Info, error) {
	var version string
	if err := d.pool.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return db.Info{}, fmt.Errorf("mysql: info: %w", d.connErr(err))
	}
	info := db.Info{Driver: "mysql", Version: version, Transport: d.cfg.transport, Settings: map[string]string{}}
	rows, err := d.pool.QueryContext(ctx, "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('"+strings.Join(infoVariables, "', '")+"')")
	if err != nil {
		return db.Info{}, fmt.Errorf("mysql: info: %w", d.connErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return db.Info{}, fmt.Errorf("mysql: info: %w", err)
		}
		if k == "tx_isolation" { // MariaDB before 11.1, MySQL 5.7
			k = "transaction_isolation"
		}
		info.Settings[k] = v
	}
	if err := rows.Err(); err != nil {
		return db.Info{}, fmt.Errorf("mysql: info: %w", err)
	}
	// What sledge's sessions run with, which may differ from the global.
	info.Settings["session_isolation"] = isolations[d.cfg.isolation]
	info.Settings["load"] = d.cfg.load
	return info, nil
}

// Close closes the pool; sessions still open are closed when released.
func (d *DB) Close() error { return d.pool.Close() }

// quoteIdent quotes a table, column or database name.
func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
