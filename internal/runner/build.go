package runner

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/workload"
)

// BuildResult is what a build did: the summary --json prints.
type BuildResult struct {
	Workload  string  `json:"workload"`
	Database  string  `json:"database"`
	Scale     string  `json:"scale"`
	Seed      uint64  `json:"seed"`
	BuildVUs  int     `json:"build_vus"`
	Rows      int64   `json:"rows"`
	LoadS     float64 `json:"load_s"`
	IndexesS  float64 `json:"indexes_s"`
	TotalS    float64 `json:"total_s"`
	RowsPerS  float64 `json:"rows_per_s"`
	Completed bool    `json:"completed"`
	JobID     int64   `json:"job_id,omitempty"` // the job that records the build; absent with --no-job
	// AfterLoad names what IndexesS covers ("indexes and procedures").
	AfterLoad string `json:"-"`
}

// SetJobID records the job that keeps the build (JobRun.SetSummary).
func (r *BuildResult) SetJobID(id int64) { r.JobID = id }

// BuildEnv is what a build works with: where it writes, the job that
// records it, and the command line's progress display.
type BuildEnv struct {
	Stderr io.Writer
	Job    *JobRun // the job being recorded, nil when none
	// Progress shows the load while it goes on, from render's fraction
	// done and line; it returns what stops it. Nil: nothing is shown.
	Progress func(render func() (float64, string)) (stop func())
}

func checkBuildVUs(vus int) error {
	if vus < 1 {
		return Usagef("--build-vus must be at least 1")
	}
	return nil
}

// Build opens the database at url (creating a server database that does
// not exist yet), records it in env.Job and builds w's schema with vus
// build virtual users; quiet (--json) prints nothing on env.Stderr.
func Build(ctx context.Context, env BuildEnv, w workload.Workload, url string, seed uint64, vus int, quiet bool) (*BuildResult, error) {
	if err := checkBuildVUs(vus); err != nil {
		return nil, err
	}
	s, err := OpenSession(ctx, url, workload.SQLName(w), 0, true)
	if err != nil {
		return nil, err
	}
	defer s.Close(context.WithoutCancel(ctx))
	if db.Ephemeral(s.DB) {
		return nil, Usagef("%s lives in this process's memory only: a build there would end with the build; `sledge run %s --db %s` builds what it needs first", s.URL, w.Name(), s.URL)
	}
	env.Job.SetDB(ctx, s, vus)
	res, err := BuildSchema(ctx, env, s, w, seed, vus, quiet)
	if err != nil {
		return nil, err
	}
	env.Job.SetSummary(res)
	return res, nil
}

// BuildSchema creates and loads the schema of w through session s.
func BuildSchema(ctx context.Context, env BuildEnv, s *Session, w workload.Workload, seed uint64, vus int, quiet bool) (*BuildResult, error) {
	// A complete schema has its marker table; refuse to load over it.
	switch noSchema, err := s.Attach(ctx, w); {
	case err == nil:
		how, note := Suggest("sledge drop "+w.Name(), s.Raw, true)
		return nil, fmt.Errorf("a %s schema already exists in %s: drop it first with `%s`%s", w.Name(), s.URL, how, note)
	case !noSchema:
		return nil, fmt.Errorf("read schema: %w", err)
	}
	if err := s.Guard(ctx, w); err != nil {
		return nil, err
	}
	plan, err := buildPlan(s, w)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	// Whatever an interrupted build left behind goes first.
	if err := plan.script(ctx, s.DB, w, "drop"); err != nil {
		return nil, fmt.Errorf("drop leftovers: %w", err)
	}
	if err := plan.script(ctx, s.DB, w, "tables"); err != nil {
		return nil, fmt.Errorf("create tables: %w", err)
	}
	tables := w.Tables()
	if plan.Load == workload.LoadNone {
		tables = nil
	}
	prog := engine.NewBuildProgress(tables)
	if !quiet {
		fmt.Fprintf(env.Stderr, "building %s in %s: %s, seed %d, %d build virtual users\n",
			w.Name(), s.URL, ScaleText(w), seed, vus)
	}
	var stopDisp func()
	if !quiet && env.Progress != nil && plan.Load == workload.LoadClient {
		stopDisp = env.Progress(func() (float64, string) {
			n := prog.Loaded()
			el := time.Since(start)
			return float64(n) / float64(max(prog.Total, 1)),
				fmt.Sprintf("loading: %s of %s rows, %s", Thousands(n), Thousands(prog.Total), Seconds(el))
		})
	}
	// The last table marks a finished build (Attach finds the schema by
	// it), so it is loaded only after everything else, indexes and
	// procedures included: an interrupted build never looks complete.
	last := max(len(tables)-1, 0)
	switch sl, ok := s.DB.(db.StreamLoader); {
	case plan.Load == workload.LoadServer:
		err = plan.run(ctx, s.DB, w, "server-side load", plan.ServerLoad)
	case ok:
		err = engine.LoadStreaming(ctx, tables[:last], vus, sl.LoadStream, prog)
	default:
		err = engine.Load(ctx, tables[:last], vus, s.DB.Load, prog)
	}
	loaded := time.Now()
	after := plan.afterLoad(s.DB, w)
	if err == nil {
		if stopDisp != nil {
			stopDisp()
			stopDisp = nil
			// One total for one build: the rows so far of all the build
			// will load, the last table's included (it comes last).
			fmt.Fprintf(env.Stderr, "loaded %s of %s rows in %s; creating %s, then loading %s (%s rows), which marks the build complete\n",
				Thousands(prog.Loaded()), Thousands(prog.Total), Seconds(loaded.Sub(start)), after, tables[last].Name, Thousands(tables[last].Rows))
		}
		if err = plan.script(ctx, s.DB, w, "indexes"); err != nil {
			err = fmt.Errorf("create indexes: %w", err)
		} else if err = plan.script(ctx, s.DB, w, "procedures"); err != nil {
			err = fmt.Errorf("create procedures: %w", err)
		} else if err = plan.mark(ctx, s.DB, w, tables, prog); err != nil {
			err = fmt.Errorf("load %s: %w", w.Tables()[len(w.Tables())-1].Name, err)
		} else if err = plan.run(ctx, s.DB, w, "after the marker", plan.After); err != nil {
			err = fmt.Errorf("finish the build: %w", err)
		}
	}
	if stopDisp != nil {
		stopDisp()
	}
	if err != nil {
		if ctx.Err() != nil {
			// The command to paste names the database: without --db it
			// would build the default one; and the scale, which the
			// plain command would not repeat.
			how, note := Suggest("sledge build "+w.Name(), s.Raw, true)
			if st := ScaleText(w); st != "" {
				note += " with the same options (" + st + ")"
			}
			return nil, &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("build interrupted after %s rows; the schema is incomplete: run `%s`%s again, which drops what was loaded and starts over", Thousands(prog.Loaded()), how, note)}
		}
		return nil, err
	}
	end := time.Now()
	rows := prog.Loaded()
	if plan.Load == workload.LoadServer {
		rows = prog.Total // generated by the server, all of them
	}
	return &BuildResult{
		Workload: w.Name(), Database: s.URL, Scale: ScaleText(w), Seed: seed, BuildVUs: vus,
		Rows: rows, LoadS: loaded.Sub(start).Seconds(), IndexesS: end.Sub(loaded).Seconds(),
		TotalS: end.Sub(start).Seconds(), RowsPerS: float64(rows) / loaded.Sub(start).Seconds(),
		Completed: true, AfterLoad: after,
	}, nil
}

