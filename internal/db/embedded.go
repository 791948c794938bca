package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/sledge-bench/sledge/internal/workload"
)

// EmbeddedSupports is what an in-process database (SQLite, DuckDB) says
// of mode m: client, prepared and batched run; the modes that need a
// server's procedural language or round trips to save are refused in one
// line naming what to use.
func EmbeddedSupports(driver string, m workload.Mode) error {
	switch m {
	case workload.ModeClient, workload.ModePrepared, workload.ModeBatched:
		return nil
	case workload.ModeProcedure:
		return errors.New(driver + " has no stored procedures; use --mode client or prepared")
	case workload.ModePipeline:
		return errors.New(driver + " has no pipeline mode: in-process SQL has no round trips to save; use --mode client or prepared")
	case workload.ModeBlock:
		return errors.New(driver + " has no block mode: it has no procedural language to run an anonymous block in; use --mode client or prepared")
	}
	return fmt.Errorf("%s: unknown mode %v; use --mode client, prepared or batched", driver, m)
}

// ExecScript runs the statements of sql/<w>/<name>.sql in order on one
// connection of pool; classify turns a driver's error into sledge's. Its
// error names the file and the statement that failed.
func ExecScript(ctx context.Context, pool *sql.DB, driver, w, name string, stmts []string, classify func(error) error) error {
	c, err := pool.Conn(ctx)
	if err != nil {
		return fmt.Errorf("%s: %s/%s.sql: %w", driver, w, name, err)
	}
	defer c.Close()
	for i, s := range stmts {
		if _, err := c.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %s/%s.sql statement %d (%s): %w", driver, w, name, i+1, FirstLine(s), classify(err))
		}
	}
	return nil
}
