// Package agent is sledge agent (docs/agent.md): an HTTP server on a
// database's host that serves what internal/sysprobe measures there (the
// host, the server's processes and threads, its port's traffic, on-CPU
// stacks) to a run on another machine, and the Go client a run reads it
// with, which is a sysprobe.Source like the in-process one.
//
// The API is versioned by path (/v1/…): fields are only ever added within
// a version; a request for another version's path is answered with the
// versions this agent serves, so that either side can say why they cannot
// talk.
package agent

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sledge-bench/sledge/internal/sysprobe"
)

// Name is what an agent calls itself in /v1/info ("agent").
const Name = "sledge agent"

// DefaultPort is the agent's port (--listen 127.0.0.1:7078).
const DefaultPort = 7078

// TokenEnv is where a run (not the agent, which reads only its token
// file) finds the agent's token when no --agent-token-file is given.
const TokenEnv = "SLEDGE_AGENT_TOKEN"

// MaxWatches is how many watches an agent serves at once: a few
// concurrent runs, each with one watch.
const MaxWatches = 4

// IdleTimeout closes a watch that no request has touched for this long:
// the run that opened it died or lost the network.
const IdleTimeout = 30 * time.Second

// idleTimeout is IdleTimeout, shorter in this package's tests.
var idleTimeout = IdleTimeout

// OpenFunc opens a watch: sysprobe.Open in an agent.
type OpenFunc func(ctx context.Context, t sysprobe.Target, o sysprobe.Options) (sysprobe.Source, error)

// Config is an agent's configuration.
type Config struct {
	// Version is the agent's version (runner.Version), in /v1/info.
	Version string
	// Token, when set, is required on every request as
	// "Authorization: Bearer TOKEN".
	Token string
	// AllowStacks lets runs ask for on-CPU stacks (--allow-stacks).
	AllowStacks bool
	// Open opens a watch (sysprobe.Open); Options are passed to it, with
	// AllowStacks set per watch.
	Open    OpenFunc
	Options sysprobe.Options
	// Logf reports errors, one line each (never a token); nil: none.
	Logf func(format string, a ...any)
}

// Info is the answer to GET /v1/info.
type Info struct {
	Agent    string     `json:"agent"` // "sledge agent"
	Version  string     `json:"version"`
	API      int        `json:"api"`  // the version this answer is in
	APIs     []int      `json:"apis"` // every version this agent serves
	Hostname string     `json:"hostname"`
	CPUs     int        `json:"cpus"`
	Stacks   StacksInfo `json:"stacks"`
	// Watches is how many watches the agent serves now, of MaxWatches.
	Watches    int `json:"watches"`
	MaxWatches int `json:"max_watches"`
}

// StacksInfo says whether runs can have on-CPU stacks, and why not.
type StacksInfo struct {
	Allowed bool   `json:"allowed"` // --allow-stacks
	Perf    bool   `json:"perf"`    // perf is installed
	Why     string `json:"why,omitempty"`
}

// Server is an agent: an http.Handler serving API v1 over sysprobe.
type Server struct {
	cfg    Config
	mux    *http.ServeMux
	stacks StacksInfo

	mu      sync.Mutex
	watches map[string]*watch
	opening int // slots taken by watches being opened
	closed  bool
}

// watch is one run's watch of its server's processes.
type watch struct {
	id     string
	src    sysprobe.Source
	timer  *time.Timer
	busy   int       // requests in flight (s.mu)
	last   time.Time // the last request's end (s.mu)
	stacks bool      // the run asked for stacks and may have them
}

