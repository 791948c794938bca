package queries

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"
)

// The eight tables (docs/tpch.md part 2), keys after the load. The type
// functions render the spec's column types per dialect: identifiers,
// decimals with two places, fixed and variable text, dates.
const schemaText = `
CREATE TABLE region (
    r_regionkey  {{ident}} NOT NULL,
    r_name       {{char 25}} NOT NULL,
    r_comment    {{varchar 152}})
;
CREATE TABLE nation (
    n_nationkey  {{ident}} NOT NULL,
    n_name       {{char 25}} NOT NULL,
    n_regionkey  {{ident}} NOT NULL,
    n_comment    {{varchar 152}})
;
CREATE TABLE supplier (
    s_suppkey    {{ident}} NOT NULL,
    s_name       {{char 25}} NOT NULL,
    s_address    {{varchar 40}} NOT NULL,
    s_nationkey  {{ident}} NOT NULL,
    s_phone      {{char 15}} NOT NULL,
    s_acctbal    {{decimal}} NOT NULL,
    s_comment    {{varchar 101}} NOT NULL)
;
CREATE TABLE part (
    p_partkey     {{ident}} NOT NULL,
    p_name        {{varchar 55}} NOT NULL,
    p_mfgr        {{char 25}} NOT NULL,
    p_brand       {{char 10}} NOT NULL,
    p_type        {{varchar 25}} NOT NULL,
    p_size        {{integer}} NOT NULL,
    p_container   {{char 10}} NOT NULL,
    p_retailprice {{decimal}} NOT NULL,
    p_comment     {{varchar 23}} NOT NULL)
;
CREATE TABLE partsupp (
    ps_partkey    {{ident}} NOT NULL,
    ps_suppkey    {{ident}} NOT NULL,
    ps_availqty   {{integer}} NOT NULL,
    ps_supplycost {{decimal}} NOT NULL,
    ps_comment    {{varchar 199}} NOT NULL)
;
CREATE TABLE customer (
    c_custkey    {{ident}} NOT NULL,
    c_name       {{varchar 25}} NOT NULL,
    c_address    {{varchar 40}} NOT NULL,
    c_nationkey  {{ident}} NOT NULL,
    c_phone      {{char 15}} NOT NULL,
    c_acctbal    {{decimal}} NOT NULL,
    c_mktsegment {{char 10}} NOT NULL,
    c_comment    {{varchar 117}} NOT NULL)
;
CREATE TABLE orders (
    o_orderkey      {{ident}} NOT NULL,
    o_custkey       {{ident}} NOT NULL,
    o_orderstatus   {{char 1}} NOT NULL,
    o_totalprice    {{decimal}} NOT NULL,
    o_orderdate     {{dateType}} NOT NULL,
    o_orderpriority {{char 15}} NOT NULL,
    o_clerk         {{char 15}} NOT NULL,
    o_shippriority  {{integer}} NOT NULL,
    o_comment       {{varchar 79}} NOT NULL)
;
CREATE TABLE lineitem (
    l_orderkey      {{ident}} NOT NULL,
    l_partkey       {{ident}} NOT NULL,
    l_suppkey       {{ident}} NOT NULL,
    l_linenumber    {{integer}} NOT NULL,
    l_quantity      {{decimal}} NOT NULL,
    l_extendedprice {{decimal}} NOT NULL,
    l_discount      {{decimal}} NOT NULL,
    l_tax           {{decimal}} NOT NULL,
    l_returnflag    {{char 1}} NOT NULL,
    l_linestatus    {{char 1}} NOT NULL,
    l_shipdate      {{dateType}} NOT NULL,
    l_commitdate    {{dateType}} NOT NULL,
    l_receiptdate   {{dateType}} NOT NULL,
    l_shipinstruct  {{char 25}} NOT NULL,
    l_shipmode      {{char 10}} NOT NULL,
    l_comment       {{varchar 44}} NOT NULL)
`

