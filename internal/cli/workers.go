package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/workload"
)

// coordinatorOnly are run's flags a local worker does not get: the
// database (it comes in $SLEDGE_DB), the seed (the coordinator gives it),
// what only the coordinator shows or records, and the scale-out flags,
// which the coordinator sets per worker.
var coordinatorOnly = map[string]bool{
	"workers": true, "listen": true, "coordinator": true, "worker-index": true, "worker-timeout": true,
	"db": true, "json": true, "progress": true, "metrics": true, "metrics-linger": true, "cpuprofile": true,
	"jobs-db": true, "no-job": true, "seed": true, "random-seed": true, "threshold": true,
}

// workerArgsOf is a local worker's command line (docs/workers.md): run,
// the workload if the user named it, and every flag the user gave but
// coordinatorOnly's, in the --name=value form.
func workerArgsOf(cmd *cobra.Command, args []string) []string {
	out := []string{"run"}
	if len(args) > 0 {
		if _, err := workload.Lookup(args[0]); err == nil {
			out = append(out, args[0])
		}
	}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if coordinatorOnly[f.Name] {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+f.Name+"="+v)
			}
			return
		}
		out = append(out, "--"+f.Name+"="+f.Value.String())
	})
	return out
}
