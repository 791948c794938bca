package tpcb

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/workload"
)

// initFlags binds pgbench's initialization options for build.
func initFlags(fs *pflag.FlagSet, o *InitOptions) {
	fs.StringVarP(&o.Steps, "init-steps", "I", defaultSteps,
		"tpcb: pgbench's init steps, run in the order given: d drop, t create tables, g generate client-side or G server-side (PostgreSQL), v vacuum analyze, p primary keys, f foreign keys; on MariaDB and SQLite each once, in the order dtgvp")
	fs.IntVarP(&o.Fillfactor, "fillfactor", "F", 100, "tpcb: the tables' fillfactor, 10..100 (PostgreSQL)")
	fs.BoolVar(&o.ForeignKeys, "foreign-keys", false, "tpcb: create the foreign keys between the tables, pgbench's step f (PostgreSQL)")
	fs.BoolVar(&o.Unlogged, "unlogged-tables", false, "tpcb: create the tables UNLOGGED (PostgreSQL)")
	fs.IntVar(&o.Partitions, "partitions", 0, "tpcb: partition pgbench_accounts into N partitions (PostgreSQL; 0: none)")
	fs.StringVar(&o.PartitionMethod, "partition-method", "", "tpcb: range (default) or hash, with --partitions (PostgreSQL)")
	fs.StringVar(&o.Tablespace, "tablespace", "", "tpcb: create the tables in this tablespace (PostgreSQL)")
	fs.StringVar(&o.IndexTablespace, "index-tablespace", "", "tpcb: create the primary keys' indexes in this tablespace (PostgreSQL)")
	fs.BoolVarP(&o.Quiet, "quiet", "q", false, "tpcb: accepted for pgbench's -q; sledge's build shows its own progress bar (--json for none)")
}

// InitOptions are pgbench's initialization options (pgbench -i), on
// `sledge build tpcb` (docs/tpcb.md part 1).
type InitOptions struct {
	Steps           string // -I: pgbench's step letters; "" is the default dtgvp
	Fillfactor      int    // -F: 10..100; 0 is the default 100
	ForeignKeys     bool   // --foreign-keys: step f after the others
	Unlogged        bool   // --unlogged-tables
	Partitions      int    // --partitions: 0 for none
	PartitionMethod string // --partition-method: range (default) or hash
	Tablespace      string // --tablespace
	IndexTablespace string // --index-tablespace
	Quiet           bool   // -q: accepted; sledge's progress is its own
}

// defaultSteps is pgbench's default -I.
const defaultSteps = "dtgvp"

// stepOrder is the order of the build's phases, which steps given in it
// map onto (BuildPlan): pgbench's default order, with f last (after the
// marker, whose table it references).
const stepOrder = "dtgGvpf"

func (o InitOptions) fillfactor() int {
	if o.Fillfactor == 0 {
		return 100
	}
	return o.Fillfactor
}

// steps is -I without its spaces (pgbench skips them), with f added for
// --foreign-keys, as pgbench adds it.
func (o InitOptions) steps() string {
	s := o.Steps
	if s == "" {
		s = defaultSteps
	}
	s = strings.ReplaceAll(s, " ", "")
	if o.ForeignKeys && !strings.Contains(s, "f") {
		s += "f"
	}
	return s
}

// validate checks what no database needs to answer, in pgbench's words.
func (o InitOptions) validate() error {
	if o.Fillfactor != 0 && (o.Fillfactor < 10 || o.Fillfactor > 100) {
		return errors.New("-F/--fillfactor must be in range 10..100")
	}
	if o.Partitions < 0 {
		return fmt.Errorf("--partitions must be in range 0..2147483647")
	}
	switch o.PartitionMethod {
	case "", "range", "hash":
	default:
		return fmt.Errorf("invalid partition method, expecting \"range\" or \"hash\", got: %q", o.PartitionMethod)
	}
	if o.PartitionMethod != "" && o.Partitions == 0 {
		return errors.New("--partition-method requires greater than zero --partitions")
	}
	for _, c := range o.Steps {
		if c != ' ' && !strings.ContainsRune(stepOrder, c) { // pgbench skips spaces
			return fmt.Errorf("unrecognized initialization step \"%c\"; allowed step characters are \"%s\"", c, stepOrder)
		}
	}
	return nil
}

