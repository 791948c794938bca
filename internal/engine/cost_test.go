package engine

import (
	"context"
	"io"
	"net"
	"testing"

	"github.com/sledge-bench/sledge/internal/metrics"
	"github.com/sledge-bench/sledge/internal/workload"
)

// echoConn is a session on one end of a pipe whose other end echoes, its
// traffic counted into the counter Connect's context carries.
type echoConn struct {
	workload.Conn
	nc   net.Conn
	wire *metrics.WireCounts
}

func (c *echoConn) Wire() *metrics.WireCounts { return c.wire }
func (c *echoConn) Close(context.Context) error {
	return c.nc.Close()
}

func dialEcho(ctx context.Context) *echoConn {
	client, server := net.Pipe()
	go func() {
		defer server.Close()
		_, _ = io.Copy(server, server)
	}()
	w := metrics.WireFrom(ctx)
	return &echoConn{nc: metrics.CountConn(client, w), wire: w}
}

// exchangeTxn makes kind+1 request/reply exchanges of 8 bytes.
type exchangeTxn struct{ kind int }

func (t exchangeTxn) Kind() int { return t.kind }
func (t exchangeTxn) Run(_ context.Context, c workload.Conn) error {
	nc := c.(*echoConn).nc
	buf := make([]byte, 8)
	for range t.kind + 1 {
		if _, err := nc.Write(buf); err != nil {
			return err
		}
		if _, err := io.ReadFull(nc, buf); err != nil {
			return err
		}
	}
	return nil
}

type alternating struct{ n int }

func (a *alternating) Next() workload.Txn { a.n++; return exchangeTxn{kind: a.n % 2} }

// Per type cost comes from the session each transaction ran on, whether a
// VU has its own (connections 0) or takes a shared one per transaction,
// holding its OS thread only then.
func TestCostPerTypeFromEachVUsConnection(t *testing.T) {
	for _, c := range []struct {
		cost  bool
		conns int
	}{{true, 0}, {false, 0}, {true, 2}, {false, 2}, {true, 3}} {
		cost := c.cost
		p := &Plan{
			VUs: 3, Connections: c.conns, Iterations: 40, Mix: twoTypes, Seed: 1, Cost: cost, ThreadCost: true,
			Connect:  func(ctx context.Context, _ int) (workload.Conn, error) { return dialEcho(ctx), nil },
			Terminal: func(int) workload.Terminal { return &alternating{} },
		}
		res, err := Run(t.Context(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Wired != cost || res.ProcessOK != cost {
			t.Errorf("cost %v, connections %d: wired %v process read %v", cost, c.conns, res.Wired, res.ProcessOK)
		}
		for kind := range 2 {
			s := res.Stats[kind]
			want := metrics.Wire{}
			if cost {
				n := s.Completed() * int64(kind+1)
				want = metrics.Wire{RoundTrips: n, BytesSent: 8 * n, BytesReceived: 8 * n}
			}
			if s.Completed() != 60 || s.Wire != want {
				t.Errorf("cost %v, connections %d, type %d: %d completed, wire %+v; want 60 and %+v", cost, c.conns, kind, s.Completed(), s.Wire, want)
			}
		}
		if _, ok := metrics.ThreadUsage(); ok && res.ThreadUsage != cost {
			t.Errorf("cost %v: thread usage %v", cost, res.ThreadUsage)
		}
		if res.ThreadUsage && res.Stats.Total().Thread.CPU <= 0 {
			t.Error("no CPU time on the virtual users' threads")
		}
	}
}
