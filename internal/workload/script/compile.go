package script

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sledge-bench/sledge/internal/pgbench"
)

// Slots of the automatic variables (pgbench's doc 4.2).
const (
	slotClientID = iota
	slotScale
	slotRandomSeed
	slotDefaultSeed
)

// program is every script compiled once for all terminals: each variable
// name resolved to a slot of a terminal's variable slice, and each SQL
// command split into constant text and variable slots. Read-only once
// built.
type program struct {
	names   []string       // slot → variable name
	index   map[string]int // variable name → slot
	scripts []*compiled
	ncmds   int // commands over all scripts (ordinals)
	// defines are the -D variables as slots, applied over the automatic
	// ones in every terminal.
	defines []defSlot
}

type defSlot struct {
	slot int
	v    slot
}

// compiled is one script.
type compiled struct {
	s    *pgbench.Script
	idx  int // index in the mix
	cmds []cmd
}

// cmd is one command, ready to interpret.
type cmd struct {
	c    *pgbench.Command
	kind pgbench.CmdKind
	ord  int // ordinal over all scripts: per-terminal state and stats
	num  int // 1-based number in its script, for messages

	// SQL
	id     int // workload.SQLQuery.ID: ord+1 (0 is the scale query)
	nq     int // queries in the command (more than 1: compound)
	store  pgbench.StoreKind
	prefix string
	pieces []string // constant text around the variable references
	vars   []int    // slot of each reference, in order
	refs   []string // ":name" of each reference, pasted when undefined
	text   string   // the whole text when there is no reference

	// \set, \setshell: the variable assigned; \set, \if, \elif: the
	// expression. badVar: the name is not a variable's, which fails the
	// command when it runs (after its expression or shell command), as
	// pgbench's assignment does.
	slot   int
	badVar bool
	expr   pgbench.Expr

	// \sleep: a constant duration, or sleepVar's value (slot ≥ 0) times
	// unit.
	sleep    time.Duration
	sleepVar int
	unit     time.Duration

	// \shell, \setshell
	args []arg

	// \if, \elif, \else
	next, end int
}

// arg is a \shell or \setshell argument: literal text, or a slot.
type arg struct {
	lit  string
	slot int // -1: literal
	name string
}

// compiled returns the program, compiling the scripts the first time.
func (w *Workload) compiled() (*program, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.prog != nil {
		return w.prog, nil
	}
	p, err := compile(w.scripts, w.defines)
	if err != nil {
		return nil, err
	}
	w.prog = p
	return p, nil
}

func compile(scripts []*pgbench.Script, defines []define) (*program, error) {
	p := &program{index: map[string]int{}}
	for _, n := range []string{"client_id", "scale", "random_seed", "default_seed"} {
		p.slotOf(n)
	}
	for _, d := range defines {
		p.defines = append(p.defines, defSlot{slot: p.slotOf(d.name), v: textSlot(d.text)})
	}
	ord := 0
	for i, s := range scripts {
		cs := &compiled{s: s, idx: i, cmds: make([]cmd, len(s.Commands))}
		for j, c := range s.Commands {
			k := &cs.cmds[j]
			*k = cmd{c: c, kind: c.Kind, ord: ord, num: j + 1, slot: -1, sleepVar: -1}
			ord++
			if err := p.compileCmd(k, c); err != nil {
				return nil, fmt.Errorf("script %s command %d (line %d): %w", s.Name, j+1, c.Line, err)
			}
		}
		p.scripts = append(p.scripts, cs)
	}
	p.ncmds = ord
	return p, nil
}

func (p *program) slotOf(name string) int {
	if i, ok := p.index[name]; ok {
		return i
	}
	i := len(p.names)
	p.names = append(p.names, name)
	p.index[name] = i
	return i
}

func (p *program) compileCmd(k *cmd, c *pgbench.Command) error {
	switch c.Kind {
	case pgbench.CmdSQL:
		if c.SQL == nil || len(c.SQL.Queries) == 0 {
			return fmt.Errorf("empty SQL command")
		}
		k.id = k.ord + 1
		k.nq = len(c.SQL.Queries)
		k.store, k.prefix = c.SQL.Store, c.SQL.Prefix
		// The parser leaves each query's separator (the ";" of a "\;") at
		// the end of its text: the queries of a compound command are
		// sent one after the other in one text.
		var cur strings.Builder
		for _, q := range c.SQL.Queries {
			if len(q.Parts) != len(q.Vars)+1 {
				return fmt.Errorf("malformed query: %d parts for %d variables", len(q.Parts), len(q.Vars))
			}
			for vi, v := range q.Vars {
				cur.WriteString(q.Parts[vi])
				k.pieces = append(k.pieces, cur.String())
				cur.Reset()
				k.vars = append(k.vars, p.slotOf(v))
				k.refs = append(k.refs, ":"+v)
			}
			cur.WriteString(q.Parts[len(q.Vars)])
		}
		k.pieces = append(k.pieces, cur.String())
		if len(k.vars) == 0 {
			k.text = k.pieces[0]
		}
	case pgbench.CmdSet:
		k.slot, k.badVar = p.slotOf(c.Var), !pgbench.ValidVarName(c.Var)
		k.expr = c.Expr
		p.walk(c.Expr)
	case pgbench.CmdIf, pgbench.CmdElif:
		k.expr = c.Expr
		p.walk(c.Expr)
		k.next, k.end = c.Next, c.End
	case pgbench.CmdElse:
		k.end = c.End
	case pgbench.CmdSleep:
		k.unit = c.SleepUnit
		if k.unit == 0 {
			k.unit = time.Second
		}
		if c.Sleep.Var != "" {
			k.sleepVar = p.slotOf(c.Sleep.Var)
			break
		}
		n, err := strconv.ParseInt(strings.TrimSpace(c.Sleep.Lit), 10, 64)
		if err != nil {
			return fmt.Errorf("invalid sleep time %q, must be an integer", c.Sleep.Lit)
		}
		k.sleep = time.Duration(n) * k.unit
	case pgbench.CmdSetShell, pgbench.CmdShell:
		if c.Kind == pgbench.CmdSetShell {
			k.slot, k.badVar = p.slotOf(c.Var), !pgbench.ValidVarName(c.Var)
		}
		if len(c.Args) == 0 {
			return fmt.Errorf("missing shell command")
		}
		for _, a := range c.Args {
			if a.Var != "" {
				k.args = append(k.args, arg{slot: p.slotOf(a.Var), name: a.Var})
			} else {
				k.args = append(k.args, arg{lit: a.Lit, slot: -1})
			}
		}
	case pgbench.CmdEndif, pgbench.CmdStartPipeline, pgbench.CmdSyncPipeline, pgbench.CmdEndPipeline:
	default:
		return fmt.Errorf("unknown command kind %d", c.Kind)
	}
	return nil
}

// walk gives a slot to every variable an expression reads.
func (p *program) walk(e pgbench.Expr) {
	switch x := e.(type) {
	case pgbench.VarRef:
		p.slotOf(x.Name)
	case *pgbench.VarRef:
		p.slotOf(x.Name)
	case pgbench.Call:
		for _, a := range x.Args {
			p.walk(a)
		}
	case *pgbench.Call:
		for _, a := range x.Args {
			p.walk(a)
		}
	case pgbench.Case:
		p.walkCase(&x)
	case *pgbench.Case:
		p.walkCase(x)
	}
}

func (p *program) walkCase(c *pgbench.Case) {
	for _, e := range c.When {
		p.walk(e)
	}
	for _, e := range c.Then {
		p.walk(e)
	}
	if c.Else != nil {
		p.walk(c.Else)
	}
}
