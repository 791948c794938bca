package pgbench

import (
	"fmt"
	"strings"
)

// builtin is one of pgbench's builtin scripts.
type builtin struct {
	name, desc, text string
}

// builtins are pgbench's builtin scripts, in pgbench's order, with the
// exact text pgbench runs (and prints with --show-script).
var builtins = []builtin{
	{
		name: "tpcb-like",
		desc: "<builtin: TPC-B (sort of)>",
		text: `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`,
	},
	{
		name: "simple-update",
		desc: "<builtin: simple update>",
		text: `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`,
	},
	{
		name: "select-only",
		desc: "<builtin: select only>",
		text: `\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
`,
	},
}

// BuiltinNames returns the builtin scripts' names in pgbench's order:
// tpcb-like, simple-update, select-only.
func BuiltinNames() []string {
	names := make([]string, len(builtins))
	for i, b := range builtins {
		names[i] = b.name
	}
	return names
}

// BuiltinText returns the exact text of a builtin script (full name), or ""
// for an unknown name.
func BuiltinText(name string) string {
	for _, b := range builtins {
		if b.name == name {
			return b.text
		}
	}
	return ""
}

// BuiltinDescription returns a builtin's description, as pgbench prints it
// ("<builtin: TPC-B (sort of)>"), or "" for an unknown name.
func BuiltinDescription(name string) string {
	for _, b := range builtins {
		if b.name == name {
			return b.desc
		}
	}
	return ""
}

// Builtin returns the builtin script named by spec, "NAME[@W]", where NAME
// is a full name or an unambiguous prefix (as pgbench's -b). Script.Name is
// the builtin's description.
func Builtin(spec string) (*Script, error) {
	name, weight, err := splitWeight(spec, true)
	if err != nil {
		return nil, err
	}
	var found []builtin
	for _, b := range builtins {
		if strings.HasPrefix(b.name, name) {
			found = append(found, b)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no builtin script found for name %q, expected one of %s", name, strings.Join(BuiltinNames(), ", "))
	case 1:
	default:
		return nil, fmt.Errorf("ambiguous builtin name: %d builtin scripts found for prefix %q, expected one of %s", len(found), name, strings.Join(BuiltinNames(), ", "))
	}
	s, err := Parse(found[0].desc, found[0].text)
	if err != nil {
		return nil, fmt.Errorf("builtin %s: %v", found[0].name, err)
	}
	s.Weight = weight
	return s, nil
}
