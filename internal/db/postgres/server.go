package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/sysprobe"
)

// The server's side of the cost (docs/cost.md, "Server side").

var (
	_ db.ServerCoster    = (*DB)(nil)
	_ db.ServerSessioner = (*conn)(nil)
	_ db.ServerSessioner = (*scriptConn)(nil)
)

// ServerSession is the session's backend PID, known from the connection's
// startup (BackendKeyData): no query.
func (c *conn) ServerSession(context.Context) (int64, error) {
	return int64(c.c.PgConn().PID()), nil
}

// ServerSession is the script session's backend PID.
func (c *scriptConn) ServerSession(context.Context) (int64, error) {
	return int64(c.pc.PID()), nil
}

// OpenServerProbe opens the probe's own connection. Its statements are
// prepared once (pgx's statement cache), so each sample costs the server
// one execution of a planned query.
func (d *DB) OpenServerProbe(ctx context.Context) (db.ServerProbe, error) {
	c, err := d.connect(ctx, d.cfg, pgx.QueryExecModeCacheStatement)
	if err != nil {
		return nil, err
	}
	p := &pgProbe{c: c, s: c, host: d.cfg.Host}
	p.postmaster, _ = sysprobe.ProcParent("/proc", int(c.PgConn().PID()))
	// Sample from another database when the user may connect to one:
	// pg_stat_activity shows every database's sessions, and the samples'
	// own transactions, ten a second, would otherwise count in the
	// benchmark database's xact_commit, which TPM is read from.
	for _, other := range []string{"postgres", "template1"} {
		if other == d.cfg.Database {
			continue
		}
		cfg := d.cfg.Copy()
		cfg.Database = other
		if s, err := d.connect(ctx, cfg, pgx.QueryExecModeCacheStatement); err == nil {
			p.s = s
			break
		}
	}
	return p, nil
}

type pgProbe struct {
	c          *pgx.Conn // counters, on the benchmark database
	s          *pgx.Conn // samples: on another database where possible, else c
	host       string
	postmaster int   // parent of the probe's backend, when visible here
	sent       int64 // statements sent
	stmtsKnown bool  // pg_stat_statements was looked for
	stmtsWhy   string
	planning   bool
}

func (p *pgProbe) Host() string { return p.host }
func (p *pgProbe) Sent() int64  { return p.sent }
func (p *pgProbe) Close() error {
	if p.s != p.c {
		_ = p.s.Close(context.Background())
	}
	return p.c.Close(context.Background())
}

func (p *pgProbe) WaitSource() string {
	return "pg_stat_activity (state, wait_event_type) of the virtual users' backends"
}

// pgStatDatabase are the activity counters kept per database; every
// session counts, and sessions publish them at most once a second (the
// virtual users publish at the edges of the measured interval).
var pgStatDatabase = []string{"xact_commit", "xact_rollback", "blks_hit", "blks_read",
	"tup_returned", "tup_fetched", "tup_inserted", "tup_updated", "tup_deleted"}

const pgStatDatabaseSource = "pg_stat_database of the benchmark database: every session"

