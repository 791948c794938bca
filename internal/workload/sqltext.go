package workload

import "context"

// SQLConn is a session for SQL text a workload renders itself rather
// than the named statements of a database package: TPC-H's schema, its
// 22 queries with their substitution parameters as literals, its refresh
// functions. The text is sent as it is (PostgreSQL's simple query
// protocol, MariaDB's text protocol), one statement per call.
//
// It is a Conn as well, so it can be a run's control session; its named
// statement methods (Exec, QueryRow, Query, InTx) refuse.
type SQLConn interface {
	Conn
	// ExecSQL runs one statement and discards its result, if any.
	ExecSQL(ctx context.Context, text string) error
	// QuerySQL runs one statement and calls row for every row of its
	// result, in order, with each value as the database writes it as
	// text (a date as YYYY-MM-DD, a decimal as its digits) and nil for
	// NULL; vals and its slices are valid only during the call. Every
	// row is fetched (a TPC-H query's time ends with its last row). It
	// returns the number of rows; an error from row stops the query and
	// is returned.
	QuerySQL(ctx context.Context, text string, row func(vals [][]byte) error) (int64, error)
}

// SQLScripter is a workload that owns its schema's SQL: the statements of
// a build step ("drop", "tables", "indexes", "procedures") for a dialect
// ("postgres", "mysql", "sqlite"), run in order through a SQLConn.
// Database packages then need no sql/<workload>/ files for it.
type SQLScripter interface {
	Script(dialect, step string) []string
}
