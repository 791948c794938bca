// Package script is the sledge workload "script": it runs users' pgbench
// script files (and pgbench's builtin scripts) as pgbench does, against any
// database whose package implements db.ScriptDB. Parsing and expressions
// are internal/pgbench's; this package interprets a parsed Script: it pastes
// or binds variables into SQL, runs the meta-commands (\set, \sleep,
// \setshell, \shell, \if…\endif, \gset, \aset, pipelines), picks scripts by
// weight, restores a client's variables and random state before a retry,
// and keeps pgbench -r's per-command latencies. Reference: pgbench's
// documentation (PostgreSQL 15) and docs/pgbench.md.
//
// A terminal is one pgbench client: its own variables (client_id, scale,
// random_seed, default_seed, then -D values, which take precedence), its own
// random generator for the expression functions, and its own generator for
// choosing scripts. Variables are resolved to slots once, when the scripts
// are compiled, so running a command only fills a slice of arguments or
// appends the constant pieces of its text to a reused buffer.
package script

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/pgbench"
	"github.com/sledge-bench/sledge/internal/workload"
)

func init() {
	workload.Register(workload.Meta{
		Name:        "script",
		Description: "pgbench script files (-f FILE[@W], -D name=value) and pgbench's builtin scripts, run as pgbench runs them",
		Flags:       flags,
		Throughput:  "tps",
	})
}

// flags binds the workload's options for cmd and returns its constructor.
// Only run takes options: a script workload builds, checks and drops
// nothing.
func flags(cmd string, fs *pflag.FlagSet) func(seed uint64) (workload.Workload, error) {
	var cfg Config
	if cmd == "run" {
		fs.StringArrayVarP(&cfg.Files, "file", "f", nil,
			"pgbench script file to run, FILE[@WEIGHT] (repeatable; scripts are drawn at random by weight, default 1)")
		fs.StringArrayVarP(&cfg.Defines, "define", "D", nil,
			"define a script variable, name=value (repeatable; overrides client_id, scale, random_seed and default_seed)")
		fs.IntVarP(&cfg.Scale, "scale", "s", 0,
			"the value of :scale (pgbench -s; default: counted from pgbench_branches with a builtin script, else 1)")
	}
	return func(seed uint64) (workload.Workload, error) {
		c := cfg
		c.Seed = seed
		w, err := New(c)
		if err != nil {
			return nil, err
		}
		return w, nil
	}
}

// Config is what the user chose on the command line.
type Config struct {
	Files   []string // FILE[@W], parsed by pgbench.ParseFile
	Defines []string // name=value (pgbench -D)
	Scale   int      // :scale (pgbench -s); 0: not given
	Seed    uint64
}

// Workload runs pgbench scripts. The setters (SetProtocol, AddBuiltins,
// SetPerCommand, SetStderr) are called before Attach; after Attach it is
// read-only except for the registry of terminals (NewTerminal is safe for
// concurrent use).
type Workload struct {
	cfg     Config
	scripts []*pgbench.Script
	builtin []bool // scripts[i] is one of pgbench's builtins
	defines []define
	proto   workload.Protocol
	perCmd  bool
	stderr  *lockedWriter
	// shellOut takes \shell's output (nil: stderr); debug, when set,
	// pgbench -d's lines of what each client does, each after debugPrefix.
	shellOut    *lockedWriter
	debug       *lockedWriter
	debugPrefix string

	mu       sync.Mutex
	prog     *program // compiled at Attach (or the first NewTerminal)
	scale    int64    // :scale, known after Attach
	attached bool
	terms    []*terminal
	// pgbench's base random sequence of the run's seed (baseDraw).
	drawSeed uint64
	base     *pgbench.Rand
	draws    []uint64
}

// define is one -D name=value: its original text, kept to paste into SQL,
// and its value as an expression sees it when the text parses as one.
type define struct {
	name string
	text string
}

var (
	_ workload.Workload = (*Workload)(nil)
	_ workload.Scaler   = (*Workload)(nil)
)

// New parses every script file and -D definition; errors are one line
// (pgbench.ParseFile's for a script).
func New(cfg Config) (*Workload, error) {
	w := &Workload{cfg: cfg, proto: workload.ProtoSimple, stderr: &lockedWriter{w: os.Stderr}}
	if cfg.Scale < 0 {
		return nil, errors.New("--scale must not be negative")
	}
	for _, f := range cfg.Files {
		s, err := pgbench.ParseFile(f)
		if err != nil {
			return nil, err
		}
		w.scripts = append(w.scripts, s)
		w.builtin = append(w.builtin, false)
	}
	for _, d := range cfg.Defines {
		name, text, ok := strings.Cut(d, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("invalid variable definition %q for --define: use name=value", d)
		}
		if !pgbench.ValidVarName(name) {
			return nil, fmt.Errorf("invalid variable name %q in --define %q", name, d)
		}
		w.defines = append(w.defines, define{name: name, text: text})
	}
	return w, nil
}

