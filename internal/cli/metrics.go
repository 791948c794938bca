package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/promexp"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
)

// metricsServer is `run --metrics`: /metrics over one run's live counters,
// for the run's length (and --metrics-linger after it), without the
// service (docs/metrics.md).
type metricsServer struct {
	exp    *promexp.Exporter
	srv    *http.Server
	done   chan struct{}
	linger time.Duration
	ran    bool // the run got to its end: linger for a last scrape
	jobID  int64
}

var _ runner.MetricsServer = (*metricsServer)(nil)

// startMetrics listens on addr before anything runs. A malformed address,
// a name that does not resolve or an address that is not this machine's
// is bad input (exit 2); the system refusing a good one (port in use, not
// permitted) means the run could not start (exit 1).
func startMetrics(addr string, linger time.Duration, stderr io.Writer, quiet bool) (*metricsServer, error) {
	host, port, err := net.SplitHostPort(addr)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
		return nil, usageErr("--metrics %q: want HOST:PORT, such as 127.0.0.1:9464 or :9464 (every interface)", addr)
	}
	if linger < 0 {
		return nil, usageErr("--metrics-linger must not be negative")
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		var dns *net.DNSError
		if errors.As(err, &dns) || errors.Is(err, syscall.EADDRNOTAVAIL) {
			return nil, usageErr("--metrics %s: %v", addr, err)
		}
		return nil, fmt.Errorf("--metrics %s: %w", addr, err)
	}
	m := &metricsServer{exp: promexp.New(), done: make(chan struct{}), linger: linger}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.exp.Handler())
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(m.done)
		_ = m.srv.Serve(l) // ends with ErrServerClosed when stopped
	}()
	if !quiet {
		shown := l.Addr().String()
		if host == "" || net.ParseIP(host).IsUnspecified() {
			_, p, _ := net.SplitHostPort(shown)
			shown = net.JoinHostPort("localhost", p) + " (every interface)"
		}
		fmt.Fprintf(stderr, "metrics at http://%s/metrics while the run goes on\n", shown)
	}
	return m, nil
}

// Follow exports the run's live counters under its job id (0 with
// --no-job), with the types named as in the job store.
func (m *metricsServer) Follow(id int64, w workload.Workload, url string, live *engine.Live) {
	if m == nil {
		return
	}
	mix := w.Mix()
	types := make([]string, len(mix))
	for i, t := range mix {
		types[i] = t.Name
	}
	m.jobID = id
	m.exp.Start(runner.Job{ID: id, Kind: "run", Workload: w.Name(), DB: url, TxTypes: types, Live: live})
}

// Ended marks the run's end; ran: it has a result, worth a last scrape.
func (m *metricsServer) Ended(ran bool) {
	if m == nil {
		return
	}
	m.ran = ran
	m.exp.End(m.jobID, runner.Result{})
}

// Stop lingers (after a run that ended, until ctx is cancelled) and closes
// the server, its connections included: nothing is left listening.
func (m *metricsServer) Stop(ctx context.Context) {
	if m == nil {
		return
	}
	if m.ran && m.linger > 0 {
		t := time.NewTimer(m.linger)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	_ = m.srv.Close()
	<-m.done
}
