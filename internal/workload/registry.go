package workload

import (
	"fmt"
	"sort"
	"strings"
	"sync"

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
}

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