// AddBuiltins adds pgbench builtin scripts, NAME[@W] each (pgbench -b),
// after the files given to New, so files and builtins mix as with pgbench
// -f and -b.
func (w *Workload) AddBuiltins(specs []string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.prog != nil {
		return errors.New("script: AddBuiltins after the scripts were compiled")
	}
	for _, spec := range specs {
		s, err := pgbench.Builtin(spec)
		if err != nil {
			return err
		}
		w.scripts = append(w.scripts, s)
		w.builtin = append(w.builtin, true)
	}
	return nil
}

// SetProtocol chooses how SQL commands travel (pgbench -M); the default is
// workload.ProtoSimple, as pgbench's.
func (w *Workload) SetProtocol(p workload.Protocol) { w.proto = p }

// Protocol is the protocol SQL commands travel with.
func (w *Workload) Protocol() workload.Protocol { return w.proto }

// SetPerCommand turns on per-command latencies (pgbench -r); read them
// with CommandReport after the run.
func (w *Workload) SetPerCommand(on bool) { w.perCmd = on }

// SetStderr is where debug() and the output of \shell and \setshell
// commands go (default os.Stderr). Writes are serialized.
func (w *Workload) SetStderr(out io.Writer) { w.stderr = &lockedWriter{w: out} }

// SetShellStdout is where the output of \shell commands goes instead of
// stderr (pgbench's own stdout: `sledge pgbench`).
func (w *Workload) SetShellStdout(out io.Writer) { w.shellOut = &lockedWriter{w: out} }

// SetDebug turns on pgbench -d's lines on out, each after prefix ("client
// 0 executing script …", "client 0 sending …", "client 0 receiving",
// "client 0 executing \set x").
func (w *Workload) SetDebug(out io.Writer, prefix string) {
	w.debug, w.debugPrefix = &lockedWriter{w: out}, prefix
}

// NeedsPipelines reports whether any script uses \startpipeline, for the
// database's ScriptSupports check.
func (w *Workload) NeedsPipelines() bool {
	for _, s := range w.scripts {
		for _, c := range s.Commands {
			if c.Kind == pgbench.CmdStartPipeline {
				return true
			}
		}
	}
	return false
}

// HasCompound reports whether any script has a compound SQL command (\;).
func (w *Workload) HasCompound() bool { _, ok := w.firstCompound(); return ok }

func (w *Workload) firstCompound() (string, bool) {
	for _, s := range w.scripts {
		for _, c := range s.Commands {
			if c.Kind == pgbench.CmdSQL && c.SQL != nil && len(c.SQL.Queries) > 1 {
				return fmt.Sprintf("%s:%d", s.Name, c.Line), true
			}
		}
	}
	return "", false
}

// maxQueryArgs is the most variables a SQL command may reference with the
// extended and prepared protocols: pgbench's MAX_ARGS (256) less the
// command's own slot. Each reference counts, as each is a parameter.
const maxQueryArgs = 255

// CheckProtocol returns nil, or one line saying why the scripts cannot run
// with protocol p: compound queries need the simple protocol, pipelines
// the extended or prepared one, and those take at most 255 parameters a
// statement (as with pgbench).
func (w *Workload) CheckProtocol(p workload.Protocol) error {
	if p == workload.ProtoSimple {
		for _, s := range w.scripts {
			for _, c := range s.Commands {
				if c.Kind == pgbench.CmdStartPipeline {
					return fmt.Errorf("%s:%d: pipelines (\\startpipeline) need --protocol extended or prepared", s.Name, c.Line)
				}
			}
		}
		return nil
	}
	for _, s := range w.scripts {
		for _, c := range s.Commands {
			if c.Kind != pgbench.CmdSQL || c.SQL == nil {
				continue
			}
			for _, q := range c.SQL.Queries {
				if len(q.Vars) > maxQueryArgs {
					return fmt.Errorf("%s:%d: statement has too many arguments (maximum is %d): %s", s.Name, c.Line, maxQueryArgs, clip(c.Text, 80))
				}
			}
		}
	}
	if at, ok := w.firstCompound(); ok {
		return fmt.Errorf("%s: compound queries (\\;) need --protocol simple", at)
	}
	return nil
}

// clip shortens s to at most n bytes for a message, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Name is the workload's name.
func (w *Workload) Name() string { return "script" }

// Validate checks that there is something to run.
func (w *Workload) Validate() error {
	if len(w.scripts) == 0 {
		return errors.New("no script to run: give -f/--file FILE[@W] or -b/--builtin NAME[@W]")
	}
	total := 0
	for _, s := range w.scripts {
		if s.Weight < 0 {
			return fmt.Errorf("%s: weight %d must not be negative", s.Name, s.Weight)
		}
		total += s.Weight
	}
	if total == 0 {
		return errors.New("total script weight must not be zero")
	}
	return nil
}

