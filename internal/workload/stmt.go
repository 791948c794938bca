package workload

import (
	"context"
	"fmt"
)

// Stmt is one named statement bound, once, to the variables its arguments
// are read from and its results are written to: the hot path's contract
// between a workload and a database (issue 26). A terminal builds its
// Stmts when it is made and changes only the variables they point at
// before each call, so a call boxes nothing and allocates nothing; a
// database that implements StmtConn reads the arguments through the
// pointers and writes each result column straight into Dest.
//
// Args holds pointers, one per placeholder, of these types:
//
//	*int64, *float64, *string, *[]byte, *bool, *NullInt64
//
// Dest holds pointers, one per result column, of these types:
//
//	*int64, *float64, *[]byte (the column's bytes are copied into the
//	slice's own array, grown when too short: reuse it and nothing is
//	allocated), *string (allocates: off the hot path), *bool,
//	*NullInt64, *any (allocates; the Row.Scan value)
//
// A Stmt is used by one goroutine at a time; it may be used on any Conn of
// the workload's (a terminal may change connections between transactions).
type Stmt struct {
	Name string
	Args []any
	Dest []any

	sd *scanDest // the fallback's scan targets for Dest, made on first use
}

// scanDest returns the fallback's scan targets for s.Dest, made once
// (issue 26, helper A: the fallback allocates them no more per call) and
// again only when Dest was replaced.
func (s *Stmt) scanDest() *scanDest {
	if sd := s.sd; sd != nil && len(sd.dest) == len(s.Dest) && (len(s.Dest) == 0 || &sd.dest[0] == &s.Dest[0]) {
		return sd
	}
	s.sd = newScanDest(s.Dest)
	return s.sd
}

// Bind returns a Stmt for name with its arguments and destinations.
func Bind(name string, args []any, dest ...any) *Stmt {
	return &Stmt{Name: name, Args: args, Dest: dest}
}

// NullInt64 is a nullable integer argument or result column.
type NullInt64 struct {
	V     int64
	Valid bool // false: SQL NULL
}

// StmtConn is a Conn that runs bound statements itself, without boxing the
// arguments (the hot path's contract). ExecStmt, QueryRowStmt and
// QueryStmt below use it when a Conn is one and fall back to Exec,
// QueryRow and Query otherwise, so every database runs every workload
// whether or not it implements StmtConn.
type StmtConn interface {
	// ExecStmt runs s and returns the number of rows it affected.
	ExecStmt(ctx context.Context, s *Stmt) (int64, error)
	// QueryRowStmt runs s and scans its first row into s.Dest; ErrNoRows
	// when it returned none. Further rows are read and discarded.
	QueryRowStmt(ctx context.Context, s *Stmt) error
	// QueryStmt runs s and scans each row into s.Dest, then calls row;
	// an error from row stops the reading and is returned (the rest of
	// the result is read and discarded so that the session stays usable).
	QueryStmt(ctx context.Context, s *Stmt, row func() error) error
}

// ExecStmt runs s on c: through StmtConn when c is one, else through Exec
// with the arguments' values.
func ExecStmt(ctx context.Context, c Conn, s *Stmt) (int64, error) {
	if sc, ok := c.(StmtConn); ok {
		return sc.ExecStmt(ctx, s)
	}
	return c.Exec(ctx, s.Name, ArgValues(s.Args)...)
}

// QueryRowStmt runs s on c and scans its first row into s.Dest.
func QueryRowStmt(ctx context.Context, c Conn, s *Stmt) error {
	if sc, ok := c.(StmtConn); ok {
		return sc.QueryRowStmt(ctx, s)
	}
	sd := s.scanDest()
	if err := c.QueryRow(ctx, s.Name, ArgValues(s.Args)...).Scan(sd.targets...); err != nil {
		return err
	}
	return sd.store()
}

// QueryStmt runs s on c, scanning each row into s.Dest and calling row.
func QueryStmt(ctx context.Context, c Conn, s *Stmt, row func() error) error {
	if sc, ok := c.(StmtConn); ok {
		return sc.QueryStmt(ctx, s, row)
	}
	rows, err := c.Query(ctx, s.Name, ArgValues(s.Args)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	sd := s.scanDest()
	for rows.Next() {
		if err := rows.Scan(sd.targets...); err != nil {
			return err
		}
		if err := sd.store(); err != nil {
			return err
		}
		if err := row(); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return rows.Close()
}

// ArgValues reads bound arguments into the values Conn.Exec takes (int64,
// float64, string, bool or nil): the fallback's boxing, which StmtConn
// avoids.
func ArgValues(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch p := a.(type) {
		case *int64:
			out[i] = *p
		case *float64:
			out[i] = *p
		case *string:
			out[i] = *p
		case *[]byte:
			out[i] = string(*p)
		case *bool:
			out[i] = *p
		case *NullInt64:
			if p.Valid {
				out[i] = p.V
			}
		case nil:
			out[i] = nil
		default:
			panic(fmt.Sprintf("workload: bound argument %d is a %T", i, a)) // programmer error
		}
	}
	return out
}

// scanDest maps bound destinations onto Row.Scan's portable targets.
type scanDest struct {
	dest    []any
	targets []any
	vals    []any // Scan's *any targets for *[]byte, *bool and *NullInt64
}

func newScanDest(dest []any) *scanDest {
	sd := &scanDest{dest: dest, targets: make([]any, len(dest)), vals: make([]any, len(dest))}
	for i, d := range dest {
		switch d.(type) {
		case *int64, *float64, *string, *any:
			sd.targets[i] = d
		case *[]byte, *bool, *NullInt64:
			sd.targets[i] = &sd.vals[i]
		default:
			panic(fmt.Sprintf("workload: bound destination %d is a %T", i, d)) // programmer error
		}
	}
	return sd
}

// store writes the values Scan read into *any targets to their bound
// destinations.
func (sd *scanDest) store() error {
	for i, d := range sd.dest {
		v := sd.vals[i]
		switch p := d.(type) {
		case *[]byte:
			switch x := v.(type) {
			case nil:
				*p = (*p)[:0]
			case string:
				*p = append((*p)[:0], x...)
			case []byte:
				*p = append((*p)[:0], x...)
			default:
				*p = fmt.Appendf((*p)[:0], "%v", x)
			}
		case *bool:
			switch x := v.(type) {
			case bool:
				*p = x
			case int64:
				*p = x != 0
			case nil:
				*p = false
			default:
				return fmt.Errorf("column %d: %T is not a boolean", i, v)
			}
		case *NullInt64:
			switch x := v.(type) {
			case nil:
				*p = NullInt64{}
			case int64:
				*p = NullInt64{V: x, Valid: true}
			case float64:
				*p = NullInt64{V: int64(x), Valid: true}
			default:
				return fmt.Errorf("column %d: %T is not an integer", i, v)
			}
		}
	}
	return nil
}
