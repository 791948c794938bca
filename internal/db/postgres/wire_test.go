package postgres_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/sledge-bench/sledge/internal/testdb"
)

// The round trips of a New-Order in every mode, as docs/cost.md gives them
// (testdb.TestNewOrderRoundTrips). Procedure mode prepares its calls when
// it connects, so only the others pay a first use.
func TestNewOrderRoundTrips(t *testing.T) {
	s := server(t)
	d := open(t, tcpURL(s, freshDB(t)))
	testdb.TestNewOrderRoundTrips(t, d, modes)
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
