// Package db is where a workload runs and how it speaks: the Driver and DB
// contracts, the registry that picks a driver by URL scheme, and helpers
// shared by the SQL database packages (named-statement files, literal
// interpolation, URL redaction).
package db

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/sledge-bench/sledge/internal/workload"
)

// Info describes the database a job ran against, for the job record.
type Info struct {
	Driver    string            // "sqlite", "postgres", "mysql", "duckdb"
	Version   string            // server or library version
	Transport string            // "embedded", "tcp", "unix"
	Settings  map[string]string // settings that matter for performance
}

// Counters are transaction counts as the database itself keeps them.
type Counters struct {
	Commits   int64
	Rollbacks int64
}

// DB is an opened database. Its methods are safe for concurrent use.
type DB interface {
	Info(ctx context.Context) (Info, error)
	// Supports returns nil, or one line saying why workload w cannot run in
	// mode m here and what to use instead.
	Supports(w string, m workload.Mode) error
	// DefaultMode is the mode used when the user names none.
	DefaultMode() workload.Mode
	// Script runs sql/<w>/<name>.sql (tables, indexes, procedures, drop).
	// A database without that file has nothing to do for that step.
	Script(ctx context.Context, w, name string) error
	// Load inserts rows into table t. Called concurrently by build workers;
	// the database decides how many writers really run at once.
	Load(ctx context.Context, t *workload.Table, rows [][]any) error
	// Connect opens one virtual user's session for workload w in mode m.
	Connect(ctx context.Context, w string, m workload.Mode) (workload.Conn, error)
	// Counters returns commits and rollbacks as the server counts them;
	// ok is false when the database keeps no such counters (SQLite).
	Counters(ctx context.Context) (c Counters, ok bool, err error)
	Close() error
}

// Driver opens databases of one URL scheme.
type Driver interface {
	Open(ctx context.Context, u *url.URL) (DB, error)
}

// PasswordEnver is a Driver that reads a URL's missing password from the
// environment (PGPASSWORD, MYSQL_PWD): a suggested command can leave the
// password out and name the variable instead.
type PasswordEnver interface {
	PasswordEnv() string
}

// FailClasser is a DB that sorts a failed transaction's error into
// pgbench's failure classes (--failures-detailed) by its own error codes.
// A DB that is not one has no such classes: its failures are all "other".
type FailClasser interface {
	FailClass(err error) workload.FailClass
}

// Transporter is a Driver whose URLs name how they reach the server, and
// that can write the same database's URL over another transport (compare
// --transports).
type Transporter interface {
	// Transport is the transport u names: "embedded", "tcp" or "unix".
	Transport(u *url.URL) string
	// UnixURL is u over the socket (PostgreSQL: its directory; MariaDB:
	// the socket file); TCPURL is u over TCP to host:port, port 0 the
	// server's default.
	UnixURL(u *url.URL, socket string) *url.URL
	TCPURL(u *url.URL, host string, port int) *url.URL
}

// TransporterOf is the Transporter of a URL scheme's driver.
func TransporterOf(scheme string) (Transporter, bool) {
	d, ok := lookup(scheme)
	if !ok {
		return nil, false
	}
	t, ok := d.(Transporter)
	return t, ok
}

// OverTCP is u to host:port, with the query keys that named another way
// to reach the server (socket=, host=, port=) left out: what each
// Transporter's TCPURL returns once it knows the port.
func OverTCP(u *url.URL, host, port string) *url.URL {
	v := *u
	q := v.Query()
	for _, k := range []string{"socket", "host", "port"} {
		q.Del(k)
	}
	v.Host = HostPort(host, port)
	v.RawQuery = q.Encode()
	return &v
}

// HostPort joins a host and a port, bracketing an IPv6 address.
func HostPort(host, port string) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + port
}

// Pasteable returns raw with its password left out, for a command a user
// can paste (Redact's "REDACTED" cannot be), and the environment variable
// that supplies the password to the driver; env is "" when raw had no
// password. A URL that does not parse comes back redacted.
func Pasteable(raw string) (pasteable, env string) {
	u, err := url.Parse(raw)
	if err != nil {
		return Redact(raw), ""
	}
	if !StripPassword(u) {
		return Redact(raw), ""
	}
	return Redact(u.String()), PasswordEnv(u.Scheme)
}

// StripPassword removes u's password, in its user information or as a
// password= parameter, and tells whether it had one.
func StripPassword(u *url.URL) (had bool) {
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.User(u.User.Username())
			had = true
		}
	}
	if q := u.Query(); q.Has("password") {
		q.Del("password")
		u.RawQuery = q.Encode()
		had = true
	}
	return had
}

