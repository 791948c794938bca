//go:build cgo && !sqlite_modernc

package sqlite

import (
	sqldriver "database/sql/driver"
	"errors"

	msqlite3 "github.com/mattn/go-sqlite3"
)

// goDriver is the Go SQLite driver of this build: github.com/mattn/go-sqlite3,
// the C library through cgo. It is the default wherever cgo can build: it ran
// 1.24x the NOPM of modernc.org/sqlite (docs/benchmarks.md).
const goDriver = "github.com/mattn/go-sqlite3"

// SQLDriverName is the database/sql name the Go driver registers, for tests
// and tools that open a database file directly.
const SQLDriverName = "sqlite3"

func newDriver() sqldriver.Driver { return &msqlite3.SQLiteDriver{} }

// resultCode returns the primary SQLite result code err carries.
func resultCode(err error) (int, bool) {
	var e msqlite3.Error
	if errors.As(err, &e) {
		return int(e.Code), true
	}
	return 0, false
}
