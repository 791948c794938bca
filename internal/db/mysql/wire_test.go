package mysql_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/testdb"
	"github.com/sledge-bench/sledge/internal/workload"
)

// The round trips of a New-Order, as docs/cost.md gives them: one CALL in
// procedure mode, one BEGIN NOT ATOMIC block in block mode; in client and prepared modes one per statement plus
// BEGIN and COMMIT (8 + 4 × order lines), and in prepared mode one more
// the first time the session prepares each statement.
func TestNewOrderRoundTrips(t *testing.T) {
	s := need(t)
	d, err := db.Open(context.Background(), tcpURL(s, s.User, s.Password, shared(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
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
			switch {
			case m.ProcedureLike() && e.Wire.RoundTrips != 1:
				t.Errorf("%s New-Order %d: %d round trips, want 1", m, i, e.Wire.RoundTrips)
			case !m.ProcedureLike() && !e.RolledBack && (e.Calls < 28 || e.Calls > 68 || (e.Calls-8)%4 != 0):
				t.Errorf("%s New-Order %d: %d statements, want 8 + 4 × (5..15)", m, i, e.Calls)
			}
		}
		t.Logf("%s: %+v", m, ex)
	})
}

// The summary's cost per transaction on MariaDB: the types' round trips
// add up to the overall figure, and the server's own byte counters are
// reported beside the client's.
func TestCLICostPerTransaction(t *testing.T) {
	s := need(t)
	u := tcpURL(s, s.User, s.Password, shared(t))
	stdout, stderr, code := sledge(t, "run", "--db", u, "--mode", "procedure", "--vus", "2", "--iterations", "100", "--seed", "5", "--json")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	type cost struct {
		RoundTrips    float64 `json:"round_trips"`
		BytesSent     float64 `json:"bytes_sent"`
		BytesReceived float64 `json:"bytes_received"`
		ClientCPUUs   float64 `json:"client_cpu_us"`
	}
	var r struct {
		Total struct {
			Count int64 `json:"count"`
		} `json:"total"`
		PerTxn *cost `json:"per_txn"`
		Types  []struct {
			Count  int64 `json:"count"`
			PerTxn *cost `json:"per_txn"`
		} `json:"types"`
		Server *struct {
			BytesSent     float64 `json:"bytes_sent"`
			BytesReceived float64 `json:"bytes_received"`
		} `json:"server_per_txn"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if r.PerTxn == nil || r.Server == nil {
		t.Fatalf("per_txn %v server_per_txn %v", r.PerTxn, r.Server)
	}
	var trips float64
	for _, ty := range r.Types {
		if ty.PerTxn != nil {
			trips += ty.PerTxn.RoundTrips * float64(ty.Count)
		}
	}
	if want := r.PerTxn.RoundTrips * float64(r.Total.Count); math.Abs(trips-want) > 0.5 {
		t.Errorf("Σ types round trips %.1f, overall × count %.1f", trips, want)
	}
	if r.PerTxn.RoundTrips < 1 || r.PerTxn.RoundTrips > 1.5 {
		t.Errorf("procedure mode: %.2f round trips per transaction", r.PerTxn.RoundTrips)
	}
	// The server counts every session, sledge's among them: never less.
	if r.Server.BytesReceived < r.PerTxn.BytesSent || r.Server.BytesSent < r.PerTxn.BytesReceived {
		t.Errorf("server bytes %+v below the client's %+v", *r.Server, *r.PerTxn)
	}
	t.Logf("client %+v server %+v", *r.PerTxn, *r.Server)
}