// PasswordEnv is the variable the driver of scheme reads a URL's missing
// password from (PasswordEnver), or "".
func PasswordEnv(scheme string) string {
	if d, ok := lookup(scheme); ok {
		if pe, ok := d.(PasswordEnver); ok {
			return pe.PasswordEnv()
		}
	}
	return ""
}

// IOWaiter is a Driver whose sessions take the io= URL option (IOOption):
// a run may then choose how they wait when the URL leaves it open.
type IOWaiter interface {
	TakesIO() bool
}

// TakesIO reports whether the driver of scheme takes the io= option.
func TakesIO(scheme string) bool {
	if d, ok := lookup(scheme); ok {
		if w, ok := d.(IOWaiter); ok {
			return w.TakesIO()
		}
	}
	return false
}

var (
	mu      sync.RWMutex
	drivers = map[string]Driver{}
)

// Register makes a driver available for the given URL schemes. Database
// packages call it from init; internal/db/all imports them all, and the
// sledge binary (cmd/sledge) imports that: the set of databases is the
// binary's choice, not the CLI's, so a test binary links only those it uses.
func Register(d Driver, schemes ...string) {
	mu.Lock()
	defer mu.Unlock()
	for _, s := range schemes {
		if _, dup := drivers[s]; dup {
			panic("db: scheme registered twice: " + s) // programmer error
		}
		drivers[s] = d
	}
}

// Schemes lists the registered URL schemes.
func Schemes() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(drivers))
	for s := range drivers {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// URLError is a database URL that cannot name a database: bad input, which
// the command line reports as such (exit 2). URL is redacted.
// Drivers return one (BadURL) for what their own parsing refuses.
type URLError struct {
	URL    string
	Reason string
	Err    error // the driver's own message, which names the URL or the parameter
}

func (e *URLError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("bad database URL %s: %s", e.URL, e.Reason)
}

func (e *URLError) Unwrap() error { return e.Err }

// BadURL marks a driver's refusal of its URL (a bad parameter, a bad
// path) as bad input.
func BadURL(err error) error {
	if err == nil {
		return nil
	}
	return &URLError{Err: err}
}

// ParseURL parses a database URL and checks what every driver needs: a
// known scheme and, when there is one, a port from 1 to 65535.
func ParseURL(raw string) (*url.URL, error) {
	bad := func(format string, a ...any) error {
		return &URLError{URL: Redact(raw), Reason: fmt.Sprintf(format, a...)}
	}
	// What users paste instead of a URL, named, with the URL to write.
	switch {
	case strings.Contains(raw, "@tcp(") || strings.Contains(raw, "@unix("):
		return nil, bad("a go-sql-driver DSN, not a URL: write mysql://user:pass@host:port/db or mysql://user@/db?socket=/path")
	case strings.HasPrefix(strings.TrimSpace(raw), "host=") || strings.Contains(raw, " dbname=") || strings.HasPrefix(raw, "dbname="):
		return nil, bad("a libpq keyword/value string, not a URL: write postgres://user:pass@host:port/db or postgres://user@/db?host=/socket/dir")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's message quotes the whole URL, password included:
		// say what is wrong in words of our own.
		if i := strings.Index(err.Error(), "invalid port "); i >= 0 {
			port := strings.TrimSuffix(err.Error()[i+len("invalid port "):], " after host")
			port = strings.TrimPrefix(strings.Trim(port, `"`), ":")
			return nil, badPort(raw, port)
		}
		return nil, bad("not a URL: use e.g. sqlite:///path/to/file.db or postgres://user@host:5432/db")
	}
	if u.Scheme == "" {
		return nil, bad("no scheme: use e.g. sqlite:///path/to/file.db or postgres://user@host:5432/db (known schemes: %s)", strings.Join(Schemes(), ", "))
	}
	if _, ok := lookup(u.Scheme); !ok {
		return nil, bad("unknown scheme %q: known schemes are %s", u.Scheme, strings.Join(Schemes(), ", "))
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, badPort(raw, p)
		}
		// postgres://u:12345/x@h/db parses as host "u", port 12345 and a
		// path with an @: a password with an unescaped /, which every
		// message would then show as a port and a path.
		if !strings.Contains(u.Host, "@") && u.User == nil && strings.Contains(u.Path, "@") {
			return nil, badPort(raw, p)
		}
	}
	return u, nil
}

