package mysql_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/testdb"
)

// The round trips of a New-Order in every mode, as docs/cost.md gives them
// (testdb.TestNewOrderRoundTrips).
func TestNewOrderRoundTrips(t *testing.T) {
	s := need(t)
	d, err := db.Open(context.Background(), tcpURL(s, s.User, s.Password, shared(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	testdb.TestNewOrderRoundTrips(t, d, modes)
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
