package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
)

// session is an opened database with a control connection (for schema
// metadata, checks and the counters read at the edges of a run).
type session struct {
	url  string // redacted, for messages
	raw  string
	db   db.DB
	ctl  workload.Conn
	mode workload.Mode // the control connection's mode
}

func openDB(ctx context.Context, raw string) (db.DB, error) {
	d, err := db.Open(ctx, raw)
	if err != nil {
		if errors.As(err, new(*db.URLError)) {
			return nil, err // it names the URL and what is wrong with it
		}
		return nil, fmt.Errorf("open %s: %w", db.Redact(raw), err)
	}
	return d, nil
}

// openSession opens the database and a control connection in mode m (0:
// the database's default mode). With create, a server database that does
// not exist yet is created first (build).
func openSession(ctx context.Context, raw, wl string, m workload.Mode, create bool) (s *session, err error) {
	defer removeIfRefused(raw)(&err)
	d, err := openDB(ctx, raw)
	if err != nil {
		return nil, err
	}
	if cr, ok := d.(db.Creator); ok && create {
		if err := cr.EnsureDatabase(ctx); err != nil {
			_ = d.Close()
			return nil, fmt.Errorf("create database: %w", err)
		}
	}
	if m == 0 {
		m = d.DefaultMode()
	}
	if err := d.Supports(wl, m); err != nil {
		_ = d.Close()
		return nil, usageErr("%v", err)
	}
	c, err := d.Connect(ctx, wl, m)
	if err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("connect to %s: %w", db.Redact(raw), err)
	}
	return &session{url: db.Redact(raw), raw: raw, db: d, ctl: c, mode: m}, nil
}

func (s *session) Close(ctx context.Context) {
	if s.ctl != nil {
		_ = s.ctl.Close(ctx)
	}
	_ = s.db.Close()
}

// attach reads the built schema into w. noSchema is true when there is none.
func (s *session) attach(ctx context.Context, w workload.Workload) (noSchema bool, err error) {
	err = w.Attach(ctx, s.ctl)
	if errors.Is(err, workload.ErrNoSchema) {
		return true, err
	}
	return false, err
}

// noSchemaErr says to build first, with a command that can be pasted.
func noSchemaErr(wl, raw string, explicit bool) error {
	how, note := suggest("sledge build "+wl, raw, explicit)
	return fmt.Errorf("no %s schema in %s: run `%s` first%s", wl, db.Redact(raw), how, note)
}

// suggest completes a suggested command with the database, when the user
// named one: its URL without the password, which a note says to put in
// the variable the driver reads (a REDACTED placeholder cannot be pasted).
func suggest(cmd, raw string, explicit bool) (how, note string) {
	if !explicit {
		return cmd, ""
	}
	u, env := db.Pasteable(raw)
	if env != "" {
		note = fmt.Sprintf(" (with the password in %s)", env)
	}
	return cmd + " --db " + u, note
}

func scaleText(w workload.Workload) string {
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

// missingSchemaErr says there is no usable schema of w, telling a database
// with none from one with the leftovers of an interrupted build.
func (s *session) missingSchemaErr(ctx context.Context, w workload.Workload, explicit bool) error {
	if s.incomplete(ctx, w) {
		how, note := suggest("sledge build "+w.Name(), s.raw, explicit)
		return fmt.Errorf("the %s schema in %s is incomplete: its build was interrupted or failed; run `%s`%s again, which drops what was loaded and starts over", w.Name(), s.url, how, note)
	}
	return noSchemaErr(w.Name(), s.raw, explicit)
}

// incomplete reports whether some of w's tables exist although its schema
// does not attach: what an interrupted build leaves.
func (s *session) incomplete(ctx context.Context, w workload.Workload) bool {
	tl, ok := s.db.(db.TableLister)
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
		var ee *runner.ExitError
		if *errp != nil && errors.As(*errp, &ee) && ee.Code == ExitUsage {
			for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
				_ = os.Remove(path + suffix)
			}
		}
	}
}