// Counters reads pg_stat_database and, where installed,
// pg_stat_statements (its own statements left out by their marker).
func (p *pgProbe) Counters(ctx context.Context) (db.ServerCounters, error) {
	out := db.ServerCounters{Values: map[string]int64{}, Sources: map[string]string{}, Missing: map[string]string{}, OwnExcluded: true}
	vals := make([]any, len(pgStatDatabase))
	nums := make([]int64, len(pgStatDatabase))
	for i := range nums {
		vals[i] = &nums[i]
	}
	p.sent++
	q := "SELECT /* " + db.ProbeMarker + " */ " + strings.Join(pgStatDatabase, ", ") +
		" FROM pg_stat_database WHERE datname = current_database()"
	if err := p.c.QueryRow(ctx, q).Scan(vals...); err != nil {
		return out, fmt.Errorf("postgres: read pg_stat_database: %w", classify(err))
	}
	for i, k := range pgStatDatabase {
		name := "pg_stat_database." + k
		out.Values[name] = nums[i]
		out.Sources[name] = pgStatDatabaseSource
	}
	out.Missing["parses"] = "PostgreSQL counts no parses (see plans)"
	if !p.stmtsKnown {
		p.lookForStatements(ctx)
	}
	if p.stmtsWhy != "" {
		out.Missing["statements"], out.Missing["plans"] = p.stmtsWhy, p.stmtsWhy
		return out, nil
	}
	var calls, plans int64
	p.sent++
	// Top-level statements only (pg_stat_statements.track = top, the
	// default): a routine's own statements are not counted, its call is.
	err := p.c.QueryRow(ctx, `SELECT /* `+db.ProbeMarker+` */ coalesce(sum(calls), 0)::bigint, coalesce(sum(plans), 0)::bigint
FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
AND query NOT LIKE '%`+db.ProbeMarker+`%'`).Scan(&calls, &plans)
	if err != nil {
		why := "pg_stat_statements cannot be read: " + firstLine(err.Error())
		out.Missing["statements"], out.Missing["plans"] = why, why
		return out, nil
	}
	out.Values["statements"] = calls
	out.Sources["statements"] = "pg_stat_statements calls (top-level statements of the benchmark database; every session)"
	if p.planning {
		out.Values["plans"] = plans
		out.Sources["plans"] = "pg_stat_statements plans (track_planning on)"
	} else {
		out.Missing["plans"] = "pg_stat_statements.track_planning is off"
	}
	return out, nil
}

// lookForStatements finds out once whether pg_stat_statements is there.
func (p *pgProbe) lookForStatements(ctx context.Context) {
	p.stmtsKnown = true
	var installed bool
	var planning string
	p.sent++
	err := p.c.QueryRow(ctx, `SELECT /* `+db.ProbeMarker+` */ EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements'),
coalesce(current_setting('pg_stat_statements.track_planning', true), '')`).Scan(&installed, &planning)
	switch {
	case err != nil:
		p.stmtsWhy = "pg_stat_statements: " + firstLine(err.Error())
	case !installed:
		p.stmtsWhy = "pg_stat_statements is not installed (shared_preload_libraries and CREATE EXTENSION pg_stat_statements)"
	}
	p.planning = planning == "on"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// Sample reads every row of pg_stat_activity once: the virtual users'
// backends give the wait sample, the other server processes (walwriter,
// checkpointer, autovacuum…) are listed for their CPU.
func (p *pgProbe) Sample(ctx context.Context, sessions []int64) (db.WaitSample, []db.ServerProcess, error) {
	var w db.WaitSample
	vu := make(map[int64]bool, len(sessions))
	for _, s := range sessions {
		vu[s] = true
	}
	p.sent++
	rows, err := p.s.Query(ctx, `SELECT /* `+db.ProbeMarker+` */ pid, coalesce(backend_type, ''), coalesce(state, ''), coalesce(wait_event_type, '')
FROM pg_stat_activity WHERE pid <> pg_backend_pid()`)
	if err != nil {
		return w, nil, fmt.Errorf("postgres: sample pg_stat_activity: %w", classify(err))
	}
	var procs []db.ServerProcess
	var pid int64
	var btype, state, wtype string
	_, err = pgx.ForEachRow(rows, []any{&pid, &btype, &state, &wtype}, func() error {
		switch {
		case vu[pid]:
			classifyPG(&w, state, wtype)
			procs = append(procs, db.ServerProcess{PID: int(pid), Role: "backend"})
		case btype != "client backend" && btype != "":
			procs = append(procs, db.ServerProcess{PID: int(pid), Role: "background"})
		}
		return nil
	})
	if err != nil {
		return w, nil, fmt.Errorf("postgres: sample pg_stat_activity: %w", classify(err))
	}
	if p.postmaster > 1 {
		procs = append(procs, db.ServerProcess{PID: p.postmaster, Role: "postmaster"})
	}
	return w, procs, nil
}

// classifyPG puts one backend's state into the sample's classes.
func classifyPG(w *db.WaitSample, state, waitType string) {
	switch {
	case waitType == "Client" || strings.HasPrefix(state, "idle"):
		w.Client++ // ClientRead/ClientWrite; idle, idle in transaction
	case waitType == "Lock" || waitType == "LWLock" || waitType == "BufferPin":
		w.Lock++
	case waitType == "IO":
		w.IO++
	case state == "active" && waitType == "":
		w.CPU++
	default:
		w.Other++ // IPC, Timeout, Activity, Extension; disabled, fastpath
	}
}
