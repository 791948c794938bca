// Package workload holds the contracts between a benchmark workload (what to
// run), a database package (where and how it is sent) and the engine (when and
// how many). A workload never names a database; a database never names a
// transaction; the engine names neither.
package workload

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Mode is how a virtual user's transactions travel to the database. Every
// mode runs exactly the same transaction logic with the same inputs; only the
// number of round trips and the work the server repeats per statement differ.
type Mode int

const (
	// ModeProcedure sends one call of a server-side procedure or function per
	// transaction: one round trip (plus BEGIN/COMMIT where the driver sends
	// them). The server parses the routine once; the client only makes inputs.
	// Needs a database with stored procedures (not SQLite).
	ModeProcedure Mode = iota + 1
	// ModeClient sends every statement as its own round trip with the values
	// written into the SQL text as literals (HammerDB's "no stored
	// procedures"). The server parses and plans every statement every time.
	ModeClient
	// ModePrepared sends every statement as its own round trip as a prepared
	// statement with bound parameters, prepared once per connection. Parsing
	// is paid once; round trips are the same as ModeClient.
	ModePrepared
	// ModePipeline sends the client's statements without waiting for each
	// answer: every statement whose inputs do not depend on an earlier
	// result joins one group, sent as one round trip (PostgreSQL: extended
	// protocol pipeline with one Sync per group; MariaDB: one multi-statement
	// text). Statements are the same as ModePrepared's.
	ModePipeline
	// ModeBatched sends set-oriented client SQL, as go-tpc and careful
	// applications write it: one statement reads or writes the rows of
	// every order line (IN lists, multi-row INSERT, one UPDATE for many
	// rows), prepared once per connection. Fewer statements and round trips
	// than ModePrepared, with the logic still in the client.
	ModeBatched
	// ModeBlock sends each transaction's logic as one anonymous block with
	// the inputs written in as literals (MariaDB BEGIN NOT ATOMIC … END,
	// PostgreSQL DO): one round trip like ModeProcedure, but the server
	// parses and compiles the code every time. The block is the procedure's
	// own body, so the two differ only in that caching.
	ModeBlock
)

var modeNames = map[Mode]string{
	ModeProcedure: "procedure",
	ModeClient:    "client",
	ModePrepared:  "prepared",
	ModePipeline:  "pipeline",
	ModeBatched:   "batched",
	ModeBlock:     "block",
}

func (m Mode) String() string {
	if s, ok := modeNames[m]; ok {
		return s
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// Modes lists every mode, in documentation order: the three of old first
// (compare's default matrix), then those issue 13 added.
func Modes() []Mode {
	return []Mode{ModeProcedure, ModeClient, ModePrepared, ModeBatched, ModePipeline, ModeBlock}
}

// ModeList is the modes' names for messages: "procedure, client, …".
func ModeList() string {
	var b strings.Builder
	for i, m := range Modes() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(m.String())
	}
	return b.String()
}

// ProcedureLike reports whether m runs a whole transaction in one call of
// a "<tx>.call" statement: the workload's logic is in the server.
func (m Mode) ProcedureLike() bool { return m == ModeProcedure || m == ModeBlock }

// ParseMode turns a --mode value into a Mode.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes() {
		if strings.EqualFold(s, modeNames[m]) {
			return m, nil
		}
	}
	return 0, fmt.Errorf("unknown mode %q: use %s", s, ModeList())
}

// ModeChecker is implemented by workloads that run only some modes (TPC-B
// has no set-oriented form for ModeBatched). SupportsMode's error is the
// one line the user sees.
type ModeChecker interface {
	SupportsMode(m Mode) error
}

// CheckMode is w's own answer on m: nil unless w is a ModeChecker that
// refuses it.
func CheckMode(w Workload, m Mode) error {
	if mc, ok := w.(ModeChecker); ok {
		return mc.SupportsMode(m)
	}
	return nil
}

