package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/jobs"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
)

// tickJSON is one second of a running job, as the events stream and the
// time series show it.
type tickJSON struct {
	T         float64  `json:"t"` // seconds since the job started
	TPM       float64  `json:"tpm"`
	NOPM      *float64 `json:"nopm"` // null where the workload has no business counter
	Phase     string   `json:"phase"`
	Completed int64    `json:"completed"`
	Measured  int64    `json:"measured"`
	Errors    int64    `json:"errors"`
	ByType    []int64  `json:"by_type"`
	// MeanMs is the second's mean latency, all types, as the client
	// measured it (null when nothing completed or it was not recorded);
	// MeanMsByType per type.
	MeanMs       *float64  `json:"mean_ms"`
	MeanMsByType []float64 `json:"mean_ms_by_type,omitempty"`
	// Cell is the job id of the compare cell the tick comes from, on a
	// compare job's stream (its cells are runs with ids of their own).
	Cell int64 `json:"cell,omitempty"`
}

// hub is the runner.Output of the service's jobs: it fans each tick out
// to the event streams that follow the job, dropping ticks for a
// subscriber that has not taken the last ones (the run never waits).
type hub struct {
	mu    sync.Mutex
	feeds map[int64]map[chan tickJSON]struct{}
	meter map[int64]int // the type NOPM counts, -1 none
	sys   sysFeeds      // the jobs' system seconds (system.go)
}

func newHub() *hub {
	return &hub{feeds: map[int64]map[chan tickJSON]struct{}{}, meter: map[int64]int{}}
}

func (h *hub) Start(j runner.Job) {
	h.mu.Lock()
	h.meter[j.ID] = j.MeterKind
	h.mu.Unlock()
}

func (h *hub) Tick(id int64, t runner.Tick) { h.tick(id, 0, t) }

// tick sends t to the streams of job id; cell, when not 0, is the compare
// cell it comes from.
func (h *hub) tick(id, cell int64, t runner.Tick) {
	msg := tickJSON{T: t.T, TPM: t.TPM, Phase: t.Phase, Completed: t.Completed, Measured: t.Measured,
		Errors: t.Errors, ByType: t.ByType, Cell: cell, MeanMs: meanOf(t), MeanMsByType: t.MeanMsByType}
	h.mu.Lock()
	defer h.mu.Unlock()
	if k, ok := h.meter[id]; ok && k >= 0 {
		m := t.Meter
		msg.NOPM = &m
	}
	for ch := range h.feeds[id] {
		select {
		case ch <- msg:
		default: // a slow reader loses this tick, not the run its pace
		}
	}
}

func (h *hub) End(int64, runner.Result) {} // the service learns the end from the executor

// cellsOf forwards the ticks of a compare's cells to the compare's own
// stream, each marked with its cell, so that following a compare shows
// its cells one after another.
type cellsOf struct {
	h      *hub
	parent int64
}

func (c cellsOf) Start(j runner.Job) {
	if j.ID != c.parent {
		c.h.mu.Lock()
		c.h.meter[c.parent] = j.MeterKind
		c.h.mu.Unlock()
	}
}

func (c cellsOf) Tick(id int64, t runner.Tick) {
	if id != c.parent {
		c.h.tick(c.parent, id, t)
	}
}

func (c cellsOf) End(int64, runner.Result) {}

func (h *hub) subscribe(id int64) (<-chan tickJSON, func()) {
	ch := make(chan tickJSON, 8)
	h.mu.Lock()
	if h.feeds[id] == nil {
		h.feeds[id] = map[chan tickJSON]struct{}{}
	}
	h.feeds[id][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.feeds[id], ch)
		h.mu.Unlock()
	}
}

func (h *hub) drop(id int64) {
	h.mu.Lock()
	delete(h.meter, id)
	h.mu.Unlock()
}

// meterOf is the business counter of a workload (NOPM) and the index of
// the transaction type it counts, -1 when it has none.
func meterOf(wl string) (string, int) {
	m, err := workload.Lookup(wl)
	if err != nil {
		return "", -1
	}
	w, err := m.Flags("run", pflag.NewFlagSet("", pflag.ContinueOnError))(1)
	if err != nil {
		return "", -1
	}
	mt, ok := w.(workload.Meter)
	k, ok2 := w.(workload.MeterTxn)
	if !ok || !ok2 {
		return "", -1
	}
	return mt.MeterName(), k.MeterKind()
}

