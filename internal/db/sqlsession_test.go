package db

import (
	"testing"
	"time"
)

func TestTextValues(t *testing.T) {
	tv := TextValues{Time: func(b []byte, t time.Time) []byte { return t.AppendFormat(b, time.DateOnly) }}
	src := []any{int64(-42), uint64(18446744073709551615), 1.0 / 3, float32(0.1), 1e21, "text", []byte("bytes"),
		"", []byte{}, []byte(nil), nil, true, time.Date(1998, 9, 2, 0, 0, 0, 0, time.UTC)}
	want := []any{"-42", "18446744073709551615", "0.3333333333333333", "0.1", "1e+21", "text", "bytes",
		"", "", "", nil, "true", "1998-09-02"}
	dest := tv.Targets(len(src))
	scan := func() {
		for i, d := range dest {
			if err := d.(interface{ Scan(any) error }).Scan(src[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	scan()
	for i, v := range tv.Values() {
		var got any
		if v != nil {
			got = string(v)
		}
		if got != want[i] {
			t.Errorf("%T %v: %q, want %q", src[i], src[i], got, want[i])
		}
	}
	if n := testing.AllocsPerRun(100, func() { scan(); _ = tv.Values() }); n != 0 {
		t.Errorf("%v allocations per row", n)
	}
	if err := (&TextValues{}).Targets(1)[0].(interface{ Scan(any) error }).Scan(time.Now()); err == nil {
		t.Error("a time without Time: no error")
	}
}
