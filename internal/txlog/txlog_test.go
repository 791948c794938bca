package txlog

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/workload"
)

var end = time.Unix(1795654514, 516976_123) // …516976 µs and some ns

func TestAppendTx(t *testing.T) {
	ok := engine.TxEnd{Kind: 0, End: end, Latency: 2341*time.Microsecond + 900, Lag: 145 * time.Microsecond}
	failed := engine.TxEnd{Kind: 1, End: end, Retries: 2, Status: engine.TxFailed, Lag: time.Second}
	skipped := engine.TxEnd{Kind: 0, End: end, Status: engine.TxSkipped}
	retried := ok
	retried.Retries = 3
	for _, c := range []struct {
		name string
		cols Columns
		vu   int
		n    int64
		e    engine.TxEnd
		want string
	}{
		{"normal", Columns{}, 0, 1, ok, "0 1 2341 0 1795654514 516976\n"},
		{"failed", Columns{}, 3, 12, failed, "3 12 failed 1 1795654514 516976\n"},
		{"skipped", Columns{}, 1, 2, skipped, "1 2 skipped 0 1795654514 516976\n"},
		{"lag", Columns{Lag: true}, 0, 1, ok, "0 1 2341 0 1795654514 516976 145\n"},
		{"lag, skipped: 0", Columns{Lag: true, Skipped: true}, 0, 2, skipped, "0 2 skipped 0 1795654514 516976 0\n"},
		{"retries", Columns{Retries: true}, 2, 5, retried, "2 5 2341 0 1795654514 516976 3\n"},
		{"retries, failed", Columns{Retries: true}, 3, 12, failed, "3 12 failed 1 1795654514 516976 2\n"},
		{"lag and retries", Columns{Lag: true, Retries: true}, 0, 1, retried, "0 1 2341 0 1795654514 516976 145 3\n"},
		{"lag and retries, failed", Columns{Lag: true, Retries: true}, 3, 12, failed, "3 12 failed 1 1795654514 516976 0 2\n"},
		// --failures-detailed: the class in place of "failed".
		{"serialization", Columns{FailuresDetailed: true}, 3, 12, withClass(failed, workload.FailSerialization), "3 12 serialization 1 1795654514 516976\n"},
		{"deadlock", Columns{FailuresDetailed: true, Retries: true}, 3, 12, withClass(failed, workload.FailDeadlock), "3 12 deadlock 1 1795654514 516976 2\n"},
		{"other failure", Columns{FailuresDetailed: true}, 3, 12, failed, "3 12 failed 1 1795654514 516976\n"},
		{"class without the option", Columns{}, 3, 12, withClass(failed, workload.FailDeadlock), "3 12 failed 1 1795654514 516976\n"},
	} {
		if got := string(AppendTx(nil, c.cols, c.vu, c.n, c.e)); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func withClass(e engine.TxEnd, c workload.FailClass) engine.TxEnd {
	e.Class = c
	return e
}

func TestAppendAgg(t *testing.T) {
	tx := func(lat, lag time.Duration, retries int64, st engine.TxStatus) engine.TxEnd {
		return engine.TxEnd{End: end, Latency: lat, Lag: lag, Retries: retries, Status: st}
	}
	var b Bucket
	b.Add(tx(300*time.Microsecond, 10*time.Microsecond, 0, engine.TxOK))
	b.Add(tx(100*time.Microsecond, 30*time.Microsecond, 2, engine.TxOK))
	b.Add(tx(0, 0, 1, engine.TxFailed))
	b.Add(tx(0, 0, 0, engine.TxSkipped))
	// Merged from two VUs, the same.
	var x, y, m Bucket
	x.Add(tx(300*time.Microsecond, 10*time.Microsecond, 0, engine.TxOK))
	y.Add(tx(100*time.Microsecond, 30*time.Microsecond, 2, engine.TxOK))
	y.Add(tx(0, 0, 1, engine.TxFailed))
	x.Add(tx(0, 0, 0, engine.TxSkipped))
	m.Merge(&x)
	m.Merge(&y)
	// --failures-detailed: failures by class in the last two columns.
	var d, d1, d2 Bucket
	for _, c := range []workload.FailClass{workload.FailSerialization, workload.FailDeadlock, workload.FailDeadlock, workload.FailOther} {
		d.Add(withClass(tx(0, 0, 0, engine.TxFailed), c))
	}
	d.Add(tx(100*time.Microsecond, 0, 0, engine.TxOK))
	d1.Add(withClass(tx(0, 0, 0, engine.TxFailed), workload.FailSerialization))
	d2.Add(withClass(tx(0, 0, 0, engine.TxFailed), workload.FailDeadlock))
	d2.Add(withClass(tx(0, 0, 0, engine.TxFailed), workload.FailDeadlock))
	d1.Merge(&d2)
	for _, c := range []struct {
		name string
		cols Columns
		b    Bucket
		want string
	}{
		{"plain", Columns{}, b, "1795654514 2 400 100000 100 300 0 0 0 0 0 0 0 0 0\n"},
		{"lag", Columns{Lag: true}, b, "1795654514 2 400 100000 100 300 40 1000 10 30 0 0 0 0 0\n"},
		{"lag, skipped", Columns{Lag: true, Skipped: true}, b, "1795654514 2 400 100000 100 300 40 1000 10 30 1 0 0 0 0\n"},
		{"retries", Columns{Retries: true}, b, "1795654514 2 400 100000 100 300 0 0 0 0 0 2 3 0 0\n"},
		{"all", Columns{Lag: true, Skipped: true, Retries: true}, b, "1795654514 2 400 100000 100 300 40 1000 10 30 1 2 3 0 0\n"},
		{"merged", Columns{Lag: true, Skipped: true, Retries: true}, m, "1795654514 2 400 100000 100 300 40 1000 10 30 1 2 3 0 0\n"},
		{"empty", Columns{Lag: true, Skipped: true, Retries: true}, Bucket{}, "1795654514 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"},
		{"failures detailed", Columns{FailuresDetailed: true}, d, "1795654514 1 100 10000 100 100 0 0 0 0 0 0 0 1 2\n"},
		{"failures not detailed", Columns{}, d, "1795654514 1 100 10000 100 100 0 0 0 0 0 0 0 0 0\n"},
		{"failures merged", Columns{FailuresDetailed: true}, d1, "1795654514 0 0 0 0 0 0 0 0 0 0 0 0 1 2\n"},
	} {
		if got := string(AppendAgg(nil, c.cols, end.Unix(), &c.b)); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// Lines of several VUs, more than a buffer holds, all reach the file.
func TestLogPerTransaction(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Options{Prefix: filepath.Join(dir, "x"), PID: 42, VUs: 3})
	if err != nil {
		t.Fatal(err)
	}
	if l.Path() != filepath.Join(dir, "x.42") {
		t.Fatalf("path %s", l.Path())
	}
	l.Begin(end)
	const per = 2000
	for n := range per {
		for vu := range 3 {
			l.Tx(vu, engine.TxEnd{End: end.Add(time.Duration(n) * time.Millisecond), Latency: time.Millisecond})
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, l.Path())
	if len(lines) != 3*per {
		t.Fatalf("%d lines, want %d", len(lines), 3*per)
	}
	last := map[string]int{}
	for _, ln := range lines {
		f := strings.Fields(ln)
		if len(f) != 6 {
			t.Fatalf("line %q", ln)
		}
		last[f[0]]++
		if f[1] != itoa(last[f[0]]) {
			t.Fatalf("vu %s: transaction_no %s, want %d", f[0], f[1], last[f[0]])
		}
	}
}

// Sampling keeps about the rate's fraction, numbered among all.
func TestLogSampling(t *testing.T) {
	l, err := Open(Options{Prefix: filepath.Join(t.TempDir(), "s"), PID: 1, VUs: 1, SampleRate: 0.25, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	l.Begin(end)
	for range 4000 {
		l.Tx(0, engine.TxEnd{End: end, Latency: time.Millisecond})
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	n := len(readLines(t, l.Path()))
	if n < 800 || n > 1200 {
		t.Fatalf("%d of 4000 lines at rate 0.25", n)
	}
}

// Intervals merge the VUs', empty ones in between are written, and the
// last (incomplete) one too.
func TestLogAggregate(t *testing.T) {
	l, err := Open(Options{Prefix: filepath.Join(t.TempDir(), "a"), PID: 1, VUs: 2, Aggregate: 1})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1000, 600_000_000) // the first interval starts at 1000
	l.Begin(start)
	at := func(s float64) time.Time { return time.Unix(0, int64(s*1e9)) }
	ok := func(s float64, lat time.Duration) engine.TxEnd {
		return engine.TxEnd{End: at(s), Latency: lat}
	}
	l.Tx(0, ok(1000.7, 100*time.Microsecond))
	l.Tx(1, ok(1000.9, 300*time.Microsecond))
	l.Tx(0, ok(1001.1, 200*time.Microsecond)) // VU 1 is still in 1000: nothing written
	if got := readLines(t, l.Path()); len(got) != 0 {
		t.Fatalf("written before every VU left the interval: %q", got)
	}
	l.Tx(1, ok(1001.2, 400*time.Microsecond)) // now 1000 is done
	if got := readLines(t, l.Path()); len(got) != 1 || got[0] != "1000 2 400 100000 100 300 0 0 0 0 0 0 0 0 0" {
		t.Fatalf("after 1000: %q", got)
	}
	l.Tx(0, ok(1003.5, 500*time.Microsecond))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"1000 2 400 100000 100 300 0 0 0 0 0 0 0 0 0",
		"1001 2 600 200000 200 400 0 0 0 0 0 0 0 0 0",
		"1002 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
		"1003 1 500 250000 500 500 0 0 0 0 0 0 0 0 0",
	}
	got := readLines(t, l.Path())
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Logging a transaction allocates nothing.
func TestLogNoAllocs(t *testing.T) {
	for _, agg := range []int{0, 1} {
		l, err := Open(Options{Prefix: filepath.Join(t.TempDir(), "n"), PID: 1, VUs: 1, Aggregate: agg,
			Columns: Columns{Lag: true, Retries: true}})
		if err != nil {
			t.Fatal(err)
		}
		l.Begin(end)
		e := engine.TxEnd{End: end, Latency: time.Millisecond}
		if n := testing.AllocsPerRun(10000, func() { l.Tx(0, e) }); n != 0 {
			t.Errorf("aggregate %d: %v allocations per transaction", agg, n)
		}
		_ = l.Close()
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func itoa(n int) string { return strconv.Itoa(n) }