// typeFuncs render the spec's column types (docs/tpch.md part 2): MariaDB
// text in a binary collation (case-sensitive LIKE, byte order), SQLite
// dates as YYYY-MM-DD text and decimals as REAL, DuckDB text as VARCHAR
// (its CHAR(n) is VARCHAR; its default collation is binary).
func typeFuncs(d Dialect) template.FuncMap {
	text := func(kind string) func(n int) string {
		return func(n int) string {
			switch d {
			case SQLite:
				return "TEXT"
			case MySQL:
				return fmt.Sprintf("%s(%d) CHARACTER SET latin1 COLLATE latin1_bin", strings.ToUpper(kind), n)
			case DuckDB:
				return fmt.Sprintf("VARCHAR(%d)", n)
			}
			return fmt.Sprintf("%s(%d) COLLATE \"C\"", kind, n)
		}
	}
	return template.FuncMap{
		"ident": func() string {
			return map[Dialect]string{Postgres: "integer", MySQL: "INT", SQLite: "INTEGER", DuckDB: "INTEGER"}[d]
		},
		"integer": func() string {
			return map[Dialect]string{Postgres: "integer", MySQL: "INT", SQLite: "INTEGER", DuckDB: "INTEGER"}[d]
		},
		"decimal": func() string {
			return map[Dialect]string{Postgres: "numeric(15,2)", MySQL: "DECIMAL(15,2)", SQLite: "REAL", DuckDB: "DECIMAL(15,2)"}[d]
		},
		"char":    text("char"),
		"varchar": text("varchar"),
		"dateType": func() string {
			return map[Dialect]string{Postgres: "date", MySQL: "DATE", SQLite: "TEXT", DuckDB: "DATE"}[d]
		},
	}
}

// Schema is the CREATE TABLE statements of the eight tables in dialect d.
func Schema(d Dialect) []string {
	t := template.Must(template.New("schema").Funcs(typeFuncs(d)).Parse(schemaText))
	var b bytes.Buffer
	if err := t.Execute(&b, nil); err != nil {
		panic(err) // the text above is fixed: a bug
	}
	var out []string
	for _, st := range strings.Split(b.String(), ";") {
		if st = strings.TrimSpace(st); st != "" {
			out = append(out, st)
		}
	}
	return out
}

// indexText are the keys and the indexes the specification allows (§1.5:
// primary keys, foreign-key columns, single date columns; docs/tpch.md
// part 11's minimal set), created after the load. Unique indexes stand
// for the primary keys: the one form all three databases add to a
// loaded table.
const indexText = `
CREATE UNIQUE INDEX region_pk ON region (r_regionkey);
CREATE UNIQUE INDEX nation_pk ON nation (n_nationkey);
CREATE UNIQUE INDEX supplier_pk ON supplier (s_suppkey);
CREATE UNIQUE INDEX part_pk ON part (p_partkey);
CREATE UNIQUE INDEX partsupp_pk ON partsupp (ps_partkey, ps_suppkey);
CREATE UNIQUE INDEX customer_pk ON customer (c_custkey);
CREATE UNIQUE INDEX orders_pk ON orders (o_orderkey);
CREATE UNIQUE INDEX lineitem_pk ON lineitem (l_orderkey, l_linenumber);
CREATE INDEX nation_region ON nation (n_regionkey);
CREATE INDEX supplier_nation ON supplier (s_nationkey);
CREATE INDEX customer_nation ON customer (c_nationkey);
CREATE INDEX partsupp_supplier ON partsupp (ps_suppkey);
CREATE INDEX orders_customer ON orders (o_custkey);
CREATE INDEX lineitem_part_supplier ON lineitem (l_partkey, l_suppkey);
CREATE INDEX lineitem_supplier ON lineitem (l_suppkey)
`

// Indexes are the statements that create the keys and indexes, the same
// text in every dialect.
func Indexes() []string {
	var out []string
	for _, st := range strings.Split(indexText, ";") {
		if st = strings.TrimSpace(st); st != "" {
			out = append(out, st)
		}
	}
	return out
}