// AfterLoader is a workload that names what its build creates between
// the load and the marker ("indexes and statistics").
type AfterLoader interface{ AfterLoad() string }

// afterLoad names what the build creates after the load, for its
// messages: the workload's words, else "indexes and procedures", or
// "indexes" where there are no procedures (SQLite and DuckDB have none; a
// plan or a SQL text may have none).
func (p plan) afterLoad(d db.DB, w workload.Workload) string {
	if a, ok := w.(AfterLoader); ok {
		return a.AfterLoad()
	}
	sd, isSQL := d.(db.SQLDB)
	stmts, planned := p.Scripts["procedures"]
	switch sw, ok := w.(workload.SQLScripter); {
	case isSQL && (sd.Dialect() == "sqlite" || sd.Dialect() == "duckdb"):
		return "indexes"
	case planned:
	case ok && isSQL:
		stmts, planned = sw.Script(sd.Dialect(), "procedures"), true
	}
	if planned && len(stmts) == 0 {
		return "indexes"
	}
	return "indexes and procedures"
}

// plan is a workload's BuildPlan as the build follows it.
type plan struct{ workload.BuildPlan }

// buildPlan asks w for its plan on s's database (workload.BuildPlanner);
// the zero plan for the others. A refusal is bad input.
func buildPlan(s *Session, w workload.Workload) (plan, error) {
	bp, ok := w.(workload.BuildPlanner)
	if !ok {
		return plan{}, nil
	}
	dialect := ""
	if sd, ok := s.DB.(db.SQLDB); ok {
		dialect = sd.Dialect()
	}
	p, err := bp.BuildPlan(dialect)
	if err != nil {
		return plan{}, &ExitError{Code: ExitUsage, Err: err}
	}
	return plan{p}, nil
}

// script runs build step step: the plan's statements for it, else the
// step's script file.
func (p plan) script(ctx context.Context, d db.DB, w workload.Workload, step string) error {
	if stmts, ok := p.Scripts[step]; ok {
		return p.run(ctx, d, w, step, stmts)
	}
	return RunScript(ctx, d, w, step)
}

// run runs stmts in order on one SQL session, each on its own.
func (p plan) run(ctx context.Context, d db.DB, w workload.Workload, step string, stmts []string) error {
	if len(stmts) == 0 {
		return nil
	}
	sd, ok := d.(db.SQLDB)
	if !ok {
		return fmt.Errorf("%s needs a database that runs SQL text", w.Name())
	}
	return execStmts(ctx, sd, w, step, stmts)
}

// mark loads the last table, the marker of a complete build: by the
// server, by one build virtual user, or not at all.
func (p plan) mark(ctx context.Context, d db.DB, w workload.Workload, tables []workload.Table, prog *engine.BuildProgress) error {
	switch {
	case p.Load == workload.LoadServer:
		return p.run(ctx, d, w, "server-side load", p.ServerMark)
	case len(tables) == 0:
		return nil
	}
	return engine.Load(ctx, tables[len(tables)-1:], 1, d.Load, prog)
}

// Seconds is a duration in seconds with one decimal: "12.3 s".
func Seconds(d time.Duration) string {
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// Drop removes w's schema from the database at url (`sledge drop`), once
// w agrees that the database is its to drop from (workload.Guard).
func Drop(ctx context.Context, w workload.Workload, url string) error {
	if _, ok := w.(workload.Guard); ok {
		s, err := OpenSession(ctx, url, workload.SQLName(w), 0, false)
		if err != nil {
			return err
		}
		defer s.Close(context.WithoutCancel(ctx))
		if err := s.Guard(ctx, w); err != nil {
			return err
		}
	}
	d, err := OpenDB(ctx, url)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := RunScript(context.WithoutCancel(ctx), d, w, "drop"); err != nil {
		return fmt.Errorf("drop %s: %w", w.Name(), err)
	}
	return nil
}
