package db

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

func TestScriptOnly(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		proto workload.Protocol
		want  workload.Mode
	}{
		{workload.ProtoSimple, workload.ModeClient},
		{workload.ProtoExtended, workload.ModePrepared},
		{workload.ProtoPrepared, workload.ModePrepared},
	} {
		s := ScriptOnly{DB: "mydb", Proto: tc.proto}
		if got := s.Mode(); got != tc.want {
			t.Errorf("protocol %d: Mode = %v, want %v", tc.proto, got, tc.want)
		}
	}

	c := ScriptOnly{DB: "mydb", Proto: workload.ProtoSimple}
	const named = "mydb: named statements are not available in a script session"
	if n, err := c.Exec(ctx, "x", 1); n != 0 || err == nil || err.Error() != named {
		t.Errorf("Exec = %d, %v; want 0, %q", n, err, named)
	}
	if err := c.QueryRow(ctx, "x").Scan(new(int)); err == nil || err.Error() != named {
		t.Errorf("QueryRow.Scan = %v; want %q", err, named)
	}
	if rs, err := c.Query(ctx, "x"); rs != nil || err == nil || err.Error() != named {
		t.Errorf("Query = %v, %v; want nil, %q", rs, err, named)
	}
	ran := false
	err := c.InTx(ctx, workload.TxOptions{}, func(context.Context) error { ran = true; return nil })
	if ran || err == nil || !strings.HasPrefix(err.Error(), "mydb: InTx is not available in a script session") {
		t.Errorf("InTx: ran %v, err %v", ran, err)
	}
}