// New returns an agent serving API v1. Close it to close its watches.
func New(cfg Config) *Server {
	if cfg.Open == nil {
		cfg.Open = openLocal
	}
	s := &Server{cfg: cfg, watches: map[string]*watch{}}
	s.stacks = stacksInfo(cfg.AllowStacks)
	mux := http.NewServeMux()
	route := func(method, path string, h http.HandlerFunc) {
		mux.HandleFunc(method+" "+path, h)
		// The same path with another method: 405 in JSON, not the mux's text.
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", method)
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: want %s", r.Method, path, method))
		})
	}
	route("GET", "/v1/info", s.info)
	route("POST", "/v1/watches", s.newWatch)
	route("GET", "/v1/watches/{id}/snapshot", s.snapshot)
	route("GET", "/v1/watches/{id}/seconds", s.seconds)
	route("POST", "/v1/watches/{id}/stacks/start", s.startStacks)
	route("POST", "/v1/watches/{id}/stacks/stop", s.stopStacks)
	route("DELETE", "/v1/watches/{id}", s.deleteWatch)
	mux.HandleFunc("/", s.notFound)
	s.mux = mux
	return s
}

// openLocal is sysprobe.Open as an OpenFunc.
func openLocal(ctx context.Context, t sysprobe.Target, o sysprobe.Options) (sysprobe.Source, error) {
	l, err := sysprobe.Open(ctx, t, o)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// ReadToken reads a token file: one token on one line (surrounding
// whitespace dropped). Its errors name the file, never the content.
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", fmt.Errorf("token file %s: %w", path, err)
	}
	token := strings.TrimSpace(string(b))
	switch {
	case token == "":
		return "", fmt.Errorf("token file %s is empty: want one token on one line", path)
	case strings.IndexFunc(token, func(r rune) bool { return r < '!' || r > '~' }) >= 0:
		return "", fmt.Errorf("token file %s: want one token on one line, of printable ASCII without spaces", path)
	}
	return token, nil
}

// stacksInfo is what /v1/info says about stacks.
func stacksInfo(allowed bool) StacksInfo {
	_, err := exec.LookPath("perf")
	si := StacksInfo{Allowed: allowed, Perf: err == nil}
	switch {
	case !allowed:
		si.Why = "the agent was started without --allow-stacks"
	case !si.Perf:
		si.Why = "perf is not installed on the agent's host"
	}
	return si
}

// Stacks says whether runs can have stacks, and why not.
func (s *Server) Stacks() StacksInfo { return s.stacks }

// ServeHTTP checks the token, then serves the request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if s.cfg.Token != "" && !s.tokenOK(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="sledge agent"`)
		writeError(w, http.StatusUnauthorized, "want Authorization: Bearer TOKEN with the agent's token")
		return
	}
	s.mux.ServeHTTP(w, r)
}

// tokenOK compares the request's token in constant time.
func (s *Server) tokenOK(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) == 1
}

var otherVersion = regexp.MustCompile(`^/v([0-9]+)(/|$)`)

// notFound answers paths the agent does not serve; a path of another API
// version says which versions it serves.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	if m := otherVersion.FindStringSubmatch(r.URL.Path); m != nil && m[1] != strconv.Itoa(sysprobe.APIVersion) {
		writeJSON(w, http.StatusNotFound, apiError{Error: fmt.Sprintf("this agent serves API v%d", sysprobe.APIVersion),
			APIs: []int{sysprobe.APIVersion}})
		return
	}
	writeError(w, http.StatusNotFound, "no such path: "+clip(r.URL.Path))
}

func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	host, _ := os.Hostname()
	s.mu.Lock()
	n := len(s.watches)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, Info{Agent: Name, Version: s.cfg.Version, API: sysprobe.APIVersion,
		APIs: []int{sysprobe.APIVersion}, Hostname: host, CPUs: runtime.NumCPU(), Stacks: s.stacks,
		Watches: n, MaxWatches: MaxWatches})
}

