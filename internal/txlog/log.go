package txlog

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/sledge-bench/sledge/internal/engine"
)

// DefaultPrefix is pgbench's log file prefix.
const DefaultPrefix = "pgbench_log"

// Options say which log to write.
type Options struct {
	Prefix string // file name before ".PID"; "": DefaultPrefix
	PID    int    // the process id in the file name
	VUs    int
	// Aggregate, when > 0, writes one line per interval of this many
	// seconds instead of one per transaction (--aggregate-interval).
	Aggregate int
	// SampleRate, when in (0, 1), logs only this fraction of the
	// transactions, drawn at random (--sampling-rate); 0: all.
	SampleRate float64
	Seed       uint64 // of the sampling draws
	Columns    Columns
}

// Path is the log file's name, as pgbench names its first thread's.
func Path(prefix string, pid int) string {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return prefix + "." + strconv.Itoa(pid)
}

// bufSize is each VU's buffer: a line is at most about 120 bytes, so a
// line never makes it grow; it is written out when less than lineMax is left.
const (
	bufSize = 32 << 10
	lineMax = 256
)

// Log is one log file that the VUs of a run share: an engine.TxLog.
type Log struct {
	opt  Options
	path string
	vus  []*vuLog

	mu     sync.Mutex // guards what follows: the file and the merged intervals
	f      *os.File
	err    error
	closed bool
	// Aggregation: base is the first interval's start (Unix µs, a whole
	// second, as pgbench), step the interval; pending holds the intervals
	// from next on, merged from the VUs that have left them; at is the
	// interval each VU is in. An interval is written once every VU has
	// left it, and the rest at Close.
	base, step int64
	pending    []Bucket
	next       int64
	at         []int64
	line       []byte
}

// vuLog is what one VU writes through: its own goroutine only.
type vuLog struct {
	buf []byte
	n   int64      // transactions so far (pgbench's transaction_no)
	rng *rand.Rand // sampling
	cur int64      // aggregation: the interval of agg
	agg Bucket
	_   [64]byte // no false sharing between VUs
}

// Open creates the log file (truncating one of the same name, as pgbench).
func Open(opt Options) (*Log, error) {
	if opt.VUs < 1 {
		return nil, errors.New("txlog: no virtual users")
	}
	l := &Log{opt: opt, path: Path(opt.Prefix, opt.PID)}
	f, err := os.Create(l.path)
	if err != nil {
		return nil, fmt.Errorf("could not open log file %q: %w", l.path, err)
	}
	l.f = f
	l.vus = make([]*vuLog, opt.VUs)
	for i := range l.vus {
		v := &vuLog{}
		if opt.Aggregate == 0 {
			v.buf = make([]byte, 0, bufSize)
		}
		if opt.SampleRate > 0 {
			v.rng = rand.New(rand.NewPCG(opt.Seed, uint64(i)+0x5a3b1e))
		}
		l.vus[i] = v
	}
	if opt.Aggregate > 0 {
		l.step = int64(opt.Aggregate) * 1_000_000
		l.at = make([]int64, opt.VUs)
	}
	return l, nil
}

// Path is the file's name.
func (l *Log) Path() string { return l.path }

// Begin sets the first interval's start: the start of the measured
// interval, rounded down to a whole second as pgbench does.
func (l *Log) Begin(t time.Time) {
	l.mu.Lock()
	l.base = t.Unix() * 1_000_000
	l.mu.Unlock()
}

// Tx logs one transaction of VU vu (0-based: pgbench's client_id).
func (l *Log) Tx(vu int, e engine.TxEnd) {
	v := l.vus[vu]
	v.n++
	if l.step > 0 {
		l.aggregate(vu, v, e)
		return
	}
	if v.rng != nil && v.rng.Float64() > l.opt.SampleRate {
		return
	}
	v.buf = AppendTx(v.buf, l.opt.Columns, vu, v.n, e)
	if cap(v.buf)-len(v.buf) < lineMax {
		l.write(v)
	}
}

// write writes v's buffer out.
func (l *Log) write(v *vuLog) {
	l.mu.Lock()
	if l.err == nil && !l.closed {
		_, l.err = l.f.Write(v.buf)
	}
	l.mu.Unlock()
	v.buf = v.buf[:0]
}

func (l *Log) aggregate(vu int, v *vuLog, e engine.TxEnd) {
	// base is read without the lock: Begin happened before the
	// measured interval, and so before any Tx.
	i := (e.End.UnixMicro() - l.base) / l.step
	if i > v.cur {
		l.mu.Lock()
		l.leave(vu, v, i)
		l.flushDone()
		l.mu.Unlock()
	}
	v.agg.Add(e)
}

// leave merges v's interval into the pending ones and moves it to
// interval i. With l.mu held.
func (l *Log) leave(vu int, v *vuLog, i int64) {
	if k := v.cur - l.next; k >= 0 {
		for int64(len(l.pending)) <= k {
			l.pending = append(l.pending, Bucket{})
		}
		l.pending[k].Merge(&v.agg)
	}
	v.agg = Bucket{}
	v.cur = i
	l.at[vu] = i
}

// flushDone writes the intervals every VU has left. With l.mu held.
func (l *Log) flushDone() {
	done := l.at[0]
	for _, i := range l.at[1:] {
		done = min(done, i)
	}
	l.writeUpTo(done)
}

// writeUpTo writes the intervals before end. With l.mu held.
func (l *Log) writeUpTo(end int64) {
	l.line = l.line[:0]
	for ; l.next < end; l.next++ {
		var b Bucket
		if len(l.pending) > 0 {
			b = l.pending[0]
			l.pending = l.pending[1:]
		}
		l.line = AppendAgg(l.line, l.opt.Columns, (l.base+l.next*l.step)/1_000_000, &b)
	}
	if len(l.line) > 0 && l.err == nil {
		_, l.err = l.f.Write(l.line)
	}
}

// Close writes what is left and closes the file; it reports the first
// error writing it. The VUs must have stopped logging (engine.Run has
// returned).
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.err
	}
	if l.step > 0 {
		// The last interval is written too, complete or not (pgbench
		// leaves it out): the file holds every transaction.
		last, any := int64(0), false
		for vu, v := range l.vus {
			last = max(last, v.cur)
			any = any || v.n > 0
			l.leave(vu, v, v.cur)
		}
		if any {
			l.writeUpTo(last + 1)
		}
	} else {
		for _, v := range l.vus {
			if len(v.buf) > 0 && l.err == nil {
				_, l.err = l.f.Write(v.buf)
			}
			v.buf = v.buf[:0]
		}
	}
	l.closed = true
	if err := l.f.Close(); l.err == nil {
		l.err = err
	}
	if l.err != nil {
		l.err = fmt.Errorf("log file %s: %w", l.path, l.err)
	}
	return l.err
}
