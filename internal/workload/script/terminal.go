package script

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sledge-bench/sledge/internal/pgbench"
	"github.com/sledge-bench/sledge/internal/workload"
)

// slot is one variable of a terminal. A variable holds a value (\set,
// \setshell), text (-D, \gset, \aset), or both once one was derived from
// the other; arg caches what is bound for it with the extended and
// prepared protocols. The caches are pure functions of the content, so
// they may be filled without going through the undo log.
type slot struct {
	set    bool
	valOK  bool
	textOK bool
	argOK  bool
	val    pgbench.Value
	text   string
	arg    any
}

func textSlot(s string) slot         { return slot{set: true, textOK: true, text: s} }
func valSlot(v pgbench.Value) slot   { return slot{set: true, valOK: true, val: v} }
func intSlot(n int64) slot           { return valSlot(pgbench.Value{K: pgbench.Int, I: n}) }
func (s *slot) defined() bool        { return s.set }
func undefinedVar(name string) error { return fmt.Errorf("undefined variable %q", name) }
func malformed(name, text string) error {
	return fmt.Errorf("malformed variable %q value: %q", name, text)
}

// undo is a variable's content before its first assignment in the current
// try of a script.
type undo struct {
	slot int
	old  slot
}

// cmdStat is one command's counters in one terminal (pgbench -r).
type cmdStat struct {
	count, failures int64
	total           time.Duration
}

// colCache maps a result's column names to slots, for one statement of a
// \gset or \aset command; recomputed only when the columns change.
type colCache struct {
	cols  []string
	slots []int // -1: a variable no script reads (it is not kept)
}

// terminal is one pgbench client. It is used by one goroutine at a time.
type terminal struct {
	w     *Workload
	p     *program
	vars  []slot
	saved []uint32 // saved[i] == gen: slot i is in the undo log
	gen   uint32
	log   []undo

	rand     *pgbench.Rand // the expression functions' generator
	randSave pgbench.Rand  // its state at the start of the transaction
	choose   *rand.Rand    // script choice, independent of rand
	weights  []int
	total    int
	txns     []txn

	qs    []workload.SQLQuery // per command ordinal
	cols  [][]colCache        // per command ordinal, per statement
	buf   []byte
	stats []cmdStat // per command ordinal, with SetPerCommand

	keepFn   workload.ResultFunc
	cur      *cmd // the \gset/\aset command being run
	lastRows int  // rows of the last query of a \gset command; -1: none
	keepErr  error
	envErr   error
	pipe     workload.Pipeliner // an open pipeline
	script   int                // for debug(): 0-based script
	command  int                // for debug(): 1-based command
	vu       int                // the client, from 0
}

// txn is one run of a script; Run again after ErrRetry restores the
// variables and the random state first.
type txn struct {
	t     *terminal
	cs    *compiled
	tries int
}

func (x *txn) Kind() int { return x.cs.idx }

// NewTerminal makes pgbench client vu (0-based): its variables, its random
// generators (seeded from seed and vu) and its per-command counters.
func (w *Workload) NewTerminal(vu, vus int, seed uint64) workload.Terminal {
	p, err := w.compiled()
	if err != nil {
		return errTerminal{err}
	}
	scale := w.scaleValue()
	t := &terminal{
		w: w, p: p, gen: 1,
		vars:   make([]slot, len(p.names)),
		saved:  make([]uint32, len(p.names)),
		rand:   pgbench.NewRand(w.baseDraw(seed, vu+1)),
		choose: rand.New(rand.NewPCG(seed, mix(uint64(vu), 0x5c819f0a3b1d47e5))),
		qs:     make([]workload.SQLQuery, p.ncmds),
		cols:   make([][]colCache, p.ncmds),
	}
	t.keepFn = t.keep
	t.vu = vu
	t.vars[slotClientID] = intSlot(int64(vu))
	t.vars[slotScale] = intSlot(scale)
	t.vars[slotRandomSeed] = intSlot(int64(seed))
	t.vars[slotDefaultSeed] = intSlot(int64(w.baseDraw(seed, vus+1)))
	for _, d := range p.defines {
		t.vars[d.slot] = d.v
	}
	if w.perCmd {
		t.stats = make([]cmdStat, p.ncmds)
	}
	t.txns = make([]txn, len(p.scripts))
	for i, cs := range p.scripts {
		t.txns[i] = txn{t: t, cs: cs}
		t.weights = append(t.weights, cs.s.Weight)
		t.total += cs.s.Weight
		for j := range cs.cmds {
			k := &cs.cmds[j]
			if k.kind != pgbench.CmdSQL {
				continue
			}
			q := &t.qs[k.ord]
			q.ID = k.id
			if w.proto == workload.ProtoSimple {
				q.Text = k.text
			} else {
				q.Args = make([]any, len(k.vars))
			}
		}
	}
	w.mu.Lock()
	w.terms = append(w.terms, t)
	w.mu.Unlock()
	return t
}

