package script

import "time"

// ScriptReport is one script's per-command figures (pgbench -r).
type ScriptReport struct {
	Script   string // the script's name, as in Mix
	Commands []CommandStat
}

// CommandStat is one command over every terminal: how many times it
// completed, their total time, and how many times it failed. Meta-commands
// are counted as SQL commands are, as pgbench counts them.
type CommandStat struct {
	Line     int    // line of the script where the command starts
	Text     string // the command as written, on one line
	Count    int64
	Total    time.Duration
	Failures int64
}

// Mean is the average time of the command's completed executions, the
// figure pgbench -r prints in milliseconds.
func (s CommandStat) Mean() time.Duration {
	if s.Count == 0 {
		return 0
	}
	return s.Total / time.Duration(s.Count)
}

// CommandReport adds up the per-command counters of every terminal, one
// entry per script in Mix order. Call it after the run (terminals are not
// locked while they run). Without SetPerCommand(true) the counts are zero.
func (w *Workload) CommandReport() []ScriptReport {
	p, err := w.compiled()
	if err != nil {
		return nil
	}
	w.mu.Lock()
	terms := w.terms
	w.mu.Unlock()
	out := make([]ScriptReport, len(p.scripts))
	for i, cs := range p.scripts {
		r := ScriptReport{Script: cs.s.Name, Commands: make([]CommandStat, len(cs.cmds))}
		for j := range cs.cmds {
			k := &cs.cmds[j]
			st := CommandStat{Line: k.c.Line, Text: k.c.Text}
			for _, t := range terms {
				if t.stats == nil {
					continue
				}
				s := &t.stats[k.ord]
				st.Count += s.count
				st.Total += s.total
				st.Failures += s.failures
			}
			r.Commands[j] = st
		}
		out[i] = r
	}
	return out
}
