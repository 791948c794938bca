package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/jobs"
	"github.com/sledge-bench/sledge/internal/runner"
)

// Statuses are what the API says of a job. The store's "incomplete" (its
// process died) is "interrupted" here.
var Statuses = []string{"queued", "running", "completed", "failed", "stopped", "interrupted"}

func apiStatus(s jobs.Status) string {
	if s == jobs.Incomplete {
		return string(jobs.Interrupted)
	}
	return string(s)
}

func live(s jobs.Status) bool { return s == jobs.Queued || s == jobs.Running }

// jobView is a job as the API shows it.
type jobView struct {
	ID       int64           `json:"id"`
	Kind     string          `json:"kind"`
	Status   string          `json:"status"`
	Spec     json.RawMessage `json:"spec"`
	Result   json.RawMessage `json:"result"` // what --json printed; null while queued or running
	Workload string          `json:"workload"`
	Database string          `json:"database"` // redacted
	Mode     string          `json:"mode,omitempty"`
	VUs      int             `json:"vus,omitempty"`
	Started  time.Time       `json:"started"`
	Ended    *time.Time      `json:"ended"`
	Error    string          `json:"error,omitempty"`
	DB       jobs.DBInfo     `json:"db"` // the database's driver, version, transport and settings as read
	TxTypes  []string        `json:"tx_types"`
	Host     jobs.Host       `json:"host"`
	PID      int             `json:"pid"`
	Version  string          `json:"sledge_version"`
	// StoreStatus is the store's own word where it differs ("incomplete":
	// the process died).
	StoreStatus string `json:"store_status,omitempty"`
	Service     bool   `json:"service"` // run by this service (stop cancels it directly)
}

func (s *Service) view(j *jobs.Job) jobView {
	v := jobView{ID: j.ID, Kind: j.Kind, Status: apiStatus(j.Status), Spec: j.Spec, Workload: j.Workload,
		Database: db.Redact(j.Database), Mode: j.Mode, VUs: j.VUs, Started: j.Started, Error: j.Error, DB: j.DB,
		TxTypes: j.TxTypes, Host: j.Host, PID: j.PID, Version: j.Version, Result: json.RawMessage("null")}
	if len(v.Spec) == 0 {
		v.Spec = json.RawMessage("{}")
	}
	if v.TxTypes == nil {
		v.TxTypes = []string{}
	}
	if !j.Ended.IsZero() {
		e := j.Ended
		v.Ended = &e
	}
	if !live(j.Status) && len(j.Summary) > 0 {
		v.Result = j.Summary
	}
	if string(j.Status) != v.Status {
		v.StoreStatus = string(j.Status)
	}
	s.mu.Lock()
	_, v.Service = s.active[j.ID]
	s.mu.Unlock()
	return v
}

// submission is POST /api/jobs's body: a runner.Spec and "concurrent".
var submissionKeys = []string{"version", "kind", "command", "workload", "db", "database", "options", "set", "concurrent"}

func (s *Service) postJob(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		s.fail(w, http.StatusBadRequest, "read the body: %v", err)
		return
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		s.fail(w, http.StatusBadRequest, "the body is not a JSON object: %v", err)
		return
	}
	for k := range top {
		if !slices.Contains(submissionKeys, k) {
			s.failField(w, k, "unknown key: a job is {\"kind\", \"workload\", \"db\", \"options\", \"concurrent\"}")
			return
		}
	}
	var concurrent bool
	if c, ok := top["concurrent"]; ok {
		if err := json.Unmarshal(c, &concurrent); err != nil {
			s.failField(w, "concurrent", "want true or false")
			return
		}
	}
	spec, err := runner.ParseSpec(body)
	if err == nil && s.cfg.Check != nil {
		err = s.cfg.Check(spec, s.cfg.Getenv)
	}
	if err != nil {
		var fe *runner.FieldError
		if errors.As(err, &fe) {
			s.failField(w, fe.Field, fe.Msg)
			return
		}
		s.fail(w, http.StatusBadRequest, "%s", oneLine(err.Error()))
		return
	}
	if len(spec.Set) == 0 {
		// Every option the API was given was asked for: a rerun repeats them.
		for n := range spec.Options {
			spec.Set = append(spec.Set, n)
		}
		sort.Strings(spec.Set)
	}
	s.remember(spec.DB)
	id, code, err := s.queue(r.Context(), spec, concurrent)
	if err != nil {
		s.writeJSON(w, code, map[string]any{"error": db.Redact(err.Error())})
		return
	}
	w.Header().Set("Location", "/api/jobs/"+strconv.FormatInt(id, 10))
	s.writeJSON(w, http.StatusCreated, map[string]int64{"id": id})
}