func (s *Server) newWatch(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is over %d bytes", MaxBody))
			return
		}
		writeError(w, http.StatusBadRequest, "read the body: "+clip(err.Error()))
		return
	}
	req, err := parseWatchRequest(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	// Take a slot before opening, so that concurrent requests cannot
	// overshoot the maximum.
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "the agent is stopping")
		return
	case len(s.watches)+s.opening >= MaxWatches:
		s.mu.Unlock()
		writeError(w, http.StatusTooManyRequests, fmt.Sprintf("the agent already serves %d watches, its maximum: let a run end first", MaxWatches))
		return
	}
	s.opening++
	s.mu.Unlock()
	opts := s.cfg.Options
	stacks := req.Stacks && s.stacks.Allowed && s.stacks.Perf
	opts.AllowStacks = stacks
	// The watch outlives this request: not the request's context.
	src, err := s.cfg.Open(context.WithoutCancel(r.Context()), req.Target, opts)
	if err != nil {
		s.mu.Lock()
		s.opening--
		s.mu.Unlock()
		code := http.StatusInternalServerError
		switch {
		case errors.Is(err, sysprobe.ErrNotFound):
			code = http.StatusNotFound
		case errors.Is(err, fs.ErrPermission):
			code = http.StatusForbidden
		default:
			s.logf("open a watch of %s: %v", describe(req.Target), err)
		}
		writeError(w, code, clip(err.Error()))
		return
	}
	wt := &watch{id: newID(), src: src, last: time.Now(), stacks: stacks}
	s.mu.Lock()
	s.opening--
	if s.closed {
		s.mu.Unlock()
		_ = src.Close()
		writeError(w, http.StatusServiceUnavailable, "the agent is stopping")
		return
	}
	s.watches[wt.id] = wt
	wt.timer = time.AfterFunc(idleTimeout, func() { s.expire(wt) })
	s.mu.Unlock()
	found := src.Found()
	if found == nil {
		found = []sysprobe.Process{}
	}
	hz := s.cfg.Options.StateHz
	if hz <= 0 {
		hz = sysprobe.StateHz
	}
	si := s.stacks
	if !req.Stacks && si.Why == "" {
		si.Why = "the watch did not ask for stacks"
	}
	writeJSON(w, http.StatusCreated, WatchAnswer{ID: wt.id, Found: found, StateHz: hz, Stacks: si})
}

// describe names a target for a log line.
func describe(t sysprobe.Target) string {
	switch {
	case t.Port != 0:
		return fmt.Sprintf("port %d", t.Port)
	case t.PID != 0:
		return fmt.Sprintf("pid %d", t.PID)
	}
	return "process " + strconv.Quote(t.Process)
}

func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// use finds the request's watch and marks it busy; done marks the end of
// the request. A watch in use is never closed for being idle.
func (s *Server) use(w http.ResponseWriter, r *http.Request) (wt *watch, done func()) {
	id := r.PathValue("id")
	s.mu.Lock()
	wt = s.watches[id]
	if wt == nil {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, noWatch(id))
		return nil, nil
	}
	wt.busy++
	s.mu.Unlock()
	return wt, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		wt.busy--
		wt.last = time.Now()
		if s.watches[wt.id] == wt {
			wt.timer.Reset(idleTimeout)
		}
	}
}

// noWatch is the 404 of a watch the agent does not have.
func noWatch(id string) string {
	return "no watch " + clip(id) + ": it ended, or was closed after " + idleTimeout.String() + " without a request"
}

// expire closes a watch no request has touched for idleTimeout.
func (s *Server) expire(wt *watch) {
	s.mu.Lock()
	if s.watches[wt.id] != wt {
		s.mu.Unlock()
		return
	}
	// A request in flight re-arms the timer when it ends; a request that
	// ended after the timer fired counts from its end.
	if idle := time.Since(wt.last); wt.busy > 0 || idle < idleTimeout {
		if wt.busy == 0 {
			wt.timer.Reset(idleTimeout - idle)
		}
		s.mu.Unlock()
		return
	}
	delete(s.watches, wt.id)
	s.mu.Unlock()
	s.logf("watch %s closed: no request for %s (its run ended without closing it, or lost the network)", wt.id, idleTimeout)
	if err := wt.src.Close(); err != nil {
		s.logf("close watch %s: %v", wt.id, err)
	}
}