// Expected outcomes of a transaction, matched with errors.Is.
var (
	// ErrUserAbort marks a rollback the workload asked for (TPC-C's 1%
	// New-Order with an unused item). It counts as a completed transaction.
	ErrUserAbort = errors.New("user abort")
	// ErrRetry marks a conflict the database resolved by aborting us
	// (deadlock, serialization failure, SQLite busy). Retrying the same
	// inputs may succeed. Database packages wrap their errors so that
	// errors.Is(err, ErrRetry) holds.
	ErrRetry = errors.New("retryable conflict")
	// ErrNoRows is returned by Row.Scan when a query found nothing.
	ErrNoRows = errors.New("no rows")
	// ErrNoSchema is returned when a statement needs a table that does not
	// exist: the schema was never built, or was dropped.
	ErrNoSchema = errors.New("schema not built")
	// ErrConnLost marks a failure that ended the session: the server
	// closed or killed the connection, or restarted. The engine reconnects.
	ErrConnLost = errors.New("connection lost")
)

// Breakable is implemented by sessions that can tell they are closed, so
// a failure the database package did not classify still leads to a
// reconnect rather than to failing every later transaction.
type Breakable interface {
	Broken() bool
}

// TxOptions tells the database what a transaction will do, so it can pick
// the cheapest correct way to run it (SQLite: BEGIN IMMEDIATE for writers so
// they never fail on a lock upgrade; BEGIN DEFERRED for readers).
type TxOptions struct {
	ReadOnly bool
}

// Row is one result row. Portable scan targets are *int64, *float64, *string
// and *any (use *any for nullable or display-only columns such as dates).
type Row interface {
	Scan(dest ...any) error
}

// Rows is a result set; always Close it.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Conn is one virtual user's session. Statements are referred to by name;
// the database package owns their text (native placeholders) and how they
// travel (Mode). Arguments are int64, float64, string or nil.
type Conn interface {
	Mode() Mode
	Exec(ctx context.Context, stmt string, args ...any) (int64, error)
	QueryRow(ctx context.Context, stmt string, args ...any) Row
	Query(ctx context.Context, stmt string, args ...any) (Rows, error)
	// InTx runs fn inside BEGIN…COMMIT; it rolls back when fn returns an
	// error and returns that error (wrapped errors keep their identity).
	InTx(ctx context.Context, opts TxOptions, fn func(ctx context.Context) error) error
	Close(ctx context.Context) error
}

// Publisher is a Conn whose server takes the session's commits and rollbacks
// into its database-wide counters only now and then (PostgreSQL: when the
// session goes idle, at most once a second). Publish, called between
// transactions, makes the server take them now, so that a reading of the
// counters at an edge of the measured interval holds every transaction
// before it and none after. It reports how many transactions Publish itself
// added to those counters, and ok=false when the server cannot do it.
type Publisher interface {
	Publish(ctx context.Context) (added int64, ok bool, err error)
}

// TxType is one transaction type of a workload's mix.
type TxType struct {
	Name   string        // short name, as HammerDB calls it: "neword"
	Key    string        // its key in --json when it differs from Name: "new_order"
	Weight int           // cards of this type in one deck
	Keying time.Duration // fixed keying time before the transaction (--keying-thinking)
	Think  time.Duration // mean think time after it (negative exponential)
}

// Table is one table's initial population, produced in batches. Batch i is a
// pure function of the workload's seed and i, so batches can be generated in
// any order, on any goroutine, and again identically.
type Table struct {
	Name    string
	Columns []string
	Batches int
	Rows    int64 // total rows over all batches, for progress
	// Fill appends the rows of batch i to buf[:0] and returns it.
	Fill func(i int, buf [][]any) [][]any
	// PlainText promises that every string cell is printable ASCII with
	// no backslash (dbgen's word lists and alphabets): a loader may write
	// it without looking for what to escape.
	PlainText bool
}

// Check is one consistency condition. The database package defines the
// statement "check.<ID>", which returns one integer: the number of violations.
type Check struct {
	ID   string // "1".."12"
	Desc string
	// Skip, when set, is asked before the check runs; a non-empty answer is
	// the reason the condition does not apply to this database state.
	Skip func(ctx context.Context, c Conn) (string, error)
	// SQL, when set, is the condition as the text of one statement that
	// returns the number of violations, run through the session's
	// SQLConn (a workload that renders its own SQL) instead of
	// "check.<ID>".
	SQL string
}

