package workload

import (
	"context"
	"errors"
	"time"
)

// ErrCannotPrelude marks a Prelude's refusal that is the user's to fix
// (a build --validate has no reference for, or one terminals have already
// changed): bad input, exit 2. Any other Prelude error (an answer that
// differs) exits 1.
var ErrCannotPrelude = errors.New("cannot run the prelude on this build")

// Extension is a workload built on another workload's schema and named
// statements, with tables and SQL of its own added (CH-benCHmark: TPC-C's
// nine tables, statements and checks, plus supplier, nation and region).
// The database packages know only the base: sessions, named statements
// and build scripts are the base's (Base names their sql/<base>/ folder);
// the extension's own statements (Added) run after the base's script of
// the same build step.
type Extension interface {
	Workload
	// Base is the workload whose schema and statements this one uses:
	// "tpcc".
	Base() string
	// Added is the extension's own statements for a build step ("drop",
	// "tables", "indexes", "procedures") in a dialect ("postgres",
	// "mysql", "sqlite", "duckdb"), run in order after the base's.
	Added(dialect, step string) []string
	// BaseBuilt is true once Attach found the base's build complete but
	// not the extension's own tables: a build then runs only the
	// extension's steps and loads only its tables (Tables returns them),
	// adding them to the existing base.
	BaseBuilt() bool
}

// SQLName is the name under which w's statements and scripts are found
// in the database packages: its Base when it is an Extension, else its
// own name.
func SQLName(w Workload) string {
	if e, ok := w.(Extension); ok {
		return e.Base()
	}
	return w.Name()
}

// Mixed is a workload whose run adds analytic query streams beside its
// terminals, on the same data and over the same measured interval
// (CH-benCHmark). The runner opens one SQLConn per stream, starts the
// streams with the terminals and stops them when the terminals stop; a
// query counts toward the result when it ended inside the measured
// interval.
type Mixed interface {
	Workload
	// AnalyticStreams is the number of query streams the run asked for
	// (--analytic-streams); 0: the terminals run alone.
	AnalyticStreams() int
	// Queries names the analytic queries in number order ("Q1".."Q22");
	// QueryRun.Query indexes it.
	Queries() []string
	// Stream runs stream s's queries (0-based, of AnalyticStreams in
	// all), in the stream's own order (drawn from the run's seed, as a
	// terminal's inputs are), over and over on c until ctx ends, calling done once for every query that ended (also with an
	// error, not for one that ctx cut short). A query error is reported
	// through done and the stream goes on; Stream's own error (the
	// session is lost, the schema is gone) ends the stream.
	Stream(ctx context.Context, c SQLConn, s int, seed uint64, done func(QueryRun)) error
	// Prelude runs once on c after Attach and before any terminal or
	// stream starts (the --validate pass: every query once, its answer
	// checked); progress receives one line per step, nil when quiet. Its
	// error ends the run before anything is measured.
	Prelude(ctx context.Context, c SQLConn, progress func(string)) error
}

// QueryRun is one analytic query that ended in a stream.
type QueryRun struct {
	Stream     int
	Query      int // index into Mixed.Queries()
	Start, End time.Time
	Rows       int64
	Err        error
}
