package cluster

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/metrics"
)

// Samples split among workers, each worker's histogram through the wire
// (JSON message, HDR encoded form) and merged, give the percentiles of one
// histogram of all the samples: exactly, as the layout is the same.
func TestMergedPercentilesEqualUnion(t *testing.T) {
	cases := []struct {
		name    string
		workers int
		samples func(r *rand.Rand) time.Duration
		n       int
	}{
		{"uniform 4 workers", 4, func(r *rand.Rand) time.Duration { return time.Duration(r.IntN(50_000)) * time.Microsecond }, 20_000},
		{"long tail 3 workers", 3, func(r *rand.Rand) time.Duration {
			return time.Duration(r.ExpFloat64()*2000) * time.Microsecond
		}, 9_999},
		{"one worker idle", 2, func(r *rand.Rand) time.Duration { return time.Duration(1+r.IntN(900)) * time.Millisecond }, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			union := metrics.NewSet(2)
			parts := make([]metrics.Set, tc.workers)
			for k := range parts {
				parts[k] = metrics.NewSet(2)
			}
			for i := range tc.n {
				d := tc.samples(r)
				kind := i % 2
				union[kind].Record(d)
				union[kind].Commits++
				w := &parts[r.IntN(tc.workers)][kind]
				if tc.name == "one worker idle" {
					w = &parts[0][kind]
				}
				w.Record(d)
				w.Commits++
			}
			merged := metrics.NewSet(2)
			for k, p := range parts {
				wire, err := EncodeSet(p)
				if err != nil {
					t.Fatal(err)
				}
				b, err := json.Marshal(Msg{Type: TypeFinal, Index: k, Final: &Final{Types: wire}})
				if err != nil {
					t.Fatal(err)
				}
				var m Msg
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				got, err := DecodeSet(m.Final.Types, 2)
				if err != nil {
					t.Fatal(err)
				}
				merged.Merge(got)
			}
			for kind := range 2 {
				want := union[kind].Summarize("x")
				got := merged[kind].Summarize("x")
				if got != want {
					t.Errorf("type %d: merged %+v, union %+v", kind, got, want)
				}
			}
			if g, w := merged.Total().Summarize("t"), union.Total().Summarize("t"); g != w {
				t.Errorf("total: merged %+v, union %+v", g, w)
			}
		})
	}
}

func TestDecodeSetRefusesMoreTypes(t *testing.T) {
	if _, err := DecodeSet(make([]TxWire, 3), 2); err == nil {
		t.Fatal("3 types into a mix of 2: want an error")
	}
	if _, err := DecodeSet([]TxWire{{Hist: "not a histogram"}}, 1); err == nil {
		t.Fatal("a malformed histogram: want an error")
	}
}
