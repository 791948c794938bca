package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/workload"
)

// recLog records what the engine hands a transaction log.
type recLog struct {
	mu    sync.Mutex
	begun time.Time
	ends  map[int][]TxEnd
}

func (l *recLog) Begin(t time.Time) { l.begun = t }
func (l *recLog) Tx(vu int, e TxEnd) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ends == nil {
		l.ends = map[int][]TxEnd{}
	}
	l.ends[vu] = append(l.ends[vu], e)
}

// Every transaction's end reaches the log once, with its VU, type,
// latency, retries and status.
func TestTxLogHook(t *testing.T) {
	boom := errors.New("boom")
	retry := fmt.Errorf("deadlock: %w", workload.ErrRetry)
	p := plan(2, time.Millisecond, func(n int) []error {
		switch n {
		case 2:
			return []error{retry, retry} // two retries, then success
		case 3:
			return []error{boom}
		}
		return nil
	})
	p.Iterations, p.MaxRetries = 4, 5
	l := &recLog{}
	p.TxLog = l
	res, err := Run(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !l.begun.Equal(res.MeasureStart) {
		t.Errorf("Begin %v, measured from %v", l.begun, res.MeasureStart)
	}
	for vu := range 2 {
		ends := l.ends[vu]
		if len(ends) != 4 {
			t.Fatalf("VU %d: %d ends logged, want 4", vu, len(ends))
		}
		for i, e := range ends {
			n := i + 1
			wantStatus, wantRetries := TxOK, int64(0)
			switch n {
			case 2:
				wantRetries = 2
			case 3:
				wantStatus = TxFailed
			}
			if e.Status != wantStatus || e.Retries != wantRetries || e.Kind != n%2 {
				t.Errorf("VU %d transaction %d: %+v", vu, n, e)
			}
			if e.Status == TxOK && (e.Latency < time.Millisecond || e.End.Before(res.MeasureStart) || e.End.After(res.MeasureEnd)) {
				t.Errorf("VU %d transaction %d: latency %v, end %v", vu, n, e.Latency, e.End)
			}
			if e.Status != TxOK && e.Latency != 0 {
				t.Errorf("VU %d transaction %d: failed with latency %v", vu, n, e.Latency)
			}
		}
	}
}

// Under -R with -L, the transactions too late to send are logged skipped.
func TestTxLogSkipped(t *testing.T) {
	p := plan(1, 20*time.Millisecond, nil)
	// 1000 per second for a VU whose transactions take 20 ms: most are
	// already more than 5 ms behind their schedule.
	p.Iterations, p.Rate, p.LatencyLimit = 50, 1000, 5*time.Millisecond
	l := &recLog{}
	p.TxLog = l
	res, err := Run(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	var skipped, ok int64
	for _, e := range l.ends[0] {
		switch e.Status {
		case TxSkipped:
			skipped++
		case TxOK:
			ok++
			if e.Lag < 0 || e.Lag > e.Latency {
				t.Errorf("lag %v, latency %v", e.Lag, e.Latency)
			}
		}
	}
	if skipped == 0 || skipped != res.Skipped || ok != res.Stats.Total().Completed() {
		t.Errorf("logged %d skipped, %d ok; the result: %d skipped, %d completed", skipped, ok, res.Skipped, res.Stats.Total().Completed())
	}
}