// inOrder tells whether steps run each step once, in the build's order
// (stepOrder, g or G): the build's phases run them as they are.
func inOrder(steps string) bool {
	pos := -1
	for _, c := range steps {
		i := strings.IndexRune(stepOrder, c)
		if i <= pos {
			return false
		}
		pos = i
	}
	return !(strings.Contains(steps, "g") && strings.Contains(steps, "G"))
}

// isDefault: the build is the usual one, the database's script files.
func (o InitOptions) isDefault() bool {
	return o.steps() == defaultSteps && o.fillfactor() == 100 && !o.Unlogged &&
		o.Partitions == 0 && o.Tablespace == "" && o.IndexTablespace == ""
}

// dialectNames are the databases other than PostgreSQL, as BuildPlan's
// messages name them.
var dialectNames = map[string]string{"mysql": "MariaDB/MySQL", "sqlite": "SQLite"}

// BuildPlan maps pgbench's init steps and options onto sledge's build
// (workload.BuildPlanner): d the drop script, t the tables, g the
// client-side load, G the server's INSERT … SELECT generate_series, v
// VACUUM ANALYZE (ANALYZE at the end of the build on MariaDB and SQLite),
// p the primary keys, f the foreign keys once the marker is loaded.
// PostgreSQL takes every option; the others refuse those they have no
// equivalent for, in one line.
func (w *Workload) BuildPlan(dialect string) (workload.BuildPlan, error) {
	o := w.cfg.Init
	steps := o.steps()
	has := func(c string) bool { return strings.Contains(steps, c) }
	var p workload.BuildPlan
	if !inOrder(steps) {
		if dialect != "postgres" {
			return p, fmt.Errorf("-I %s: sledge runs the steps on %s once each, in the order %s; steps in another order or repeated are PostgreSQL's only",
				o.Steps, dialectNames[dialect], stepOrder)
		}
		return w.orderedPlan(steps)
	}
	if dialect != "postgres" {
		name := dialectNames[dialect]
		if name == "" {
			name = dialect
		}
		refuse := func(opt, why string) error {
			return fmt.Errorf("%s is PostgreSQL's only: "+why, opt, name)
		}
		switch {
		case o.fillfactor() != 100:
			return p, refuse("-F/--fillfactor", "%s has no table fillfactor")
		case o.Unlogged:
			return p, refuse("--unlogged-tables", "%s has no unlogged tables")
		case o.Partitions > 0:
			return p, refuse("--partitions", "sledge does not partition pgbench_accounts on %s")
		case o.Tablespace != "" || o.IndexTablespace != "":
			return p, refuse("--tablespace/--index-tablespace", "%s has no PostgreSQL tablespaces")
		case has("G"):
			return p, refuse("-I G (server-side generation)", "sledge loads %s client-side: use g")
		case has("f"):
			return p, refuse("--foreign-keys (-I f)", "sledge creates no foreign keys on %s")
		case dialect == "sqlite" && has("t") && !has("p"):
			return p, fmt.Errorf("-I without p: SQLite's primary keys are part of its tables (the rowid), step t creates them")
		}
		p.Scripts = map[string][]string{}
		if !has("d") {
			p.Scripts["drop"] = nil
		}
		if !has("t") {
			p.Scripts["tables"] = nil
		}
		if !has("p") {
			p.Scripts["indexes"] = nil
		}
		if !has("g") {
			p.Load = workload.LoadNone
		}
		if has("v") {
			if dialect == "mysql" {
				p.After = []string{"ANALYZE TABLE pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history"}
			} else {
				p.After = []string{"ANALYZE"}
			}
		}
		return p, nil
	}
	if o.isDefault() {
		return p, nil // drop.sql, tables.sql, the load, indexes.sql
	}
	p.Scripts = map[string][]string{}
	if !has("d") {
		p.Scripts["drop"] = nil
	}
	p.Scripts["tables"] = nil
	if has("t") {
		p.Scripts["tables"] = pgTables(o, w.scale)
	}
	// Steps v and p, in this order here, are the indexes phase.
	p.Scripts["indexes"] = w.stepSQL(strings.Map(func(c rune) rune {
		if c == 'v' || c == 'p' {
			return c
		}
		return -1
	}, steps))
	switch {
	case has("G"):
		// pgbench's server-side generation (initGenerateDataServerSide),
		// branches last: they mark the build complete.
		p.Load = workload.LoadServer
		p.ServerLoad, p.ServerMark = w.serverLoad()
	case !has("g"):
		p.Load = workload.LoadNone
	}
	if has("f") {
		// pgbench's initCreateFKeys, after the marker: they reference
		// pgbench_branches, loaded last.
		p.After = foreignKeys
	}
	return p, nil
}

