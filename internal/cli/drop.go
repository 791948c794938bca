package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sledge-bench/sledge/internal/runner"
)

func newDrop(env *Env) *cobra.Command {
	o := &common{}
	cmd := &cobra.Command{
		Use:   "drop [workload] [URL]",
		Short: "Remove the workload's schema (tables, indexes, procedures)",
		Args:  cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			w, url, err := o.resolve(cmd, args, env)
			if err != nil {
				return err
			}
			if err := runner.Drop(cmd.Context(), w, url); err != nil {
				return err
			}
			if o.JSON {
				return writeJSON(env.Stdout, map[string]any{"workload": w.Name(), "dropped": true})
			}
			fmt.Fprintf(env.Stdout, "dropped the %s schema\n", w.Name())
			return nil
		},
	}
	addCommon(cmd, o, "drop", 0)
	return cmd
}
