package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// modePairJSON sets two cells of the same transport and virtual users side
// by side: what going from one mode to the other changed per transaction.
type modePairJSON struct {
	Transport string `json:"transport"`
	VUs       int    `json:"vus"`
	From      string `json:"from"` // mode
	To        string `json:"to"`   // mode
	// Ratio is To's NOPM (TPM when the workload has none) / From's; null
	// when From's is 0.
	Ratio *float64 `json:"ratio"`
	// Per transaction, To − From; null when either cell lacks the figure.
	RoundTripsDelta  *float64 `json:"round_trips_delta"`
	ClientCPUUsDelta *float64 `json:"client_cpu_us_delta"`
	ServerCPUUsDelta *float64 `json:"server_cpu_us_delta"`
}

// modePairs pairs every two cells that differ only in mode, in the order
// the matrix ran them.
func modePairs(cells []cellJSON) []modePairJSON {
	out := []modePairJSON{}
	for i := range cells {
		for j := i + 1; j < len(cells); j++ {
			a, b := &cells[i], &cells[j]
			if a.Transport != b.Transport || a.VUs != b.VUs || a.Mode == b.Mode {
				continue
			}
			p := modePairJSON{Transport: a.Transport, VUs: a.VUs, From: a.Mode, To: b.Mode}
			if ta, tb := a.throughput(), b.throughput(); ta > 0 {
				r := tb / ta
				p.Ratio = &r
			}
			if ca, cb := a.cost(), b.cost(); ca != nil && cb != nil {
				rt, cpu := cb.RoundTrips-ca.RoundTrips, cb.ClientCPUUs-ca.ClientCPUUs
				p.RoundTripsDelta, p.ClientCPUUsDelta = &rt, &cpu
			}
			if sa, sb := a.serverCPU(), b.serverCPU(); sa != nil && sb != nil {
				d := *sb - *sa
				p.ServerCPUUsDelta = &d
			}
			out = append(out, p)
		}
	}
	return out
}

// throughput is what the ratios compare: NOPM, else TPM.
func (r *cellJSON) throughput() float64 {
	if r.NOPM != nil {
		return *r.NOPM
	}
	return r.TPM
}

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
