package mysql

import (
	"context"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// ConnectWire opens a session of sledge's own wire (binconn.go) on d, in
// prepared mode, running the named statements in text: tests of the
// protocol with statements of their own.
func ConnectWire(ctx context.Context, d db.DB, text map[string]string) (workload.Conn, error) {
	return d.(*DB).connectBin(ctx, "wiretest", workload.ModePrepared, text)
}

// IsWire reports whether c is a session of sledge's own wire.
func IsWire(c workload.Conn) bool {
	_, ok := c.(*binConn)
	return ok
}
