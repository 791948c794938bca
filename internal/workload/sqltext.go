package workload

import (
	"context"
	"io"
)

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

// Guard is implemented by workloads that must refuse a database before
// building into it or dropping from it: TPC-H's customer and orders
// would replace TPC-C's tables of the same names.
type Guard interface {
	Guard(ctx context.Context, c Conn) error
}

// Analytic is a workload whose run is not a mix of transactions drawn by
// virtual users but tests it drives itself, query by query (TPC-H's power
// and throughput tests). The runner opens the database, attaches the
// workload and hands it the sessions; the workload returns its result,
// which the command line prints (as JSON, or through WriteText) and the
// job store keeps, also when err is not nil (nothing measured is lost).
type Analytic interface {
	Workload
	RunAnalytic(ctx context.Context, env AnalyticEnv) (result AnalyticResult, err error)
}

// AnalyticResult is an analytic run's result: its JSON form is the
// --json contract, WriteText the summary a terminal shows.
type AnalyticResult interface {
	WriteText(w io.Writer)
}

// AnalyticFigures is an AnalyticResult that names its figures, for the
// job store's commands: jobs list shows its headline, jobs diff sets its
// figures side by side.
type AnalyticFigures interface {
	// Headline is the figure that sums the run up ("QphH"; "Power" when
	// only the power test ran), nil when it measured none.
	Headline() (name string, value *float64)
	// Figures are the figures to compare, in order: the composite ones,
	// then each query's seconds ("Q1.seconds").
	Figures() []Figure
}

// Figure is one named figure of a result.
type Figure struct {
	Name  string
	Value float64
}

// AnalyticEnv is what an analytic run works with.
type AnalyticEnv struct {
	Dialect  string // "postgres", "mysql", "sqlite"
	Database string // the database's URL, redacted
	Driver   string // and what it is: "postgres 15.10 (unix)"
	// Ctl is the control session, on which the workload was attached.
	Ctl SQLConn
	// Connect opens another session (one per query stream).
	Connect func(ctx context.Context) (SQLConn, error)
	Seed    uint64
	// Progress receives one line per step as it ends ("stream 0 Q14
	// 0.012 s, 1 row"), nil when the run is quiet (--json).
	Progress func(line string)
	// Suggest completes a command a message suggests with the run's
	// database (" --db URL", password left out) and a note naming the
	// variable for the password; nil: the command as it is.
	Suggest func(cmd string) (how, note string)
}