func (s *Server) snapshot(w http.ResponseWriter, r *http.Request) {
	wt, done := s.use(w, r)
	if wt == nil {
		return
	}
	defer done()
	snap, err := wt.src.Snapshot(r.Context())
	if err != nil {
		s.failed(w, wt, "snapshot", err)
		return
	}
	writeJSON(w, http.StatusOK, snap)
}

func (s *Server) seconds(w http.ResponseWriter, r *http.Request) {
	var after int64
	if a := r.URL.Query().Get("after"); a != "" {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "after="+clip(a)+": want a second's seq, 0 or more")
			return
		}
		after = n
	}
	wt, done := s.use(w, r)
	if wt == nil {
		return
	}
	defer done()
	secs, err := wt.src.Seconds(r.Context(), after)
	if err != nil {
		s.failed(w, wt, "seconds", err)
		return
	}
	if secs == nil {
		secs = []sysprobe.Second{}
	}
	writeJSON(w, http.StatusOK, secs)
}

func (s *Server) startStacks(w http.ResponseWriter, r *http.Request) {
	wt, done := s.use(w, r)
	if wt == nil {
		return
	}
	defer done()
	if !wt.stacks {
		writeError(w, http.StatusConflict, "no stacks: "+s.noStacks(wt))
		return
	}
	if err := wt.src.StartStacks(r.Context()); err != nil {
		// Stacks are a bonus: the run is told why in one line and goes on.
		writeError(w, http.StatusConflict, "no stacks: "+clip(err.Error()))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) stopStacks(w http.ResponseWriter, r *http.Request) {
	wt, done := s.use(w, r)
	if wt == nil {
		return
	}
	defer done()
	if !wt.stacks {
		writeError(w, http.StatusConflict, "no stacks: "+s.noStacks(wt))
		return
	}
	// perf is stopped even when the run gave up waiting.
	f, err := wt.src.StopStacks(context.WithoutCancel(r.Context()))
	if err != nil {
		writeError(w, http.StatusConflict, "no stacks: "+clip(err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, f)
}

// noStacks says why a watch has no stacks.
func (s *Server) noStacks(wt *watch) string {
	if s.stacks.Why != "" {
		return s.stacks.Why
	}
	return "the watch did not ask for stacks"
}

func (s *Server) deleteWatch(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	wt := s.watches[id]
	delete(s.watches, id)
	s.mu.Unlock()
	if wt == nil {
		writeError(w, http.StatusNotFound, noWatch(id))
		return
	}
	wt.timer.Stop()
	if err := wt.src.Close(); err != nil {
		s.logf("close watch %s: %v", wt.id, err)
	}
	w.WriteHeader(http.StatusNoContent)
}

// failed answers a watch's read that failed: 500, and a log line.
func (s *Server) failed(w http.ResponseWriter, wt *watch, what string, err error) {
	if errors.Is(err, context.Canceled) {
		return // the run hung up
	}
	s.logf("watch %s: %s: %v", wt.id, what, err)
	writeError(w, http.StatusInternalServerError, what+": "+clip(err.Error()))
}

// Close closes every watch (and any perf they started); later watch
// requests are refused.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	ws := s.watches
	s.watches = map[string]*watch{}
	s.mu.Unlock()
	var errs []error
	for _, wt := range ws {
		wt.timer.Stop()
		if err := wt.src.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close watch %s: %w", wt.id, err))
		}
	}
	return errors.Join(errs...)
}

// Watches is how many watches are open.
func (s *Server) Watches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watches)
}

func (s *Server) logf(format string, a ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, a...)
	}
}

// apiError is every error's body: {"error":"one line"}.
type apiError struct {
	Error string `json:"error"`
	APIs  []int  `json:"apis,omitempty"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, apiError{Error: msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
