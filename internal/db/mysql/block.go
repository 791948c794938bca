package mysql

// Block mode (issue 13): each transaction is sent as one anonymous compound
// statement holding the procedure's own body, with no stored routine
// involved:
//
//	BEGIN NOT ATOMIC
//	DECLARE <each parameter> <its type> DEFAULT <the argument as a literal>;
//	<the procedure's body after its BEGIN: DECLAREs, handlers, statements> END
//
// The parameters become the block's first variables, so the body's own
// DECLAREs (variables, then cursors, then handlers) stay in a valid order,
// and its labels, handlers, START TRANSACTION … COMMIT and closing
// one-row SELECT work as in the procedure: the client reads the same one
// integer from the block's result set, in one round trip of the text
// protocol. MariaDB parses the block every time, where it caches a
// procedure's parsed form per connection: that is what the mode measures.
// MySQL has no anonymous blocks.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// block is one "<tx>.call" statement as the text of a compound statement,
// less the arguments: head, then for each parameter its DECLARE's start,
// the literal and ";\n", then tail.
type block struct {
	routine string
	head    string
	params  []string
	tail    string
}

// appendText writes the block for args into b. Strings are written in
// style (db.Question doubles backslashes, db.Dollar does not: the server's
// NO_BACKSLASH_ESCAPES); every other value as db.Question writes it.
func (k *block) appendText(b *strings.Builder, args []any, style db.Placeholder) error {
	if len(args) != len(k.params) {
		return fmt.Errorf("%s takes %d arguments, got %d", k.routine, len(k.params), len(args))
	}
	b.WriteString(k.head)
	for i, p := range k.params {
		b.WriteString(p)
		st := db.Question
		if _, ok := args[i].(string); ok {
			st = style
		}
		if err := db.AppendLiteral(b, args[i], st); err != nil {
			return fmt.Errorf("argument %d: %w", i+1, err)
		}
		b.WriteString(";\n")
	}
	b.WriteString(k.tail)
	return nil
}

var beginKW = regexp.MustCompile(`(?i)\bBEGIN\b`)

// deriveBlocks turns the procedures of a procedures.sql (stmts) into the
// blocks of the "<tx>.call" statements in text that call them.
func deriveBlocks(stmts []string, text map[string]string) (map[string]*block, error) {
	return db.CallBlocks(stmts, text, "PROCEDURE", db.Question, procedureBlock)
}

// procedureBlock writes procedure p as a compound statement (see the top
// of the file).
func procedureBlock(p db.Routine) (*block, error) {
	body, err := db.CompactSQL(p.Rest, db.MySQLDialect)
	if err != nil {
		return nil, err
	}
	masked, err := db.MaskQuoted(body, db.MySQLDialect)
	if err != nil {
		return nil, err
	}
	loc := beginKW.FindStringIndex(masked)
	if loc == nil {
		return nil, errors.New("the body is not BEGIN … END")
	}
	// What precedes BEGIN are characteristics (DETERMINISTIC, COMMENT …),
	// which a block has no use for; a label would need to stay.
	if strings.HasSuffix(strings.TrimSpace(masked[:loc[0]]), ":") {
		return nil, errors.New("a labelled body is not supported")
	}
	if !strings.HasSuffix(strings.ToUpper(masked), "END") {
		return nil, errors.New("the body does not end with END")
	}
	k := &block{routine: p.Name, head: "BEGIN NOT ATOMIC\n", tail: strings.TrimLeft(body[loc[1]:], " \n")}
	for _, prm := range p.Params {
		k.params = append(k.params, "DECLARE "+prm.Name+" "+prm.Type+" DEFAULT ")
	}
	return k, nil
}

// blockCache holds each workload's blocks per SQL overlay, derived once per
// process from the embedded procedures.sql and shared read-only.
var blockCache sync.Map // "<dirs>|<workload>" -> *blockEntry

type blockEntry struct {
	once   sync.Once
	blocks map[string]*block
	err    error
}

// blocks returns workload w's blocks; text is its named statements.
func (d *DB) blocks(w string, text map[string]string) (map[string]*block, error) {
	v, _ := blockCache.LoadOrStore(strings.Join(d.files.Dirs, ",")+"|"+w, &blockEntry{})
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
			e.err = fmt.Errorf("mysql: --mode block: %s: %w", w, e.err)
		}
	})
	return e.blocks, e.err
}

// blockConn is a block-mode session's state.
type blockConn struct {
	blocks map[string]*block
	style  db.Placeholder // how strings are quoted (appendText)
	size   int            // the longest text yet, to allocate each one once
}

// startBlocks readies a block-mode session: MariaDB only; the procedures
// need not exist, block mode never calls them.
func (c *conn) startBlocks(ctx context.Context) error {
	if !slices.Contains(c.d.files.Dirs, "sql/mariadb") { // set by flavor
		return errors.New("mysql: --mode block needs MariaDB's anonymous blocks (BEGIN NOT ATOMIC), which MySQL does not have; use procedure, client or prepared")
	}
	bs, err := c.d.blocks(c.w, c.ns.Text)
	if err != nil {
		return err
	}
	var sqlMode string
	if err := c.c.QueryRowContext(ctx, "SELECT @@SESSION.sql_mode").Scan(&sqlMode); err != nil {
		return fmt.Errorf("mysql: read sql_mode: %w", c.d.connErr(err))
	}
	c.blk = &blockConn{blocks: bs, style: db.Question}
	if strings.Contains(strings.ToUpper(sqlMode), "NO_BACKSLASH_ESCAPES") {
		c.blk.style = db.Dollar // quotes doubled, backslashes as they are
	}
	return nil
}

// blockRow runs block k with args as one text-protocol query; the row is
// the block's closing SELECT.
func (c *conn) blockRow(ctx context.Context, name string, k *block, args []any) workload.Row {
	var sb strings.Builder
	sb.Grow(c.blk.size)
	if err := k.appendText(&sb, args, c.blk.style); err != nil {
		return &row{err: fmt.Errorf("mysql: %s as a block: %w", name, err)}
	}
	c.blk.size = max(c.blk.size, sb.Len())
	ctx, err := c.begin(ctx)
	if err != nil {
		return &row{err: err}
	}
	return &row{r: c.c.QueryRowContext(ctx, sb.String()), name: name, c: c, open: true}
}
