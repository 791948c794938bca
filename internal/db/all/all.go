// Package all enables every database package: import it for its side
// effects. Adding a database is one line here. The sledge binary
// (cmd/sledge) and the CLI's own tests import it; internal/cli does not, so
// a test binary that calls the CLI links only the databases it imports
// (DuckDB's static library costs about 5 s of CPU per link).
package all

import (
	_ "github.com/sledge-bench/sledge/internal/db/duckdb"   // duckdb:
	_ "github.com/sledge-bench/sledge/internal/db/mysql"    // mysql:, mariadb:
	_ "github.com/sledge-bench/sledge/internal/db/postgres" // postgres:, postgresql:
	_ "github.com/sledge-bench/sledge/internal/db/sqlite"   // sqlite:, sqlite3:
)