// badPort reports a port that is not one. When an @ follows it, the "port"
// may be a piece of a password with an unescaped / ? or #
// (postgres://u:pa/ss@h/db parses as host "u", port "pa"): then it is not
// quoted, and the message says how to write such a password.
func badPort(raw, port string) error {
	redacted := Redact(raw)
	rest := raw
	if i := strings.Index(raw, "://"); i >= 0 {
		rest = raw[i+3:]
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	if !strings.Contains(authority, "@") && strings.Contains(rest, "@") {
		if j := strings.LastIndex(redacted, "@"); j >= 0 {
			if k := strings.Index(redacted, "://"); k >= 0 && k+3 <= j {
				redacted = redacted[:k+3] + "…" + redacted[j:]
			}
		}
		return &URLError{URL: redacted, Reason: "bad port, or a password with an unescaped / ? # or @ in it: write those as %2F %3F %23 %40"}
	}
	return &URLError{URL: redacted, Reason: fmt.Sprintf("bad port %q: want a number from 1 to 65535", port)}
}

func lookup(scheme string) (Driver, bool) {
	mu.RLock()
	defer mu.RUnlock()
	d, ok := drivers[strings.ToLower(scheme)]
	return d, ok
}

// Open opens the database a URL names, by its scheme.
func Open(ctx context.Context, raw string) (DB, error) {
	u, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	d, _ := lookup(u.Scheme)
	return d.Open(ctx, u)
}

// Redact returns the URL with any password replaced, for output and logs.
// Besides URLs it covers what users paste instead: libpq keyword/value
// strings (password=…), go-sql-driver DSNs (user:pw@tcp(host)/db), and
// queries that do not parse.
func Redact(raw string) string {
	return scrub(redact(raw), secretsOf(raw))
}

// secretsOf lists the password values raw carries, as written and
// unescaped: the safety net of Redact replaces any that is still there.
func secretsOf(raw string) []string {
	var out []string
	add := func(v string) {
		v = strings.Trim(v, "'")
		if len(v) >= 2 {
			out = append(out, v)
			if e := url.QueryEscape(v); e != v {
				out = append(out, e)
			}
			if e := url.PathEscape(v); e != v {
				out = append(out, e)
			}
		}
	}
	forms := []string{raw}
	if un, err := url.QueryUnescape(raw); err == nil && un != raw {
		forms = append(forms, un)
	}
	for _, f := range forms {
		for _, m := range passwordValue.FindAllStringSubmatch(f, -1) {
			add(m[2])
		}
	}
	// passwordValue stops at '&', ';' and white space. A keyword/value
	// string's value runs to white space, and a URL query's to '&' (Go's
	// url package splits no query at ';').
	for _, f := range strings.Fields(raw) {
		if k, v, ok := strings.Cut(f, "="); ok && isPasswordKey(k) {
			add(v)
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return out
	}
	for _, pair := range strings.Split(u.RawQuery, "&") {
		k, v, _ := strings.Cut(pair, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if isPasswordKey(k) {
			add(v)
			if uv, err := url.QueryUnescape(v); err == nil {
				add(uv)
			}
		}
	}
	if u.User != nil {
		if pw, ok := u.User.Password(); ok {
			add(pw)
		}
	} else if u.Opaque != "" {
		if i := strings.LastIndex(u.Opaque, "@"); i > 0 {
			add(u.Opaque[:i])
		}
	}
	return out
}

// scrub replaces every secret still in s.
func scrub(s string, secrets []string) string {
	for _, v := range secrets {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, "REDACTED")
		}
	}
	return s
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err == nil && u.Opaque != "" {
		// user:pw@tcp(host)/db parses as scheme "user" and opaque
		// "pw@tcp(…)/db": everything before the last @ is the password.
		if i := strings.LastIndex(u.Opaque, "@"); i > 0 {
			at := len(u.Scheme) + 1 + i
			return raw[:len(u.Scheme)+1] + "REDACTED" + RedactQuery(raw[at:])
		}
	}
	if err != nil || u.Opaque != "" || u.Scheme == "" {
		return redactText(raw)
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "REDACTED")
		}
	}
	u.Fragment = RedactQuery(u.Fragment)
	u.RawFragment = ""
	q, qerr := url.ParseQuery(u.RawQuery)
	if qerr != nil {
		u.RawQuery = RedactQuery(u.RawQuery)
		return u.String()
	}
	changed := false
	for k := range q {
		if isPasswordKey(k) {
			q.Set(k, "REDACTED")
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

func isPasswordKey(k string) bool {
	return strings.EqualFold(k, "password") || strings.EqualFold(k, "passwd")
}

// passwordValue finds password=… and passwd=… values in a query or a
// keyword/value string: up to the next &, white space or quote.
var passwordValue = regexp.MustCompile(`(?i)((?:^|[&?;[:space:]])(?:password|passwd)[[:space:]]*=[[:space:]]*)('[^']*'|[^&;[:space:]]*)`)

// queryPasswordValue is passwordValue in a raw URL query, where a value
// runs to the next & (Go's url package splits no query at ';').
var queryPasswordValue = regexp.MustCompile(`(?i)((?:^|[&?;[:space:]])(?:password|passwd)[[:space:]]*=[[:space:]]*)('[^']*'|[^&]*)`)

// RedactQuery replaces password values in a raw URL query, parseable or not.
func RedactQuery(q string) string { return queryPasswordValue.ReplaceAllString(q, "${1}REDACTED") }

// redactValues replaces password values in text: a value ends at &, ;
// or white space, as in a message that quotes a query.
func redactValues(s string) string { return passwordValue.ReplaceAllString(s, "${1}REDACTED") }

// RedactQueryErr is err with password values redacted from its text; the
// url package quotes the offending part of a query that does not parse.
func RedactQueryErr(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if red := redactValues(msg); red != msg {
		return errors.New(red)
	}
	return err
}

// redactText redacts a string that is not a URL with a scheme: the user
// info of anything with user:pw@ before a host, and password values.
func redactText(raw string) string {
	s := raw
	if at := strings.LastIndex(s, "@"); at >= 0 {
		start := strings.Index(s, "//")
		if start >= 0 && start < at {
			start += 2
		} else {
			start = 0
		}
		if c := strings.Index(s[start:at], ":"); c >= 0 {
			s = s[:start+c+1] + "REDACTED" + s[at:]
		}
	}
	if !strings.Contains(raw, "://") {
		// A libpq keyword/value string: a value runs to the next space,
		// & and ; included (passwd=&000).
		s = libpqPassword.ReplaceAllString(s, "${1}REDACTED")
	}
	return redactValues(s)
}

var libpqPassword = regexp.MustCompile(`(?i)((?:^|[[:space:]])(?:password|passwd)[[:space:]]*=[[:space:]]*)('[^']*'|[^[:space:]]*)`)

// Creator is implemented by server databases that can create the database a
// URL names when it is missing (build calls it before connecting).
type Creator interface {
	EnsureDatabase(ctx context.Context) error
}

// ScriptDB is implemented by databases that run SQL written by the user
// (pgbench scripts) rather than the named statements of a workload.
type ScriptDB interface {
	// ScriptSupports returns nil, or one line saying why protocol p (or
	// pipelines, when pipelines is set) cannot work here, checked before a
	// run starts.
	ScriptSupports(p workload.Protocol, pipelines bool) error
	// ConnectScript opens one virtual user's session for script SQL. With
	// cost measuring, ctx carries the VU's wire counter as for Connect.
	ConnectScript(ctx context.Context, p workload.Protocol) (workload.ScriptConn, error)
}

// StreamLoader is implemented by databases that load a table's rows best
// as one long stream (PostgreSQL: one COPY) rather than one statement a
// batch: next gives batch after batch, no rows at the end; the stream
// ends without committing when next fails.
type StreamLoader interface {
	LoadStream(ctx context.Context, t *workload.Table, next func() ([][]any, error)) error
}

// SQLDB is implemented by databases that run SQL text a workload renders
// for their dialect (workload.SQLConn: TPC-H's schema and queries).
type SQLDB interface {
	// Dialect is the SQL the database speaks, as workloads name it:
	// "postgres", "mysql" (MariaDB and MySQL), "sqlite" or "duckdb".
	Dialect() string
	// ConnectSQL opens one session for such text. Its isolation is the
	// database's default (at least READ COMMITTED; SQLite serializable).
	ConnectSQL(ctx context.Context) (workload.SQLConn, error)
}

// TableLister is implemented by databases that can list the tables of the
// schema a URL names, so that the leftovers of an interrupted build can be
// told from an empty database.
type TableLister interface {
	TableNames(ctx context.Context) ([]string, error)
}

// InMemory is implemented by databases that can live in the process's
// memory only (duckdb::memory:): what is built there ends with the
// command that built it.
type InMemory interface {
	Memory() bool
}

// Ephemeral reports whether d's contents end with this process: a run
// then builds what it needs first, as for the embedded default, and
// build, check and drop, whose work would end with them, refuse it.
func Ephemeral(d DB) bool {
	m, ok := d.(InMemory)
	return ok && m.Memory()
}