// sampleTick is a stored sample as a tick: rates per minute over its span.
func sampleTick(x jobs.Sample, meterKind int) tickJSON {
	t := tickJSON{T: float64(x.ElapsedMs) / 1000, Phase: x.Phase, Completed: x.Completed, Measured: x.Measured,
		Errors: x.Errors, ByType: x.ByType}
	if t.ByType == nil {
		t.ByType = []int64{}
	}
	rt := runner.TickOf(x, meterKind)
	t.TPM, t.MeanMs, t.MeanMsByType = rt.TPM, meanOf(rt), rt.MeanMsByType
	nopm := rt.Meter
	if meterKind >= 0 {
		t.NOPM = &nopm
	}
	return t
}

// meanOf is a tick's mean latency, nil when nothing was measured.
func meanOf(t runner.Tick) *float64 {
	if t.MeanMsByType == nil || t.Completed == 0 {
		return nil
	}
	m := t.MeanMs
	return &m
}

// sampleJSON is a stored sample with its rates, for the charts.
type sampleJSON struct {
	jobs.Sample
	TPM    float64  `json:"tpm"`
	NOPM   *float64 `json:"nopm"`
	MeanMs *float64 `json:"mean_ms"`
}

func (s *Service) timeseries(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.record(w, r)
	if !ok {
		return
	}
	name, k := meterOf(rec.Workload)
	out := make([]sampleJSON, 0, len(rec.Samples))
	for _, x := range rec.Samples {
		t := sampleTick(x, k)
		if x.ByType == nil {
			x.ByType = []int64{}
		}
		out = append(out, sampleJSON{Sample: x, TPM: t.TPM, NOPM: t.NOPM, MeanMs: t.MeanMs})
	}
	types := rec.TxTypes
	if types == nil {
		types = []string{}
	}
	var meter any
	if k >= 0 {
		meter = name
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"id": rec.ID, "status": apiStatus(rec.Status),
		"tx_types": types, "meter": meter, "samples": out})
}

// pollEvery is how often a job of another process is read from the store.
const pollEvery = time.Second

// events streams a job as Server-Sent Events: "tick" each second while it
// runs, "system" with each second of the server's and sledge's host's
// sampler (system.go), then "done" with its result (what --json printed,
// or null).
func (s *Service) events(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.record(w, r)
	if !ok {
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, http.StatusInternalServerError, "streaming is not supported here")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(event string, v any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte("null")
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, s.scrub(b)); err != nil {
			return false
		}
		fl.Flush()
		return true
	}
	ctx := r.Context()
	done := func() {
		res := json.RawMessage("null")
		if j, err := s.store.Get(context.WithoutCancel(ctx), rec.ID); err == nil && !live(j.Status) && len(j.Summary) > 0 {
			res = j.Summary
		}
		send("done", res)
	}
	if !live(rec.Status) {
		done()
		return
	}
	s.mu.Lock()
	a := s.active[rec.ID]
	s.mu.Unlock()
	if a != nil {
		ticks, unsubscribe := s.hub.subscribe(rec.ID)
		defer unsubscribe()
		sys, unsubscribeSys := s.hub.sys.subscribe(rec.ID)
		defer unsubscribeSys()
		for {
			select {
			case <-ctx.Done():
				return
			case t := <-ticks:
				if !send("tick", t) {
					return
				}
			case p := <-sys:
				if !send("system", p) {
					return
				}
			case <-a.done:
				done()
				return
			}
		}
	}
	// A job of another process (the command line): follow the samples it
	// appends to the store.
	_, k := meterOf(rec.Workload)
	last, lastSys := 0, 0
	for _, x := range rec.Samples {
		last = max(last, x.Seq) // what happened before the stream opened is in /timeseries
	}
	for _, x := range rec.System {
		lastSys = max(lastSys, x.Seq) // and in /system
	}
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cur, err := s.store.Get(ctx, rec.ID)
		if errors.Is(err, jobs.ErrNotFound) {
			send("done", nil)
			return
		}
		if err != nil {
			return
		}
		for _, x := range cur.Samples {
			if x.Seq > last {
				last = x.Seq
				if !send("tick", sampleTick(x, k)) {
					return
				}
			}
		}
		for _, x := range cur.System {
			if x.Seq > lastSys {
				lastSys = x.Seq
				if !send("system", samplePoint(x)) {
					return
				}
			}
		}
		if !live(cur.Status) {
			done()
			return
		}
	}
}
