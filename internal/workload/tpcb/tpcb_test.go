package tpcb

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/workload"
)

// TestFlags: build takes --scale/-s, run takes --builtin/-b; each bad
// value is one line naming the flag.
func TestFlags(t *testing.T) {
	m, err := workload.Lookup("tpcb")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		cmd     string
		args    []string
		scale   int
		mix     string // Mix names and weights, "name@w,…"
		desc    string
		wantErr string
	}{
		{cmd: "build", scale: 1, mix: "tpcb-like@1", desc: "<builtin: TPC-B (sort of)>"},
		{cmd: "build", args: []string{"--scale", "12"}, scale: 12, mix: "tpcb-like@1"},
		{cmd: "build", args: []string{"-s", "20000"}, scale: 20000, mix: "tpcb-like@1"},
		{cmd: "build", args: []string{"-s", "0"}, wantErr: "--scale must be at least 1"},
		{cmd: "build", args: []string{"-s", "20001"}, wantErr: "--scale must be at most 20000: beyond it aid no longer fits the int columns (pgbench would switch to bigint)"},
		{cmd: "run", scale: 1, mix: "tpcb-like@1"},
		{cmd: "run", args: []string{"-b", "select-only"}, scale: 1, mix: "select-only@1", desc: "<builtin: select only>"},
		{cmd: "run", args: []string{"--builtin", "si"}, scale: 1, mix: "simple-update@1", desc: "<builtin: simple update>"},
		{cmd: "run", args: []string{"-b", "t@3", "-b", "se@1", "-b", "simple-update@0"}, scale: 1,
			mix: "tpcb-like@3,select-only@1,simple-update@0", desc: "multiple scripts"},
		{cmd: "run", args: []string{"-b", "s"}, wantErr: `--builtin: "s" is ambiguous (2 builtin scripts start with it): choose tpcb-like, simple-update or select-only`},
		{cmd: "check", scale: 1, mix: "tpcb-like@1"},
		{cmd: "drop", scale: 1, mix: "tpcb-like@1"},
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
			if tw.Name() != "tpcb" || tw.cfg.Seed != 7 || tw.ScaleFactor() != tc.scale {
				t.Fatalf("name %s seed %d scale %d", tw.Name(), tw.cfg.Seed, tw.ScaleFactor())
			}
			if got := mixText(tw.Mix()); got != tc.mix {
				t.Errorf("mix %s, want %s", got, tc.mix)
			}
			if tc.desc != "" && tw.Description() != tc.desc {
				t.Errorf("description %q, want %q", tw.Description(), tc.desc)
			}
		})
	}
	for cmd, flag := range map[string]string{"run": "scale", "build": "builtin", "check": "builtin"} {
		fs := pflag.NewFlagSet(cmd, pflag.ContinueOnError)
		m.Flags(cmd, fs)
		if fs.Lookup(flag) != nil {
			t.Errorf("%s has --%s", cmd, flag)
		}
	}
}

func mixText(mix []workload.TxType) string {
	var parts []string
	for _, tx := range mix {
		if tx.Keying != 0 || tx.Think != 0 {
			return "keying or think time set"
		}
		parts = append(parts, tx.Name+"@"+strconv.Itoa(tx.Weight))
	}
	return strings.Join(parts, ",")
}

// TestParseBuiltins: pgbench's -b rules (docs/tpcb.md part 3).
func TestParseBuiltins(t *testing.T) {
	cases := []struct {
		specs   []string
		want    []Weighted
		wantErr string
	}{
		{specs: []string{"tpcb-like"}, want: []Weighted{{TPCBLike, 1}}},
		{specs: []string{"t"}, want: []Weighted{{TPCBLike, 1}}},
		{specs: []string{"simple"}, want: []Weighted{{SimpleUpdate, 1}}},
		{specs: []string{"sel@10"}, want: []Weighted{{SelectOnly, 10}}},
		{specs: []string{"select-only@5", "tpcb-like@0"}, want: []Weighted{{SelectOnly, 5}, {TPCBLike, 0}}},
		// The same builtin twice is drawn as often as one with both weights.
		{specs: []string{"tpcb-like@2", "select-only", "t@3"}, want: []Weighted{{TPCBLike, 5}, {SelectOnly, 1}}},
		{specs: []string{"s"}, wantErr: `"s" is ambiguous`},
		{specs: []string{"list"}, wantErr: `no builtin script "list": choose tpcb-like, simple-update or select-only`},
		{specs: []string{"tpcb-like-extra"}, wantErr: `no builtin script "tpcb-like-extra"`},
		{specs: []string{""}, wantErr: `no builtin script ""`},
		{specs: []string{"@2"}, wantErr: `no builtin script ""`},
		{specs: []string{"tpcb-like@"}, wantErr: "--builtin tpcb-like@: the weight must be an integer from 0 to 2147483647"},
		{specs: []string{"tpcb-like@x"}, wantErr: "the weight must be an integer"},
		{specs: []string{"tpcb-like@-1"}, wantErr: "the weight must be an integer"},
		{specs: []string{"tpcb-like@2147483648"}, wantErr: "the weight must be an integer"},
		{specs: []string{"tpcb-like@2147483647", "t@1"}, wantErr: "add up to more than 2147483647"},
		{specs: []string{"tpcb-like@0"}, wantErr: "--builtin: the weights add up to zero"},
		{specs: []string{"tpcb-like@0", "select-only@0"}, wantErr: "the weights add up to zero"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.specs, ","), func(t *testing.T) {
			got, err := ParseBuiltins(tc.specs)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err = %v, want one line with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestStatementsPerMode: procedure mode has the two calls and
// select-only's SELECT, the other modes the five builtin statements; every
// mode has the scale and the checks.
func TestStatementsPerMode(t *testing.T) {
	w := New(Config{Scale: 1})
	for _, m := range workload.Modes() {
		got := w.Statements(m)
		seen := map[string]bool{}
		for _, s := range got {
			if seen[s] {
				t.Errorf("%v: %q listed twice", m, s)
			}
			seen[s] = true
		}
		for _, s := range []string{stmtScale, stmtAccountSelect, "check.1", "check.2", "check.3"} {
			if !seen[s] {
				t.Errorf("%v: %q missing", m, s)
			}
		}
		calls := seen[stmtTPCBLikeCall] && seen[stmtSimpleUpdateCall]
		client := seen[stmtAccountUpdate] && seen[stmtTellerUpdate] && seen[stmtBranchUpdate] && seen[stmtHistoryInsert]
		if m.ProcedureLike() && (!calls || client || len(got) != 7) {
			t.Errorf("procedure: %v", got)
		}
		if !m.ProcedureLike() && (calls || !client || len(got) != 9) {
			t.Errorf("%v: %v", m, got)
		}
	}
}
