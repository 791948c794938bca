package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// Common holds the options every command shares.
type Common struct {
	DB       string // --db, or the positional URL
	JSON     bool   // --json
	Seed     uint64 // --seed
	SeedSet  bool   // --seed was given
	Workload string // the workload's name, resolved
	wlNew    map[string]func(seed uint64) (workload.Workload, error)
	shared   []*sharedFlag
	Explicit bool // the user named the database (flag or SLEDGE_DB)
}

// sharedFlag is one flag name two workloads both define (tpcb's whole
// --scale and tpch's fractional one): a value given is set in each, and
// it is bad input only if the workload that runs refused it.
type sharedFlag struct {
	name   string
	order  []string
	vals   map[string]pflag.Value
	errs   map[string]error
	usages map[string]string // each workload's help text
}

// usage is the shared flag's help: each text once, after the workloads
// that give it ("ch, tpcc: number of warehouses…; tpcb: …").
func (s *sharedFlag) usage() string {
	var texts []string
	names := map[string][]string{}
	for _, n := range s.order {
		u := s.usages[n]
		if _, seen := names[u]; !seen {
			texts = append(texts, u)
		}
		names[u] = append(names[u], n)
	}
	parts := make([]string, len(texts))
	for i, u := range texts {
		parts[i] = strings.Join(names[u], ", ") + ": " + u
	}
	return strings.Join(parts, "; ")
}

func (s *sharedFlag) String() string { return s.vals[s.order[0]].String() }

func (s *sharedFlag) Type() string {
	t := s.vals[s.order[0]].Type()
	for _, wl := range s.order[1:] {
		if s.vals[wl].Type() != t {
			return "number"
		}
	}
	return t
}

func (s *sharedFlag) Set(v string) error {
	var first error
	ok := false
	for _, wl := range s.order {
		if err := s.vals[wl].Set(v); err != nil {
			s.errs[wl] = err
			if first == nil {
				first = err
			}
		} else {
			delete(s.errs, wl)
			ok = true
		}
	}
	if ok {
		return nil
	}
	return first
}

// CommonFlags binds the common options to fs, the workloads' own flags
// for the command name included.
func CommonFlags(fs *pflag.FlagSet, c *Common, name string, defaultSeed uint64) {
	fs.StringVar(&c.DB, "db", "", "database URL (default: $SLEDGE_DB, else the embedded SQLite file)")
	fs.BoolVar(&c.JSON, "json", false, "print the result as one JSON object")
	fs.Uint64Var(&c.Seed, "seed", defaultSeed, "random seed")
	c.wlNew = map[string]func(uint64) (workload.Workload, error){}
	owner := map[string]string{} // flag name → the workload that defined it first
	for _, n := range workload.Names() {
		m, _ := workload.Lookup(n)
		wfs := pflag.NewFlagSet(n, pflag.ContinueOnError)
		c.wlNew[n] = m.Flags(name, wfs)
		wfs.VisitAll(func(f *pflag.Flag) {
			old := fs.Lookup(f.Name)
			if old == nil {
				fs.AddFlag(f)
				owner[f.Name] = n
				return
			}
			sh, ok := old.Value.(*sharedFlag)
			if !ok {
				first := owner[f.Name]
				if first == "" || old.Shorthand != f.Shorthand {
					panic("runner: flag --" + f.Name + " of workload " + n + " clashes with a command's own") // programmer error
				}
				sh = &sharedFlag{name: f.Name, order: []string{first}, vals: map[string]pflag.Value{first: old.Value}, errs: map[string]error{},
					usages: map[string]string{first: strings.TrimPrefix(old.Usage, first+": ")}}
				old.Value = sh
				c.shared = append(c.shared, sh)
			}
			sh.order = append(sh.order, n)
			sh.vals[n] = f.Value
			sh.usages[n] = strings.TrimPrefix(f.Usage, n+": ") // a text that names its workload already
			old.Usage = sh.usage()
		})
	}
}

