package engine

import (
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

// TxLog receives the end of each transaction of the measured interval, for
// pgbench's transaction logs (-l, --aggregate-interval: internal/txlog).
// Tx is called by the VU's own goroutine only, never for two transactions
// of one VU at once, and must not block or allocate: it is on the VU's hot
// path. Begin is called once, before the first Tx, with the start of the
// measured interval.
type TxLog interface {
	Begin(measureStart time.Time)
	Tx(vu int, e TxEnd)
}

// TxStatus is how a logged transaction ended.
type TxStatus uint8

const (
	TxOK      TxStatus = iota // committed, or rolled back by the workload on purpose
	TxFailed                  // failed with an error (after its retries)
	TxSkipped                 // not sent: already later than -L behind its -R schedule
)

// TxEnd is one transaction's end, as a transaction log records it.
type TxEnd struct {
	Kind    int           // its type: the index in Plan.Mix (pgbench's script number)
	End     time.Time     // when it completed (skipped: when it was skipped)
	Latency time.Duration // from the schedule (-R), the ask for a session or its first statement; 0 unless TxOK
	Lag     time.Duration // schedule lag (-R): its start behind its schedule; 0 unless TxOK
	Retries int64         // retries after conflicts
	Status  TxStatus
	Class   workload.FailClass // TxFailed: its error's class (Plan.ClassifyFailure)
}
