package cli

// The CLI's tests run every database, as the sledge binary (cmd/sledge)
// knows them all. Tests of other packages that call the CLI link only the
// databases they use: DuckDB's static library adds about 5 s of CPU to every
// link of a test binary (issue 24's suite time).
import _ "github.com/sledge-bench/sledge/internal/db/all"
