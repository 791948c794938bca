package db

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestInterpolate(t *testing.T) {
	ts := time.Date(2024, 2, 29, 13, 4, 5, 123456789, time.FixedZone("x", 3600))
	tests := []struct {
		name    string
		style   Placeholder
		query   string
		args    []any
		want    string
		wantErr string
	}{
		{"numbered", QuestionNumbered, "SELECT a FROM t WHERE x = ?1 AND y = ?2", []any{int64(1), "b"}, "SELECT a FROM t WHERE x = 1 AND y = 'b'", ""},
		{"numbered repeat and order", QuestionNumbered, "SELECT ?2, ?1, ?2", []any{int64(1), int64(2)}, "SELECT 2, 1, 2", ""},
		{"numbered multi digit", QuestionNumbered, "SELECT ?10, ?1", []any{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, "SELECT 10, 1", ""},
		{"bare ? numbered like SQLite", QuestionNumbered, "SELECT ?, ?5, ?", []any{1, 2, 3, 4, 5, 6}, "SELECT 1, 5, 6", ""},
		{"dollar", Dollar, "UPDATE t SET a = $2 WHERE id = $1 AND b = $2", []any{int64(7), 1.5}, "UPDATE t SET a = 1.5 WHERE id = 7 AND b = 1.5", ""},
		{"question", Question, "INSERT INTO t VALUES (?, ?, ?)", []any{int64(1), nil, "x"}, "INSERT INTO t VALUES (1, NULL, 'x')", ""},
		{"no placeholders", QuestionNumbered, "SELECT 1", nil, "SELECT 1", ""},
		{"placeholder at start and end", QuestionNumbered, "?1", []any{int64(3)}, "3", ""},

		// Placeholders that are not placeholders.
		{"in single quotes", QuestionNumbered, "SELECT '?1', ?1", []any{1}, "SELECT '?1', 1", ""},
		{"in doubled quotes", QuestionNumbered, "SELECT 'it''s ?1', ?1", []any{1}, "SELECT 'it''s ?1', 1", ""},
		{"in double quotes", Question, `SELECT "?" FROM t WHERE x = ?`, []any{1}, `SELECT "?" FROM t WHERE x = 1`, ""},
		{"in backquotes", Question, "SELECT `?` FROM t WHERE x = ?", []any{1}, "SELECT `?` FROM t WHERE x = 1", ""},
		{"in brackets", QuestionNumbered, "SELECT [?1] FROM t WHERE x = ?1", []any{1}, "SELECT [?1] FROM t WHERE x = 1", ""},
		{"in line comment", QuestionNumbered, "SELECT ?1 -- ?2\n, 2", []any{1}, "SELECT 1 -- ?2\n, 2", ""},
		{"in block comment", Dollar, "SELECT /* $2 */ $1", []any{1}, "SELECT /* $2 */ 1", ""},
		{"in dollar quote", Dollar, "SELECT $$ $2 $$, $tag$ $3 $tag$, $1", []any{1}, "SELECT $$ $2 $$, $tag$ $3 $tag$, 1", ""},
		{"dollar in identifier", Dollar, "SELECT a$1 FROM t WHERE x = $1", []any{1}, "SELECT a$1 FROM t WHERE x = 1", ""},
		{"question mark in postgres", Dollar, "SELECT ?, $1", []any{1}, "SELECT ?, 1", ""},
		{"dollar in sqlite", QuestionNumbered, "SELECT $1, ?1", []any{1}, "SELECT $1, 1", ""},
		{"mysql backslash in quotes", Question, `SELECT 'a\'?', ?`, []any{1}, `SELECT 'a\'?', 1`, ""},

		// Literals.
		{"ints", QuestionNumbered, "?1 ?2 ?3", []any{int(-1), int32(2), int64(math.MinInt64)}, "-1 2 -9223372036854775808", ""},
		{"floats", QuestionNumbered, "?1 ?2 ?3 ?4", []any{0.1, 1e21, -2.5, float64(3)}, "0.1 1000000000000000000000 -2.5 3", ""},
		{"negative after minus", QuestionNumbered, "SELECT 1-?1, 1 -?2, 1-?3", []any{int64(-5), -0.5, int64(5)}, "SELECT 1- -5, 1 - -0.5, 1-5", ""},
		{"string quotes", QuestionNumbered, "?1", []any{"O'Brien's"}, "'O''Brien''s'", ""},
		{"string backslash sqlite", QuestionNumbered, "?1", []any{`a\b`}, `'a\b'`, ""},
		{"string backslash mysql", Question, "?", []any{`a\'b`}, `'a\\''b'`, ""},
		{"string unicode", Dollar, "$1", []any{"żółw ✓"}, "'żółw ✓'", ""},
		{"empty string", Dollar, "$1", []any{""}, "''", ""},
		{"nil", QuestionNumbered, "?1", []any{nil}, "NULL", ""},
		{"bool", QuestionNumbered, "?1 ?2", []any{true, false}, "1 0", ""},
		{"bool postgres", Dollar, "$1 $2", []any{true, false}, "TRUE FALSE", ""},
		{"bytes", QuestionNumbered, "?1", []any{[]byte{0, 0xab, 0xff}}, "X'00abff'", ""},
		{"bytes postgres", Dollar, "$1", []any{[]byte{0xde, 0xad}}, `'\xdead'`, ""},
		{"time", QuestionNumbered, "?1", []any{ts}, "'2024-02-29 12:04:05.123456'", ""},

		// Errors.
		{"too few args", QuestionNumbered, "?1 ?2", []any{1}, "", "placeholder 2 out of range"},
		{"too many args", QuestionNumbered, "?1", []any{1, 2}, "", "takes 1 arguments, got 2"},
		{"question too few", Question, "? ?", []any{1}, "", "placeholder 2 out of range"},
		{"question too many", Question, "?", []any{1, 2}, "", "takes 1 arguments, got 2"},
		{"dollar zero", Dollar, "$0", []any{1}, "", "placeholder 0 out of range"},
		{"huge number", QuestionNumbered, "?99999999999999999999999", []any{1}, "", "out of range"},
		{"NaN", QuestionNumbered, "?1", []any{math.NaN()}, "", "argument 1: NaN has no SQL literal"},
		{"Inf", QuestionNumbered, "?1", []any{math.Inf(-1)}, "", "-Inf has no SQL literal"},
		{"NUL", QuestionNumbered, "?1", []any{"a\x00b"}, "", "NUL byte"},
		{"unknown type", QuestionNumbered, "?1", []any{struct{}{}}, "", "unsupported type struct {}"},
		{"unterminated quote", QuestionNumbered, "SELECT 'abc ?1", []any{1}, "", "unterminated ' quote"},
		{"unknown style", Placeholder(0), "?1", []any{1}, "", "unknown placeholder style"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Interpolate(tt.query, tt.style, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestInterpolateAllocs(t *testing.T) {
	q := "UPDATE stock SET s_quantity = ?1, s_ytd = s_ytd + ?2, s_data = ?5 WHERE s_i_id = ?3 AND s_w_id = ?4"
	args := []any{int64(42), int64(5), int64(100017), int64(3), "some stock data that is a bit long"}
	if n := testing.AllocsPerRun(100, func() { _, _ = Interpolate(q, QuestionNumbered, args) }); n > 1 {
		t.Fatalf("%v allocations per call, want 1", n)
	}
}

func BenchmarkInterpolate(b *testing.B) {
	cases := []struct {
		name  string
		style Placeholder
		query string
		args  []any
	}{
		{"point-select", QuestionNumbered, "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ?1 AND c_d_id = ?2 AND c_id = ?3",
			[]any{int64(1), int64(7), int64(2101)}},
		{"update-5-args", Dollar, "UPDATE stock SET s_quantity = $1, s_ytd = s_ytd + $2, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + $3, s_data = $6 WHERE s_i_id = $4 AND s_w_id = $5",
			[]any{int64(42), int64(5), int64(0), int64(100017), int64(3), "some 'quoted' stock data of fifty characters or so"}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Interpolate(c.query, c.style, c.args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func FuzzInterpolate(f *testing.F) {
	f.Add("SELECT ?1, '?2' -- ?3\n, ?2", uint8(QuestionNumbered), int64(-1), "it's")
	f.Add("SELECT $1 /* $2 */, $$ $1 $$, a$1, $2", uint8(Dollar), int64(2), `a\b`)
	f.Add("INSERT INTO t VALUES (?, ?)", uint8(Question), int64(0), "x")
	f.Add("SELECT 1-?1, [?2], ?", uint8(QuestionNumbered), int64(-5), "")
	f.Fuzz(func(t *testing.T, q string, style uint8, n int64, s string) {
		args := []any{n, s}
		out, err := Interpolate(q, Placeholder(style%4), args)
		if err != nil {
			return
		}
		// Without placeholders the text comes back unchanged.
		if !strings.ContainsAny(q, "?$") && out != q {
			t.Fatalf("changed %q to %q", q, out)
		}
	})
}
