// Package all enables every database package: import it for its side
// effects. Adding a database is one line here.
package all

import (
	_ "github.com/sledge-bench/sledge/internal/db/duckdb"   // duckdb:
	_ "github.com/sledge-bench/sledge/internal/db/mysql"    // mysql:, mariadb:
	_ "github.com/sledge-bench/sledge/internal/db/postgres" // postgres:, postgresql:
	_ "github.com/sledge-bench/sledge/internal/db/sqlite"   // sqlite:, sqlite3:
)
