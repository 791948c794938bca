package db

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// OpError is a failed database call: the database, the operation, the
// statement name and the driver's error, classified for the engine. Unwrap
// returns both the original error and the workload sentinel (ErrRetry,
// ErrNoRows, ErrNoSchema, ErrUserAbort), so errors.Is matches either. The
// message is built only when read, so an expected outcome (no rows) costs
// one small allocation.
type OpError struct {
	DB, Op, Stmt string
	Err          error
	Kind         error // a workload sentinel, or nil
}

func (e *OpError) Error() string {
	s := e.DB + ": " + e.Op
	if e.Stmt != "" {
		s += " " + e.Stmt
	}
	return s + ": " + e.Err.Error()
}

func (e *OpError) Unwrap() []error {
	if e.Kind == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Kind}
}

// Classify adds the workload sentinel kind to err, keeping its message;
// err is returned as it is when kind is nil or already matches.
func Classify(err, kind error) error {
	if kind == nil || errors.Is(err, kind) {
		return err
	}
	return &classified{err: err, kind: kind}
}

type classified struct{ err, kind error }

func (e *classified) Error() string   { return e.err.Error() }
func (e *classified) Unwrap() []error { return []error{e.err, e.kind} }

// FirstLine shortens a statement for an error message.
func FirstLine(s string) string {
	s, _, cut := strings.Cut(s, "\n")
	if len(s) > 60 {
		s, cut = s[:60], true
	}
	if cut {
		s += "…"
	}
	return s
}

// NamedCache parses each workload's named statements once per database.
// The zero value is ready to use.
type NamedCache struct {
	mu sync.Mutex
	m  map[string]map[string]string
}

// Get returns the named statements of workload w from files; dbName is for
// messages ("postgres").
func (c *NamedCache) Get(files SQLFiles, dbName, w string) (map[string]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.m[w]; ok {
		return m, nil
	}
	m, err := files.Named(w)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dbName, err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("%s: workload %s has no statements (sql/%s/statements.sql)", dbName, w, w)
	}
	if c.m == nil {
		c.m = map[string]map[string]string{}
	}
	c.m[w] = m
	return m, nil
}
