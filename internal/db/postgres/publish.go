package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sledge-bench/sledge/internal/workload"
)

// A backend adds its commits and rollbacks to pg_stat_database only when it
// goes idle, and then at most once a second (PGSTAT_MIN_INTERVAL); a session
// busy with a benchmark holds up to a second of them. At each edge of the
// measured interval the engine has every VU publish, so the counters read
// there are complete (docs/databases.md, "TPM from the database").
var (
	_ workload.Publisher = (*conn)(nil)
	_ workload.Publisher = (*scriptConn)(nil)
)

// publishSQL marks the backend's next report as forced (PostgreSQL 15 and
// later); the backend reports at the end of this very statement, before it
// tells the client it is ready, so when the call returns the counts are in.
// The statement is a transaction of its own: one commit.
const publishSQL = "SELECT pg_stat_force_next_flush()"

// publishVersion is the first major version with pg_stat_force_next_flush.
const publishVersion = 15

func (c *conn) Publish(ctx context.Context) (int64, bool, error) {
	if serverMajor(c.c.PgConn()) < publishVersion {
		return 0, false, nil
	}
	if err := c.simple(ctx, publishSQL); err != nil {
		return 0, false, fmt.Errorf("postgres: publish statistics: %w", classify(err))
	}
	return 1, true, nil
}

func (c *scriptConn) Publish(ctx context.Context) (int64, bool, error) {
	if serverMajor(c.pc) < publishVersion {
		return 0, false, nil
	}
	var err error
	if c.pw != nil { // on sledge's wire (scriptwire.go)
		err = c.pw.simpleExec(ctx, publishSQL)
	} else {
		err = c.pc.Exec(ctx, publishSQL).Close()
	}
	if err != nil {
		return 0, false, fmt.Errorf("postgres: publish statistics: %w", classify(err))
	}
	return 1, true, nil
}

// serverMajor is the server's major version from the server_version it
// reported at startup ("15.18 (Debian 15.18-0+deb12u1)"); 0 when unknown.
func serverMajor(pc *pgconn.PgConn) int {
	v := pc.ParameterStatus("server_version")
	if i := strings.IndexAny(v, ". "); i >= 0 {
		v = v[:i]
	}
	n, _ := strconv.Atoi(v)
	return n
}
