package workload

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
)

// Meta registers a workload with the CLI. Adding a workload is one folder
// with an init that calls Register, plus one blank import in workload/all.
type Meta struct {
	Name        string
	Description string
	// Flags binds the workload's own options for command cmd ("build",
	// "run", "check", "drop") to fs, and returns the constructor to call once
	// fs is parsed. seed is the command's --seed.
	Flags func(cmd string, fs *pflag.FlagSet) func(seed uint64) (Workload, error)

	// Default marks the workload commands use when none is named (one
	// workload registers it).
	Default bool
	// Rampup is the warm-up a run takes unless --rampup is given: TPC-C
	// ramps up as HammerDB does; pgbench's workloads measure at once.
	Rampup time.Duration
	// Report is how results are named and printed.
	Report Report
	// Throughput names the headline figure, as users of the workload's
	// tools know it: "NOPM", "tps", "QphH".
	Throughput string
	// SQL marks a workload that renders its SQL text itself
	// (SQLScripter, SQLConn): its sessions are db.SQLDB's, not named
	// statements in a mode.
	SQL bool
	// NewResult returns an empty result of an analytic workload (one
	// that implements Analytic), for the job store's commands to read a
	// stored summary into and print it as the run did (WriteText); nil for
	// the others, whose summaries are the runner's.
	NewResult func() AnalyticResult
}

// IsSQL reports whether the named workload renders its own SQL text.
func IsSQL(name string) bool {
	m, err := Lookup(name)
	return err == nil && m.SQL
}

// Report is how a workload's results are named and printed.
type Report int

const (
	// ReportPgbench: tps, pgbench's "number of transactions actually
	// processed", latency average; --json "transactions" is a number.
	ReportPgbench Report = iota
	// ReportTPCC: NOPM and TPM, TPC-C's response-time limits; --json
	// "transactions" is an object of the types by key.
	ReportTPCC
)

var (
	regMu sync.RWMutex
	metas = map[string]Meta{}
)

// Register makes a workload available by name.
func Register(m Meta) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := metas[m.Name]; dup {
		panic("workload: registered twice: " + m.Name) // programmer error
	}
	metas[m.Name] = m
}

// Lookup finds a registered workload.
func Lookup(name string) (Meta, error) {
	regMu.RLock()
	defer regMu.RUnlock()
	m, ok := metas[name]
	if !ok {
		return Meta{}, fmt.Errorf("unknown workload %q: known workloads are %s", name, strings.Join(namesLocked(), ", "))
	}
	return m, nil
}

// Default is the workload commands use when none is named.
func Default() string {
	regMu.RLock()
	defer regMu.RUnlock()
	for _, n := range namesLocked() {
		if metas[n].Default {
			return n
		}
	}
	return ""
}

// ReportOf is how the named workload's results are printed (pgbench's
// way for a name no workload registered).
func ReportOf(name string) Report {
	m, err := Lookup(name)
	if err != nil {
		return ReportPgbench
	}
	return m.Report
}

// Names lists the registered workloads.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	return namesLocked()
}

func namesLocked() []string {
	out := make([]string, 0, len(metas))
	for n := range metas {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
