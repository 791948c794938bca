package cli

import (
	"bytes"
	"strings"
	"testing"
)

func fp(v float64) *float64 { return &v }

// The server's block of the summary: measured figures with their source,
// absent ones with the reason (a remote server, an embedded database).
func TestPrintServerCost(t *testing.T) {
	for _, c := range []struct {
		name string
		sum  runSummary
		want []string
	}{
		{"remote", runSummary{ServerPerTxn: &serverCostJSON{Statements: fp(1), Source: map[string]string{"statements": "pg_stat_statements calls"},
			Missing: map[string]string{"cpu": "server is remote", "context_switches": "server is remote"}},
			ServerWaits: &serverWaitsJSON{Samples: 10, Sessions: 20, IntervalMs: 100, CPU: 0.5, Client: 0.5, IO: fp(0), Source: "pg_stat_activity"}},
			[]string{"cost per transaction (server)", "CPU µs            -     server is remote", "statements        1.00  pg_stat_statements calls", "CPU 50%, client 50%"}},
		{"embedded", runSummary{ServerPerTxn: &serverCostJSON{Missing: map[string]string{"cpu": "embedded: no separate server", "waits": "embedded: no separate server"}}},
			[]string{"embedded: no separate server", "where sessions wait: - embedded"}},
		{"local", runSummary{ServerPerTxn: &serverCostJSON{CPUUserUs: fp(300), CPUSysUs: fp(100), ContextSwitches: fp(4),
			Source: map[string]string{"cpu": "/proc of 2 backends", "context_switches": "/proc of 2 backends"}}},
			[]string{"400.0 (user 300.0, system 100.0)  /proc of 2 backends", "the same processes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			printServerCost(&b, &c.sum)
			for _, w := range c.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("no %q in:\n%s", w, b.String())
				}
			}
		})
	}
}

// jobs diff compares the server's figures both runs have, and only those.
func TestDiffServer(t *testing.T) {
	a := &runSummary{ServerPerTxn: &serverCostJSON{CPUUserUs: fp(100), CPUSysUs: fp(50), Statements: fp(1)},
		ServerWaits: &serverWaitsJSON{Sessions: 10, CPU: 0.5, Client: 0.5}}
	b := &runSummary{ServerPerTxn: &serverCostJSON{CPUUserUs: fp(200), CPUSysUs: fp(100)},
		ServerWaits: &serverWaitsJSON{Sessions: 10, CPU: 0.25, Client: 0.75}}
	got := map[string][2]float64{}
	diffServer(a, b, func(name string, x, y float64) { got[name] = [2]float64{x, y} })
	want := map[string][2]float64{"server_per_txn.cpu_us": {150, 300}, "server_per_txn.cpu_user_us": {100, 200},
		"server_per_txn.cpu_sys_us": {50, 100}, "server_waits.cpu": {0.5, 0.25}, "server_waits.client": {0.5, 0.75},
		"server_waits.lock": {0, 0}, "server_waits.other": {0, 0}}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v, want %v", k, got[k], v)
		}
	}
}
