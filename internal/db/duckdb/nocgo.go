//go:build !cgo

package duckdb

import (
	"context"
	"errors"
	"net/url"

	"github.com/sledge-bench/sledge/internal/db"
)

// Without cgo (CGO_ENABLED=0, the static Docker image) DuckDB's Go
// driver cannot be built: the scheme is still known, and says so.
func init() { db.Register(driver{}, "duckdb") }

type driver struct{}

func (driver) Open(context.Context, *url.URL) (db.DB, error) {
	return nil, errors.New("duckdb: this sledge was built without cgo (CGO_ENABLED=0), which DuckDB's Go driver needs: build it with a C compiler and CGO_ENABLED=1 (docs/duckdb.md)")
}