// Tables is nil: scripts build nothing.
func (w *Workload) Tables() []workload.Table { return nil }

// Statements is nil: scripts use no named statements.
func (w *Workload) Statements(workload.Mode) []string { return nil }

// Checks is nil.
func (w *Workload) Checks() []workload.Check { return nil }

// Mix has one type per script, in the order given (files, then builtins):
// named as the script (file name or builtin description), weighted as it.
// A script given twice is told apart in --json by its position:
// Key "x.sql#2".
func (w *Workload) Mix() []workload.TxType {
	out := make([]workload.TxType, len(w.scripts))
	seen := map[string]int{}
	for _, s := range w.scripts {
		seen[s.Name]++
	}
	for i, s := range w.scripts {
		out[i] = workload.TxType{Name: s.Name, Weight: s.Weight}
		if seen[s.Name] > 1 {
			out[i].Key = fmt.Sprintf("%s#%d", s.Name, i+1)
		}
	}
	return out
}

// Description is pgbench's "transaction type": the script's name, or
// "multiple scripts" (workload.Describer).
func (w *Workload) Description() string {
	if mix := w.Mix(); len(mix) == 1 {
		return mix[0].Name
	}
	return "multiple scripts"
}

// Scripts returns the parsed scripts in Mix order.
func (w *Workload) Scripts() []*pgbench.Script { return w.scripts }

// Scale reports :scale.
func (w *Workload) Scale() (unit string, n int) { return "scale factor", int(w.scaleValue()) }

func (w *Workload) scaleValue() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.attached {
		return w.scale
	}
	if w.cfg.Scale > 0 {
		return int64(w.cfg.Scale)
	}
	return 1
}

// Attach compiles the scripts and finds :scale: --scale when given; else,
// with a builtin script in the mix, the number of rows of pgbench_branches
// (as pgbench); else 1. c must be a workload.ScriptConn.
func (w *Workload) Attach(ctx context.Context, c workload.Conn) error {
	if err := w.Validate(); err != nil {
		return err
	}
	if err := w.CheckProtocol(w.proto); err != nil {
		return err
	}
	if _, err := w.compiled(); err != nil {
		return err
	}
	scale := int64(w.cfg.Scale)
	if scale == 0 {
		scale = 1
		for _, b := range w.builtin {
			if b {
				n, err := countBranches(ctx, c)
				if err != nil {
					return err
				}
				scale = n
				break
			}
		}
	}
	w.mu.Lock()
	w.scale, w.attached = scale, true
	w.mu.Unlock()
	return nil
}

// countBranches is pgbench's way of finding the scale of a built schema.
func countBranches(ctx context.Context, c workload.Conn) (int64, error) {
	sc, ok := scriptConn(c)
	if !ok {
		return 0, fmt.Errorf("script: the session (%T) cannot run script SQL", c)
	}
	const text = "select count(*) from pgbench_branches"
	var (
		n    int64
		seen bool
		perr error
	)
	err := sc.RunSQL(ctx, &workload.SQLQuery{ID: 0, Text: text}, func(_ int, _ []string, last []any, rows int) {
		if rows < 1 || len(last) < 1 {
			return
		}
		seen = true
		switch v := last[0].(type) {
		case string:
			n, perr = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		case int64:
			n = v
		default:
			perr = fmt.Errorf("unexpected value %v", v)
		}
	})
	if err != nil {
		if errors.Is(err, workload.ErrNoSchema) || missingTable(err) {
			return 0, fmt.Errorf("no pgbench tables for the builtin script (%s: %v): run `sledge build tpcb` first, or give --scale: %w",
				text, err, workload.ErrNoSchema)
		}
		return 0, fmt.Errorf("find the scale: %s: %w", text, err)
	}
	if perr != nil || !seen {
		return 0, fmt.Errorf("find the scale: %s returned no count (%v)", text, perr)
	}
	if n == 0 {
		return 0, fmt.Errorf("pgbench_branches is empty: run `sledge build tpcb` first: %w", workload.ErrNoSchema)
	}
	return n, nil
}

// missingTable recognizes a missing table in errors a database package did
// not classify as workload.ErrNoSchema.
func missingTable(err error) bool {
	s := err.Error()
	return strings.Contains(s, "no such table") || strings.Contains(s, "does not exist") || strings.Contains(s, "doesn't exist")
}

// scriptConn finds the script session behind c, looking through wrappers
// (the engine's per-statement timer) that expose Unwrap() workload.Conn.
func scriptConn(c workload.Conn) (workload.ScriptConn, bool) {
	for c != nil {
		if sc, ok := c.(workload.ScriptConn); ok {
			return sc, true
		}
		u, ok := c.(interface{ Unwrap() workload.Conn })
		if !ok {
			return nil, false
		}
		c = u.Unwrap()
	}
	return nil, false
}

// lockedWriter serializes writes from several terminals.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
