package mysql_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/testdb"
	"github.com/sledge-bench/sledge/internal/workload"
)

// pipelineSession opens a pipeline-mode session on the shared database.
func pipelineSession(t *testing.T, d db.DB) workload.Grouper {
	t.Helper()
	ctx := context.Background()
	c, err := d.Connect(ctx, "tpcc", workload.ModePipeline)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(ctx) })
	g, ok := workload.AsGrouper(c)
	if !ok {
		t.Fatalf("a pipeline session (%T) is not a Grouper", c)
	}
	return g
}

func openShared(t *testing.T) db.DB {
	t.Helper()
	s := need(t)
	d, err := db.Open(context.Background(), tcpURL(s, s.User, s.Password, shared(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// In pipeline mode a committed New-Order is two multi-statement texts:
// BEGIN and every read and lock whose inputs are known, then the writes
// and COMMIT. One with an unused item is the first text and a ROLLBACK.
func TestPipelineNewOrderRoundTrips(t *testing.T) {
	d := openShared(t)
	ex, err := testdb.NewOrders(context.Background(), d, workload.ModePipeline, 42, 6)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range ex {
		if e.Wire.RoundTrips != 2 {
			t.Errorf("New-Order %d (rolled back %v): %d round trips, want 2", i, e.RolledBack, e.Wire.RoundTrips)
		}
		if e.Wire.BytesSent == 0 || e.Wire.BytesReceived == 0 {
			t.Errorf("New-Order %d: no bytes counted: %+v", i, e.Wire)
		}
	}
	t.Logf("%+v", ex)
}

// Results come back by statement, whatever the mix: rows, no rows
// (ErrNoRows), and row counts in a group whose rows are read too (two
// texts on MariaDB).
func TestPipelineResults(t *testing.T) {
	g := pipelineSession(t, openShared(t))
	ctx := context.Background()
	tests := []struct {
		name     string
		item     int64
		wantItem error
	}{
		{"unused item", 100001, workload.ErrNoRows},
		{"item", 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g.Begin(workload.TxOptions{})
			i := g.Queue(workload.WantRows, "neword.item", tt.item)
			// Rolled back below: the shared database stays consistent.
			u := g.Queue(workload.WantCount, "payment.warehouse_update", 1.0, int64(1))
			j := g.Queue(workload.WantRows, "slev.district", int64(1), int64(1))
			if err := g.Send(ctx); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := g.Rollback(ctx, nil); err != nil {
					t.Error(err)
				}
			}()
			var price float64
			var name, data string
			if err := g.Row(i).Scan(&price, &name, &data); !errors.Is(err, tt.wantItem) || (tt.wantItem == nil) != (err == nil) {
				t.Errorf("item %d: %v, want %v", tt.item, err, tt.wantItem)
			}
			if n := g.Count(u); n != 1 {
				t.Errorf("warehouse update: %d rows, want 1", n)
			}
			var next int64
			if err := g.Row(j).Scan(&next); err != nil || next < 1 {
				t.Errorf("the statement after: %d, %v", next, err)
			}
		})
	}
}

// An error inside a group is classified as in the other modes, and the
// session is usable after its rollback: two sessions lock two districts
// in opposite orders; the deadlock's victim gets ErrRetry.
func TestPipelineDeadlockIsRetryable(t *testing.T) {
	d := openShared(t)
	ctx := context.Background()
	ga, gb := pipelineSession(t, d), pipelineSession(t, d)
	lock := func(g workload.Grouper, district int64) error {
		i := g.Queue(workload.WantRows, "neword.district", int64(1), district)
		if err := g.Send(ctx); err != nil {
			return err
		}
		var tax float64
		var next int64
		return g.Row(i).Scan(&tax, &next)
	}
	for _, c := range []struct {
		g workload.Grouper
		d int64
	}{{ga, 1}, {gb, 2}} {
		c.g.Begin(workload.TxOptions{})
		if err := lock(c.g, c.d); err != nil {
			t.Fatal(err)
		}
	}
	errA := make(chan error, 1)
	go func() { errA <- lock(ga, 2) }() // waits for b
	time.Sleep(200 * time.Millisecond)
	// InnoDB rolls the victim back at once, so the other goes on.
	errB := lock(gb, 1)
	ea := <-errA
	if !(errors.Is(ea, workload.ErrRetry) && errB == nil) && !(errors.Is(errB, workload.ErrRetry) && ea == nil) {
		t.Fatalf("session a: %v; session b: %v; want one ErrRetry", ea, errB)
	}
	t.Logf("a: %v; b: %v", ea, errB)
	for _, g := range []workload.Grouper{ga, gb} {
		if err := g.Rollback(ctx, errors.New("end")); err == nil || err.Error() != "end" {
			t.Errorf("rollback: %v", err)
		}
		g.Begin(workload.TxOptions{ReadOnly: true})
		i := g.Queue(workload.WantRows, "slev.district", int64(1), int64(1))
		g.Commit()
		if err := g.Send(ctx); err != nil {
			t.Fatalf("after rollback: %v", err)
		}
		var next int64
		if err := g.Row(i).Scan(&next); err != nil || next < 1 {
			t.Errorf("after rollback: next o_id %d, %v", next, err)
		}
	}
}

// Two virtual users in pipeline mode through the CLI: every transaction
// completes, TPM comes from the server's counters (one COMMIT per
// transaction inside the texts), and the database stays consistent.
func TestPipelineRunAndCheck(t *testing.T) {
	s := need(t)
	u := tcpURL(s, s.User, s.Password, shared(t))
	stdout, stderr, code := sledge(t, "run", "--db", u, "--mode", "pipeline", "--vus", "2",
		"--iterations", "150", "--seed", "11", "--json")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	var sum struct {
		Mode      string   `json:"mode"`
		TPMSource string   `json:"tpm_source"`
		TPMNote   string   `json:"tpm_note"`
		NOPM      *float64 `json:"nopm"`
		Total     struct {
			Count, Errors, Retries int64
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("summary: %v: %s", err, stdout)
	}
	// Retried attempts are rollbacks to the database; sledge's count is then
	// the headline and the note says why.
	retried := sum.TPMSource == "client" && sum.Total.Retries > 0 && strings.Contains(sum.TPMNote, "retried attempts")
	if sum.Mode != "pipeline" || (sum.TPMSource != "database" && !retried) || sum.NOPM == nil || *sum.NOPM <= 0 {
		t.Errorf("mode %q tpm_source %q (%s) nopm %v", sum.Mode, sum.TPMSource, sum.TPMNote, sum.NOPM)
	}
	if sum.Total.Count != 300 || sum.Total.Errors != 0 {
		t.Errorf("count %d errors %d, want 300 and 0", sum.Total.Count, sum.Total.Errors)
	}
	if _, stderr, code := sledge(t, "check", "--db", u); code != 0 {
		t.Errorf("check after the run: exit %d: %s", code, stderr)
	}
}
