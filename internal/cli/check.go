package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
)

type checkOpts struct{ common }

func newCheck(env *Env) *cobra.Command {
	o := &checkOpts{}
	cmd := &cobra.Command{
		Use:   "check [workload] [URL]",
		Short: "Run the workload's consistency conditions; exit 1 if any fails",
		Args:  cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			w, url, err := o.resolve(cmd, args, env)
			if err != nil {
				return err
			}
			job, jenv, err := startJob(cmd, env, "check", w, url)
			if err != nil {
				return err
			}
			o.job = job
			return job.End(cmd.Context(), runCheck(cmd.Context(), jenv, &o.common, w, url))
		},
	}
	addCommon(cmd, &o.common, "check", 0)
	return cmd
}

// checkJSON is one condition's result. name, ok and detail are issue 2's
// contract (docs/contracts.md); the rest came later, beside them.
type checkJSON struct {
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

func runCheck(ctx context.Context, env *Env, c *common, w workload.Workload, url string) error {
	// Prepared: the checks are plain statements in every mode, and a
	// schema whose routines were dropped (block mode needs none) is still
	// checkable.
	s, err := runner.OpenSession(ctx, url, w.Name(), workload.ModePrepared, false)
	if err != nil {
		return err
	}
	defer s.Close(context.WithoutCancel(ctx))
	c.job.SetDB(ctx, s, 1)
	if noSchema, err := s.Attach(ctx, w); err != nil {
		if noSchema {
			return s.MissingSchemaErr(ctx, w, c.explicit)
		}
		return fmt.Errorf("read schema: %w", err)
	}
	var out []checkJSON
	failed := 0
	if !c.jsonOut {
		fmt.Fprintf(env.Stdout, "consistency of %s in %s (%s)\n", w.Name(), s.URL, runner.ScaleText(w))
	}
	for _, ch := range w.Checks() {
		r := checkJSON{ID: ch.ID, Desc: ch.Desc}
		start := time.Now()
		if ch.Skip != nil {
			reason, err := ch.Skip(ctx, s.Ctl)
			if err != nil {
				return fmt.Errorf("check %s: %w", ch.ID, err)
			}
			r.Reason = reason
		}
		if r.Reason != "" {
			r.Status = "skipped"
		} else {
			if err := s.Ctl.QueryRow(ctx, "check."+ch.ID).Scan(&r.Violations); err != nil {
				return fmt.Errorf("check %s: %w", ch.ID, err)
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
			r.Detail += fmt.Sprintf(" (%s violations)", thousands(r.Violations))
		case "skipped":
			r.Detail += " (skipped: " + r.Reason + ")"
		}
		out = append(out, r)
		if !c.jsonOut {
			line := fmt.Sprintf("  %-4s %-7s %s", r.ID, r.Status, r.Desc)
			switch r.Status {
			case "fail":
				line += fmt.Sprintf(" (%s violations)", thousands(r.Violations))
			case "skipped":
				line += " (" + r.Reason + ")"
			}
			fmt.Fprintln(env.Stdout, line)
		}
	}
	result := map[string]any{"workload": w.Name(), "database": s.URL, "ok": failed == 0, "passed": failed == 0, "checks": out}
	c.job.SetSummary(result)
	if c.jsonOut {
		if err := writeJSON(env.Stdout, result); err != nil {
			return err
		}
	} else if failed == 0 {
		fmt.Fprintln(env.Stdout, "all conditions hold")
	} else {
		fmt.Fprintf(env.Stdout, "%d condition%s failed\n", failed, plural(failed))
	}
	if failed > 0 {
		return runner.Silent{Code: ExitFailure}
	}
	return nil
}
