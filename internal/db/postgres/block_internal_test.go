package postgres

import (
	"regexp"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/db"
)

// Every "<tx>.call" of both workloads becomes a DO block from its
// function's source: the parameters declared with the arguments as
// literals, every RETURN with a value storing it, the result read back as
// the function's type, and text quoted safely.
func TestBlocksFromFunctions(t *testing.T) {
	files := db.SQLFiles{FS: sqlFS}
	args := map[string][]any{
		"neword.call":        {int64(1), int64(2), int64(3), int64(2), "12,7", "1,1", "5,10"},
		"payment.call":       {int64(1), int64(2), int64(1), int64(2), int64(1), int64(0), "O'BRI\\EN", 12.5},
		"delivery.call":      {int64(1), int64(7)},
		"slev.call":          {int64(1), int64(2), int64(15)},
		"ostat.call":         {int64(1), int64(2), int64(0), int64(42), ""},
		"tpcb-like.call":     {int64(5), int64(1), int64(3), int64(-4000)},
		"simple-update.call": {int64(5), int64(1), int64(3), int64(17)},
	}
	valueReturn := regexp.MustCompile(`(?i)\bRETURN\s+[^;\s]`)
	for _, w := range []string{"tpcc", "tpcb"} {
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
			if err := k.appendText(&b, args[name]); err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			s := b.String()
			for _, want := range []string{"DO $sledge$\nDECLARE\n", "\nBEGIN\n", "PERFORM set_config('sledge.result', (",
				"\nEND\n$sledge$;\nSELECT current_setting('sledge.result')::"} {
				if !strings.Contains(s, want) {
					t.Errorf("%s: no %q in\n%s", name, want, s)
				}
			}
			if valueReturn.MatchString(s) || strings.Contains(s, "--") || strings.Contains(s, "\n\n") {
				t.Errorf("%s: a RETURN with a value, a comment or a blank line is left:\n%s", name, s)
			}
			if strings.Count(s, "$sledge$") != 2 {
				t.Errorf("%s: the block's quote appears %d times", name, strings.Count(s, "$sledge$"))
			}
			if testing.Verbose() && (name == "neword.call" || name == "tpcb-like.call") {
				t.Logf("%s (%d bytes):\n%s", name, len(s), s)
			}
		}
	}
	k := mustBlock(t, "tpcc", "payment.call")
	var b strings.Builder
	if err := k.appendText(&b, args["payment.call"]); err != nil {
		t.Fatal(err)
	}
	// standard_conforming_strings: a quote doubled, a backslash as is.
	for _, want := range []string{"p_c_last TEXT := 'O''BRI\\EN';\n", "p_h_amount NUMERIC := 12.5;\n", "p_w_id INTEGER := 1;\n",
		"SELECT current_setting('sledge.result')::INTEGER"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("payment block has no %q:\n%s", want, b.String())
		}
	}
	bad := append([]any(nil), args["payment.call"]...)
	bad[6] = "x$sledge$; DROP TABLE warehouse; --"
	if err := k.appendText(new(strings.Builder), bad); err == nil || !strings.Contains(err.Error(), "$sledge$") {
		t.Errorf("an argument holding the block's quote: %v", err)
	}
	if err := k.appendText(new(strings.Builder), args["payment.call"][:3]); err == nil {
		t.Error("too few arguments accepted")
	}
}

func mustBlock(t *testing.T, w, name string) *block {
	t.Helper()
	files := db.SQLFiles{FS: sqlFS}
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
		t.Fatal(err)
	}
	return blocks[name]
}

// Functions block mode cannot run as a DO block are refused with the reason.
func TestBlockRefusals(t *testing.T) {
	call := map[string]string{"x.call": "SELECT f($1)"}
	for _, tc := range []struct{ src, want string }{
		{"CREATE FUNCTION f(a int) RETURNS int LANGUAGE sql AS $$ SELECT a $$", "not LANGUAGE plpgsql"},
		{"CREATE FUNCTION f(a int) RETURNS SETOF int LANGUAGE plpgsql AS $$ BEGIN RETURN NEXT a; END $$", "not one value"},
		{"CREATE FUNCTION f(OUT a int) LANGUAGE plpgsql AS $$ BEGIN a := 1; END $$", "not a plain input"},
		{"CREATE FUNCTION f(a int DEFAULT 1) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN a; END $$", "has a default"},
		{"CREATE FUNCTION f(a int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN PERFORM 1; END $$", "no RETURN with a value"},
		{"CREATE FUNCTION g(a int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN a; END $$", "does not define"},
		{"CREATE FUNCTION f(a int, b int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN a; END $$", "passes 1 arguments to f, which takes 2"},
	} {
		_, err := deriveBlocks([]string{tc.src}, call)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v, want %q", tc.src, err, tc.want)
		}
	}
	// A RETURN inside quotes or a comment is not the function's.
	src := "CREATE FUNCTION f(a int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RAISE NOTICE 'RETURN 1;'; -- RETURN 2;\n RETURN a + 1; END $$"
	blocks, err := deriveBlocks([]string{src}, call)
	if err != nil {
		t.Fatal(err)
	}
	tail := blocks["x.call"].tail
	if !strings.Contains(tail, "RAISE NOTICE 'RETURN 1;';\nPERFORM set_config('sledge.result', (a + 1)::text, true);\nRETURN; END;") {
		t.Errorf("rewritten body:\n%s", tail)
	}
}
