package mysql

import (
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/db"
)

// Every "<tx>.call" of both workloads becomes a BEGIN NOT ATOMIC block from
// its procedure's body: the parameters declared first with the arguments
// as literals, the body's DECLAREs, handlers, transaction and closing
// SELECT kept, comments left out, text quoted safely.
func TestBlocksFromProcedures(t *testing.T) {
	args := map[string][]any{
		"neword.call":        {int64(1), int64(2), int64(3), int64(2), "12,7", "1,1", "5,10"},
		"payment.call":       {int64(1), int64(2), int64(1), int64(2), int64(1), int64(0), `O'BRI\EN`, 12.5},
		"delivery.call":      {int64(1), int64(7)},
		"slev.call":          {int64(1), int64(2), int64(15)},
		"ostat.call":         {int64(1), int64(2), int64(0), int64(42), ""},
		"tpcb-like.call":     {int64(5), int64(1), int64(3), int64(-4000)},
		"simple-update.call": {int64(5), int64(1), int64(3), int64(17)},
	}
	for _, dirs := range [][]string{nil, {"sql/mariadb", "sql"}} {
		files := db.SQLFiles{FS: sqlFS, Dirs: dirs}
		for _, w := range []string{"tpcc", "tpcb"} {
			blocks := blocksOf(t, files, w)
			text, _ := files.Named(w)
			for name := range text {
				if !strings.HasSuffix(name, ".call") {
					continue
				}
				k := blocks[name]
				if k == nil {
					t.Errorf("%s: no block", name)
					continue
				}
				var b strings.Builder
				if err := k.appendText(&b, args[name], db.Question); err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				s := b.String()
				// The parameters' DECLAREs come first, before the body's.
				decl := strings.Index(s, "\nDECLARE v_")
				if !strings.HasPrefix(s, "BEGIN NOT ATOMIC\nDECLARE p_") || decl < 0 || strings.LastIndex(s, "DECLARE p_") > decl {
					t.Errorf("%s: parameters not declared first:\n%s", name, s)
				}
				for _, want := range []string{"DECLARE EXIT HANDLER FOR SQLEXCEPTION\nBEGIN\nROLLBACK;\nRESIGNAL;\nEND;", "\nSTART TRANSACTION", "\nCOMMIT;\nSELECT v_"} {
					if !strings.Contains(s, want) {
						t.Errorf("%s: no %q in\n%s", name, want, s)
					}
				}
				if !strings.HasSuffix(s, ";\nEND") || strings.Contains(s, "-- ") || strings.Contains(s, "\n\n") || strings.Contains(s, "CREATE") {
					t.Errorf("%s: not one compact block:\n%s", name, s)
				}
				if testing.Verbose() && dirs == nil && (name == "neword.call" || name == "tpcb-like.call") {
					t.Logf("%s (%d bytes):\n%s", name, len(s), s)
				}
			}
		}
	}
	k := blocksOf(t, db.SQLFiles{FS: sqlFS}, "tpcc")["payment.call"]
	for style, want := range map[db.Placeholder]string{db.Question: `DECLARE p_last VARCHAR(16) DEFAULT 'O''BRI\\EN';`, db.Dollar: `DECLARE p_last VARCHAR(16) DEFAULT 'O''BRI\EN';`} {
		var b strings.Builder
		if err := k.appendText(&b, args["payment.call"], style); err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{want, "DECLARE p_amount DECIMAL(6,2) DEFAULT 12.5;\n", "DECLARE p_w INT DEFAULT 1;\n"} {
			if !strings.Contains(b.String(), w) {
				t.Errorf("payment block has no %q:\n%s", w, b.String())
			}
		}
	}
	if err := k.appendText(new(strings.Builder), args["payment.call"][:2], db.Question); err == nil {
		t.Error("too few arguments accepted")
	}
}

func blocksOf(t *testing.T, files db.SQLFiles, w string) map[string]*block {
	t.Helper()
	text, err := files.Named(w)
	if err != nil {
		t.Fatal(err)
	}
	stmts, _, err := files.Script(w, "procedures")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := deriveBlocks(stmts, text)
	if err != nil {
		t.Fatalf("%s: %v", w, err)
	}
	return blocks
}

// Procedures block mode cannot send as a block are refused with the reason.
func TestBlockRefusals(t *testing.T) {
	call := map[string]string{"x.call": "CALL p(?)"}
	for _, tc := range []struct{ src, want string }{
		{"CREATE PROCEDURE p(OUT a INT) BEGIN SET a = 1; END", "not a plain input"},
		{"CREATE PROCEDURE p(IN a INT) l1: BEGIN SELECT a; END", "labelled body"},
		{"CREATE PROCEDURE q(IN a INT) BEGIN SELECT a; END", "does not define"},
		{"CREATE PROCEDURE p(IN a INT, IN b INT) BEGIN SELECT a; END", "passes 1 arguments to p, which takes 2"},
		{"CREATE PROCEDURE p(IN a INT) SELECT a", "not BEGIN … END"},
	} {
		_, err := deriveBlocks([]string{tc.src}, call)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v, want %q", tc.src, err, tc.want)
		}
	}
	// Characteristics before the body are dropped; a BEGIN in a string or a
	// comment is not the body's.
	blocks, err := deriveBlocks([]string{"CREATE PROCEDURE p(IN a INT) COMMENT 'BEGIN here' # BEGIN\n MODIFIES SQL DATA BEGIN SELECT a; END"}, call)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := blocks["x.call"].appendText(&b, []any{int64(-3)}, db.Question); err != nil {
		t.Fatal(err)
	}
	if b.String() != "BEGIN NOT ATOMIC\nDECLARE a INT DEFAULT -3;\nSELECT a; END" {
		t.Errorf("block: %q", b.String())
	}
}
