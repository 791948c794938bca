package postgres

// Block mode (issue 13): each transaction is sent as one anonymous code
// block holding the routine's own logic, with no stored routine involved.
// PostgreSQL's anonymous block is DO, which takes no parameters and returns
// nothing, so a call becomes one simple-protocol query of two statements:
//
//	DO $sledge$
//	DECLARE <each parameter> <its type> := <the argument as a literal>;
//	BEGIN
//	<the function's body: its DECLAREs, BEGIN … END;>
//	RAISE EXCEPTION … -- as a function that ends without RETURN
//	END
//	$sledge$;
//	SELECT current_setting('sledge.result')::<the function's result type>
//
// with each "RETURN expr;" of the body rewritten to store expr in a
// transaction-local setting and return. The statements of one simple Query
// run in one implicit transaction, so the block commits or rolls back as a
// whole, like the function call, and the SELECT reads what it stored.
// PL/pgSQL compiles a DO block every time it runs, where it caches a
// function's compiled form per session: that cost is what the mode shows.
// docs/databases.md and docs/modes.md say why DO is the closest real form.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

const (
	// blockTag quotes the DO body; an argument holding it is refused.
	blockTag = "$sledge$"
	// blockSetting carries the result out of the DO block.
	blockSetting = "sledge.result"
)

// block is one "<tx>.call" statement as the text of an anonymous block,
// less the arguments: head, then for each parameter its declaration's
// start, the literal and ";\n", then tail.
type block struct {
	routine string
	head    string
	params  []string
	tail    string
}

// appendText writes the block for args into b.
func (k *block) appendText(b *strings.Builder, args []any) error {
	if len(args) != len(k.params) {
		return fmt.Errorf("%s takes %d arguments, got %d", k.routine, len(k.params), len(args))
	}
	b.WriteString(k.head)
	for i, p := range k.params {
		if s, ok := args[i].(string); ok && strings.Contains(s, blockTag) {
			return fmt.Errorf("argument %d holds %s, which ends the block's quoting", i+1, blockTag)
		}
		b.WriteString(p)
		if err := db.AppendLiteral(b, args[i], db.Dollar); err != nil {
			return fmt.Errorf("argument %d: %w", i+1, err)
		}
		b.WriteString(";\n")
	}
	b.WriteString(k.tail)
	return nil
}

var (
	// plpgsqlLang and returnsType read a function's header (outside its body).
	plpgsqlLang = regexp.MustCompile(`(?i)\bLANGUAGE\s+plpgsql\b`)
	returnsType = regexp.MustCompile(`(?i)\bRETURNS\s+([a-z_][a-z0-9_]*)\b`)
	returnKW    = regexp.MustCompile(`(?i)\bRETURN\b`)
	bodyQuote   = regexp.MustCompile(`\$[A-Za-z_]*\$`)
)

// deriveBlocks turns the PL/pgSQL functions of a procedures.sql (stmts)
// into the blocks of the "<tx>.call" statements in text that call them.
func deriveBlocks(stmts []string, text map[string]string) (map[string]*block, error) {
	return db.CallBlocks(stmts, text, "FUNCTION", db.Dollar, functionBlock)
}

// functionBlock writes function f as a DO block (see the top of the file).
func functionBlock(f db.Routine) (*block, error) {
	loc := bodyQuote.FindStringIndex(f.Rest)
	if loc == nil {
		return nil, errors.New("no $$-quoted body")
	}
	tag := f.Rest[loc[0]:loc[1]]
	end := strings.Index(f.Rest[loc[1]:], tag)
	if end < 0 {
		return nil, fmt.Errorf("unterminated %s body", tag)
	}
	body := f.Rest[loc[1] : loc[1]+end]
	header := f.Rest[:loc[0]] + " " + f.Rest[loc[1]+end+len(tag):]
	if !plpgsqlLang.MatchString(header) {
		return nil, errors.New("not LANGUAGE plpgsql")
	}
	m := returnsType.FindStringSubmatch(header)
	if m == nil {
		return nil, errors.New("no RETURNS type")
	}
	switch rt := strings.ToLower(m[1]); rt {
	case "setof", "table", "void", "trigger", "record":
		return nil, fmt.Errorf("returns %s, not one value", rt)
	}
	body, err := db.CompactSQL(body, db.PostgresDialect)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(body, "#") {
		return nil, errors.New("a body that starts with a # option cannot be nested")
	}
	if strings.Contains(body, blockTag) {
		return nil, fmt.Errorf("body holds %s", blockTag)
	}
	if body, err = storeReturns(body); err != nil {
		return nil, err
	}
	if !strings.HasSuffix(body, ";") {
		body += ";"
	}
	k := &block{routine: f.Name, head: "DO " + blockTag + "\nDECLARE\n"}
	for _, p := range f.Params {
		k.params = append(k.params, p.Name+" "+p.Type+" := ")
	}
	// The function's own block nests in the DO block, whose variables are
	// the parameters: the scoping a function has.
	k.tail = "BEGIN\n" + body + "\n" +
		"RAISE EXCEPTION USING ERRCODE = '2F005', MESSAGE = '" + f.Name + ": control reached the end of the block without RETURN';\n" +
		"END\n" + blockTag + ";\n" +
		"SELECT current_setting('" + blockSetting + "')::" + m[1]
	return k, nil
}

