package postgres_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/sledge-bench/sledge/internal/testdb"
	"github.com/sledge-bench/sledge/internal/workload"
)

// The round trips of a New-Order, as docs/cost.md gives them: one call in
// procedure mode; in client and prepared modes one per statement plus
// BEGIN and COMMIT (8 + 4 × order lines). In prepared mode a statement is
// prepared the first time a session runs it: one more round trip, that time
// only. Procedure mode prepares its calls when it connects.
func TestNewOrderRoundTrips(t *testing.T) {
	s := server(t)
	d := open(t, tcpURL(s, freshDB(t)))
	runModes(t, func(t *testing.T, m workload.Mode) {
		ex, err := testdb.NewOrders(context.Background(), d, m, 42, 6)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range ex {
			want := e.Calls
			if m == workload.ModePrepared {
				want += e.FirstUses
			}
			if e.Wire.RoundTrips != want {
				t.Errorf("New-Order %d: %d round trips, want %d (%d calls, %d first uses)", i, e.Wire.RoundTrips, want, e.Calls, e.FirstUses)
			}
			if e.Wire.BytesSent == 0 || e.Wire.BytesReceived == 0 {
				t.Errorf("New-Order %d: no bytes counted: %+v", i, e.Wire)
			}
			if i == 0 {
				continue
			}
			switch {
			case m == workload.ModeProcedure && e.Wire.RoundTrips != 1:
				t.Errorf("procedure New-Order %d: %d round trips, want 1", i, e.Wire.RoundTrips)
			case m != workload.ModeProcedure && !e.RolledBack && (e.Calls < 28 || e.Calls > 68 || (e.Calls-8)%4 != 0):
				t.Errorf("%s New-Order %d: %d statements, want 8 + 4 × (5..15)", m, i, e.Calls)
			}
		}
		t.Logf("%s: %+v", m, ex)
	})
}

type costRun struct {
	Total struct {
		Count int64 `json:"count"`
	} `json:"total"`
	PerTxn *cost `json:"per_txn"`
	Types  []struct {
		Name   string `json:"name"`
		Count  int64  `json:"count"`
		PerTxn *cost  `json:"per_txn"`
	} `json:"types"`
}

type cost struct {
	RoundTrips      float64 `json:"round_trips"`
	BytesSent       float64 `json:"bytes_sent"`
	BytesReceived   float64 `json:"bytes_received"`
	ClientCPUUs     float64 `json:"client_cpu_us"`
	ContextSwitches float64 `json:"context_switches"`
}

// The summary's cost per transaction: the types' wire counts add up to the
// overall ones, procedure mode needs far fewer round trips than client mode,
// and --no-cost leaves it out.
func TestCLICostPerTransaction(t *testing.T) {
	s := server(t)
	u := tcpURL(s, freshDB(t))
	run := func(t *testing.T, args ...string) costRun {
		t.Helper()
		code, out, stderr := sledge(t, append([]string{"run", "--db", u, "--vus", "2", "--iterations", "100", "--seed", "5", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("run: exit %d: %s", code, stderr)
		}
		var r costRun
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	rt := map[string]float64{}
	for _, m := range []string{"procedure", "client"} {
		r := run(t, "--mode", m)
		if r.PerTxn == nil {
			t.Fatalf("%s: no per_txn", m)
		}
		var trips, sent, recv float64
		for _, ty := range r.Types {
			if ty.PerTxn == nil {
				continue
			}
			n := float64(ty.Count)
			trips += ty.PerTxn.RoundTrips * n
			sent += ty.PerTxn.BytesSent * n
			recv += ty.PerTxn.BytesReceived * n
		}
		n := float64(r.Total.Count)
		for _, c := range []struct {
			name      string
			sum, want float64
		}{{"round trips", trips, r.PerTxn.RoundTrips * n}, {"bytes sent", sent, r.PerTxn.BytesSent * n}, {"bytes received", recv, r.PerTxn.BytesReceived * n}} {
			if math.Abs(c.sum-c.want) > 0.5 {
				t.Errorf("%s: Σ types %s = %.1f, overall × count = %.1f", m, c.name, c.sum, c.want)
			}
		}
		if r.PerTxn.ClientCPUUs <= 0 {
			t.Errorf("%s: client CPU %.1f µs per transaction", m, r.PerTxn.ClientCPUUs)
		}
		rt[m] = r.PerTxn.RoundTrips
		t.Logf("%s: %+v", m, *r.PerTxn)
	}
	if !(rt["procedure"] < 2 && rt["client"] > 10*rt["procedure"]) {
		t.Errorf("round trips per transaction: procedure %.2f, client %.2f", rt["procedure"], rt["client"])
	}
	if r := run(t, "--mode", "procedure", "--no-cost"); r.PerTxn != nil {
		t.Errorf("--no-cost: per_txn %+v", *r.PerTxn)
	}
}