// Workload is what to run, independent of any database.
type Workload interface {
	Name() string // "tpcc"; also the sql/<name>/ folder of each database package
	Validate() error
	// Tables is the initial population in load order. The last table is
	// loaded only after every other one is complete, so it can serve as the
	// marker of a finished build.
	Tables() []Table
	Mix() []TxType
	// Statements names every statement the workload uses in mode m; every
	// database that supports m defines exactly these (plus checks).
	Statements(m Mode) []string
	Checks() []Check
	// Attach reads what a run needs from a built schema (scale, load-time
	// constants). It fails with ErrNoSchema when there is none.
	Attach(ctx context.Context, c Conn) error
	// NewTerminal makes virtual user vu's state (of vus in all): home
	// warehouse, deck, random source. Called after Attach.
	NewTerminal(vu, vus int, seed uint64) Terminal
}

// Terminal is one virtual user's source of transactions.
type Terminal interface {
	// Next draws the next transaction from the deck with fresh inputs.
	// The Txn may be the terminal's own, reused (one per kind, its
	// statements bound once: issue 26): it is valid until the next call
	// of Next, so a caller runs it (and retries it) before drawing again
	// and keeps nothing of it past that.
	Next() Txn
}

// Txn is one transaction with its inputs drawn. Run may be called again with
// the same inputs after it failed with ErrRetry.
type Txn interface {
	Kind() int // index into Workload.Mix()
	Run(ctx context.Context, c Conn) error
}

// Meter is implemented by workloads with a business counter read from the
// database, such as TPC-C's new orders (Σ d_next_o_id).
type Meter interface {
	MeterName() string // "NOPM"
	Meter(ctx context.Context, c Conn) (int64, error)
}

// MeterTxn is implemented by a Meter whose counter grows by one with each
// commit of one mix type (TPC-C: New-Order), so a live display can follow
// it from the client's own counts without asking the database.
type MeterTxn interface {
	MeterKind() int // index into Workload.Mix()
}

// Scaler is implemented by workloads with a scale factor to report, such as
// TPC-C's warehouses. After Attach it reports the built schema's scale.
type Scaler interface {
	Scale() (unit string, n int) // ("warehouses", 4)
}

// Describer is implemented by workloads with pgbench's "transaction type"
// line: a builtin's description, a script's name, or "multiple scripts".
type Describer interface {
	Description() string
}

// Sharer is implemented by workloads that split their virtual users among
// the workers of a scale-out run their own way (TPC-C: by home warehouse,
// so that each worker's terminals touch a contiguous range of warehouses).
// Share returns the global indices of the VUs worker k of n runs, of vus in
// all, and a description ("warehouses 1-5", "warehouse 6"); together the workers run
// every VU exactly once. Called after Attach. Its error is one line: the
// run cannot be split so.
type Sharer interface {
	Share(k, n, vus int) (ids []int, desc string, err error)
}

// Share is worker k of n's share of vus virtual users: w's own (Sharer),
// or a contiguous range of them ("clients 0-3", pgbench's word).
func Share(w Workload, k, n, vus int) ([]int, string, error) {
	if n < 1 || k < 0 || k >= n {
		return nil, "", fmt.Errorf("worker index %d out of range 0-%d", k, n-1)
	}
	if n > vus {
		return nil, "", fmt.Errorf("--workers %d is more than --vus %d: each worker needs a virtual user", n, vus)
	}
	if s, ok := w.(Sharer); ok {
		return s.Share(k, n, vus)
	}
	lo, hi := k*vus/n, (k+1)*vus/n
	ids := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		ids = append(ids, i)
	}
	return ids, RangeText("client", "clients", lo, hi-1), nil
}

// RangeText names the range lo..hi of a share: "clients 0-3", or
// "client 2" when it holds one (not "clients 2-2").
func RangeText(one, many string, lo, hi int) string {
	if lo == hi {
		return fmt.Sprintf("%s %d", one, lo)
	}
	return fmt.Sprintf("%s %d-%d", many, lo, hi)
}

// FailClass is the class of a failed transaction's error, as pgbench's
// --failures-detailed splits them. The database packages sort their
// errors (db.FailClasser); the engine counts them (engine.FailCounts).
type FailClass uint8

const (
	FailOther         FailClass = iota // any other error
	FailSerialization                  // a serialization failure (SQLSTATE 40001)
	FailDeadlock                       // a deadlock (SQLSTATE 40P01)
)
