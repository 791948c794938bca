package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// printPairs prints the mode pairs: for each, the throughput ratio and the
// change in round trips, client CPU and server CPU per transaction.
func printPairs(w io.Writer, pairs []modePairJSON) {
	if len(pairs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nmode against mode (same transport and virtual users): to / from, and to − from per transaction")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "from\tto\ttransport\tvus\tratio\tΔ rt/txn\tΔ client cpu µs\tΔ server cpu µs\t")
	num := func(p *float64, format string) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf(format, *p)
	}
	for _, p := range pairs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t\n", p.From, p.To, p.Transport, p.VUs,
			num(p.Ratio, "%.2f"), num(p.RoundTripsDelta, "%+.1f"), num(p.ClientCPUUsDelta, "%+.0f"), num(p.ServerCPUUsDelta, "%+.0f"))
	}
	tw.Flush()
}
