package db

import (
	"context"
	"database/sql"
	"fmt"
)

// NamedStmts is a database/sql session's named statements, as SQLite's
// and DuckDB's sessions keep them: the workload's texts, the variants of
// the statements with repeated groups (batched mode) and the statements
// prepared so far, each on its first use.
type NamedStmts struct {
	Driver   string               // "sqlite": its messages' prefix
	Workload string               // the statements' workload, for messages
	Text     map[string]string    // shared by every session; read only
	Rep      map[string]*Repeated // statements with repeated groups, batched mode only
	// Prepared holds the prepared statements by prepared name, in the
	// modes that prepare (prepared, batched); nil: every statement is
	// sent as a literal text.
	Prepared map[string]*sql.Stmt
	Style    Placeholder // how the texts write their parameters
}

// Stmt returns the prepared statement name for nargs arguments on c,
// preparing it on first use; wrap turns the driver's error into the
// session's. A statement with repeated groups has one per repeat count
// (Repeated).
func (s *NamedStmts) Stmt(ctx context.Context, c *sql.Conn, name string, nargs int, wrap func(op, name string, err error) error) (*sql.Stmt, error) {
	prep := name
	var text string
	if r, ok := s.Rep[name]; ok {
		e, err := r.For(nargs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Driver, err)
		}
		prep, text = e.Name, e.Text
	}
	if st, ok := s.Prepared[prep]; ok {
		return st, nil
	}
	if text == "" {
		var ok bool
		if text, ok = s.Text[name]; !ok {
			return nil, s.Unknown(name)
		}
	}
	st, err := c.PrepareContext(ctx, text)
	if err != nil {
		return nil, wrap("prepare", name, err)
	}
	s.Prepared[prep] = st
	return st, nil
}

// Literal returns the text of statement name with args written in.
func (s *NamedStmts) Literal(name string, args []any) (string, error) {
	text, ok := s.Text[name]
	if !ok {
		return "", s.Unknown(name)
	}
	q, err := Interpolate(text, s.Style, args)
	if err != nil {
		return "", fmt.Errorf("%s: %s: %w", s.Driver, name, err)
	}
	return q, nil
}

// Unknown is the error for a statement the workload's texts lack.
func (s *NamedStmts) Unknown(name string) error {
	return fmt.Errorf("%s: no statement %q for workload %s", s.Driver, name, s.Workload)
}