// orderedPlan runs PostgreSQL's steps in the order given, repeats
// included, as pgbench does: the steps before the data's load run in the
// build's first phase (where the drop goes), the load (g or G, once) in
// its place, the steps after it before the marker table is loaded, from
// the first f on (its keys reference the marker's table) once it is.
func (w *Workload) orderedPlan(steps string) (workload.BuildPlan, error) {
	var p workload.BuildPlan
	load := strings.IndexAny(steps, "gG")
	if load >= 0 && strings.IndexAny(steps[load+1:], "gG") >= 0 {
		return p, fmt.Errorf("-I %s: sledge loads the data once: give g or G once", w.cfg.Init.Steps)
	}
	pre, post := steps, ""
	p.Load = workload.LoadNone
	if load >= 0 {
		pre, post = steps[:load], steps[load+1:]
		p.Load = workload.LoadClient
		if steps[load] == 'G' {
			p.Load = workload.LoadServer
			p.ServerLoad, p.ServerMark = w.serverLoad()
		}
	}
	after := ""
	if k := strings.IndexByte(post, 'f'); k >= 0 {
		post, after = post[:k], post[k:]
	}
	p.Scripts = map[string][]string{"drop": w.stepSQL(pre), "tables": nil, "indexes": w.stepSQL(post)}
	p.After = w.stepSQL(after)
	return p, nil
}

// stepSQL is the statements of PostgreSQL's steps d, t, v, p and f, in
// the order given.
func (w *Workload) stepSQL(steps string) []string {
	o := w.cfg.Init
	var out []string
	if strings.ContainsAny(steps, "vp") {
		out = append(out, "SET maintenance_work_mem = '512MB'")
	}
	for _, c := range steps {
		switch c {
		case 'd':
			out = append(out, "DROP TABLE IF EXISTS pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers")
		case 't':
			out = append(out, pgTables(o, w.scale)...)
		case 'v':
			out = append(out, vacuum)
		case 'p':
			out = append(out, primaryKeys(o)...)
		case 'f':
			out = append(out, foreignKeys...)
		}
	}
	return out
}

// vacuum is pgbench's step v.
const vacuum = "VACUUM ANALYZE pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history"

// primaryKeys is pgbench's step p (initCreatePKeys).
func primaryKeys(o InitOptions) []string {
	using := ""
	if o.IndexTablespace != "" {
		using = " USING INDEX TABLESPACE " + quoteIdent(o.IndexTablespace)
	}
	var out []string
	for _, k := range [][2]string{{"pgbench_branches", "bid"}, {"pgbench_tellers", "tid"}, {"pgbench_accounts", "aid"}} {
		out = append(out, fmt.Sprintf("ALTER TABLE %s ADD PRIMARY KEY (%s)%s", k[0], k[1], using))
	}
	return out
}

// foreignKeys is pgbench's step f (initCreateFKeys).
var foreignKeys = []string{
	"ALTER TABLE pgbench_tellers ADD CONSTRAINT pgbench_tellers_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches",
	"ALTER TABLE pgbench_accounts ADD CONSTRAINT pgbench_accounts_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches",
	"ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches",
	"ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_tid_fkey FOREIGN KEY (tid) REFERENCES pgbench_tellers",
	"ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_aid_fkey FOREIGN KEY (aid) REFERENCES pgbench_accounts",
}

