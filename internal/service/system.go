package service

import (
	"net/http"
	"sync"

	"github.com/sledge-bench/sledge/internal/jobs"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/sysprobe"
)

// Issue 25 on the page: the server's CPU and where its threads were, each
// second, live (the "system" event of the events stream) and for a
// finished job (GET /api/jobs/{id}/system), from the run's sampler.

// systemPoint is one second of a sampler as the page draws it: rates over
// the second (CPU in cores), shares of thread samples.
type systemPoint struct {
	T      float64 `json:"t"`      // seconds since the job started, at the end of the second
	Source string  `json:"source"` // server, client_host
	Phase  string  `json:"phase"`
	// The server's processes (null on client_host and where not measured).
	CPUUser  *float64           `json:"cpu_user"` // cores
	CPUSys   *float64           `json:"cpu_sys"`
	Switches *float64           `json:"switches"` // per second, voluntary and involuntary
	States   map[string]float64 `json:"states"`   // cpu, runnable, network, lock, io, idle; null without samples
	Threads  int                `json:"threads"`
	// The host's CPU shares (usr, sys, iowait, idle…) and the cores that
	// other processes took.
	Host       map[string]float64 `json:"host"`
	OtherCores float64            `json:"other_cores"`
	// Cell is the compare cell's job id, on a compare's stream.
	Cell int64 `json:"cell,omitempty"`
}

func pointOf(source string, elapsedMs int64, phase string, iv sysprobe.Interval) systemPoint {
	p := systemPoint{T: float64(elapsedMs) / 1000, Source: source, Phase: phase}
	secs := iv.Seconds
	if secs <= 0 {
		secs = 1
	}
	// A client_host second's processes are sledge's own, not the server's.
	if s := iv.Server; s != nil && source == "server" {
		u, y, sw := float64(s.UserNs)/1e9/secs, float64(s.SysNs)/1e9/secs, float64(s.Voluntary+s.Involuntary)/secs
		p.CPUUser, p.CPUSys, p.Switches, p.Threads = &u, &y, &sw, s.Threads
		if n := float64(s.States.Total()); n > 0 {
			st := s.States
			p.States = map[string]float64{"cpu": float64(st.CPU) / n, "runnable": float64(st.Runnable) / n,
				"network": float64(st.Network) / n, "lock": float64(st.Lock) / n, "io": float64(st.IO) / n, "idle": float64(st.Idle) / n}
		}
	}
	c := iv.Host.CPU
	if total := float64(c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal); total > 0 {
		p.Host = map[string]float64{"usr": float64(c.User) / total, "nice": float64(c.Nice) / total, "sys": float64(c.System) / total,
			"iowait": float64(c.IOWait) / total, "irq": float64(c.IRQ) / total, "softirq": float64(c.SoftIRQ) / total,
			"steal": float64(c.Steal) / total, "idle": float64(c.Idle) / total}
	}
	p.OtherCores = float64(iv.Host.OtherCPU) / 1e9 / secs
	return p
}

// sysFeeds fans a job's system seconds out to the event streams that
// follow it, dropping seconds for a slow reader (the run never waits).
type sysFeeds struct {
	mu    sync.Mutex
	feeds map[int64]map[chan systemPoint]struct{}
}

func (f *sysFeeds) send(id int64, p systemPoint) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch := range f.feeds[id] {
		select {
		case ch <- p:
		default:
		}
	}
}

func (f *sysFeeds) subscribe(id int64) (<-chan systemPoint, func()) {
	ch := make(chan systemPoint, 8)
	f.mu.Lock()
	if f.feeds == nil {
		f.feeds = map[int64]map[chan systemPoint]struct{}{}
	}
	if f.feeds[id] == nil {
		f.feeds[id] = map[chan systemPoint]struct{}{}
	}
	f.feeds[id][ch] = struct{}{}
	f.mu.Unlock()
	return ch, func() {
		f.mu.Lock()
		delete(f.feeds[id], ch)
		if len(f.feeds[id]) == 0 {
			delete(f.feeds, id)
		}
		f.mu.Unlock()
	}
}

// System is the hub as a runner.SystemOutput: a second of a job's sampler
// goes to the streams that follow the job.
func (h *hub) System(id int64, s runner.SystemSecond) {
	h.sys.send(id, pointOf(s.Source, s.Elapsed.Milliseconds(), s.Phase, s.Second.Interval))
}

// System forwards a compare cell's seconds to the compare's stream.
func (c cellsOf) System(id int64, s runner.SystemSecond) {
	if id != c.parent {
		p := pointOf(s.Source, s.Elapsed.Milliseconds(), s.Phase, s.Second.Interval)
		p.Cell = id
		c.h.sys.send(c.parent, p)
	}
}

var (
	_ runner.SystemOutput = (*hub)(nil)
	_ runner.SystemOutput = cellsOf{}
)

func samplePoint(x jobs.SystemSample) systemPoint {
	return pointOf(x.Source, x.ElapsedMs, x.Phase, x.Interval)
}

// systemSeries is GET /api/jobs/{id}/system: the job's stored seconds of
// the server and of sledge's host, as the page draws them.
func (s *Service) systemSeries(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.record(w, r)
	if !ok {
		return
	}
	out := make([]systemPoint, 0, len(rec.System))
	for _, x := range rec.System {
		out = append(out, samplePoint(x))
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"id": rec.ID, "status": apiStatus(rec.Status), "samples": out})
}
