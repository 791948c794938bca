package runner

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/sledge-bench/sledge/internal/workload"
)

// verboseErrors is --verbose-errors (pgbench's): for every error that ends
// a try, a line with the client (the virtual user, from 0 as pgbench
// numbers them), the script or transaction type and the error, then
// whether the transaction is tried again or ends failed, with the try and
// the tries allowed. Lines from concurrent virtual users do not mix.
func verboseErrors(w io.Writer, mix []workload.TxType, maxRetries int) func(vu, kind, try int, retry bool, err error) {
	var mu sync.Mutex
	tries := ""
	if maxRetries < 1<<30 { // --max-tries 0: unlimited, no "/N" (pgbench)
		tries = fmt.Sprintf("/%d", maxRetries+1)
	}
	return func(vu, kind, try int, retry bool, err error) {
		what := "ends the failed transaction"
		if retry {
			what = "repeats the transaction after the error"
		}
		msg := strings.ReplaceAll(err.Error(), "\n", " ")
		where := fmt.Sprintf("script %d", kind)
		if name := mix[kind].Name; !strings.Contains(msg, name) { // scripts' errors name their file
			where += " (" + name + ")"
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "sledge: client %d got an error in %s; %s\n", vu, where, msg)
		fmt.Fprintf(w, "sledge: client %d %s (try %d%s)\n", vu, what, try, tries)
	}
}
