package runner

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// Session is an opened database with a control connection (for schema
// metadata, checks and the counters read at the edges of a run).
type Session struct {
	URL  string // redacted, for messages
	Raw  string
	DB   db.DB
	Ctl  workload.Conn
	Mode workload.Mode // the control connection's mode
}

func OpenDB(ctx context.Context, raw string) (db.DB, error) {
	d, err := db.Open(ctx, raw)
	if err != nil {
		if errors.As(err, new(*db.URLError)) {
			return nil, err // it names the URL and what is wrong with it
		}
		return nil, fmt.Errorf("open %s: %w", db.Redact(raw), err)
	}
	return d, nil
}

// OpenSession opens the database and a control connection in mode m (0:
// the database's default mode). With create, a server database that does
// not exist yet is created first (build).
func OpenSession(ctx context.Context, raw, wl string, m workload.Mode, create bool) (s *Session, err error) {
	defer removeIfRefused(raw)(&err)
	d, err := OpenDB(ctx, raw)
	if err != nil {
		return nil, err
	}
	if cr, ok := d.(db.Creator); ok && create {
		if err := cr.EnsureDatabase(ctx); err != nil {
			_ = d.Close()
			return nil, fmt.Errorf("create database: %w", err)
		}
	}
	if workload.IsSQL(wl) {
		// A workload that renders its own SQL text (TPC-H) has no modes:
		// its control session runs that text.
		sd, ok := d.(db.SQLDB)
		if !ok {
			_ = d.Close()
			return nil, Usagef("%s cannot run %s: it needs SQL text sessions (PostgreSQL, MariaDB/MySQL, SQLite)", db.Redact(raw), wl)
		}
		c, err := sd.ConnectSQL(ctx)
		if err != nil {
			_ = d.Close()
			return nil, fmt.Errorf("connect to %s: %w", db.Redact(raw), err)
		}
		return &Session{URL: db.Redact(raw), Raw: raw, DB: d, Ctl: c, Mode: workload.ModeClient}, nil
	}
	if m == 0 {
		m = d.DefaultMode()
	}
	if err := d.Supports(wl, m); err != nil {
		_ = d.Close()
		return nil, Usagef("%v", err)
	}
	c, err := d.Connect(ctx, wl, m)
	if err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("connect to %s: %w", db.Redact(raw), err)
	}
	return &Session{URL: db.Redact(raw), Raw: raw, DB: d, Ctl: c, Mode: m}, nil
}

func (s *Session) Close(ctx context.Context) {
	if s.Ctl != nil {
		_ = s.Ctl.Close(ctx)
	}
	_ = s.DB.Close()
}

// Attach reads the built schema into w. noSchema is true when there is none.
func (s *Session) Attach(ctx context.Context, w workload.Workload) (noSchema bool, err error) {
	err = w.Attach(ctx, s.Ctl)
	if errors.Is(err, workload.ErrNoSchema) {
		return true, err
	}
	return false, err
}

// NoSchemaErr says to build first, with a command that can be pasted.
func NoSchemaErr(wl, raw string, explicit bool) error {
	how, note := Suggest("sledge build "+wl, raw, explicit)
	return fmt.Errorf("no %s schema in %s: run `%s` first%s", wl, db.Redact(raw), how, note)
}

// Suggest completes a suggested command with the database, when the user
// named one: its URL without the password, which a note says to put in
// the variable the driver reads (a REDACTED placeholder cannot be pasted).
func Suggest(cmd, raw string, explicit bool) (how, note string) {
	if !explicit {
		return cmd, ""
	}
	u, env := db.Pasteable(raw)
	if env != "" {
		note = fmt.Sprintf(" (with the password in %s)", env)
	}
	return cmd + " --db " + u, note
}

func ScaleText(w workload.Workload) string {
	if st, ok := w.(interface{ ScaleText() string }); ok {
		return st.ScaleText() // "SF 0.01"
	}
	if sc, ok := w.(workload.Scaler); ok {
		unit, n := sc.Scale()
		if strings.HasPrefix(unit, "scale") {
			return fmt.Sprintf("scale %d", n) // pgbench's scaling factor
		}
		if n == 1 {
			unit = trimPlural(unit)
		}
		return fmt.Sprintf("%d %s", n, unit)
	}
	return ""
}

func trimPlural(s string) string {
	if len(s) > 1 && s[len(s)-1] == 's' {
		return s[:len(s)-1]
	}
	return s
}

// MissingSchemaErr says there is no usable schema of w, telling a database
// with none from one with the leftovers of an interrupted build.
func (s *Session) MissingSchemaErr(ctx context.Context, w workload.Workload, explicit bool) error {
	if s.incomplete(ctx, w) {
		how, note := Suggest("sledge build "+w.Name(), s.Raw, explicit)
		return fmt.Errorf("the %s schema in %s is incomplete: its build was interrupted or failed; run `%s`%s again, which drops what was loaded and starts over", w.Name(), s.URL, how, note)
	}
	return NoSchemaErr(w.Name(), s.Raw, explicit)
}

