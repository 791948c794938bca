package runner

// ModePairJSON sets two cells of the same transport and virtual users side
// by side: what going from one mode to the other changed per transaction.
type ModePairJSON struct {
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

// ModePairs pairs every two cells that differ only in mode, in the order
// the matrix ran them.
func ModePairs(cells []CellJSON) []ModePairJSON {
	out := []ModePairJSON{}
	for i := range cells {
		for j := i + 1; j < len(cells); j++ {
			a, b := &cells[i], &cells[j]
			// A mixed compare pairs modes on the terminals alone only: the
			// other sides' figures hold the streams' work too.
			if a.Transport != b.Transport || a.VUs != b.VUs || a.Mode == b.Mode || a.Side != b.Side || (a.Side != "" && a.Side != sideOLTP) {
				continue
			}
			p := ModePairJSON{Transport: a.Transport, VUs: a.VUs, From: a.Mode, To: b.Mode}
			if ta, tb := a.Throughput(), b.Throughput(); ta > 0 {
				r := tb / ta
				p.Ratio = &r
			}
			if ca, cb := a.Cost(), b.Cost(); ca != nil && cb != nil {
				rt, cpu := cb.RoundTrips-ca.RoundTrips, cb.ClientCPUUs-ca.ClientCPUUs
				p.RoundTripsDelta, p.ClientCPUUsDelta = &rt, &cpu
			}
			if sa, sb := a.ServerCPU(), b.ServerCPU(); sa != nil && sb != nil {
				d := *sb - *sa
				p.ServerCPUUsDelta = &d
			}
			out = append(out, p)
		}
	}
	return out
}
