package queries

import "text/template"

// Funcs are the template functions of dialect d that the 22 queries use
// (date literals and arithmetic, year extraction, substrings, string
// literals), for another workload's queries to spell the same things the
// same way (CH-benCHmark's, internal/workload/ch).
func Funcs(d Dialect) template.FuncMap { return funcs(d) }

// TypeFuncs are the column type functions of dialect d that the schema
// uses (ident, integer, decimal, char, varchar, dateType).
func TypeFuncs(d Dialect) template.FuncMap { return typeFuncs(d) }
