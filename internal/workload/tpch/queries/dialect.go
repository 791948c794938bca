// Package queries holds the TPC-H-derived workload's SQL: the schema and
// the 22 queries, each written once in standard SQL with the few places a
// dialect spells differently (date literals and arithmetic, year
// extraction, substrings: docs/tpch.md part 11) written as template
// functions that each dialect renders. A query needs a per-dialect text
// of its own only where no function can cover the difference: Overrides
// lists them, and a test keeps the list short.
package queries

import (
	"fmt"
	"strings"
	"text/template"
	"time"
)

// Dialect is how one database spells what standard SQL leaves open.
type Dialect string

const (
	Postgres Dialect = "postgres"
	MySQL    Dialect = "mysql" // MariaDB and MySQL
	SQLite   Dialect = "sqlite"
	DuckDB   Dialect = "duckdb"
)

// Dialects are the dialects the workload runs on.
var Dialects = []Dialect{Postgres, MySQL, SQLite, DuckDB}

const day = "2006-01-02"

// funcs are the template functions of dialect d.
func funcs(d Dialect) template.FuncMap {
	lit := func(s string) string {
		if d == SQLite {
			return "'" + s + "'" // dates are TEXT YYYY-MM-DD: string order is date order
		}
		return "date '" + s + "'"
	}
	// Date arithmetic on literals is computed here, the same on every
	// database, as qgen writes its parameters; columns are never shifted.
	shift := func(s string, months, days int) string {
		t, err := time.Parse(day, s)
		if err != nil {
			panic(fmt.Sprintf("queries: date %q: %v", s, err)) // a bug in a query text
		}
		return lit(t.AddDate(0, months, days).Format(day))
	}
	return template.FuncMap{
		"date":      lit,
		"addMonths": func(s string, n int) string { return shift(s, n, 0) },
		"addDays":   func(s string, n int) string { return shift(s, 0, n) },
		"addYears":  func(s string, n int) string { return shift(s, 12*n, 0) },
		"year": func(col string) string {
			if d == SQLite {
				return "cast(strftime('%Y', " + col + ") as integer)"
			}
			return "extract(year from " + col + ")"
		},
		"substr": func(col string, from, n int) string {
			if d == SQLite {
				return fmt.Sprintf("substr(%s, %d, %d)", col, from, n)
			}
			return fmt.Sprintf("substring(%s from %d for %d)", col, from, n)
		},
		"str": func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" },
	}
}
