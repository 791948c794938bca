package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/testdb"
	"github.com/sledge-bench/sledge/internal/workload"
)

// In pipeline mode a committed New-Order is two round trips: group 1
// (BEGIN and every read and lock whose inputs are known) and group 2 (the
// writes and COMMIT). The Parse of a statement's first use travels in the
// group that uses it, so first uses cost no round trip. A New-Order with
// an unused item is group 1 and a ROLLBACK.
func TestPipelineNewOrderRoundTrips(t *testing.T) {
	s := server(t)
	d := open(t, tcpURL(s, freshDB(t)))
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

// An error inside a group is classified as in the other modes, and the
// session is usable after its rollback: two pipeline sessions lock two
// districts in opposite orders; the deadlock's victim gets ErrRetry, and
// both then run a group again.
func TestPipelineDeadlockIsRetryable(t *testing.T) {
	s := server(t)
	d := open(t, tcpURL(s, freshDB(t)))
	ctx := context.Background()
	a, b := connect(t, d, workload.ModePipeline), connect(t, d, workload.ModePipeline)
	ga, ok := workload.AsGrouper(a)
	gb, ok2 := workload.AsGrouper(b)
	if !ok || !ok2 {
		t.Fatalf("pipeline sessions %T, %T are not Groupers", a, b)
	}
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
	// One of the two is the deadlock's victim; its failed transaction
	// releases its lock, so the other goes on.
	errB := lock(gb, 1)
	ea := <-errA
	var victim error
	switch {
	case errors.Is(ea, workload.ErrRetry) && errB == nil:
		victim = ea
	case errors.Is(errB, workload.ErrRetry) && ea == nil:
		victim = errB
	default:
		t.Fatalf("session a: %v; session b: %v; want one ErrRetry", ea, errB)
	}
	t.Logf("victim: %v", victim)
	for _, g := range []workload.Grouper{ga, gb} {
		if err := g.Rollback(ctx, errors.New("end")); err == nil || err.Error() != "end" {
			t.Errorf("rollback: %v", err)
		}
		// Usable again: a group with BEGIN and COMMIT.
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

// A query that finds no row reads as ErrNoRows, and the statements after
// it in the group ran.
func TestPipelineNoRows(t *testing.T) {
	s := server(t)
	d := open(t, tcpURL(s, freshDB(t)))
	ctx := context.Background()
	g, ok := workload.AsGrouper(connect(t, d, workload.ModePipeline))
	if !ok {
		t.Fatal("not a Grouper")
	}
	tests := []struct {
		name string
		item int64
		want error
	}{
		{"unused item", 100001, workload.ErrNoRows},
		{"item", 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g.Begin(workload.TxOptions{ReadOnly: true})
			i := g.Queue(workload.WantRows, "neword.item", tt.item)
			j := g.Queue(workload.WantRows, "slev.district", int64(1), int64(1))
			g.Commit()
			if err := g.Send(ctx); err != nil {
				t.Fatal(err)
			}
			var price float64
			var name, data string
			if err := g.Row(i).Scan(&price, &name, &data); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("item %d: %v, want %v", tt.item, err, tt.want)
			}
			var next int64
			if err := g.Row(j).Scan(&next); err != nil || next < 1 {
				t.Errorf("the statement after: %d, %v", next, err)
			}
		})
	}
}
