package txlog

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/workload"
)

type nopConn struct{ workload.Conn }

func (nopConn) Close(context.Context) error { return nil }

type nopTxn struct{}

func (nopTxn) Kind() int                                { return 0 }
func (nopTxn) Run(context.Context, workload.Conn) error { return nil }

type nopTerm struct{}

func (nopTerm) Next() workload.Txn { return nopTxn{} }

// engine's BenchmarkVULoop with a transaction log: the VU's loop, logging
// included, allocates nothing per transaction.
func BenchmarkVULoopLogged(b *testing.B) {
	for _, c := range []struct {
		name string
		agg  int
	}{{"per-transaction", 0}, {"aggregate", 1}} {
		b.Run(c.name, func(b *testing.B) {
			l, err := Open(Options{Prefix: filepath.Join(b.TempDir(), "x"), PID: 1, VUs: 1, Aggregate: c.agg})
			if err != nil {
				b.Fatal(err)
			}
			p := &engine.Plan{
				VUs: 1, Mix: []workload.TxType{{Name: "a", Weight: 1}}, Seed: 1, Iterations: b.N, TxLog: l,
				Connect:  func(context.Context, int) (workload.Conn, error) { return nopConn{}, nil },
				Terminal: func(int) workload.Terminal { return nopTerm{} },
				Probe:    func(context.Context) (map[string]int64, error) { return map[string]int64{}, nil },
			}
			b.ReportAllocs()
			b.ResetTimer()
			if _, err := engine.Run(context.Background(), p, nil); err != nil {
				b.Fatal(err)
			}
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