// serverLoad is pgbench's server-side generation (step G,
// initGenerateDataServerSide), branches last: they mark the build
// complete.
func (w *Workload) serverLoad() (load, mark []string) {
	load = []string{
		fmt.Sprintf("INSERT INTO pgbench_tellers (tid, bid, tbalance) SELECT tid, (tid - 1) / %d + 1, 0 FROM generate_series(1, %d) AS tid",
			tellersPerScale, tellersPerScale*w.scale),
		fmt.Sprintf("INSERT INTO pgbench_accounts (aid, bid, abalance, filler) SELECT aid, (aid - 1) / %d + 1, 0, '' FROM generate_series(1, %d) AS aid",
			accountsPerScale, accountsPerScale*w.scale),
	}
	mark = []string{fmt.Sprintf("INSERT INTO pgbench_branches (bid, bbalance) SELECT bid, 0 FROM generate_series(1, %d) AS bid",
		branchesPerScale*w.scale)}
	return load, mark
}

// pgTables is pgbench's initCreateTables and createPartitions.
func pgTables(o InitOptions, scale int) []string {
	unlogged := ""
	if o.Unlogged {
		unlogged = " UNLOGGED"
	}
	ts := ""
	if o.Tablespace != "" {
		ts = " TABLESPACE " + quoteIdent(o.Tablespace)
	}
	ff := fmt.Sprintf(" WITH (fillfactor = %d)", o.fillfactor())
	method := o.PartitionMethod
	if method == "" {
		method = "range"
	}
	ddl := []struct{ table, cols, opts string }{
		{"pgbench_history", "tid int, bid int, aid int, delta int, mtime timestamp, filler char(22)", ""},
		{"pgbench_tellers", "tid int NOT NULL, bid int, tbalance int, filler char(84)", ff},
		{"pgbench_accounts", "aid int NOT NULL, bid int, abalance int, filler char(84)", ff},
		{"pgbench_branches", "bid int NOT NULL, bbalance int, filler char(88)", ff},
	}
	var out []string
	for _, d := range ddl {
		opts := d.opts
		if d.table == "pgbench_accounts" && o.Partitions > 0 {
			opts = " PARTITION BY " + strings.ToUpper(method) + " (aid)"
		}
		out = append(out, fmt.Sprintf("CREATE%s TABLE %s (%s)%s%s", unlogged, d.table, d.cols, opts, ts))
	}
	n := int64(o.Partitions)
	partSize := (int64(accountsPerScale)*int64(scale) + n - 1) / max(n, 1)
	for p := int64(1); p <= n; p++ {
		var bounds string
		if method == "hash" {
			bounds = fmt.Sprintf("WITH (MODULUS %d, REMAINDER %d)", n, p-1)
		} else {
			from, to := "MINVALUE", "MAXVALUE"
			if p > 1 {
				from = fmt.Sprint((p-1)*partSize + 1)
			}
			if p < n {
				to = fmt.Sprint(p*partSize + 1)
			}
			bounds = fmt.Sprintf("FROM (%s) TO (%s)", from, to)
		}
		out = append(out, fmt.Sprintf("CREATE%s TABLE pgbench_accounts_%d PARTITION OF pgbench_accounts FOR VALUES %s%s",
			unlogged, p, bounds, ff))
	}
	return out
}

// quoteIdent is PQescapeIdentifier's quoting: always in double quotes.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// PgbenchStepSQL is the SQL of pgbench 15's init steps d, t, G, v, p and f
// on PostgreSQL, statement by statement as pgbench sends them (`sledge
// pgbench -i` runs them in the order -I gives; step g's data is made by
// the caller). Indexes and vacuum get maintenance_work_mem = 512MB, as
// sledge build does: the same result, built faster.
func PgbenchStepSQL(o InitOptions, scale int) map[byte][]string {
	w := &Workload{scale: scale}
	w.cfg.Init = o
	load, mark := w.serverLoad()
	vac := []string{"SET maintenance_work_mem = '512MB'"}
	for _, t := range []string{"pgbench_branches", "pgbench_tellers", "pgbench_accounts", "pgbench_history"} {
		vac = append(vac, "VACUUM ANALYZE "+t)
	}
	return map[byte][]string{
		'd': {"DROP TABLE IF EXISTS pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers"},
		't': pgTables(o, scale),
		'G': append(mark, load...), // branches, tellers, accounts: pgbench's order
		'v': vac,
		'p': append([]string{"SET maintenance_work_mem = '512MB'"}, primaryKeys(o)...),
		'f': foreignKeys,
	}
}
