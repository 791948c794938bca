package tpcb_test

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/tpcb"
)

// BenchmarkMariaDBWire is BenchmarkTxLoop's tpcb-like on MariaDB with
// sledge's own wire and with go-sql-driver's (wire=driver), in alternating
// rounds on one schema, reporting the process's CPU per transaction
// (getrusage: user + system, the test binary is the client only) beside
// ns/op, which includes the server's time (issue 26, docs/benchmarks.md).
func BenchmarkMariaDBWire(b *testing.B) {
	u := freshMariaDB(b)
	for round := 1; round <= 3; round++ {
		for _, wire := range []string{"sledge", "driver"} {
			for _, m := range []workload.Mode{workload.ModeProcedure, workload.ModePrepared} {
				b.Run(fmt.Sprintf("%s/wire=%s/round%d", m, wire, round), func(b *testing.B) {
					w := tpcb.New(tpcb.Config{Seed: 1})
					var before, after syscall.Rusage
					_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
					txLoop(b, u+"?wire="+wire, m, w, func() workload.Terminal { return w.NewTerminal(0, 1, 1) })
					_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
					cpu := float64(tv(after.Utime)+tv(after.Stime)-tv(before.Utime)-tv(before.Stime)) / 1e3
					b.ReportMetric(cpu/float64(b.N+100), "cpu-µs/op") // 100 warm-up transactions
				})
			}
		}
	}
}

func tv(t syscall.Timeval) int64 { return t.Sec*1e9 + t.Usec*1e3 }
