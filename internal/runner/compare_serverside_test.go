package runner

import (
	"encoding/json"
	"testing"
)

// A cell's server side for the report, from the keys its run reported:
// thread states with the agent's partial mark, why there are none, the
// cost per transaction, the stacks.
func TestCellServerSide(t *testing.T) {
	threads := `{"cpu":0.3,"runnable":0.05,"network":0.35,"lock":0.1,"io":0.05,"idle":0.15,"samples":2400,"hz":100,"threads":40,"source":"agent db1:7078"}`
	cost := `{"cpu_user_us":60,"cpu_sys_us":20,"voluntary_switches":4.5,"run_queue_delay_us":12,"port_bytes_in":431,"port_bytes_out":1207,"source":{"cpu":"agent db1:7078"}}`
	for _, c := range []struct {
		name                string
		cell                CellJSON
		wantSource, wantWhy string
		wantCPU             float64 // 0: no server cost
		wantStacks          bool
	}{
		{"agent, partial, stacks", CellJSON{ServerThreads: json.RawMessage(threads), ServerPerTxn: json.RawMessage(cost),
			Agent:        json.RawMessage(`{"address":"db1:7078","version":"v","api":1,"partial":true,"seconds_missed":3}`),
			ServerStacks: json.RawMessage(`{"source":"agent db1:7078","hz":99,"samples":5,"folded":"postgres;main 5\n"}`)},
			"agent db1:7078 (partial: 3 s missed)", "", 80, true},
		{"stacks refused", CellJSON{ServerThreads: json.RawMessage(threads), ServerPerTxn: json.RawMessage(cost),
			ServerStacks: json.RawMessage(`{"source":"agent db1:7078","hz":99,"samples":0,"why":"no perf"}`)},
			"agent db1:7078", "", 80, false},
		{"remote, no agent", CellJSON{ServerPerTxn: json.RawMessage(`{"cpu_user_us":null,"cpu_sys_us":null,"missing":{"cpu":"server is remote: run with --agent"}}`)},
			"", "server is remote: run with --agent", 0, false},
		{"nothing at all", CellJSON{}, "", "no agent", 0, false},
		{"the sampler's note", CellJSON{ServerThreads: json.RawMessage(`{"samples":0,"source":"this host (/proc)","note":"no thread could be read"}`)},
			"", "no thread could be read", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			th, why, sc, st := c.cell.ServerSide()
			if (th != nil) != (c.wantSource != "") || (th != nil && (th.Source != c.wantSource || th.Network != 0.35 || th.Samples != 2400)) {
				t.Errorf("threads %+v, want source %q", th, c.wantSource)
			}
			if why != c.wantWhy {
				t.Errorf("why %q, want %q", why, c.wantWhy)
			}
			if (sc != nil) != (c.wantCPU > 0) || (sc != nil && (*sc.CPUUs != c.wantCPU || *sc.PortBytesOut != 1207 || sc.InvoluntarySwitches != nil)) {
				t.Errorf("server cost %+v, want CPU %v", sc, c.wantCPU)
			}
			if (st != nil) != c.wantStacks {
				t.Errorf("stacks %+v, want %v", st, c.wantStacks)
			}
		})
	}
}
