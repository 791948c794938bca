package tpcb

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Builtin is one of pgbench's builtin scripts (docs/tpcb.md part 3).
type Builtin int

const (
	// TPCBLike is "<builtin: TPC-B (sort of)>": update an account, read
	// its balance, update a teller and a branch, insert a history row.
	TPCBLike Builtin = iota
	// SimpleUpdate is "<builtin: simple update>" (pgbench -N): tpcb-like
	// without the teller and branch updates.
	SimpleUpdate
	// SelectOnly is "<builtin: select only>" (pgbench -S): one read of an
	// account's balance, outside any transaction block.
	SelectOnly
	numBuiltins
)

// builtinNames are pgbench's names, in pgbench's order (which -b list
// prints and prefixes are matched against).
var builtinNames = [numBuiltins]string{"tpcb-like", "simple-update", "select-only"}

// builtinDescs are pgbench's descriptions of the builtins, its report's
// "transaction type".
var builtinDescs = [numBuiltins]string{"<builtin: TPC-B (sort of)>", "<builtin: simple update>", "<builtin: select only>"}

func (b Builtin) String() string {
	if b >= 0 && b < numBuiltins {
		return builtinNames[b]
	}
	return fmt.Sprintf("builtin(%d)", int(b))
}

// Weighted is a builtin with its weight in the mix.
type Weighted struct {
	Builtin Builtin
	Weight  int
}

// findBuiltin resolves a name as pgbench does: every builtin whose name
// starts with it matches, and exactly one must ("s" is ambiguous, "si"
// is simple-update).
func findBuiltin(name string) (Builtin, error) {
	found, n := Builtin(0), 0
	for b := range numBuiltins {
		if name != "" && strings.HasPrefix(builtinNames[b], name) {
			found, n = b, n+1
		}
	}
	switch n {
	case 1:
		return found, nil
	case 0:
		return 0, fmt.Errorf("--builtin: no builtin script %q: choose tpcb-like, simple-update or select-only", name)
	}
	return 0, fmt.Errorf("--builtin: %q is ambiguous (%d builtin scripts start with it): choose tpcb-like, simple-update or select-only", name, n)
}

// ParseBuiltins reads --builtin values, each NAME[@WEIGHT] (pgbench -b):
// the weight defaults to 1 and may be 0 (never drawn). A builtin given
// twice is one entry with the weights added, which draws it just as often.
func ParseBuiltins(specs []string) ([]Weighted, error) {
	var out []Weighted
	for _, spec := range specs {
		name, weight, hasWeight := strings.Cut(spec, "@")
		b, err := findBuiltin(name)
		if err != nil {
			return nil, err
		}
		wt := 1
		if hasWeight {
			n, err := strconv.ParseInt(weight, 10, 32)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("--builtin %s: the weight must be an integer from 0 to %d", spec, math.MaxInt32)
			}
			wt = int(n)
		}
		merged := false
		for i := range out {
			if out[i].Builtin == b {
				if int64(out[i].Weight)+int64(wt) > math.MaxInt32 {
					return nil, fmt.Errorf("--builtin %s: the weights of %s add up to more than %d", spec, b, math.MaxInt32)
				}
				out[i].Weight += wt
				merged = true
			}
		}
		if !merged {
			out = append(out, Weighted{Builtin: b, Weight: wt})
		}
	}
	return out, validMix(out)
}

// validMix: at least one builtin, weights not negative, not all zero
// (pgbench: "total script weight must not be zero").
func validMix(mix []Weighted) error {
	if len(mix) == 0 {
		return errors.New("--builtin: no builtin script given")
	}
	total := 0
	for _, w := range mix {
		if w.Builtin < 0 || w.Builtin >= numBuiltins {
			return fmt.Errorf("--builtin: unknown builtin %d", int(w.Builtin))
		}
		if w.Weight < 0 {
			return fmt.Errorf("--builtin %s: the weight must not be negative", w.Builtin)
		}
		total += w.Weight
	}
	if total == 0 {
		return errors.New("--builtin: the weights add up to zero: give at least one builtin a positive weight")
	}
	return nil
}
