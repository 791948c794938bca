package runner

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// CheckEnv is what a check works with: the job that records it, and the
// command line's hooks that show it as it goes.
type CheckEnv struct {
	Job *JobRun // the job being recorded, nil when none
	// Header is called once the schema is attached, before the first
	// condition; Checked after each condition.
	Header  func(w workload.Workload, url string)
	Checked func(r CheckJSON)
}

// CheckJSON is one condition's result. name, ok and detail are issue 2's
// contract (docs/contracts.md); the rest came later, beside them.
type CheckJSON struct {
	Name       string `json:"name"`
	OK         bool   `json:"ok"`     // a skipped condition did not fail
	Detail     string `json:"detail"` // the description, with the violations or the reason for a skip
	ID         string `json:"id"`
	Desc       string `json:"description"`
	Status     string `json:"status"` // pass, fail, skipped
	Violations int64  `json:"violations"`
	Reason     string `json:"reason,omitempty"`
	Ms         int64  `json:"ms"`
}

// CheckResult is what `sledge check --json` prints. Its fields are in
// the order the keys have always been printed (they were a map's,
// sorted): scripts that compare the text see no change.
type CheckResult struct {
	Checks   []CheckJSON `json:"checks"`
	Database string      `json:"database"`
	JobID    int64       `json:"job_id,omitempty"` // the job that records the check; absent with --no-job
	OK       bool        `json:"ok"`
	Passed   bool        `json:"passed"` // the same as ok: the older key
	Workload string      `json:"workload"`
}

// SetJobID records the job that keeps the check (JobRun.SetSummary).
func (r *CheckResult) SetJobID(id int64) { r.JobID = id }

// Check runs w's consistency conditions on the database at url, records
// them in env.Job and returns the result --json prints (issue 2's keys)
// and how many conditions failed. explicit: the user named the database
// (the error for a missing schema says how to build it there).
func Check(ctx context.Context, env CheckEnv, w workload.Workload, url string, explicit bool) (*CheckResult, int, error) {
	// Prepared: the checks are plain statements in every mode, and a
	// schema whose routines were dropped (block mode needs none) is still
	// checkable.
	s, err := OpenSession(ctx, url, workload.SQLName(w), workload.ModePrepared, false)
	if err != nil {
		return nil, 0, err
	}
	defer s.Close(context.WithoutCancel(ctx))
	if db.Ephemeral(s.DB) {
		return nil, 0, Usagef("%s lives in this process's memory only: it starts empty, and what a run builds there ends with the run; check a database file instead", s.URL)
	}
	env.Job.SetDB(ctx, s, 1)
	if noSchema, err := s.Attach(ctx, w); err != nil {
		if noSchema {
			return nil, 0, s.MissingSchemaErr(ctx, w, explicit)
		}
		return nil, 0, fmt.Errorf("read schema: %w", err)
	}
	var out []CheckJSON
	failed := 0
	if env.Header != nil {
		env.Header(w, s.URL)
	}
	// A check's own SQL text runs on the control session when it takes
	// text (a SQL workload's), else on a SQL session opened for it (an
	// Extension's added checks beside its base's named statements).
	var sqlc workload.SQLConn
	defer func() {
		if sqlc != nil {
			_ = sqlc.Close(context.WithoutCancel(ctx))
		}
	}()
	for _, ch := range w.Checks() {
		r := CheckJSON{ID: ch.ID, Desc: ch.Desc}
		start := time.Now()
		if ch.Skip != nil {
			reason, err := ch.Skip(ctx, s.Ctl)
			if err != nil {
				return nil, 0, fmt.Errorf("check %s: %w", ch.ID, err)
			}
			r.Reason = reason
		}
		if r.Reason != "" {
			r.Status = "skipped"
		} else {
			c, err := checkConn(ctx, s, ch, &sqlc)
			if err != nil {
				return nil, 0, fmt.Errorf("check %s: %w", ch.ID, err)
			}
			if err := violations(ctx, c, ch, &r.Violations); err != nil {
				return nil, 0, fmt.Errorf("check %s: %w", ch.ID, err)
			}
			r.Status = "pass"
			if r.Violations != 0 {
				r.Status = "fail"
				failed++
			}
		}
		r.Ms = time.Since(start).Milliseconds()
		r.Name, r.OK, r.Detail = r.ID, r.Status != "fail", r.Desc
		switch r.Status {
		case "fail":
			r.Detail += fmt.Sprintf(" (%s violations)", Thousands(r.Violations))
		case "skipped":
			r.Detail += " (skipped: " + r.Reason + ")"
		}
		out = append(out, r)
		if env.Checked != nil {
			env.Checked(r)
		}
	}
	result := &CheckResult{Workload: w.Name(), Database: s.URL, OK: failed == 0, Passed: failed == 0, Checks: out}
	env.Job.SetSummary(result)
	return result, failed, nil
}

// checkConn is the session check ch runs on: the control session, or
// for SQL text that it does not take, a SQL session (*sqlc, opened once).
func checkConn(ctx context.Context, s *Session, ch workload.Check, sqlc *workload.SQLConn) (workload.Conn, error) {
	if ch.SQL == "" {
		return s.Ctl, nil
	}
	if _, ok := s.Ctl.(workload.SQLConn); ok {
		return s.Ctl, nil
	}
	if *sqlc == nil {
		sd, ok := s.DB.(db.SQLDB)
		if !ok {
			return nil, fmt.Errorf("the database does not run SQL text")
		}
		c, err := sd.ConnectSQL(ctx)
		if err != nil {
			return nil, err
		}
		*sqlc = c
	}
	return *sqlc, nil
}

// violations runs condition ch: its statement "check.<ID>", or its own
// SQL text through a SQL session.
func violations(ctx context.Context, c workload.Conn, ch workload.Check, n *int64) error {
	if ch.SQL == "" {
		return c.QueryRow(ctx, "check."+ch.ID).Scan(n)
	}
	sc, ok := c.(workload.SQLConn)
	if !ok {
		return fmt.Errorf("the session does not run SQL text")
	}
	var got string
	rows, err := sc.QuerySQL(ctx, ch.SQL, func(v [][]byte) error {
		got = string(v[0])
		return nil
	})
	if err != nil {
		return err
	}
	if rows != 1 {
		return fmt.Errorf("%d rows, want 1", rows)
	}
	f, err := strconv.ParseFloat(got, 64)
	if err != nil {
		return fmt.Errorf("violations %q: not a number", got)
	}
	*n = int64(f)
	return nil
}