func TestTextCell(t *testing.T) {
	ts := time.Date(2024, 2, 29, 13, 4, 5, 120000000, time.UTC)
	layout := func(b []byte, t time.Time) []byte { return t.AppendFormat(b, "2006-01-02 15:04:05.999") }
	tests := []struct {
		name    string
		src     any
		time    func([]byte, time.Time) []byte
		want    string
		null    bool
		wantErr bool
	}{
		{name: "NULL", src: nil, null: true},
		{name: "bytes", src: []byte("abc"), want: "abc"},
		{name: "empty bytes", src: []byte{}, want: ""},
		{name: "string", src: "x y", want: "x y"},
		{name: "int64", src: int64(-42), want: "-42"},
		{name: "uint64", src: uint64(math.MaxUint64), want: "18446744073709551615"},
		{name: "float 4.5", src: 4.5, want: "4.5"},
		{name: "float 0.1", src: 0.1, want: "0.1"},
		{name: "float zero", src: 0.0, want: "0"},
		{name: "float 1e-4 fixed", src: 1e-4, want: "0.0001"},
		{name: "float below 1e-4", src: 1e-5, want: "1e-05"},
		{name: "float below 1e15", src: 123456789012345.0, want: "123456789012345"},
		{name: "float 1e15", src: 1e15, want: "1e+15"},
		{name: "float 1e+20", src: 1e20, want: "1e+20"},
		{name: "float negative", src: -2.5e20, want: "-2.5e+20"},
		{name: "NaN", src: math.NaN(), want: "NaN"},
		{name: "Infinity", src: math.Inf(1), want: "Infinity"},
		{name: "-Infinity", src: math.Inf(-1), want: "-Infinity"},
		{name: "float32 4.5", src: float32(4.5), want: "4.5"},
		{name: "float32 0.1 shortest", src: float32(0.1), want: "0.1"},
		{name: "float32 1e6", src: float32(1e6), want: "1e+06"},
		{name: "float32 below 1e6", src: float32(999999), want: "999999"},
		{name: "true", src: true, want: "1"},
		{name: "false", src: false, want: "0"},
		{name: "time", src: ts, time: layout, want: "2024-02-29 13:04:05.12"},
		{name: "time without Time", src: ts, wantErr: true},
		{name: "unsupported", src: 3, wantErr: true},
	}
	for _, tc := range tests {
		c := TextCell{Time: tc.time}
		_ = c.Scan("left over") // a cell is reused
		err := c.Scan(tc.src)
		if tc.wantErr {
			if err == nil {
				t.Errorf("%s: no error", tc.name)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got, ok := c.Text()
		if ok == tc.null || got != tc.want {
			t.Errorf("%s: Text = %q, %v; want %q, %v", tc.name, got, ok, tc.want, !tc.null)
		}
	}
}

func TestMayBeCompound(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"", false},
		{"SELECT 1", false},
		{"SELECT 1;", false},
		{"SELECT 1 ;; \r\n\t", false},
		{"SELECT 1; SELECT 2", true},
		{"SELECT 1;\nSELECT 2;\n", true},
		{"SELECT 'a;b'", true},       // may be: a literal is not parsed
		{"SELECT 1 -- a; b\n", true}, // nor a comment
		{"SELECT 1 /* a; b */", true},
		{"SELECT 1; -- the end", true}, // the comment is not trimmed
		{"INSERT INTO t VALUES (';')", true},
	} {
		if got := MayBeCompound(tc.text); got != tc.want {
			t.Errorf("MayBeCompound(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestNextWord(t *testing.T) {
	for _, tc := range []struct {
		s      string
		i      int
		hash   bool
		word   string
		offset int
	}{
		{"BEGIN", 0, false, "BEGIN", 5},
		{"  begin work", 0, false, "begin", 7},
		{"  begin work", 7, false, "work", 12},
		{"-- c\n\tCOMMIT;", 0, false, "COMMIT", 12},
		{"/* c */END", 0, false, "END", 10},
		{"/* a */ /* b */ x_1 y", 0, false, "x_1", 19},
		{"# c\nSELECT", 0, true, "SELECT", 10},
		{"# c\nSELECT", 0, false, "", 0}, // '#' is no comment there
		{"(SELECT 1)", 0, false, "", 0},
		{"-- only a comment", 0, false, "", 17},
		{"/* unterminated", 0, false, "", 15},
		{"# unterminated", 0, true, "", 14},
		{"a - b", 1, false, "", 2}, // one '-' is no comment
		{"", 0, false, "", 0},
		{"END  ", 3, false, "", 5},
	} {
		w, j := NextWord(tc.s, tc.i, tc.hash)
		if w != tc.word || j != tc.offset {
			t.Errorf("NextWord(%q, %d, %v) = %q, %d; want %q, %d", tc.s, tc.i, tc.hash, w, j, tc.word, tc.offset)
		}
	}
}

func TestSkipSpace(t *testing.T) {
	for _, tc := range []struct {
		s    string
		i    int
		hash bool
		want int
	}{
		{"x", 0, false, 0},
		{" \t\r\nx", 0, false, 4},
		{"--a\n--b\nx", 0, false, 8},
		{"/**/x", 0, false, 4},
		{"#a\nx", 0, true, 3},
		{"#a\nx", 0, false, 0},
		{"; -- c", 1, false, 6},
	} {
		if got := SkipSpace(tc.s, tc.i, tc.hash); got != tc.want {
			t.Errorf("SkipSpace(%q, %d, %v) = %d, want %d", tc.s, tc.i, tc.hash, got, tc.want)
		}
	}
}

func TestIsWordByte(t *testing.T) {
	for _, b := range []byte("azAZ09_") {
		if !IsWordByte(b) {
			t.Errorf("IsWordByte(%q) = false", b)
		}
	}
	for _, b := range []byte(" ;-$#.'\"()\x80\xff") {
		if IsWordByte(b) {
			t.Errorf("IsWordByte(%q) = true", b)
		}
	}
}

// scanRows scans rows (each a row of driver values) through k as
// database/sql would, and returns k.Last.
func scanRows(t *testing.T, k *RowKeeper, cols int, rows [][]any) []any {
	t.Helper()
	dest := k.Targets(cols)
	if len(dest) != cols {
		t.Fatalf("Targets(%d) gave %d", cols, len(dest))
	}
	for _, r := range rows {
		for i, v := range r {
			if err := dest[i].(*TextCell).Scan(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	return k.Last(len(rows))
}

func TestRowKeeper(t *testing.T) {
	k := &RowKeeper{Time: func(b []byte, t time.Time) []byte { return t.AppendFormat(b, time.DateOnly) }}
	day := time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		cols int
		rows [][]any
		want []any
	}{
		{"several rows: the last", 3, [][]any{
			{int64(1), "a", 1.5},
			{int64(2), []byte("b"), nil},
			{int64(3), "c", 4.5},
		}, []any{"3", "c", "4.5"}},
		{"no rows", 2, nil, nil},
		{"NULLs", 2, [][]any{{nil, nil}}, []any{nil, nil}},
		{"fewer columns", 1, [][]any{{true}, {false}}, []any{"0"}},
		{"more columns", 5, [][]any{{int64(7), "x", day, 1e20, math.NaN()}}, []any{"7", "x", "2024-02-29", "1e+20", "NaN"}},
		{"one row", 2, [][]any{{"only", uint64(9)}}, []any{"only", "9"}},
	}
	for _, tc := range tests {
		got := scanRows(t, k, tc.cols, tc.rows)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Last = %#v, want %#v", tc.name, got, tc.want)
		}
	}

	// What the caller appends to a row it got is its own: the next row
	// does not write over it.
	first := scanRows(t, k, 2, [][]any{{"a", "b"}})
	mine := append(first, "x")
	second := scanRows(t, k, 3, [][]any{{"c", "d", "e"}})
	if !reflect.DeepEqual(second, []any{"c", "d", "e"}) {
		t.Errorf("second row = %#v", second)
	}
	if mine[2] != "x" {
		t.Errorf("appended value = %#v, want \"x\"", mine[2])
	}
}
