// Package cluster is the wire between a scale-out run's coordinator and its
// workers (docs/workers.md): TCP, one JSON object per line, versioned.
// A worker says hello (its index, the number of workers, a hash of its run
// options), is accepted with the run's seed, reports ready once its
// sessions are open, and starts at the coordinator's start time; it then
// reports every second (tick: the measured interval's histograms and
// counts since the last tick, and its live counts) and once at the end
// (final). The coordinator may abort a worker at any time.
package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/metrics"
)

// Version is the protocol's version; a hello of another is refused.
const Version = 1

// DefaultPort is the coordinator's port when --listen gives none
// (Kubernetes: the coordinator's Service).
const DefaultPort = 7077

// Message types.
const (
	TypeHello  = "hello"  // worker → coordinator
	TypeAccept = "accept" // coordinator → worker: the run's seed
	TypeReady  = "ready"  // worker → coordinator: sessions open
	TypeStart  = "start"  // coordinator → workers: start time
	TypeTick   = "tick"   // worker → coordinator, every second
	TypeFinal  = "final"  // worker → coordinator, at the end
	TypeAbort  = "abort"  // coordinator → worker: stop, with a reason
	// TypeEdge: worker → coordinator, at an edge of the measured interval
	// ("start", "end"), its sessions held between transactions; TypeEdged:
	// coordinator → worker, the database's counters are read, go on.
	TypeEdge  = "edge"
	TypeEdged = "edged"
)

// Msg is every message; Type says which fields mean something.
type Msg struct {
	Type    string `json:"type"`
	Version int    `json:"v,omitempty"`
	// hello
	Index   int    `json:"index"`
	Workers int    `json:"workers,omitempty"`
	Spec    string `json:"spec,omitempty"` // hash of the run options (SpecHash)
	PID     int    `json:"pid,omitempty"`
	Host    string `json:"host,omitempty"`
	// accept
	Seed uint64 `json:"seed,omitempty"`
	// ready: the worker's share
	VUs   int    `json:"vus,omitempty"`
	Share string `json:"share,omitempty"` // "warehouses 1-5", "clients 0-3"
	// Sessions are the server's ids of the worker's sessions (PostgreSQL:
	// backend pids), so the coordinator samples where they wait.
	Sessions []int64 `json:"sessions,omitempty"`
	// start: wall clock, UnixNano
	At int64 `json:"at,omitempty"`
	// abort
	Reason string `json:"reason,omitempty"`
	// edge, edged: "start" or "end"
	Edge string `json:"edge,omitempty"`
	// tick: Types is the measured interval since the last tick (nothing
	// before it starts); Live the worker's counts of every phase so far.
	Seq        int             `json:"seq,omitempty"`
	Phase      string          `json:"phase,omitempty"`
	Types      []TxWire        `json:"types,omitempty"`
	Live       []engine.Counts `json:"live,omitempty"`
	Reconnects int64           `json:"reconnects,omitempty"`
	LatencySq  int64           `json:"latency_sq,omitempty"` // Σ latency², µs², so far (the progress line's stddev)
	// final
	Final *Final `json:"final,omitempty"`
}

// TxWire is one transaction type's metrics.TxStats on the wire: the HDR
// histogram in its encoded form (V2 compressed, base64) and the counts.
type TxWire struct {
	Hist      string        `json:"hist,omitempty"`
	Commits   int64         `json:"commits,omitempty"`
	Rollbacks int64         `json:"rollbacks,omitempty"`
	Errors    int64         `json:"errors,omitempty"`
	Retries   int64         `json:"retries,omitempty"`
	Retried   int64         `json:"retried,omitempty"`
	Wire      metrics.Wire  `json:"wire"`
	Thread    metrics.Usage `json:"thread"`
}

// Final is a worker's result: what its engine.Result holds, with its VUs
// numbered globally (1-based, as the result's).
type Final struct {
	Types         []TxWire            `json:"types"`
	Errors        []engine.ErrorCount `json:"errors,omitempty"`
	Started       int64               `json:"started"`   // UnixNano: the engine's start
	Connected     int64               `json:"connected"` // UnixNano: every session open
	MeasureStart  int64               `json:"measure_start"`
	MeasureEnd    int64               `json:"measure_end"`
	Interrupted   bool                `json:"interrupted,omitempty"`
	Skipped       int64               `json:"skipped,omitempty"`
	Late          int64               `json:"late,omitempty"`
	Lag           engine.Lag          `json:"lag"`
	ConnWait      engine.Lag          `json:"conn_wait"`
	Reconnects    int64               `json:"reconnects,omitempty"`
	ConnLost      int64               `json:"conn_lost,omitempty"`
	OutageSeconds []int               `json:"outage_seconds,omitempty"`
	Stuck         []int               `json:"stuck,omitempty"`
	Stopped       []int               `json:"stopped,omitempty"`
	Process       metrics.Usage       `json:"process"`
	ProcessOK     bool                `json:"process_ok,omitempty"`
	Wired         bool                `json:"wired,omitempty"`
	ThreadUsage   bool                `json:"thread_usage,omitempty"`
	// The edges (engine.Result.EdgeAdded, EdgeGap): transactions the
	// worker's sessions added to the server's counters by publishing them,
	// and why an edge may have missed some ("" when none).
	EdgeAdded int64  `json:"edge_added,omitempty"`
	EdgeGap   string `json:"edge_gap,omitempty"`
	// -C's connection times and the failures by pgbench's classes
	// (engine.Result.Connects, Failures; nil when none was classified).
	Connects engine.Lag          `json:"connects"`
	Failures []engine.FailCounts `json:"failures,omitempty"`
	// Queries are the analytic queries the worker's streams ended (a
	// mixed workload's, CH-benCHmark), whenever they ended: the
	// coordinator counts those inside its measured interval.
	Queries []QueryWire `json:"queries,omitempty"`
}