// errBusy is a database that already has a job.
type errBusy struct {
	id  int64
	url string
}

func (e *errBusy) Error() string {
	return fmt.Sprintf("job %d is queued or running on %s: one job per database at a time (add \"concurrent\": true to run beside it)", e.id, e.url)
}

// queue records the spec as a queued job and starts it. Unless
// concurrent, a database that has a queued or running job (of this
// service or any other sledge on the store) refuses it: two runs on one
// database measure each other.
func (s *Service) queue(ctx context.Context, spec runner.Spec, concurrent bool) (int64, int, error) {
	key := db.Redact(spec.DB)
	if spec.DB == "" {
		key = s.cfg.DefaultDB(spec.Workload)
	}
	s.submit.Lock()
	defer s.submit.Unlock()
	if !concurrent {
		all, err := s.store.List(ctx, 0)
		if err != nil {
			return 0, http.StatusInternalServerError, err
		}
		for _, j := range all {
			if live(j.Status) && j.Database == key && key != "" {
				return 0, http.StatusConflict, &errBusy{j.ID, key}
			}
		}
	}
	stored := spec
	stored.DB = db.Redact(spec.DB)
	sb, err := json.Marshal(stored)
	if err != nil {
		return 0, http.StatusInternalServerError, err
	}
	wl := spec.Workload
	if wl == "" {
		wl = "tpcc"
	}
	j := &jobs.Job{Kind: spec.Kind, Workload: wl, Database: key, Version: s.cfg.Version, Host: jobs.ThisHost(),
		Spec: json.RawMessage(jobs.Scrub(string(sb), jobs.Secrets(spec.DB)))}
	if err := s.store.Queue(ctx, j); err != nil {
		return 0, http.StatusInternalServerError, err
	}
	jctx, cancel := context.WithCancel(s.ctx)
	a := &active{id: j.ID, cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	s.active[j.ID] = a
	s.mu.Unlock()
	s.wg.Add(1)
	go s.run(jctx, a, spec)
	return j.ID, http.StatusCreated, nil
}

// run executes one job of this service and settles its status: stopped
// when stop was asked, failed when the executor refused it before it
// claimed the queued row.
func (s *Service) run(ctx context.Context, a *active, spec runner.Spec) {
	defer s.wg.Done()
	defer a.cancel()
	outs := append([]runner.Output{s.hub}, s.cfg.Outputs...)
	if spec.Kind == "compare" {
		outs = append(outs, cellsOf{h: s.hub, parent: a.id})
	}
	res := s.cfg.Execute(ctx, spec, runner.Exec{JobsDB: s.cfg.JobsDB, JobID: a.id, Outputs: outs, Getenv: s.cfg.Getenv})
	bg := context.Background()
	a.mu.Lock()
	stop := a.stop
	a.mu.Unlock()
	if stop {
		_, _ = s.store.SetStatus(bg, a.id, jobs.Interrupted, jobs.Stopped, "")
	} else if ctx.Err() != nil {
		// The service is shutting down: the job ended interrupted.
		_, _ = s.store.SetStatus(bg, a.id, jobs.Queued, jobs.Interrupted, "sledge serve stopped before the job started")
	}
	msg := res.Err
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", res.Code)
	}
	msg = jobs.Scrub(oneLine(msg), jobs.Secrets(spec.DB))
	_, _ = s.store.SetStatus(bg, a.id, jobs.Queued, jobs.Failed, msg)
	_, _ = s.store.SetStatus(bg, a.id, jobs.Running, jobs.Failed, msg) // the store failed under the job
	s.mu.Lock()
	delete(s.active, a.id)
	s.mu.Unlock()
	s.hub.drop(a.id)
	close(a.done)
}

