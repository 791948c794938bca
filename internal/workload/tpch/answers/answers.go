// Package answers holds the reference answers of the 22 TPC-H validation
// queries at scale factors 0.01, 0.1 and 1 (computed by DuckDB's engine on
// the generator's data: README.md) and checks a database's answer against
// them by the rules of docs/tpch.md part 10.
package answers

import "embed"

//go:embed sf0.01 sf0.1 sf1
var files embed.FS