// QueryWire is one analytic query that ended in a worker's stream.
type QueryWire struct {
	Stream int    `json:"stream"`
	Query  int    `json:"query"`
	Start  int64  `json:"start"` // UnixNano
	End    int64  `json:"end"`
	Rows   int64  `json:"rows"`
	Err    string `json:"err,omitempty"`
}

// EncodeSet puts a set on the wire.
func EncodeSet(s metrics.Set) ([]TxWire, error) {
	out := make([]TxWire, len(s))
	for i := range s {
		st := &s[i]
		h, err := st.EncodeHistogram()
		if err != nil {
			return nil, err
		}
		out[i] = TxWire{Hist: string(h), Commits: st.Commits, Rollbacks: st.Rollbacks, Errors: st.Errors,
			Retries: st.Retries, Retried: st.Retried, Wire: st.Wire, Thread: st.Thread}
	}
	return out, nil
}

// DecodeSet reads a set of n types from the wire.
func DecodeSet(t []TxWire, n int) (metrics.Set, error) {
	if len(t) > n {
		return nil, fmt.Errorf("%d transaction types, the mix has %d", len(t), n)
	}
	s := metrics.NewSet(n)
	for i, w := range t {
		st := &s[i]
		if w.Hist != "" {
			h, err := metrics.DecodeHistogram([]byte(w.Hist))
			if err != nil {
				return nil, err
			}
			*st = *h // the histogram alone; the counts follow
		}
		st.Commits, st.Rollbacks, st.Errors, st.Retries, st.Retried = w.Commits, w.Rollbacks, w.Errors, w.Retries, w.Retried
		st.Wire, st.Thread = w.Wire, w.Thread
	}
	return s, nil
}

// maxLine bounds one message: a tick with a few dozen types' histograms.
const maxLine = 64 << 20

// Conn is one end of a coordinator–worker connection. Send is safe for
// concurrent use; Recv is for one reader.
type Conn struct {
	c   net.Conn
	r   *bufio.Reader
	mu  sync.Mutex
	enc *json.Encoder
}

// NewConn wraps an open connection.
func NewConn(c net.Conn) *Conn {
	return &Conn{c: c, r: bufio.NewReaderSize(c, 64<<10), enc: json.NewEncoder(c)}
}

// Send writes one message, waiting at most 10 s: a peer that stopped
// reading must not hold the sender.
func (c *Conn) Send(m Msg) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if err := c.enc.Encode(m); err != nil {
		return fmt.Errorf("send %s: %w", m.Type, err)
	}
	return nil
}

// Recv reads the next message, waiting until deadline (zero: no limit).
func (c *Conn) Recv(deadline time.Time) (Msg, error) {
	_ = c.c.SetReadDeadline(deadline)
	var line []byte
	for {
		part, isPrefix, err := c.r.ReadLine()
		if err != nil {
			return Msg{}, err
		}
		line = append(line, part...)
		if len(line) > maxLine {
			return Msg{}, errors.New("message too long")
		}
		if !isPrefix {
			break
		}
	}
	var m Msg
	if err := json.Unmarshal(line, &m); err != nil {
		return Msg{}, fmt.Errorf("malformed message: %w", err)
	}
	return m, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// RemoteAddr is the peer's address, for messages.
func (c *Conn) RemoteAddr() string { return c.c.RemoteAddr().String() }

// Dial connects to the coordinator at addr, trying again every half
// second until timeout: a worker pod may start before the coordinator's.
func Dial(ctx context.Context, addr string, timeout time.Duration) (*Conn, error) {
	deadline := time.Now().Add(timeout)
	var d net.Dialer
	for {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		c, err := d.DialContext(dctx, "tcp", addr)
		cancel()
		if err == nil {
			return NewConn(c), nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("connect to the coordinator at %s: no answer within %s (--worker-timeout): %w", addr, timeout, err)
		}
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
