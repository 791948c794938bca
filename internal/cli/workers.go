package cli

import (
	"fmt"
	"io"

	"github.com/sledge-bench/sledge/internal/runner"
)

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
