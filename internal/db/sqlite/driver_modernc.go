//go:build !cgo || sqlite_modernc

package sqlite

import (
	sqldriver "database/sql/driver"
	"errors"

	msqlite "modernc.org/sqlite"
)

// goDriver is the Go SQLite driver of this build: modernc.org/sqlite, pure
// Go (SQLite translated from C). Used where cgo cannot build (Go turns cgo
// off when there is no C compiler), so sledge builds with nothing but Go;
// -tags sqlite_modernc forces it.
const goDriver = "modernc.org/sqlite"

// SQLDriverName is the database/sql name the Go driver registers, for tests
// and tools that open a database file directly.
const SQLDriverName = "sqlite"

func newDriver() sqldriver.Driver { return &msqlite.Driver{} }

// resultCode returns the primary SQLite result code err carries.
func resultCode(err error) (int, bool) {
	var e *msqlite.Error
	if errors.As(err, &e) {
		return e.Code() & 0xff, true // extended codes keep the primary one in the low byte
	}
	return 0, false
}
