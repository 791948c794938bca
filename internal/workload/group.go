package workload

import "context"

// Want is what the caller will read of a statement queued in a group, so
// a database can choose how to send the group (Grouper).
type Want uint8

const (
	// WantNothing is an exec whose row count is not read.
	WantNothing Want = iota
	// WantCount is an exec whose row count is read (Grouper.Count).
	WantCount
	// WantRows is a query whose rows are read (Grouper.Row, Grouper.Rows).
	WantRows
)

// Grouper is a session in ModePipeline: the caller queues statements whose
// inputs it knows, sends them as one group, and only then reads their
// results. A transaction's BEGIN is queued with its first group and its
// COMMIT with its last, so a transaction costs one round trip per group.
// (Pipeliner is the other kind: a pgbench script's \startpipeline.)
//
// One group is built and read at a time; the results of a group are valid
// until the next Queue or Begin.
type Grouper interface {
	// Begin queues BEGIN (READ ONLY with opts.ReadOnly) as the next
	// statement of the group.
	Begin(opts TxOptions)
	// Queue adds statement stmt with args to the group and returns its
	// index (0, 1, … in the order of Begin, Queue and Commit calls), by
	// which its result is read after Send. Nothing is sent.
	Queue(want Want, stmt string, args ...any) int
	// Commit queues COMMIT as the next statement of the group.
	Commit()
	// Send sends the group, reads every result and empties the queue. Its
	// error is the first statement's that failed, classified as the
	// session's other calls classify it (ErrRetry, ErrConnLost,
	// ErrNoSchema); the statements after it did not take effect. After an
	// error the caller must Rollback.
	Send(ctx context.Context) error
	// Row is statement i's first row (Scan fails with ErrNoRows when it
	// has none).
	Row(i int) Row
	// Rows is statement i's result set.
	Rows(i int) Rows
	// Count is the number of rows statement i (WantCount) affected.
	Count(i int) int64
	// Rollback ends the transaction a failed group or the caller's logic
	// left open (a no-op when none is) and returns err, joined with the
	// rollback's own failure if any. It runs without ctx's cancellation,
	// so the session is usable again.
	Rollback(ctx context.Context, err error) error
}

// AsGrouper finds the Grouper behind c, looking through wrappers (the
// engine's per-statement timer) that expose Unwrap() Conn.
func AsGrouper(c Conn) (Grouper, bool) {
	for c != nil {
		if g, ok := c.(Grouper); ok {
			return g, true
		}
		u, ok := c.(interface{ Unwrap() Conn })
		if !ok {
			return nil, false
		}
		c = u.Unwrap()
	}
	return nil, false
}
