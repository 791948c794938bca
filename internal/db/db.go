// Package db is where a workload runs and how it speaks: the Driver and DB
// contracts, the registry that picks a driver by URL scheme, and helpers
// shared by the SQL database packages (named-statement files, literal
// interpolation, URL redaction).
package db

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/sledge-bench/sledge/internal/workload"
)

// Info describes the database a job ran against, for the job record.
type Info struct {
	Driver    string            // "sqlite", "postgres", "mysql"
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

var (
	mu      sync.RWMutex
	drivers = map[string]Driver{}
)

// Register makes a driver available for the given URL schemes. Database
// packages call it from init; internal/db/all imports them all.
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

// Open opens the database a URL names, by its scheme.
func Open(ctx context.Context, raw string) (DB, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return nil, fmt.Errorf("%q is not a database URL: use e.g. sqlite:///path/to/file.db", Redact(raw))
	}
	mu.RLock()
	d, ok := drivers[strings.ToLower(u.Scheme)]
	mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown database %q in %s: known schemes are %s",
			u.Scheme, Redact(raw), strings.Join(Schemes(), ", "))
	}
	return d.Open(ctx, u)
}

// Redact returns the URL with any password replaced, for output and logs.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		// Unparseable: drop everything between "//" and "@" to be safe.
		if i := strings.Index(raw, "//"); i >= 0 {
			if j := strings.LastIndex(raw, "@"); j > i {
				return raw[:i+2] + "REDACTED" + raw[j:]
			}
		}
		return raw
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "REDACTED")
		}
	}
	q := u.Query()
	changed := false
	for k := range q {
		if strings.EqualFold(k, "password") || strings.EqualFold(k, "passwd") {
			q.Set(k, "REDACTED")
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

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

// TableLister is implemented by databases that can list the tables of the
// schema a URL names, so that the leftovers of an interrupted build can be
// told from an empty database.
type TableLister interface {
	TableNames(ctx context.Context) ([]string, error)
}