func (s *Service) listJobs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	status, wl, kind := q.Get("status"), q.Get("workload"), q.Get("kind")
	dbq := q.Get("database")
	if dbq == "" {
		dbq = q.Get("db")
	}
	if status != "" && !slices.Contains(Statuses, status) {
		s.failField(w, "status", fmt.Sprintf("%q: want one of %s", status, strings.Join(Statuses, ", ")))
		return
	}
	limit := 0
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			s.failField(w, "limit", fmt.Sprintf("%q: want a whole number", l))
			return
		}
		limit = n
	}
	all, err := s.store.List(r.Context(), 0)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	out := []jobView{}
	for _, j := range all {
		v := s.view(j)
		if (status != "" && v.Status != status) || (wl != "" && v.Workload != wl) || (kind != "" && v.Kind != kind) ||
			(dbq != "" && v.Database != db.Redact(dbq)) {
			continue
		}
		if limit > 0 && len(out) == limit {
			break
		}
		out = append(out, v)
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"jobs": out})
}

// record reads the job the path names, answering 400 or 404 itself.
func (s *Service) record(w http.ResponseWriter, r *http.Request) (*jobs.Record, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		s.failField(w, "id", fmt.Sprintf("%q is not a job id", r.PathValue("id")))
		return nil, false
	}
	rec, err := s.store.Get(r.Context(), id)
	if errors.Is(err, jobs.ErrNotFound) {
		s.fail(w, http.StatusNotFound, "no job %d", id)
		return nil, false
	}
	if err != nil {
		s.fail(w, http.StatusInternalServerError, "%v", err)
		return nil, false
	}
	return rec, true
}

func (s *Service) getJob(w http.ResponseWriter, r *http.Request) {
	if rec, ok := s.record(w, r); ok {
		s.writeJSON(w, http.StatusOK, s.view(&rec.Job))
	}
}