// Resolve picks the workload (first argument, default tpcc) and the URL,
// from the flags in fs as parsed for the command name.
func (c *Common) Resolve(fs *pflag.FlagSet, name string, args []string, getenv func(string) string) (workload.Workload, string, error) {
	c.SeedSet = fs.Changed("seed")
	// The database may be given as a positional URL, before or after the
	// workload (issue 2's contract): `sledge run postgres://…`.
	if len(args) > 0 {
		var rest []string
		for _, a := range args {
			if !strings.Contains(a, "://") {
				rest = append(rest, a)
				continue
			}
			if c.DB != "" {
				return nil, "", Usagef("two databases: --db and %s; give one", db.Redact(a))
			}
			c.DB = a
		}
		if len(rest) > 1 {
			return nil, "", Usagef("one workload at a time: %s", strings.Join(rest, " "))
		}
		args = rest
	}
	c.Workload = workload.Default()
	if len(args) > 0 {
		c.Workload = args[0]
	}
	// pgbench -b without -f: the builtin is the tpcb workload.
	if b := fs.Lookup("builtin"); b != nil && b.Changed {
		f := fs.Lookup("file")
		switch {
		case f != nil && f.Changed:
		case len(args) == 0:
			c.Workload = "tpcb"
		case args[0] == "script":
			// `run script -b NAME`: the builtin runs as a script, as
			// pgbench runs it (sledge pgbench).
		case args[0] != "tpcb":
			return nil, "", Usagef("--builtin (-b) is pgbench's: it applies to tpcb and to script runs (-f), not to %s", args[0])
		}
	}
	dbName := DBNameOf(c.Workload)
	if f := fs.Lookup("file"); f != nil && f.Changed {
		// pgbench -f: users' scripts, usually on pgbench's tables.
		if len(args) > 0 && args[0] != "script" {
			return nil, "", Usagef("-f runs pgbench scripts: leave out the workload %q (mix in builtins with -b NAME)", args[0])
		}
		c.Workload = "script"
		dbName = DBNameOf(c.Workload)
	}
	if c.Workload == "script" && name != "run" {
		return nil, "", Usagef("pgbench scripts have no schema to %s: build, check or drop tpcb (pgbench's tables), or your own", name)
	}
	if _, err := workload.Lookup(c.Workload); err != nil {
		return nil, "", Usagef("%v", err)
	}
	for _, sh := range c.shared {
		if err := sh.errs[c.Workload]; err != nil {
			return nil, "", Usagef("invalid value for --%s of %s: %s", sh.name, c.Workload, CleanFlagError(err))
		}
	}
	w, err := c.wlNew[c.Workload](c.Seed)
	if err != nil {
		return nil, "", Usagef("%v", err)
	}
	u := c.DB
	if u == "" {
		u = getenv("SLEDGE_DB")
	}
	c.Explicit = u != ""
	if !c.Explicit {
		path, err := defaultDBPath(getenv, dbName)
		if err != nil {
			return nil, "", err
		}
		u = "sqlite://" + path
	}
	return w, u, nil
}

// DBNameOf is the workload whose default database a workload uses:
// pgbench's scripts run on pgbench's tables, tpcb's.
func DBNameOf(wl string) string {
	if wl == "script" {
		return "tpcb"
	}
	return wl
}

// DefaultDBPath is the embedded default database of workload wl (the
// registry's default when ""): $XDG_DATA_HOME/sledge/<workload>.db.
func DefaultDBPath(getenv func(string) string, wl string) (string, error) {
	if wl == "" {
		wl = workload.Default()
	}
	return defaultDBPath(getenv, DBNameOf(wl))
}

// defaultDBPath is $XDG_DATA_HOME/sledge/<workload>.db.
func defaultDBPath(getenv func(string) string, wl string) (string, error) {
	return DataFile(getenv, wl+".db", "the default database", "--db sqlite:///path/to/file.db")
}

// DataFile is $XDG_DATA_HOME/sledge/name, falling back to ~/.local/share as
// the XDG base directory specification says, with the directory created.
// what and hint name the file and the option that avoids it in errors.
func DataFile(getenv func(string) string, name, what, hint string) (string, error) {
	dir := getenv("XDG_DATA_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return "", fmt.Errorf("cannot find a place for %s: HOME is not set; use %s", what, hint)
		}
		dir = filepath.Join(home, ".local", "share")
	}
	dir = filepath.Join(dir, "sledge")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cannot create %s for %s: %v; use %s", dir, what, UnwrapPath(err), hint)
	}
	return filepath.Join(dir, name), nil
}

// UnwrapPath is the error of a failed file operation without the path,
// which the message names already.
func UnwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// IsUsage recognises the command-line parser's (cobra's) own errors, which
// are not typed, as bad input.
func IsUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag",
		"flag needs an argument", "accepts ", "requires ", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// CleanFlagError turns pflag's strconv wording into plain words.
func CleanFlagError(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ": strconv."); i >= 0 {
		msg = msg[:i]
		switch {
		case strings.Contains(err.Error(), "ParseInt"), strings.Contains(err.Error(), "ParseUint"):
			msg += ": want a whole number"
		case strings.Contains(err.Error(), "ParseBool"):
			msg += ": want true or false"
		case strings.Contains(err.Error(), "ParseFloat"):
			msg += ": want a number"
		}
	}
	if strings.Contains(msg, "time: ") {
		if i := strings.Index(msg, ": time: "); i >= 0 {
			msg = msg[:i] + ": want a duration such as 90s, 5m or 1h30m"
		}
	}
	return strings.ReplaceAll(msg, "invalid argument", "invalid value")
}
