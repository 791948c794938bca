// Package service is `sledge serve`: an HTTP API over the job store that
// starts, follows, stops and deletes jobs, and the page that drives it.
//
// It runs jobs through a runner.Executor (cli.Execute: runner.Execute,
// in-process, as the command line runs jobs) and never imports the command line itself. Every /api/ call
// and /metrics need the bearer token; the page's static files do not (the
// page sends the token itself).
package service

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"sync"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/jobs"
	"github.com/sledge-bench/sledge/internal/report"
	"github.com/sledge-bench/sledge/internal/runner"
)

//go:embed web
var webFS embed.FS

// Config is what a service needs from whoever starts it.
type Config struct {
	JobsDB  string // the job store file, shared with the command line
	Token   string // the bearer token every /api/ call and /metrics need
	Execute runner.Executor
	// Check refuses a spec the command would refuse (cli.CheckSpec: an
	// unknown option, a value of the wrong type), as a *runner.FieldError
	// where one field is at fault. Nil: only runner's own checks.
	Check func(s runner.Spec, getenv func(string) string) error
	// DefaultDB is the database (redacted URL) a spec without db runs on
	// for a workload: the embedded SQLite file, or $SLEDGE_DB.
	DefaultDB func(workload string) string
	Getenv    func(string) string // the environment jobs see; nil: none
	Version   string              // sledge's version, for queued jobs
	// Metrics serves /metrics behind the same token (Prometheus, from
	// internal/promexp); nil answers 404.
	Metrics http.Handler
	// Outputs follow every job this service runs, beside its own live
	// stream (the Prometheus collector).
	Outputs []runner.Output
}

// Service is a running service. Close stops its jobs.
type Service struct {
	cfg   Config
	store *jobs.Store
	hub   *hub

	ctx    context.Context // ends with Close: cancels every job
	cancel context.CancelFunc
	wg     sync.WaitGroup

	submit sync.Mutex // one submission at a time: the per-database check and the queueing are one step
	mu     sync.Mutex
	active map[int64]*active // jobs this service runs, until their end is recorded
	// secrets are the passwords of the URLs submitted to this service: a
	// last guard scrubs them from every answer.
	secrets []string
}

// active is a job this service started.
type active struct {
	id     int64
	cancel context.CancelFunc
	done   chan struct{} // closed once the job's end is in the store
	mu     sync.Mutex
	stop   bool // stop was asked: an interrupted end becomes stopped
}

// New opens the job store and returns the service.
func New(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.Execute == nil {
		return nil, errors.New("service: no executor")
	}
	if cfg.Token == "" {
		return nil, errors.New("service: empty token")
	}
	st, err := jobs.Open(ctx, cfg.JobsDB)
	if err != nil {
		return nil, fmt.Errorf("service: %w", err)
	}
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) string { return "" }
	}
	if cfg.DefaultDB == nil {
		cfg.DefaultDB = func(string) string { return "" }
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &Service{cfg: cfg, store: st, hub: newHub(), ctx: sctx, cancel: cancel, active: map[int64]*active{}}, nil
}

// Close stops every job this service runs (they end interrupted, as on
// Ctrl-C, with what they measured recorded), waits for their ends and
// closes the store.
func (s *Service) Close() error {
	s.cancel()
	s.wg.Wait()
	return s.store.Close()
}

// Handler is the service's HTTP interface: the page at /, the API under
// /api/ and /metrics.
func (s *Service) Handler() http.Handler {
	api := http.NewServeMux()
	api.HandleFunc("POST /api/jobs", s.postJob)
	api.HandleFunc("GET /api/jobs", s.listJobs)
	api.HandleFunc("GET /api/jobs/{id}", s.getJob)
	api.HandleFunc("DELETE /api/jobs/{id}", s.deleteJob)
	api.HandleFunc("POST /api/jobs/{id}/stop", s.stopJob)
	api.HandleFunc("GET /api/jobs/{id}/timeseries", s.timeseries)
	api.HandleFunc("GET /api/jobs/{id}/events", s.events)
	api.HandleFunc("GET /api/jobs/{id}/system", s.systemSeries) // system.go
	api.HandleFunc("GET /api/databases", s.databases)
	api.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, http.StatusNotFound, "no such endpoint: %s %s (see docs/serve.md)", r.Method, r.URL.Path)
	})

	root := http.NewServeMux()
	root.Handle("/api/", s.auth(api))
	// Prometheus (internal/promexp, wired in by the command line).
	root.Handle("/metrics", s.auth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Metrics == nil {
			s.fail(w, http.StatusNotFound, "no /metrics in this build")
			return
		}
		s.cfg.Metrics.ServeHTTP(w, r)
	})))
	static, _ := fs.Sub(webFS, "web")
	files := http.FileServerFS(static)
	flames := report.FlameFiles() // the flame graph's scripts, the report's copy
	root.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		// Everything the page loads is embedded: nothing from elsewhere.
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		if js, ok := flames[strings.TrimPrefix(r.URL.Path, "/")]; ok {
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			io.WriteString(w, js)
			return
		}
		files.ServeHTTP(w, r)
	}))
	return root
}

// auth lets through requests that carry the token.
func (s *Service) auth(next http.Handler) http.Handler {
	want := []byte("Bearer " + s.cfg.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sledge"`)
			msg := "missing token: send Authorization: Bearer TOKEN (sledge serve printed it, or see --token-file)"
			if len(got) > 0 {
				msg = "wrong token"
			}
			s.fail(w, http.StatusUnauthorized, "%s", msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// remember keeps the password of a submitted URL for the last guard.
func (s *Service) remember(rawURL string) {
	if sec := jobs.Secrets(rawURL); len(sec) > 0 {
		s.mu.Lock()
		s.secrets = append(s.secrets, sec...)
		s.mu.Unlock()
	}
}

func (s *Service) scrub(b []byte) []byte {
	s.mu.Lock()
	sec := s.secrets
	s.mu.Unlock()
	if len(sec) == 0 {
		return b
	}
	return []byte(jobs.Scrub(string(b), sec))
}

// writeJSON answers with v as JSON, secrets scrubbed.
func (s *Service) writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"internal error: cannot encode the answer"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(append(s.scrub(b), '\n'))
}

// fail answers with {"error": "..."}, the one shape of every error.
func (s *Service) fail(w http.ResponseWriter, code int, format string, a ...any) {
	s.writeJSON(w, code, map[string]string{"error": db.Redact(fmt.Sprintf(format, a...))})
}

// failField answers 400 naming the field at fault.
func (s *Service) failField(w http.ResponseWriter, field, msg string) {
	s.writeJSON(w, http.StatusBadRequest, map[string]string{"error": db.Redact(field + ": " + msg), "field": field})
}

// oneLine keeps the first line of a message.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