func (s *Service) deleteJob(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.record(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	_, mine := s.active[rec.ID]
	s.mu.Unlock()
	if mine || live(rec.Status) {
		s.fail(w, http.StatusConflict, "job %d is %s: stop it first (POST /api/jobs/%d/stop)", rec.ID, rec.Status, rec.ID)
		return
	}
	if err := s.store.Delete(r.Context(), rec.ID); err != nil && !errors.Is(err, jobs.ErrNotFound) {
		s.fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// stopWait is how long stop waits for the job's end before answering 202.
const stopWait = 15 * time.Second

// stopJob stops a job: one of this service by cancelling it, a queued one
// at once, a command line's on this host by SIGTERM (it ends as on
// Ctrl-C). The job ends stopped, with what it measured.
func (s *Service) stopJob(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.record(w, r)
	if !ok {
		return
	}
	id := rec.ID
	ctx := r.Context()
	s.mu.Lock()
	a := s.active[id]
	s.mu.Unlock()
	var done <-chan struct{}
	switch {
	case a != nil:
		a.mu.Lock()
		a.stop = true
		a.mu.Unlock()
		// Not started yet: it never will (its claim fails).
		_, _ = s.store.SetStatus(ctx, id, jobs.Queued, jobs.Stopped, "stopped before it started")
		a.cancel()
		done = a.done
	case rec.Status == jobs.Queued:
		// Queued by another service on the store: its claim will fail.
		if _, err := s.store.SetStatus(ctx, id, jobs.Queued, jobs.Stopped, "stopped before it started"); err != nil {
			s.fail(w, http.StatusInternalServerError, "%v", err)
			return
		}
	case rec.Status == jobs.Running:
		ch, err := s.terminate(&rec.Job)
		if err != nil {
			s.fail(w, http.StatusConflict, "cannot stop job %d: %v", id, err)
			return
		}
		done = ch
	default:
		s.fail(w, http.StatusConflict, "job %d already ended: %s", id, apiStatus(rec.Status))
		return
	}
	code := http.StatusOK
	if done != nil {
		select {
		case <-done:
		case <-time.After(stopWait):
			code = http.StatusAccepted // still finishing its transactions in flight
		case <-ctx.Done():
			return
		}
	}
	j, err := s.store.Get(context.WithoutCancel(ctx), id)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	s.writeJSON(w, code, s.view(&j.Job))
}

// terminate sends SIGTERM to the command line process running j and
// watches for its end, to record it as stopped. It refuses processes it
// cannot prove are that job's, and other services (SIGTERM would stop
// every job they run).
func (s *Service) terminate(j *jobs.Job) (<-chan struct{}, error) {
	if j.PID == os.Getpid() {
		return nil, errors.New("it runs inside this process, not as a job of the service")
	}
	p, err := j.Process()
	if err != nil {
		return nil, err
	}
	if isServe(j.PID) {
		return nil, fmt.Errorf("it belongs to another sledge serve (pid %d): stop it there", j.PID)
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return nil, fmt.Errorf("signal pid %d: %w", j.PID, err)
	}
	done := make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(done)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		// A run stops within --stop-timeout (10 s by default) of SIGTERM.
		limit := time.After(2 * time.Minute)
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-limit:
				return
			case <-t.C:
			}
			rec, err := s.store.Get(s.ctx, j.ID)
			if err != nil {
				return
			}
			if !live(rec.Status) {
				_, _ = s.store.SetStatus(context.Background(), j.ID, jobs.Interrupted, jobs.Stopped, "")
				return
			}
		}
	}()
	return done, nil
}

// isServe reports whether pid runs `sledge serve`, from its command line.
func isServe(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	return slices.Contains(strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00"), "serve")
}

// dbView is one database the service can reach.
type dbView struct {
	URL     string     `json:"url"`    // redacted
	Source  string     `json:"source"` // default, env ($SLEDGE_DB) or jobs
	Default bool       `json:"default"`
	Driver  string     `json:"driver,omitempty"`
	Exists  *bool      `json:"exists,omitempty"` // embedded SQLite files: whether the file is there
	Jobs    int        `json:"jobs"`
	LastJob int64      `json:"last_job,omitempty"`
	LastAt  *time.Time `json:"last_used,omitempty"`
	Running bool       `json:"busy"` // a job is queued or running on it
}

func (s *Service) databases(w http.ResponseWriter, r *http.Request) {
	var out []*dbView
	byURL := map[string]*dbView{}
	add := func(u, source string, def bool) *dbView {
		u = db.Redact(u)
		if v := byURL[u]; v != nil {
			return v
		}
		v := &dbView{URL: u, Source: source, Default: def}
		if pu, err := db.ParseURL(u); err == nil {
			v.Driver = pu.Scheme
			if (pu.Scheme == "sqlite" || pu.Scheme == "duckdb") && pu.Path != "" {
				_, err := os.Stat(pu.Path)
				ok := err == nil
				v.Exists = &ok
			}
		}
		byURL[u] = v
		out = append(out, v)
		return v
	}
	if env := s.cfg.Getenv("SLEDGE_DB"); env != "" {
		add(env, "env", true)
	} else {
		for _, wl := range []string{"tpcc", "tpcb"} {
			if u := s.cfg.DefaultDB(wl); u != "" {
				add(u, "default", true)
			}
		}
	}
	all, err := s.store.List(r.Context(), 0)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	for _, j := range all {
		if j.Database == "" {
			continue
		}
		v := add(j.Database, "jobs", false)
		v.Jobs++
		if j.ID > v.LastJob {
			v.LastJob = j.ID
			t := j.Started
			v.LastAt = &t
		}
		v.Running = v.Running || live(j.Status)
	}
	if out == nil {
		out = []*dbView{}
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"databases": out})
}
