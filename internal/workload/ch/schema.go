package ch

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"

	"github.com/sledge-bench/sledge/internal/workload/tpch/queries"
)

// tablesText are the three tables CH-benCHmark adds (Cole et al. 2011,
// with TPC-H's column types; docs/ch.md part 2), keys created after the
// load like TPC-C's.
const tablesText = `
CREATE TABLE region (
    r_regionkey  {{ident}} NOT NULL,
    r_name       {{char 55}} NOT NULL,
    r_comment    {{varchar 152}} NOT NULL)
;
CREATE TABLE nation (
    n_nationkey  {{ident}} NOT NULL,
    n_name       {{char 25}} NOT NULL,
    n_regionkey  {{ident}} NOT NULL,
    n_comment    {{varchar 152}} NOT NULL)
;
CREATE TABLE supplier (
    su_suppkey   {{ident}} NOT NULL,
    su_name      {{char 25}} NOT NULL,
    su_address   {{varchar 40}} NOT NULL,
    su_nationkey {{ident}} NOT NULL,
    su_phone     {{char 15}} NOT NULL,
    su_acctbal   {{decimal}} NOT NULL,
    su_comment   {{varchar 101}} NOT NULL)
`

// indexesText are the primary keys (as unique indexes, the form every
// database adds to a loaded table) and the foreign-key columns.
const indexesText = `
CREATE UNIQUE INDEX ch_region_pk ON region (r_regionkey);
CREATE UNIQUE INDEX ch_nation_pk ON nation (n_nationkey);
CREATE UNIQUE INDEX ch_supplier_pk ON supplier (su_suppkey);
CREATE INDEX ch_nation_region ON nation (n_regionkey);
CREATE INDEX ch_supplier_nation ON supplier (su_nationkey)
`

// dropText drops the three tables (their indexes go with them).
const dropText = `
DROP TABLE IF EXISTS supplier;
DROP TABLE IF EXISTS nation;
DROP TABLE IF EXISTS region
`

// typeFuncs render the column types: TPC-H's (queries.TypeFuncs) on the
// dialects it has, DuckDB's here.
func typeFuncs(dialect string) template.FuncMap {
	if dialect == "duckdb" {
		return template.FuncMap{
			"ident":   func() string { return "INTEGER" },
			"decimal": func() string { return "DECIMAL(15,2)" },
			"char":    func(n int) string { return "VARCHAR" },
			"varchar": func(n int) string { return "VARCHAR" },
		}
	}
	return queries.TypeFuncs(queries.Dialect(dialect))
}

// dialects are those Added renders.
var dialects = []string{"postgres", "mysql", "sqlite", "duckdb"}

func knownDialect(d string) bool {
	for _, k := range dialects {
		if k == d {
			return true
		}
	}
	return false
}

// added renders the statements of build step step in dialect d.
func added(d, step string) []string {
	if !knownDialect(d) {
		return nil
	}
	var text string
	switch step {
	case "drop":
		text = dropText
	case "tables":
		t := template.Must(template.New("tables").Funcs(typeFuncs(d)).Parse(tablesText))
		var b bytes.Buffer
		if err := t.Execute(&b, nil); err != nil {
			panic(fmt.Sprintf("ch: tables: %v", err)) // the text is fixed: a bug
		}
		text = b.String()
	case "indexes":
		text = indexesText
	default: // "procedures": none
		return nil
	}
	var out []string
	for _, st := range strings.Split(text, ";") {
		if st = strings.TrimSpace(st); st != "" {
			out = append(out, st)
		}
	}
	return out
}
