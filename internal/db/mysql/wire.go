package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"strings"
	"sync"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/metrics"
)

// sessionConn opens a virtual user's connection. When ctx carries a wire
// counter (engine.Plan.Cost) the connection is dialed fresh, counting into
// it, from a pool of its own: the shared pool could hand back an idle
// connection dialed for someone else. own is that pool (close it after
// the connection), nil otherwise.
// dialed is the connection the pool dialed (nil when sc is the shared
// pool's). multi allows multi-statement texts (pipeline mode), which the
// shared pool's connections do not.
func (d *DB) sessionConn(ctx context.Context, multi bool) (sc *sql.Conn, own *sql.DB, wire *metrics.WireCounts, dialed *dialedConn, err error) {
	wire = metrics.WireFrom(ctx)
	if wire == nil && d.cfg.io == db.IOPoller && !multi {
		sc, err = d.pool.Conn(ctx)
		return sc, nil, nil, nil, err
	}
	dialed = &dialedConn{}
	cfg := d.cfg.drv.Clone()
	cfg.MultiStatements = multi
	dial := countingDial(wire, d.cfg.io)
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err == nil {
			dialed.set(nc)
		}
		return nc, err
	}
	connector, err := newConnector(cfg)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	own = sql.OpenDB(connector)
	// Closing the session closes its connection rather than keeping it idle.
	own.SetMaxIdleConns(0)
	if sc, err = own.Conn(ctx); err != nil {
		_ = own.Close()
		return nil, nil, nil, nil, err
	}
	return sc, own, wire, dialed, nil
}

// dialedConn is the network connection under a session's own pool: the
// one a cancelled context interrupts (conn.begin). The pool redials after
// a broken connection, hence the lock.
type dialedConn struct {
	mu sync.Mutex
	nc net.Conn
}

func (d *dialedConn) set(nc net.Conn) {
	d.mu.Lock()
	d.nc = nc
	d.mu.Unlock()
}

func (d *dialedConn) get() net.Conn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.nc
}

// countingDial dials as the driver does and counts the connection's
// traffic into wire (when not nil); the connection waits as io says
// (db.IOMode).
func countingDial(wire *metrics.WireCounts, io db.IOMode) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var nd net.Dialer // keeps TCP keepalives on, as the driver's own dial does
		nc, err := nd.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if nc, err = io.Wrap(nc); err != nil {
			return nil, err
		}
		return metrics.CountConn(nc, wire), nil
	}
}

// Wire returns the session's traffic counter; nil when it is not counted.
func (c *conn) Wire() *metrics.WireCounts { return c.wire }

var (
	_ metrics.Wired = (*conn)(nil)
	_ db.ServerWire = (*DB)(nil)
)

// ServerBytes are Bytes_sent and Bytes_received from the global status:
// what the server counted over every session, not only sledge's.
func (d *DB) ServerBytes(ctx context.Context) (db.Bytes, bool, error) {
	rows, err := d.pool.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Bytes_sent', 'Bytes_received')")
	if err != nil {
		return db.Bytes{}, false, fmt.Errorf("mysql: byte counters: %w", d.connErr(err))
	}
	defer rows.Close()
	var b db.Bytes
	n := 0
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return db.Bytes{}, false, fmt.Errorf("mysql: byte counters: %w", err)
		}
		switch strings.ToLower(name) {
		case "bytes_sent":
			b.Sent, n = v, n+1
		case "bytes_received":
			b.Received, n = v, n+1
		}
	}
	if err := rows.Err(); err != nil {
		return db.Bytes{}, false, fmt.Errorf("mysql: byte counters: %w", err)
	}
	return b, n == 2, nil
}
