package tpcb

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/sledge-bench/sledge/internal/workload"
)

// Delta bounds: pgbench's \set delta random(-5000, 5000).
const (
	minDelta = -5000
	maxDelta = 5000
)

// terminal is one virtual user, a pgbench client: its own random stream,
// and the mix to draw a builtin from before every transaction.
type terminal struct {
	r        *rand.Rand
	accounts int64 // 100,000 × scale
	branches int64
	tellers  int64
	mix      []Weighted
	total    int64  // Σ weights
	txs      []*txn // one per mix entry, reused by Next
}

var _ workload.Terminal = (*terminal)(nil)

// NewTerminal makes virtual user vu's state (0-based); seed is the run
// seed. Each VU's stream depends only on (seed, vu), so a run with the same
// seed and VUs draws the same inputs in every mode.
func (w *Workload) NewTerminal(vu, vus int, seed uint64) workload.Terminal {
	if vu < 0 || vus < 1 {
		panic("tpcb: NewTerminal needs vu >= 0 and vus >= 1") // programmer error
	}
	t := &terminal{
		r:        newRand(seed, uint64(vu)),
		accounts: int64(w.scale) * accountsPerScale,
		branches: int64(w.scale) * branchesPerScale,
		tellers:  int64(w.scale) * tellersPerScale,
		mix:      w.mix,
	}
	for kind, b := range w.mix {
		t.total += int64(b.Weight)
		tx := &txn{kind: kind, b: b.Builtin}
		tx.bind()
		t.txs = append(t.txs, tx)
	}
	return t
}

// newRand returns VU vu's stream: PCG seeded from splitmix64 of (seed, vu),
// so neighbouring seeds and VUs give unrelated streams.
func newRand(seed, vu uint64) *rand.Rand {
	a := mix64(seed ^ 0x7470636200000000) // "tpcb"
	b := mix64(a ^ mix64(vu+0x9e3779b97f4a7c15))
	return rand.New(rand.NewPCG(a, b))
}

// mix64 is the splitmix64 finalizer: a bijection that spreads every input bit.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// between is pgbench's random(lo, hi): uniform over [lo, hi], inclusive.
func (t *terminal) between(lo, hi int64) int64 { return lo + t.r.Int64N(hi-lo+1) }

// Next draws a builtin by weight (pgbench: each script with probability
// weight ÷ Σ weights; no draw when the mix has one builtin), then its
// variables in the script's order: aid, and for the updates bid, tid and
// delta, each independently uniform (the teller and branch are not the
// account's own). The transaction is the terminal's own for that builtin,
// reused: valid until the next call.
func (t *terminal) Next() workload.Txn {
	kind := 0
	if len(t.mix) > 1 {
		x := t.r.Int64N(t.total)
		for kind < len(t.mix)-1 && x >= int64(t.mix[kind].Weight) {
			x -= int64(t.mix[kind].Weight)
			kind++
		}
	}
	tx := t.txs[kind]
	tx.aid = t.between(1, t.accounts)
	if tx.b != SelectOnly {
		tx.bid = t.between(1, t.branches)
		tx.tid = t.between(1, t.tellers)
		tx.delta = t.between(minDelta, maxDelta)
	}
	return tx
}

// txn is one run of a builtin with its variables drawn. Run may be called
// again with the same inputs after a retryable failure.
type txn struct {
	kind                 int // index into Mix()
	b                    Builtin
	aid, bid, tid, delta int64
	abalance             int64 // what the builtin's SELECT read
	st                   *txnStmts
}

// txnStmts are a txn's statements, bound once to its variables, and what
// InTx runs: made once per terminal so that a transaction allocates nothing
// (issue 26). Not inputs: two txns with the same inputs are the same
// transaction whatever their bindings.
type txnStmts struct {
	accountUpdate, accountSelect, tellerUpdate, branchUpdate, historyInsert *workload.Stmt
	call                                                                    *workload.Stmt // procedure modes
	c                                                                       workload.Conn  // the session of the Run under way
	body                                                                    func(ctx context.Context) error
}

// bind makes t's statements; a txn made without NewTerminal binds on its
// first Run.
func (t *txn) bind() {
	call := stmtTPCBLikeCall
	if t.b == SimpleUpdate {
		call = stmtSimpleUpdateCall
	}
	bal := []any{&t.abalance}
	st := &txnStmts{
		accountUpdate: workload.Bind(stmtAccountUpdate, []any{&t.delta, &t.aid}),
		accountSelect: workload.Bind(stmtAccountSelect, []any{&t.aid}, bal...),
		tellerUpdate:  workload.Bind(stmtTellerUpdate, []any{&t.delta, &t.tid}),
		branchUpdate:  workload.Bind(stmtBranchUpdate, []any{&t.delta, &t.bid}),
		historyInsert: workload.Bind(stmtHistoryInsert, []any{&t.tid, &t.bid, &t.aid, &t.delta}),
		call:          workload.Bind(call, []any{&t.aid, &t.bid, &t.tid, &t.delta}, bal...),
	}
	st.body = func(ctx context.Context) error { return t.run(ctx, st.c) }
	t.st = st
}

func (t *txn) Kind() int { return t.kind }

// Run runs the builtin in the connection's mode: select-only as its one
// SELECT in autocommit (every mode); the updates as one call of the
// routine in procedure mode, else statement by statement between BEGIN and
// COMMIT, as pgbench's script does with BEGIN; … END;.
func (t *txn) Run(ctx context.Context, c workload.Conn) error {
	if t.st == nil {
		t.bind()
	}
	if t.b == SelectOnly {
		if err := workload.QueryRowStmt(ctx, c, t.st.accountSelect); err != nil {
			return fmt.Errorf("%s: select aid=%d: %w", t.b, t.aid, err)
		}
		return nil
	}
	if c.Mode().ProcedureLike() {
		if err := workload.QueryRowStmt(ctx, c, t.st.call); err != nil {
			return fmt.Errorf("%s: call aid=%d bid=%d tid=%d: %w", t.b, t.aid, t.bid, t.tid, err)
		}
		return nil
	}
	if c.Mode() == workload.ModePipeline {
		return t.pipelined(ctx, c) // pipeline.go
	}
	t.st.c = c
	err := c.InTx(ctx, workload.TxOptions{}, t.st.body)
	t.st.c = nil // the session is not the txn's to keep
	return err
}

// run is the builtin's statements in pgbench's order (docs/tpcb.md part 3).
func (t *txn) run(ctx context.Context, c workload.Conn) error {
	st := t.st
	if _, err := workload.ExecStmt(ctx, c, st.accountUpdate); err != nil {
		return fmt.Errorf("%s: update account aid=%d: %w", t.b, t.aid, err)
	}
	if err := workload.QueryRowStmt(ctx, c, st.accountSelect); err != nil {
		return fmt.Errorf("%s: select account aid=%d: %w", t.b, t.aid, err)
	}
	if t.b == TPCBLike {
		if _, err := workload.ExecStmt(ctx, c, st.tellerUpdate); err != nil {
			return fmt.Errorf("%s: update teller tid=%d: %w", t.b, t.tid, err)
		}
		if _, err := workload.ExecStmt(ctx, c, st.branchUpdate); err != nil {
			return fmt.Errorf("%s: update branch bid=%d: %w", t.b, t.bid, err)
		}
	}
	if _, err := workload.ExecStmt(ctx, c, st.historyInsert); err != nil {
		return fmt.Errorf("%s: insert history: %w", t.b, err)
	}
	return nil
}
