package postgres

import (
	"context"
	"net"

	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/metrics"
)

// countDials makes cfg's dial count a connection's traffic into the
// counter its context carries: only virtual users' sessions are opened on
// such a context (engine.Plan.Cost), so control connections and cancel
// requests are never counted. Counting happens below TLS: the bytes are
// the ones on the wire. Connections wait as io says (db.IOMode, URL option io=blocking
// by default).
func countDials(cfg *pgx.ConnConfig, io db.IOMode) {
	dial := cfg.DialFunc
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if nc, err = io.Wrap(nc); err != nil {
			return nil, err
		}
		return metrics.CountConn(nc, metrics.WireFrom(ctx)), nil
	}
}

// Wire returns the session's traffic counter; nil when it is not counted.
func (c *conn) Wire() *metrics.WireCounts { return c.wire }

var _ metrics.Wired = (*conn)(nil)