// incomplete reports whether some of w's tables exist although its schema
// does not attach: what an interrupted build leaves.
func (s *Session) incomplete(ctx context.Context, w workload.Workload) bool {
	tl, ok := s.DB.(db.TableLister)
	if !ok {
		return false
	}
	names, err := tl.TableNames(ctx)
	if err != nil {
		return false
	}
	have := map[string]bool{}
	for _, n := range names {
		have[strings.ToLower(n)] = true
	}
	for _, t := range w.Tables() {
		if have[strings.ToLower(t.Name)] {
			return true
		}
	}
	return false
}

// removeIfRefused notes whether raw names an SQLite file that does not
// exist yet; the function it returns removes the file that opening
// created when the command was then refused as bad input (exit 2), so
// refused input leaves nothing behind.
func removeIfRefused(raw string) func(*error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "sqlite" && u.Scheme != "sqlite3") {
		return func(*error) {}
	}
	path := u.Path
	if path == "" {
		path = u.Opaque
	}
	if path == "" || strings.HasPrefix(path, ":memory:") {
		return func(*error) {}
	}
	if _, serr := os.Stat(path); !os.IsNotExist(serr) {
		return func(*error) {}
	}
	return func(errp *error) {
		var ee *ExitError
		if *errp != nil && errors.As(*errp, &ee) && ee.Code == ExitUsage {
			for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
				_ = os.Remove(path + suffix)
			}
		}
	}
}

// OpenScriptSession opens a database for users' scripts, with a control
// session in protocol p, after checking that the database can run them.
func OpenScriptSession(ctx context.Context, raw string, p workload.Protocol, pipelines bool) (s *Session, err error) {
	defer removeIfRefused(raw)(&err)
	d, err := OpenDB(ctx, raw)
	if err != nil {
		return nil, err
	}
	sd, ok := d.(db.ScriptDB)
	if !ok {
		_ = d.Close()
		return nil, Usagef("%s does not run pgbench scripts", db.Redact(raw))
	}
	if err := sd.ScriptSupports(p, pipelines); err != nil {
		_ = d.Close()
		return nil, Usagef("%v", err)
	}
	c, err := sd.ConnectScript(ctx, p)
	if err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("connect to %s: %w", db.Redact(raw), err)
	}
	m := workload.ModeClient
	if p != workload.ProtoSimple {
		m = workload.ModePrepared
	}
	return &Session{URL: db.Redact(raw), Raw: raw, DB: d, Ctl: c, Mode: m}, nil
}

// ReopenCtl replaces the control session when err says it was lost (or it
// reports itself broken), so the counters can be read after a restart.
func (s *Session) ReopenCtl(ctx context.Context, wl string, m workload.Mode, p workload.Protocol, script bool, err error) error {
	b, ok := s.Ctl.(workload.Breakable)
	if !errors.Is(err, workload.ErrConnLost) && !(ok && b.Broken()) {
		return err
	}
	if ok && !b.Broken() {
		return nil // a pooled session failed, not this one: read again
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	_ = s.Ctl.Close(cctx)
	cancel()
	var c workload.Conn
	if script {
		c, err = s.DB.(db.ScriptDB).ConnectScript(ctx, p)
	} else {
		c, err = s.DB.Connect(ctx, wl, m)
	}
	if err != nil {
		return err
	}
	s.Ctl = c
	return nil
}

// RunScript runs build step ("drop", "tables", "indexes", "procedures")
// of w on d: the workload's own SQL for d's dialect (workload.SQLScripter)
// through a SQL session, else the database package's
// sql/<workload>/<step>.sql.
func RunScript(ctx context.Context, d db.DB, w workload.Workload, step string) error {
	if e, ok := w.(workload.Extension); ok {
		// The base's step (unless the base is built already and only the
		// extension's tables are added), then the extension's own.
		if !e.BaseBuilt() {
			if err := d.Script(ctx, e.Base(), step); err != nil {
				return err
			}
		}
		sd, ok := d.(db.SQLDB)
		if !ok {
			return fmt.Errorf("%s needs a database that runs SQL text", w.Name())
		}
		return execStmts(ctx, sd, w, step, e.Added(sd.Dialect(), step))
	}
	sw, ok := w.(workload.SQLScripter)
	if !ok {
		return d.Script(ctx, w.Name(), step)
	}
	sd, ok := d.(db.SQLDB)
	if !ok {
		return fmt.Errorf("%s needs a database that runs SQL text", w.Name())
	}
	return execStmts(ctx, sd, w, step, sw.Script(sd.Dialect(), step))
}

// execStmts runs stmts, w's statements for step, in order on one SQL
// session of sd, each on its own.
func execStmts(ctx context.Context, sd db.SQLDB, w workload.Workload, step string, stmts []string) error {
	if len(stmts) == 0 {
		return nil
	}
	c, err := sd.ConnectSQL(ctx)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	for i, st := range stmts {
		if err := c.ExecSQL(ctx, st); err != nil {
			return fmt.Errorf("%s %s statement %d (%s): %w", w.Name(), step, i+1, db.FirstLine(st), err)
		}
	}
	return nil
}

// Guard asks w whether it may build into or drop from s's database
// (workload.Guard); nil when w has nothing to refuse.
func (s *Session) Guard(ctx context.Context, w workload.Workload) error {
	if g, ok := w.(workload.Guard); ok {
		return g.Guard(ctx, s.Ctl)
	}
	return nil
}
