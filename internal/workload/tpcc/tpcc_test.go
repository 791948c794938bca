package tpcc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/workload"
)

func TestRegistered(t *testing.T) {
	m, err := workload.Lookup("tpcc")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		cmd     string
		args    []string
		wantErr string
		check   func(*Workload) error
	}{
		{cmd: "build", check: wantScale(1, false)},
		{cmd: "build", args: []string{"--warehouses", "12"}, check: wantScale(12, false)},
		{cmd: "build", args: []string{"--warehouses", "0"}, wantErr: "--warehouses must be at least 1"},
		{cmd: "build", args: []string{"--warehouses", "10001"}, wantErr: "--warehouses must be at most 10000"},
		{cmd: "run", check: wantScale(1, false)},
		{cmd: "run", args: []string{"--all-warehouses"}, check: wantScale(1, true)},
		{cmd: "check", check: wantScale(1, false)},
		{cmd: "drop", check: wantScale(1, false)},
	}
	for _, tc := range cases {
		t.Run(tc.cmd+strings.Join(tc.args, ""), func(t *testing.T) {
			fs := pflag.NewFlagSet(tc.cmd, pflag.ContinueOnError)
			ctor := m.Flags(tc.cmd, fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			w, err := ctor(7)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tw := w.(*Workload)
			if tw.Name() != "tpcc" || tw.cfg.Seed != 7 {
				t.Fatalf("%+v", tw.cfg)
			}
			if err := tc.check(tw); err != nil {
				t.Fatal(err)
			}
		})
	}
	if fs := pflag.NewFlagSet("run", pflag.ContinueOnError); m.Flags("run", fs) != nil && fs.Lookup("warehouses") != nil {
		t.Error("run takes the scale from the schema; it has no --warehouses")
	}
}

func wantScale(wh int, all bool) func(*Workload) error {
	return func(w *Workload) error {
		if w.Warehouses() != wh || w.cfg.AllWarehouses != all {
			return fmt.Errorf("warehouses %d all %v, want %d %v", w.Warehouses(), w.cfg.AllWarehouses, wh, all)
		}
		return nil
	}
}

func metaAnswer(rows [][]any, err error) func(string, []any) ([][]any, error) {
	return func(stmt string, args []any) ([][]any, error) {
		if stmt == stmtMetaGet {
			return rows, err
		}
		return happy(stmt, args)
	}
}

func TestAttach(t *testing.T) {
	good := func(k, v string) [][]any {
		m := map[string]string{"workload": "tpcc", "version": fmt.Sprint(dataVersion), "warehouses": "3", "seed": "1", "c_load": "200"}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		var rows [][]any
		for k, v := range m {
			rows = append(rows, []any{k, v})
		}
		return rows
	}
	cases := []struct {
		name     string
		rows     [][]any
		err      error
		noSchema bool
		msg      string
	}{
		{name: "ok", rows: good("", "")},
		{name: "no table", err: fmt.Errorf("no such table: sledge_meta: %w", workload.ErrNoSchema), noSchema: true, msg: "no TPC-C schema: run `sledge build` first"},
		{name: "empty", rows: nil, noSchema: true, msg: "no TPC-C schema"},
		{name: "unfinished", rows: good("c_load", ""), noSchema: true, msg: "the build did not finish"},
		{name: "old version", rows: good("version", "0"), msg: "run `sledge build` again"},
		{name: "other workload", rows: good("workload", "tpcb"), noSchema: true, msg: "not tpcc"},
		{name: "bad scale", rows: good("warehouses", "0"), msg: "out of range"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := New(Config{Warehouses: 1, Seed: 9})
			err := w.Attach(context.Background(), &fakeConn{mode: workload.ModeClient, answer: metaAnswer(tc.rows, tc.err)})
			if tc.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
				if u, n := w.Scale(); u != "warehouses" || n != 3 || w.cLoad != 200 {
					t.Fatalf("attached %d warehouses, C_LOAD %d", w.Warehouses(), w.cLoad)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.msg) || errors.Is(err, workload.ErrNoSchema) != tc.noSchema {
				t.Fatalf("err = %v, want %q (ErrNoSchema %v)", err, tc.msg, tc.noSchema)
			}
			if w.Warehouses() != 1 {
				t.Fatal("a failed Attach changed the workload")
			}
		})
	}
}

func TestMeterAndCheckSkip(t *testing.T) {
	ctx := context.Background()
	w := New(Config{Warehouses: 1})
	var _ workload.Meter = w
	f := &fakeConn{mode: workload.ModePrepared, answer: func(stmt string, args []any) ([][]any, error) {
		switch stmt {
		case stmtNOPM:
			return one(int64(30010))
		case stmtCheck11Applies:
			return one(int64(4))
		}
		return nil, errors.New("unexpected " + stmt)
	}}
	if w.MeterName() != "NOPM" {
		t.Error(w.MeterName())
	}
	if n, err := w.Meter(ctx, f); err != nil || n != 30010 {
		t.Fatalf("Meter = %d, %v", n, err)
	}
	skip := w.Checks()[10].Skip
	why, err := skip(ctx, f)
	if err != nil || !strings.Contains(why, "Deliveries have run") {
		t.Fatalf("skip = %q, %v", why, err)
	}
	fresh := &fakeConn{mode: workload.ModeClient, answer: happy}
	if why, err := skip(ctx, fresh); err != nil || why != "" {
		t.Fatalf("fresh build: skip = %q, %v", why, err)
	}
}
