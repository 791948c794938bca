// Package tpcb is pgbench's TPC-B-like workload ("TPC-B (sort of)") with
// its three builtin scripts, tpcb-like, simple-update and select-only,
// written once against named statements (docs/tpcb.md): the four tables
// and their population as pgbench -i makes them, the builtins' random
// inputs and statements, and three consistency conditions over the
// balances. Like pgbench's, it is not a TPC-B result.
package tpcb

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/workload"
)

// Population per unit of scale (pgbench: nbranches, ntellers, naccounts).
const (
	branchesPerScale = 1
	tellersPerScale  = 10
	accountsPerScale = 100_000
	// maxScale keeps every aid inside a 32-bit int column: 100,000 ×
	// 20,000 = 2·10⁹ < 2³¹. pgbench switches aid to bigint from here on;
	// sledge stops instead.
	maxScale = 20_000
)

func init() {
	workload.Register(workload.Meta{
		Name:        "tpcb",
		Description: "pgbench's TPC-B-like builtins (tpcb-like, simple-update, select-only) on pgbench's four tables; not a TPC-B result",
		Flags:       flags,
		Throughput:  "tps",
	})
}

// flags binds the workload's options for cmd and returns its constructor.
func flags(cmd string, fs *pflag.FlagSet) func(seed uint64) (workload.Workload, error) {
	// Commands other than build start from scale 1; Attach replaces it with
	// the scale of the schema.
	cfg := Config{Scale: 1}
	var specs []string
	switch cmd {
	case "build":
		fs.IntVarP(&cfg.Scale, "scale", "s", 1,
			fmt.Sprintf("scale factor (pgbench -s): %d branch, %d tellers and %s accounts each (1..%d)",
				branchesPerScale, tellersPerScale, "100,000", maxScale))
		initFlags(fs, &cfg.Init)
	case "run":
		fs.StringArrayVarP(&specs, "builtin", "b", nil,
			"pgbench builtin script NAME[@WEIGHT]: tpcb-like (default), simple-update or select-only; unambiguous prefixes work; repeat for a weighted mix")
	}
	return func(seed uint64) (workload.Workload, error) {
		c := cfg
		c.Seed = seed
		if f := fs.Lookup("init-steps"); f != nil && f.Changed && c.Init.Steps == "" {
			return nil, errors.New("no initialization steps specified (-I)")
		}
		if len(specs) > 0 {
			mix, err := ParseBuiltins(specs)
			if err != nil {
				return nil, err
			}
			c.Builtins = mix
		}
		w := New(c)
		if err := w.Validate(); err != nil {
			return nil, err
		}
		return w, nil
	}
}

// Config is what the user chose.
type Config struct {
	// Scale is the scale factor to build. For run and check, Attach
	// replaces it with the scale found in the schema.
	Scale int
	// Builtins is the mix of a run, one entry per builtin in the order
	// given; empty means tpcb-like alone (pgbench's default).
	Builtins []Weighted
	// Seed drives the inputs of a run. The population has no random part.
	Seed uint64
	// Init are pgbench's initialization options (build only).
	Init InitOptions
}

// Workload is TPC-B-like. Attach may change its scale; after that it is
// read-only and safe for concurrent use (Fill funcs and NewTerminal).
type Workload struct {
	cfg   Config
	scale int // cfg.Scale, or the built scale after Attach
	mix   []Weighted
}

var (
	_ workload.Workload     = (*Workload)(nil)
	_ workload.Scaler       = (*Workload)(nil)
	_ workload.BuildPlanner = (*Workload)(nil)
)

// New makes the workload; call Validate before using it with user input.
func New(cfg Config) *Workload {
	mix := cfg.Builtins
	if len(mix) == 0 {
		mix = []Weighted{{Builtin: TPCBLike, Weight: 1}}
	}
	return &Workload{cfg: cfg, scale: cfg.Scale, mix: mix}
}

// Name is also the sql/<name>/ folder of every database package.
func (w *Workload) Name() string { return "tpcb" }

// Validate checks the configuration; each error is one line naming the flag.
func (w *Workload) Validate() error {
	switch {
	case w.cfg.Scale < 1:
		return errors.New("--scale must be at least 1")
	case w.cfg.Scale > maxScale:
		return fmt.Errorf("--scale must be at most %d: beyond it aid no longer fits the int columns (pgbench would switch to bigint)", maxScale)
	}
	if err := w.cfg.Init.validate(); err != nil {
		return err
	}
	return validMix(w.mix)
}

// ScaleFactor is the scale: configured, or read from the schema by Attach.
func (w *Workload) ScaleFactor() int { return w.scale }

// Scale reports the scale factor for progress and results.
func (w *Workload) Scale() (unit string, n int) { return "scale", w.scale }

// Mix has one type per builtin of the run, named as pgbench names the
// builtin, in the order given. There is no keying or think time: pgbench
// runs each client flat out.
func (w *Workload) Mix() []workload.TxType {
	out := make([]workload.TxType, len(w.mix))
	for i, b := range w.mix {
		out[i] = workload.TxType{Name: b.Builtin.String(), Weight: b.Weight}
	}
	return out
}

// Description is what pgbench's report calls the transaction type: the
// builtin's description, or "multiple scripts" for a mix.
func (w *Workload) Description() string {
	if len(w.mix) == 1 {
		return builtinDescs[w.mix[0].Builtin]
	}
	return "multiple scripts"
}

// checks are the balance conditions every committed transaction keeps,
// whatever the mix: a tpcb-like adds delta to one branch, one teller and
// one account and writes it to one history row; a simple-update adds it to
// one account and one history row only. So branches and tellers move
// together, and accounts move with the history, each account by its own
// history rows. (sum(bbalance) = sum(abalance) = sum(delta) holds too, but
// only until the first simple-update: docs/tpcb.md.)
func checks() []workload.Check {
	return []workload.Check{
		{ID: "1", Desc: "sum(bbalance) = sum(tbalance)"},
		{ID: "2", Desc: "sum(abalance) = sum(delta) of pgbench_history"},
		{ID: "3", Desc: "abalance = sum(delta) of the account's history rows, per account"},
	}
}

// Checks returns the consistency conditions; statement "check.<ID>"
// counts the violations (0 or 1 for the sums, accounts for check 3).
func (w *Workload) Checks() []workload.Check { return checks() }

// Attach reads the scale from the schema: the number of branches, the
// table the build loads last (so an unfinished build has none). A
// partially loaded branch table is caught by its tellers, which are
// complete before any branch is loaded: there must be ten per branch.
func (w *Workload) Attach(ctx context.Context, c workload.Conn) error {
	var branches, tellers int64
	err := c.QueryRow(ctx, stmtScale).Scan(&branches, &tellers)
	if err != nil {
		if errors.Is(err, workload.ErrNoSchema) {
			return fmt.Errorf("no TPC-B schema: run `sledge build tpcb` first: %w", err)
		}
		return fmt.Errorf("tpcb: read the scale: %w", err)
	}
	switch {
	case branches == 0:
		return fmt.Errorf("no complete TPC-B schema (pgbench_branches is empty: the build did not finish): run `sledge build tpcb` again: %w", workload.ErrNoSchema)
	case tellers != tellersPerScale*branches:
		return fmt.Errorf("no complete TPC-B schema (%d branches but %d tellers: the build did not finish): run `sledge build tpcb` again: %w",
			branches, tellers, workload.ErrNoSchema)
	case branches > maxScale:
		return fmt.Errorf("the TPC-B schema has scale %d; sledge supports up to %d (int aid columns)", branches, maxScale)
	}
	w.scale = int(branches)
	return nil
}
