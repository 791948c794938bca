package cli

import (
	"fmt"
	"io"

	"github.com/sledge-bench/sledge/internal/runner"
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

// printWorkers prints a scale-out run's workers, one line each.
func printWorkers(out io.Writer, ws []runner.WorkerJSON) {
	if len(ws) == 0 {
		return
	}
	fmt.Fprintf(out, "%d workers, started together; their histograms and counts are merged:\n", len(ws))
	for _, w := range ws {
		state := w.State
		if w.State == "vanished" {
			state = fmt.Sprintf("vanished, missing %.0f%% of its share of the measured interval", 100*w.Missed)
		}
		fmt.Fprintf(out, "  worker %d: %s, %s, %s transactions, %s\n", w.Index, w.Share, vusText(w.VUs, 0), thousands(w.Transactions), state)
	}
}
