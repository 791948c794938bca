//go:build cgo

package queries

// DuckDB's database/sql driver, for the duckdb dialect's tests; it needs
// cgo, and without it those tests skip.
import _ "github.com/duckdb/duckdb-go/v2"