// storeReturns rewrites each "RETURN expr;" of body (outside quotes) as
// storing expr in the transaction-local blockSetting and returning.
func storeReturns(body string) (string, error) {
	masked, err := db.MaskQuoted(body, db.PostgresDialect)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	last, found := 0, false
	for _, loc := range returnKW.FindAllStringIndex(masked, -1) {
		if loc[0] < last {
			continue
		}
		rest := strings.TrimLeft(masked[loc[1]:], " \n")
		if strings.HasPrefix(rest, ";") {
			continue // RETURN; ends the block as it ends a function
		}
		if w := strings.ToUpper(strings.Fields(rest + " ")[0]); w == "NEXT" || w == "QUERY" {
			return "", fmt.Errorf("RETURN %s: not one value", w)
		}
		semi := strings.IndexByte(masked[loc[1]:], ';')
		if semi < 0 {
			return "", errors.New("RETURN without ;")
		}
		semi += loc[1]
		expr := strings.TrimSpace(body[loc[1]:semi])
		b.WriteString(body[last:loc[0]])
		b.WriteString("PERFORM set_config('" + blockSetting + "', (" + expr + ")::text, true);\nRETURN;")
		last, found = semi+1, true
	}
	if !found {
		return "", errors.New("no RETURN with a value")
	}
	b.WriteString(body[last:])
	return b.String(), nil
}

// blockCache holds each workload's blocks, derived once per process from
// the embedded procedures.sql and shared read-only by every session.
var blockCache sync.Map // workload -> *blockEntry

type blockEntry struct {
	once   sync.Once
	blocks map[string]*block
	err    error
}

// blocks returns workload w's blocks; text is its named statements.
func (d *DB) blocks(w string, text map[string]string) (map[string]*block, error) {
	v, _ := blockCache.LoadOrStore(w, &blockEntry{})
	e := v.(*blockEntry)
	e.once.Do(func() {
		stmts, ok, err := d.files.Script(w, "procedures")
		switch {
		case err != nil:
			e.err = err
		case !ok:
			e.err = fmt.Errorf("workload %s has no procedures.sql to take its blocks from", w)
		default:
			e.blocks, e.err = deriveBlocks(stmts, text)
		}
		if e.err != nil {
			e.err = fmt.Errorf("postgres: --mode block: %s: %w", w, e.err)
		}
	})
	return e.blocks, e.err
}

// blockConn is a block-mode session's state: the blocks, and the pgconn
// path its one query per transaction takes (the session's own, or one of
// its own with api=pgx: pgx would scan only the DO's empty result).
type blockConn struct {
	blocks map[string]*block
	f      *fast
	own    bool // f is block mode's own: close it with the session
	size   int  // the longest text yet, to allocate each one once
}

// startBlocks readies a block-mode session. The routines need not exist:
// block mode never calls them, and routines= does not apply.
func (c *conn) startBlocks(d *DB) error {
	// Literals double their quotes and nothing else.
	if v := c.c.PgConn().ParameterStatus("standard_conforming_strings"); v != "on" {
		return fmt.Errorf("postgres: --mode block writes string literals for standard_conforming_strings = on; the server has %q", v)
	}
	bs, err := d.blocks(c.w, c.text)
	if err != nil {
		return err
	}
	c.blk = &blockConn{blocks: bs, f: c.f}
	if c.f == nil {
		c.blk.f, c.blk.own = newFast(c.c.PgConn(), false), true
	}
	return nil
}

func (b *blockConn) close() {
	if b.own {
		b.f.close()
	}
}

// queryRow runs block k with args: one query, one round trip. The row is
// the SELECT's, after the DO's empty result.
func (b *blockConn) queryRow(ctx context.Context, name string, k *block, args []any) workload.Row {
	var sb strings.Builder
	sb.Grow(b.size)
	if err := k.appendText(&sb, args); err != nil {
		return &fastRow{err: fmt.Errorf("postgres: %s as a block: %w", name, err)}
	}
	b.size = max(b.size, sb.Len())
	f := b.f
	if err := f.w.Begin(ctx, f.pc.Conn()); err != nil {
		return &fastRow{err: err}
	}
	mrr := f.pc.Exec(context.Background(), sb.String())
	fail := func(err error) workload.Row {
		if merr := mrr.Close(); err == nil {
			err = merr
		}
		f.w.End()
		if err == nil {
			err = errors.New("the block returned no result")
		}
		return &fastRow{err: wrap("query", name, f.interrupted(err))}
	}
	if !mrr.NextResult() {
		return fail(nil)
	}
	if _, err := mrr.ResultReader().Close(); err != nil {
		return fail(err)
	}
	if !mrr.NextResult() {
		return fail(nil)
	}
	return &fastRow{rows: &fastRows{f: f, rr: mrr.ResultReader(), mrr: mrr, name: name}}
}