// baseDraw is the n-th value (from 1) of pgbench's base random sequence
// for the run's seed, as pgbench 15 draws them at start-up: client c's
// generator is seeded with draw c+1, then :default_seed is draw
// nclients+1. So a script's random functions give pgbench's values client
// for client with the same --random-seed (checked against pgbench 15.18
// with --debug). The draws are made once per run and kept.
func (w *Workload) baseDraw(seed uint64, n int) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.drawSeed != seed || w.draws == nil {
		w.drawSeed, w.draws, w.base = seed, w.draws[:0], pgbench.NewRand(seed)
	}
	for len(w.draws) < n {
		w.draws = append(w.draws, w.base.Uint64())
	}
	return w.draws[n-1]
}

// mix is splitmix64's finalizer over two words.
func mix(a, b uint64) uint64 {
	z := a ^ (b * 0x9e3779b97f4a7c15)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Next draws a script as pgbench does: uniform over the sum of the
// weights.
func (t *terminal) Next() workload.Txn {
	i := 0
	if len(t.txns) > 1 {
		r := t.choose.IntN(t.total)
		for i = 0; i < len(t.weights)-1; i++ {
			r -= t.weights[i]
			if r < 0 {
				break
			}
		}
	}
	x := &t.txns[i]
	x.tries = 0
	return x
}

// Run interprets the script once.
func (x *txn) Run(ctx context.Context, c workload.Conn) error {
	t := x.t
	sc, ok := scriptConn(c)
	if !ok {
		return fmt.Errorf("script %s: the session (%T) cannot run script SQL", x.cs.s.Name, c)
	}
	if x.tries == 0 {
		t.randSave = *t.rand
		if t.w.debug != nil { // boxing the name would allocate on the hot path
			t.debugf("executing script \"%s\"", x.cs.s.Name)
		}
	} else {
		// A retry runs the same inputs: the variables and the random
		// state as they were when the script started (pgbench, doc 9).
		for i := len(t.log) - 1; i >= 0; i-- {
			t.vars[t.log[i].slot] = t.log[i].old
		}
		*t.rand = t.randSave
	}
	clear(t.log)
	t.log = t.log[:0]
	t.gen++
	x.tries++
	return t.run(ctx, sc, x.cs)
}

func (t *terminal) run(ctx context.Context, sc workload.ScriptConn, cs *compiled) error {
	cmds := cs.cmds
	perCmd := t.stats != nil
	t.script = cs.idx
	jumped := false // arrived at cmds[i] by a false condition's jump
	for i := 0; i < len(cmds); {
		k := &cmds[i]
		t.command = k.num
		var start time.Time
		if perCmd {
			start = time.Now()
		}
		next, nextJumped := i+1, false
		var err error
		if t.w.debug != nil && k.kind != pgbench.CmdSQL {
			t.debugf("executing %s", metaWords(k))
		}
		switch k.kind {
		case pgbench.CmdSQL:
			err = t.runSQL(ctx, sc, k)
		case pgbench.CmdSet:
			var v pgbench.Value
			if v, err = t.eval(k.expr); err == nil {
				if k.badVar {
					err = saying(fmt.Errorf("\\set: invalid variable name %q", k.c.Var), "assignment of meta-command failed",
						fmt.Sprintf("set: invalid variable name: \"%s\"", k.c.Var))
					break
				}
				t.assign(k.slot, valSlot(v))
			}
		case pgbench.CmdIf, pgbench.CmdElif:
			if k.kind == pgbench.CmdElif && !jumped {
				next = k.end // the branch before was taken
				break
			}
			var ok bool
			if ok, err = t.cond(k.expr); err == nil && !ok {
				next, nextJumped = k.next, true
			}
		case pgbench.CmdElse:
			if !jumped {
				next = k.end
			}
		case pgbench.CmdEndif:
		case pgbench.CmdSleep:
			err = t.sleep(ctx, k)
		case pgbench.CmdSetShell, pgbench.CmdShell:
			err = t.shell(ctx, k)
		case pgbench.CmdStartPipeline:
			err = t.startPipeline(ctx, sc)
		case pgbench.CmdSyncPipeline:
			if t.pipe == nil {
				err = saying(errors.New("\\syncpipeline outside a pipeline"), "", "not in pipeline mode")
			} else {
				err = t.pipe.SyncPipeline(ctx)
			}
		case pgbench.CmdEndPipeline:
			if t.pipe == nil {
				err = saying(errors.New("\\endpipeline outside a pipeline"), "", "not in pipeline mode")
			} else {
				err = t.pipe.EndPipeline(ctx)
				t.pipe = nil
			}
		}
		if err != nil {
			if perCmd {
				t.stats[k.ord].failures++
			}
			sql := ""
			if k.kind == pgbench.CmdSQL {
				sql = t.qs[k.ord].Text
			}
			t.abort(ctx, sc)
			return &cmdError{script: cs.s.Name, num: k.num, line: k.c.Line, err: err, f: failure(cs, k, sql, err)}
		}
		if perCmd {
			s := &t.stats[k.ord]
			s.count++
			s.total += time.Since(start)
		}
		i, jumped = next, nextJumped
	}
	if t.pipe != nil {
		t.abort(ctx, sc)
		return endFailure(cs, "end of script reached with pipeline open")
	}
	if sc.InTransaction() {
		_ = sc.Rollback(ctx)
		return endFailure(cs, "end of script reached without completing the last transaction")
	}
	return nil
}

// abort leaves an open pipeline and rolls back an open transaction after a
// failure.
func (t *terminal) abort(ctx context.Context, sc workload.ScriptConn) {
	if t.pipe != nil {
		_ = t.pipe.EndPipeline(ctx)
		t.pipe = nil
	}
	_ = sc.Rollback(ctx)
}

// cmdError names the script, the command and its line; its message is one
// line whatever the database said. f is the failure in pgbench's terms
// (AsFailure).
type cmdError struct {
	script    string
	num, line int
	err       error
	f         Failure
	plain     bool // the message is err's alone (the end of the script)
}

func (e *cmdError) Error() string {
	if e.plain {
		return e.err.Error()
	}
	msg := e.err.Error()
	if strings.ContainsAny(msg, "\r\n") {
		msg = strings.Join(strings.Fields(msg), " ")
	}
	return fmt.Sprintf("script %s command %d (line %d): %s", e.script, e.num, e.line, msg)
}

func (e *cmdError) Unwrap() error { return e.err }

// assign sets slot i, first saving its content for a retry.
func (t *terminal) assign(i int, s slot) {
	if t.saved[i] != t.gen {
		t.saved[i] = t.gen
		t.log = append(t.log, undo{slot: i, old: t.vars[i]})
	}
	t.vars[i] = s
}

// value is slot i's value, parsing its text the first time.
func (t *terminal) value(i int) (pgbench.Value, error) {
	s := &t.vars[i]
	if !s.set {
		return pgbench.Value{}, undefinedVar(t.p.names[i])
	}
	if !s.valOK {
		v, err := pgbench.ParseValue(s.text)
		if err != nil && s.text == "" {
			// pgbench says nothing of an empty value (a NULL from \gset)
			// but that the evaluation failed.
			return pgbench.Value{}, saying(malformed(t.p.names[i], s.text), "evaluation of meta-command failed")
		}
		if err != nil {
			return pgbench.Value{}, malformed(t.p.names[i], s.text)
		}
		s.val, s.valOK = v, true
	}
	return s.val, nil
}

// text is what the simple protocol pastes for a defined slot.
func (t *terminal) text(s *slot) string {
	if !s.textOK {
		s.text, s.textOK = s.val.String(), true
	}
	return s.text
}

// arg is what the extended and prepared protocols bind for slot i: nil
// when undefined or NULL; the value for a number or boolean computed by an
// expression, or for text that reads back exactly as that value ("42",
// not "042"); else the text.
func (t *terminal) arg(i int) any {
	s := &t.vars[i]
	if !s.set {
		return nil
	}
	if !s.argOK {
		s.arg, s.argOK = bindValue(s), true
	}
	return s.arg
}

func bindValue(s *slot) any {
	if !s.valOK {
		v, err := pgbench.ParseValue(s.text)
		if err != nil {
			return s.text
		}
		s.val, s.valOK = v, true
	}
	if s.val.K == pgbench.Null {
		return nil
	}
	if s.textOK && s.val.String() != s.text {
		return s.text
	}
	switch s.val.K {
	case pgbench.Int:
		return s.val.I
	case pgbench.Double:
		return s.val.F
	case pgbench.Bool:
		return s.val.B
	}
	return s.text
}

// Var, Rand and Debug make the terminal the pgbench.Env of its
// expressions.
func (t *terminal) Var(name string) (pgbench.Value, bool) {
	i, ok := t.p.index[name]
	if !ok || !t.vars[i].set {
		return pgbench.Value{}, false
	}
	v, err := t.value(i)
	if err != nil {
		t.envErr = err
		return pgbench.Value{}, false
	}
	return v, true
}

func (t *terminal) Rand() *pgbench.Rand { return t.rand }

// Debug prints as pgbench's debug(): the script from 0, the command from 1.
func (t *terminal) Debug(v pgbench.Value) {
	s := "null"
	switch v.K {
	case pgbench.Bool:
		s = "boolean " + v.String()
	case pgbench.Int:
		s = "int " + v.String()
	case pgbench.Double:
		s = "double " + v.String()
	}
	fmt.Fprintf(t.w.stderr, "debug(script=%d,command=%d): %s\n", t.script, t.command, s)
}

func (t *terminal) eval(e pgbench.Expr) (pgbench.Value, error) {
	t.envErr = nil
	v, err := pgbench.Eval(e, t)
	if err != nil && t.envErr != nil {
		err = t.envErr
	}
	t.envErr = nil
	return v, err
}

func (t *terminal) cond(e pgbench.Expr) (bool, error) {
	v, err := t.eval(e)
	if err != nil {
		return false, err
	}
	return v.Truthy()
}

// runSQL sends one SQL command: the simple protocol pastes each variable's
// text (an undefined one stays ":name", as pgbench sends it), the others
// bind one argument per reference.
func (t *terminal) runSQL(ctx context.Context, sc workload.ScriptConn, k *cmd) error {
	q := &t.qs[k.ord]
	if t.w.proto == workload.ProtoSimple {
		if len(k.vars) > 0 {
			b := append(t.buf[:0], k.pieces[0]...)
			for i, v := range k.vars {
				if s := &t.vars[v]; s.set {
					b = append(b, t.text(s)...)
				} else {
					b = append(b, k.refs[i]...)
				}
				b = append(b, k.pieces[i+1]...)
			}
			t.buf = b
			q.Text = string(b)
		}
	} else {
		if q.Text == "" {
			q.Text = placeholderText(k, sc)
		}
		for i, v := range k.vars {
			q.Args[i] = t.arg(v)
		}
	}
	var keep workload.ResultFunc
	if k.store != pgbench.StoreNone {
		if t.pipe != nil {
			meta := "gset"
			if k.store != pgbench.StoreGset {
				meta = "aset"
			}
			err := saying(errors.New("\\gset and \\aset cannot be used inside a pipeline"), "", "\\"+meta+" is not allowed in pipeline mode")
			err.(*said).meta = meta
			return err
		}
		keep = t.keepFn
		t.cur, t.lastRows, t.keepErr = k, -1, nil
	}
	if t.w.debug != nil {
		sent := q.Text
		if t.w.proto == workload.ProtoPrepared {
			sent = fmt.Sprintf("P_%d", q.ID) // the statement's name, as pgbench says it
		}
		t.debugf("sending %s", sent)
	}
	err := sc.RunSQL(ctx, q, keep)
	t.debugf("receiving")
	t.cur = nil
	if err != nil {
		return err
	}
	if t.keepErr != nil {
		return t.keepErr
	}
	if k.store == pgbench.StoreGset && t.lastRows != 1 {
		msg := fmt.Sprintf("expected one row, got %d", max(t.lastRows, 0))
		return &said{err: errors.New(msg), words: []string{msg}, result: true, query: k.nq - 1}
	}
	return nil
}

// placeholderText is a command's text with each reference replaced by the
// database's placeholder, numbered from 1.
func placeholderText(k *cmd, sc workload.ScriptConn) string {
	if len(k.vars) == 0 {
		return k.pieces[0]
	}
	var b strings.Builder
	b.WriteString(k.pieces[0])
	for i := range k.vars {
		b.WriteString(sc.Placeholder(i + 1))
		b.WriteString(k.pieces[i+1])
	}
	return b.String()
}

// keep stores \gset and \aset results: the last row's columns, as text,
// in variables named prefix+column.
func (t *terminal) keep(stmt int, cols []string, last []any, rows int) {
	k := t.cur
	if k == nil || t.keepErr != nil {
		return
	}
	if k.store == pgbench.StoreGset {
		if stmt != k.nq-1 {
			return
		}
		t.lastRows = rows
		if rows != 1 {
			return
		}
	} else if rows <= 0 {
		return
	}
	slots, err := t.colSlots(k, stmt, cols)
	if err != nil {
		t.keepErr = err
		return
	}
	for j, s := range slots {
		if s < 0 || j >= len(last) {
			continue
		}
		switch v := last[j].(type) {
		case nil:
			// pgbench stores what libpq's PQgetvalue gives for NULL, the
			// empty string: pasted as nothing, bound as '', and no number
			// for an expression.
			t.assign(s, textSlot(""))
		case string:
			t.assign(s, textSlot(v))
		case []byte:
			t.assign(s, textSlot(string(v)))
		default:
			t.assign(s, textSlot(fmt.Sprint(v)))
		}
	}
}

func (t *terminal) colSlots(k *cmd, stmt int, cols []string) ([]int, error) {
	cs := t.cols[k.ord]
	for len(cs) <= stmt {
		cs = append(cs, colCache{})
	}
	t.cols[k.ord] = cs
	c := &cs[stmt]
	if c.slots != nil && slices.Equal(c.cols, cols) {
		return c.slots, nil
	}
	c.cols = append(c.cols[:0], cols...)
	c.slots = make([]int, 0, len(cols))
	for _, col := range cols {
		name := k.prefix + col
		if !pgbench.ValidVarName(name) {
			c.slots = nil
			meta := "gset"
			if k.store != pgbench.StoreGset {
				meta = "aset"
			}
			// pgbench: the variable's refusal, then the client's line.
			return nil, &said{err: fmt.Errorf("invalid variable name %q from a result column: name the column with AS", name),
				words:  []string{fmt.Sprintf("%s: invalid variable name: \"%s\"", meta, name), "error storing into variable " + name},
				result: true, query: stmt}
		}
		i, ok := t.p.index[name]
		if !ok {
			i = -1
		}
		c.slots = append(c.slots, i)
	}
	return c.slots, nil
}

func (t *terminal) sleep(ctx context.Context, k *cmd) error {
	d := k.sleep
	if k.sleepVar >= 0 {
		v, err := t.value(k.sleepVar)
		if err != nil {
			return saying(fmt.Errorf("\\sleep: %w", err), "execution of meta-command failed", "sleep: "+err.Error())
		}
		n, err := v.AsInt()
		if err != nil {
			msg := fmt.Sprintf("invalid sleep time %q, must be an integer", t.text(&t.vars[k.sleepVar]))
			return saying(errors.New("\\sleep: "+msg), "execution of meta-command failed", "sleep: "+msg)
		}
		d = time.Duration(n) * k.unit
	}
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// shell runs \shell or \setshell as pgbench does: the arguments joined by
// spaces, run by /bin/sh. The command's stderr, and the stdout of \shell,
// go to the workload's stderr; \setshell's stdout must be an integer.
func (t *terminal) shell(ctx context.Context, k *cmd) error {
	name := "\\shell"
	if k.kind == pgbench.CmdSetShell {
		name = "\\setshell"
	}
	// pgbench's words for each way it fails (runShellCommand), which
	// start with the command's first word as written.
	first := ""
	if len(k.args) > 0 {
		if first = k.args[0].lit; k.args[0].slot >= 0 {
			first = ":" + k.args[0].name
		}
	}
	fail := func(err error, words string) error {
		return saying(err, "execution of meta-command failed", first+": "+words)
	}
	var b strings.Builder
	for i, a := range k.args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a.slot < 0 {
			b.WriteString(a.lit)
			continue
		}
		s := &t.vars[a.slot]
		if !s.set {
			return fail(fmt.Errorf("%s: %w", name, undefinedVar(a.name)), fmt.Sprintf("undefined variable \":%s\"", a.name))
		}
		b.WriteString(t.text(s))
	}
	line := b.String()
	c := exec.CommandContext(ctx, "/bin/sh", "-c", line)
	c.Args[0] = "sh" // as system() and popen() run it: the shell's messages say "sh: …"
	c.Stderr = t.w.stderr
	if k.kind == pgbench.CmdShell {
		c.Stdout = t.w.stderr
		if t.w.shellOut != nil {
			c.Stdout = t.w.shellOut
		}
		if err := c.Run(); err != nil {
			return fail(fmt.Errorf("%s: command %q failed: %v", name, line, err), "could not launch shell command")
		}
		return nil
	}
	out, err := c.Output()
	if err != nil {
		words := "could not launch shell command"
		if len(out) == 0 {
			words = "could not read result of shell command" // pgbench reads nothing there
		}
		return fail(fmt.Errorf("%s: command %q failed: %v", name, line, err), words)
	}
	line1, _, _ := bytes.Cut(out, []byte("\n"))
	res := strings.TrimSpace(string(line1))
	n, err := strconv.ParseInt(res, 10, 64)
	if err != nil {
		return fail(fmt.Errorf("%s: shell command must return an integer (not %q)", name, res),
			fmt.Sprintf("shell command must return an integer (not \"%s\")", res))
	}
	if k.badVar {
		return saying(fmt.Errorf("%s: invalid variable name %q", name, k.c.Var), "execution of meta-command failed",
			fmt.Sprintf("setshell: invalid variable name: \"%s\"", k.c.Var))
	}
	t.assign(k.slot, intSlot(n))
	return nil
}

func (t *terminal) startPipeline(ctx context.Context, sc workload.ScriptConn) error {
	if t.pipe != nil {
		return saying(errors.New("already in a pipeline"), "", "already in pipeline mode")
	}
	if t.w.proto == workload.ProtoSimple {
		return errors.New("cannot use pipeline mode with the simple query protocol: use --protocol extended or prepared")
	}
	p, ok := sc.(workload.Pipeliner)
	if !ok {
		return errors.New("this database cannot pipeline (\\startpipeline)")
	}
	if err := p.StartPipeline(ctx); err != nil {
		return err
	}
	t.pipe = p
	return nil
}

// debugf writes one of pgbench -d's lines for the client, when on.
func (t *terminal) debugf(format string, a ...any) {
	if t.w.debug == nil {
		return
	}
	fmt.Fprintf(t.w.debug, "%sclient %d %s\n", t.w.debugPrefix, t.vu, fmt.Sprintf(format, a...))
}

// metaWords is a meta-command as pgbench -d says it runs it: its name and
// its words, a \set's variable without the expression, an \if's and
// \elif's name alone.
func metaWords(k *cmd) string {
	name := "\\" + metaName[k.kind]
	switch k.kind {
	case pgbench.CmdSet:
		return name + " " + k.c.Var
	case pgbench.CmdSleep, pgbench.CmdShell, pgbench.CmdSetShell:
		return strings.Join(strings.Fields(k.c.Text), " ")
	}
	return name
}

// errTerminal runs nothing: the scripts did not compile.
type errTerminal struct{ err error }

func (e errTerminal) Next() workload.Txn                       { return e }
func (e errTerminal) Kind() int                                { return 0 }
func (e errTerminal) Run(context.Context, workload.Conn) error { return e.err }
