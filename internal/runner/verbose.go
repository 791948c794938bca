package runner

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/workload"
)

// unlimitedRetries is --max-tries 0's MaxRetries: no limit in practice.
const unlimitedRetries = 1 << 30

// verboseErrors is --verbose-errors (pgbench's): for every error that ends
// a try, a line with the client (the virtual user, from 0 as pgbench
// numbers them), the script or transaction type and the error, then
// whether the transaction is tried again or ends failed, with the try and
// the tries allowed. Lines from concurrent virtual users do not mix.
// With a latency limit, the try's line also says how much of it the
// transaction has used, as pgbench's.
func verboseErrors(w io.Writer, mix []workload.TxType, maxRetries int, limit time.Duration) func(engine.TryError) {
	var mu sync.Mutex
	tries := ""
	if maxRetries < unlimitedRetries { // --max-tries 0: no "/N" (pgbench)
		tries = fmt.Sprintf("/%d", maxRetries+1)
	}
	return func(e engine.TryError) {
		what := "ends the failed transaction"
		if e.Retry {
			what = "repeats the transaction after the error"
		}
		msg := strings.ReplaceAll(e.Err.Error(), "\n", " ")
		where := fmt.Sprintf("script %d", e.Kind)
		if name := mix[e.Kind].Name; !strings.Contains(msg, name) { // scripts' errors name their file
			where += " (" + name + ")"
		}
		used := ""
		if limit > 0 {
			used = fmt.Sprintf(", %.3f%% of the maximum time of tries was used", 100*float64(e.Elapsed)/float64(limit))
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "sledge: client %d got an error in %s; %s\n", e.VU, where, msg)
		fmt.Fprintf(w, "sledge: client %d %s (try %d%s%s)\n", e.VU, what, e.Try, tries, used)
	}
}
