package sqlite

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/sledge-bench/sledge/internal/workload"
)

// plainConn hides every interface of a session but workload.Conn, so that
// workload.ExecStmt, QueryRowStmt and QueryStmt take their fallback
// through Exec, QueryRow and Query even if SQLite's session runs bound
// statements itself one day.
type plainConn struct{ workload.Conn }

// TestStmtFallback: bound statements run through a session's Exec,
// QueryRow and Query (the fallback of the typed statement contract, issue
// 26) with every argument type (*int64, *float64, *string, *[]byte, *bool,
// *NullInt64, NULL among them) and every destination type (*int64,
// *float64, *[]byte, *string, *bool, *NullInt64, *any), on a real SQLite in
// each mode: values go in and come back as written, NULL comes back as an
// invalid NullInt64 or an empty []byte, no row is ErrNoRows, and an error
// from a row callback stops the rows and leaves the session usable.
func TestStmtFallback(t *testing.T) {
	ctx := context.Background()
	for _, m := range []workload.Mode{workload.ModeClient, workload.ModePrepared} {
		t.Run(m.String(), func(t *testing.T) {
			var c workload.Conn = plainConn{connect(t, openBuilt(t, ""), m)}
			var (
				id, lo, hi int64
				ni         workload.NullInt64 // the INTEGER column i
				flag       bool
				f          float64
				sb, tsb    []byte
				s, ts      string
				anyN       any
			)
			// item (id, i, f, s, n, ts): i as a NullInt64, then as a bool.
			add := workload.Bind("item.add", []any{&id, &ni, &f, &sb, &s, &ts})
			addBool := workload.Bind("item.add", []any{&id, &flag, &f, &sb, &s, &ts})
			for _, r := range []struct {
				id   int64
				i    workload.NullInt64
				flag *bool
				f    float64
				s, n string
			}{
				{1, workload.NullInt64{V: 7, Valid: true}, nil, 0.25, "it's one", "x"},
				{2, workload.NullInt64{}, nil, -1.5, "", "y"},
				{3, workload.NullInt64{}, new(bool), 1e6, "three -- ?1", "z"},
			} {
				id, ni, f, sb, s, ts = r.id, r.i, r.f, []byte(r.s), r.n, "2024-03-01 12:30:00"
				st := add
				if r.flag != nil {
					flag, st = true, addBool
				}
				if n, err := workload.ExecStmt(ctx, c, st); err != nil || n != 1 {
					t.Fatalf("add %d: %d rows, %v", r.id, n, err)
				}
			}
			// *string argument.
			id, s = 2, "two"
			if n, err := workload.ExecStmt(ctx, c, workload.Bind("item.set_s", []any{&id, &s})); err != nil || n != 1 {
				t.Fatalf("set_s: %d rows, %v", n, err)
			}

			get := workload.Bind("item.get", []any{&id}, &ni, &f, &sb, &anyN, &tsb)
			getTyped := workload.Bind("item.get", []any{&id}, &flag, &f, &s, &anyN, &tsb)
			sb = make([]byte, 0, 64)
			array := &sb[:1][0]
			cases := []struct {
				id   int64
				want string
			}{
				{1, "{7 true} 0.25 it's one x 2024-03-01 12:30:00"},
				{2, "{0 false} -1.5 two y 2024-03-01 12:30:00"}, // NULL i
			}
			for _, tc := range cases {
				id = tc.id
				if err := workload.QueryRowStmt(ctx, c, get); err != nil {
					t.Fatalf("get %d: %v", tc.id, err)
				}
				if got := fmt.Sprintf("%v %v %s %s %s", ni, f, sb, anyN, tsb); got != tc.want {
					t.Errorf("get %d: %q, want %q", tc.id, got, tc.want)
				}
			}
			if &sb[:1][0] != array {
				t.Error("a []byte destination with room was given a new array")
			}
			id = 3
			if err := workload.QueryRowStmt(ctx, c, getTyped); err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%v %v %s %s", flag, f, s, anyN); got != "true 1e+06 three -- ?1 z" {
				t.Errorf("get 3 into bool and string: %q", got)
			}
			// A NULL into *[]byte is empty; into *int64 it fails.
			id, tsb = 2, append(tsb[:0], "old"...)
			var i int64
			nulls := workload.Bind("item.get", []any{&id}, &sb, &f, &s, &anyN, &tsb)
			if err := workload.QueryRowStmt(ctx, c, nulls); err != nil || len(sb) != 0 {
				t.Errorf("NULL i into []byte: %q, %v", sb, err)
			}
			if err := workload.QueryRowStmt(ctx, c, workload.Bind("item.get", []any{&id}, &i, &f, &s, &anyN, &tsb)); err == nil {
				t.Error("NULL into *int64: no error")
			}
			// No row.
			id = 99
			if err := workload.QueryRowStmt(ctx, c, get); !errors.Is(err, workload.ErrNoRows) {
				t.Errorf("get 99: %v, want ErrNoRows", err)
			}

			// Rows, each scanned into the same destinations.
			lo, hi = 1, 3
			var rid int64
			rng := workload.Bind("item.range", []any{&lo, &hi}, &rid, &ni, &f, &sb, &anyN, &tsb)
			var got []string
			err := workload.QueryStmt(ctx, c, rng, func() error {
				got = append(got, fmt.Sprintf("%d %v %v %s %s %s", rid, ni, f, sb, anyN, tsb))
				return nil
			})
			want := []string{
				"1 {7 true} 0.25 it's one x 2024-03-01 12:30:00",
				"2 {0 false} -1.5 two y 2024-03-01 12:30:00",
				"3 {1 true} 1e+06 three -- ?1 z 2024-03-01 12:30:00",
			}
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("range: %q, %v; want %q", got, err, want)
			}
			// An error from row stops the rows and comes back; the session
			// goes on.
			stop := errors.New("stop")
			n := 0
			if err := workload.QueryStmt(ctx, c, rng, func() error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
				t.Errorf("row error: %v after %d rows", err, n)
			}
			lo, hi = 5, 9
			if err := workload.QueryStmt(ctx, c, rng, func() error { n++; return nil }); err != nil || n != 1 {
				t.Errorf("no rows: %v, %d calls", err, n)
			}
			id = 1
			if err := workload.QueryRowStmt(ctx, c, get); err != nil {
				t.Errorf("after the stopped rows: %v", err)
			}
		})
	}
}
