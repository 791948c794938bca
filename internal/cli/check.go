package cli

import (
	"context"
	"fmt"
	"unicode/utf8"

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

// checkJSON is runner's.
type checkJSON = runner.CheckJSON

func runCheck(ctx context.Context, env *Env, c *common, w workload.Workload, url string) error {
	idWidth := 4 // TPC-C's ids; tpch's are words ("orderstatus"): the widest sets the column
	result, failed, err := runner.Check(ctx, runner.CheckEnv{Job: c.job,
		Header: func(w workload.Workload, url string) {
			for _, ch := range w.Checks() {
				idWidth = max(idWidth, utf8.RuneCountInString(ch.ID))
			}
			if !c.JSON {
				fmt.Fprintf(env.Stdout, "consistency of %s in %s (%s)\n", w.Name(), url, runner.ScaleText(w))
			}
		},
		Checked: func(r checkJSON) {
			if !c.JSON {
				line := fmt.Sprintf("  %-*s %-7s %s", idWidth, r.ID, r.Status, r.Desc)
				switch r.Status {
				case "fail":
					line += fmt.Sprintf(" (%s violations)", thousands(r.Violations))
				case "skipped":
					line += " (" + r.Reason + ")"
				}
				fmt.Fprintln(env.Stdout, line)
			}
		}}, w, url, c.Explicit)
	if err != nil {
		return err
	}
	if c.JSON {
		if err := writeJSON(env.Stdout, result); err != nil {
			return err
		}
	} else {
		if failed == 0 {
			fmt.Fprintln(env.Stdout, "all conditions hold")
		} else {
			fmt.Fprintf(env.Stdout, "%d condition%s failed\n", failed, plural(failed))
		}
		printJobLine(env.Stdout, result.JobID)
	}
	if failed > 0 {
		return runner.Silent{Code: ExitFailure}
	}
	return nil
}
