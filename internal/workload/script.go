package workload

import "context"

// Protocol is how SQL written by the user (a pgbench script) travels, as
// pgbench's -M option names it.
type Protocol int

const (
	// ProtoSimple sends the command's text with each :var's value pasted in
	// as raw text. Compound commands (\;) are allowed.
	ProtoSimple Protocol = iota + 1
	// ProtoExtended sends an unnamed statement per execution with the
	// values bound as parameters (PostgreSQL's extended protocol; elsewhere
	// the nearest thing: prepare, execute, close).
	ProtoExtended
	// ProtoPrepared prepares each command once per connection and then only
	// executes it with bound values.
	ProtoPrepared
)

var protoNames = map[Protocol]string{ProtoSimple: "simple", ProtoExtended: "extended", ProtoPrepared: "prepared"}

func (p Protocol) String() string { return protoNames[p] }

// ParseProtocol turns a --protocol (-M) value into a Protocol.
func ParseProtocol(s string) (Protocol, bool) {
	for p, n := range protoNames {
		if n == s {
			return p, true
		}
	}
	return 0, false
}

// SQLQuery is one SQL command of a user's script, ready to send.
type SQLQuery struct {
	// ID is unique per command over all scripts of a run; with
	// ProtoPrepared it names the command's prepared statement.
	ID int
	// Text is the command. With ProtoSimple the values are already pasted
	// in and Args is empty; a compound command holds several statements
	// separated by ";". Otherwise each :var became the database's
	// Placeholder(n), n counting from 1 in order of appearance.
	Text string
	// Args holds one value per placeholder: int64, float64, bool, string
	// or nil (NULL).
	Args []any
}

// ResultFunc receives each result set of a command that returned rows:
// its index among the command's statements (0-based), the column names,
// the last row (each value a string, or nil for NULL) and how many rows
// it had. The slices are only valid during the call.
type ResultFunc func(stmt int, cols []string, last []any, rows int)

// ScriptConn is a session that runs SQL the user wrote (pgbench scripts)
// rather than the named statements of a database package.
type ScriptConn interface {
	Conn
	// Placeholder is how the n-th parameter (from 1) is written: "$1", "?".
	Placeholder(n int) string
	// RunSQL sends one command and reads all of its results. keep, when
	// not nil, is called for every result set with rows (\gset, \aset).
	// Errors keep their identity: errors.Is(err, ErrRetry) holds for
	// serialization failures and deadlocks only (what pgbench retries).
	RunSQL(ctx context.Context, q *SQLQuery, keep ResultFunc) error
	// InTransaction reports whether the session is inside a transaction
	// block the script opened and has not ended.
	InTransaction() bool
	// Rollback ends an open transaction block after a failure; a no-op
	// when none is open.
	Rollback(ctx context.Context) error
}

// Pipeliner is implemented by script sessions that can pipeline
// (PostgreSQL): between StartPipeline and EndPipeline, RunSQL only queues
// the command (keep must be nil); EndPipeline sends a sync, reads every
// result and returns the first error.
type Pipeliner interface {
	StartPipeline(ctx context.Context) error
	// SyncPipeline queues a sync point without waiting (\syncpipeline).
	SyncPipeline(ctx context.Context) error
	EndPipeline(ctx context.Context) error
}
