package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/interrupt"
	"github.com/sledge-bench/sledge/internal/jobs"
	"github.com/sledge-bench/sledge/internal/workload"
)

// flushEvery is how often a running job's time series and log are appended
// to the store: what a SIGKILL can lose at most, and how late `sledge
// serve` sees the counter of a job that runs in another process. One short
// WAL transaction a second costs the run nothing it could measure.
const flushEvery = time.Second

// JobRun records one build, run or check in the job store while it runs.
// A nil *JobRun (--no-job, or a store that cannot be opened) records
// nothing: every method is a no-op on it.
type JobRun struct {
	warnTo  io.Writer // the real stderr: store warnings are not part of the log
	store   *jobs.Store
	created bool // this command created the store's file
	job     jobs.Job
	spec    Spec
	secrets []string
	outs    []Output // who follows the job live (the service)
	meter   string   // the business counter's name (NOPM) and the type it counts
	meterK  int
	start   time.Time

	mu      sync.Mutex
	samples []jobs.Sample // not yet in the store
	system  []jobs.SystemSample
	lines   []jobs.LogLine
	nSample int
	nSystem int
	nLine   int
	warned  bool
	hists   []jobs.Histogram

	queuedID bool             // the job was queued by the service and claimed here
	isUsage  func(error) bool // recognises bad input that carries no type

	stopSample func()
	saved      func() // the record is no longer pending (internal/interrupt)
	stopFlush  chan struct{}
	flushDone  chan struct{}
}

// JobStart is what StartJob records a job from.
type JobStart struct {
	Kind     string // build, run, check, compare
	Workload string
	RawURL   string // the database as given: redacted before it is stored
	Spec     Spec   // the command as a spec (the URL redacted)
	Path     string // the job store
	Record   bool   // false: --no-job, nothing is recorded
	JobID    int64  // a queued job to run as (the service's); 0 a new job
	Outputs  []Output
	Stderr   io.Writer // the real stderr: store warnings are not part of the log
	Version  string    // sledge's, as jobs record it
	// IsUsage recognises bad input that carries no type (the command
	// line's parser's errors), for End's exit status.
	IsUsage func(error) bool
}

// NotRecorded warns that a job goes on without its record: the benchmark
// matters more than its record.
func NotRecorded(stderr io.Writer, kind string, err error) {
	fmt.Fprintf(stderr, "sledge: warning: this %s is not recorded: %s (--no-job skips the job store)\n", kind, oneLine(err.Error()))
}

// StartJob records a running job of the given kind, unless !Record, and
// returns the stderr the command must use: it is copied to the job's log.
// A nil *JobRun records nothing.
func StartJob(ctx context.Context, o JobStart) (*JobRun, io.Writer, error) {
	if !o.Record {
		return nil, o.Stderr, nil
	}
	ctx = context.WithoutCancel(ctx)
	_, serr := os.Stat(o.Path)
	created := os.IsNotExist(serr)
	st, err := jobs.Open(ctx, o.Path)
	if err != nil {
		// The benchmark matters more than its record: warn and go on.
		NotRecorded(o.Stderr, o.Kind, err)
		return nil, o.Stderr, nil
	}
	r := &JobRun{warnTo: o.Stderr, store: st, secrets: jobs.Secrets(o.RawURL), start: time.Now(), created: created,
		outs: o.Outputs, meterK: -1, isUsage: o.IsUsage}
	r.spec = o.Spec
	r.job = jobs.Job{ID: o.JobID, Kind: o.Kind, Workload: o.Workload, Database: db.Redact(o.RawURL), Version: o.Version,
		Host: jobs.ThisHost(), Started: r.start, Spec: r.specJSON()}
	record := st.Create
	if o.JobID != 0 {
		record = st.Claim // the service queued it: run as that job
	}
	if err := record(ctx, &r.job); err != nil {
		if o.JobID != 0 {
			// A job the service queued and then stopped or deleted: it
			// must not run unrecorded.
			_ = st.Close()
			return nil, o.Stderr, fmt.Errorf("the job was stopped or deleted before it started: %w", err)
		}
		NotRecorded(o.Stderr, o.Kind, err)
		_ = st.Close()
		return nil, o.Stderr, nil
	}
	r.queuedID = o.JobID != 0
	r.saved = interrupt.Pending(ctx, fmt.Sprintf("the result of job %d (it stays incomplete in the job store)", r.job.ID))
	r.stopFlush, r.flushDone = make(chan struct{}), make(chan struct{})
	go r.flushLoop()
	return r, &logTee{w: o.Stderr, r: r}, nil
}

// ID is the recorded job's id, 0 when none is recorded.
func (r *JobRun) ID() int64 {
	if r == nil {
		return 0
	}
	return r.job.ID
}

// StorePath is the job store's file.
func (r *JobRun) StorePath() string { return r.store.Path() }

// SetMatrix records the database and the modes of a compare.
func (r *JobRun) SetMatrix(info db.Info, modes string) {
	if r == nil {
		return
	}
	r.job.DB = DBInfo(info)
	r.job.Mode = modes
	r.update()
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func (r *JobRun) specJSON() json.RawMessage {
	b, err := json.Marshal(r.spec)
	if err != nil {
		return json.RawMessage("{}")
	}
	return json.RawMessage(jobs.Scrub(string(b), r.secrets))
}

// warn reports the first store failure once; the command goes on.
func (r *JobRun) warn(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.warned {
		r.warned = true
		fmt.Fprintf(r.warnTo, "sledge: warning: job %d may be incomplete: %s\n", r.job.ID, oneLine(err.Error()))
	}
}

func (r *JobRun) update() {
	if err := r.store.Update(context.Background(), &r.job); err != nil {
		r.warn(err)
	}
}

// SetDB records the database a build or check works on.
func (r *JobRun) SetDB(ctx context.Context, s *Session, vus int) {
	if r == nil {
		return
	}
	if info, err := s.DB.Info(ctx); err == nil {
		r.job.DB = DBInfo(info)
	}
	// A check has no mode or virtual users of its own: how it reads the
	// database is not a figure to list (jobs list shows "-").
	if r.job.Kind != "check" {
		r.job.VUs = vus
	}
	r.update()
}

func DBInfo(i db.Info) jobs.DBInfo {
	return jobs.DBInfo{Driver: i.Driver, Version: i.Version, Transport: i.Transport, Settings: i.Settings}
}

// SetRun records what a run resolved: database, mode, VUs, the seed it
// really uses (so the spec repeats the run) and the transaction types.
func (r *JobRun) SetRun(info db.Info, mode workload.Mode, vus int, seed uint64, mix []workload.TxType) {
	if r == nil {
		return
	}
	r.job.DB = DBInfo(info)
	r.job.Mode, r.job.VUs = mode.String(), vus
	r.specSeed(seed)
	if mode := mode.String(); mode != "" {
		r.spec.Options["mode"] = mode
	}
	r.job.Spec = r.specJSON()
	r.job.TxTypes = make([]string, len(mix))
	for i, t := range mix {
		r.job.TxTypes[i] = t.Name
	}
	r.update()
}

// SetAnalytic records what an analytic run (tpch) resolved: the database
// and the seed. It has no mode and no mix; in place of virtual users it
// keeps its query streams (jobs list and diff show "2 streams").
func (r *JobRun) SetAnalytic(info db.Info, streams int, seed uint64) {
	if r == nil {
		return
	}
	r.job.DB = DBInfo(info)
	r.job.Mode, r.job.VUs = "", streams
	r.specSeed(seed)
	r.job.Spec = r.specJSON()
	r.update()
}

// SetSeed records the seed a command resolved (one it picked when --seed
// was not given), so that the spec repeats it.
func (r *JobRun) SetSeed(seed uint64) {
	if r == nil {
		return
	}
	r.specSeed(seed)
	r.job.Spec = r.specJSON()
	r.update()
}

// specSeed puts the seed resolved into the spec as --seed, in place of
// --random-seed (time, rand), which would not repeat it and which --seed
// refuses beside it.
func (r *JobRun) specSeed(seed uint64) {
	r.spec.Options["seed"] = json.Number(strconv.FormatUint(seed, 10))
	kept := []string{}
	for _, n := range r.spec.Set {
		if n != "random-seed" {
			kept = append(kept, n)
		}
	}
	r.spec.Set = kept
}

// SetMeter names the business counter (NOPM) and the type whose
// completions it counts, for the outputs' ticks.
func (r *JobRun) SetMeter(name string, kind int) {
	if r != nil {
		r.meter, r.meterK = name, kind
	}
}

// Sample starts the once-a-second transaction counter of a run.
func (r *JobRun) Sample(live *engine.Live) {
	if r == nil {
		return
	}
	for _, o := range r.outs {
		o.Start(Job{ID: r.job.ID, Kind: r.job.Kind, Workload: r.job.Workload, DB: r.job.Database,
			TxTypes: r.job.TxTypes, MeterName: r.meter, MeterKind: r.meterK, Live: live})
	}
	r.stopSample = engine.Sample(live, time.Second, func(t engine.Tick) {
		r.mu.Lock()
		r.nSample++
		s := jobs.Sample{Seq: r.nSample, ElapsedMs: t.At.Sub(r.start).Milliseconds(),
			SpanMs: t.Span.Milliseconds(), Phase: t.Phase.String(), Completed: t.Completed(),
			Measured: t.Measured, Errors: t.Errors, ByType: t.ByType, Rollbacks: t.Rollbacks,
			LatencyUs: make([]int64, len(t.Latency))}
		for i, d := range t.Latency {
			s.LatencyUs[i] = d.Microseconds()
		}
		r.samples = append(r.samples, s)
		r.mu.Unlock()
		if len(r.outs) > 0 {
			tick := TickOf(s, r.meterK)
			for _, o := range r.outs {
				o.Tick(r.job.ID, tick)
			}
		}
	})
}

// SystemOutput is an Output that also follows a run's per-second system
// samples (the server's through the agent or in-process, sledge's own
// host's): the live page and /metrics. Like Output's, its method must not
// block.
type SystemOutput interface {
	System(id int64, s SystemSecond)
}

// System keeps one second of a sampler with the job's time series and
// hands it to the outputs that follow system seconds. It is the function
// a run gives to ServerCost.Follow: it never blocks on the store (the
// batch is written by the flush loop, as the transaction counter is).
func (r *JobRun) System(s SystemSecond) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.nSystem++
	r.system = append(r.system, jobs.SystemSample{Seq: r.nSystem, Source: s.Source, ElapsedMs: s.Elapsed.Milliseconds(),
		Phase: s.Phase, Interval: s.Second.Interval})
	r.mu.Unlock()
	for _, o := range r.outs {
		if so, ok := o.(SystemOutput); ok {
			so.System(r.job.ID, s)
		}
	}
}

// RunDone stops the counter as soon as the run returns and keeps the
// latency histograms of the measured interval.
func (r *JobRun) RunDone(res *engine.Result, mix []workload.TxType) {
	if r == nil {
		return
	}
	if r.stopSample != nil {
		r.stopSample()
		r.stopSample = nil
	}
	if res == nil {
		return
	}
	for i := range res.Stats {
		b, err := res.Stats[i].EncodeHistogram()
		if err != nil {
			r.warn(err)
			continue
		}
		if b != nil && i < len(mix) {
			r.hists = append(r.hists, jobs.Histogram{TxType: mix[i].Name, Unit: "us", HDR: string(b)})
		}
	}
}

// SetSummary keeps the command's result: the object --json prints. A
// result that can name its job (SetJobID) is given the job's id first, so
// that --json and the text say which job keeps it.
func (r *JobRun) SetSummary(v any) {
	if r == nil {
		return
	}
	if j, ok := v.(interface{ SetJobID(int64) }); ok {
		j.SetJobID(r.job.ID)
	}
	b, err := json.Marshal(v)
	if err != nil {
		r.warn(fmt.Errorf("summary: %w", err))
		return
	}
	r.job.Summary = json.RawMessage(jobs.Scrub(string(b), r.secrets))
}

// End records how the command ended and returns its error unchanged. A
// usage error (exit 2) removes the job: a mistyped option is not a job.
func (r *JobRun) End(ctx context.Context, err error) error {
	if r == nil {
		return err
	}
	if r.saved != nil {
		defer r.saved()
	}
	if r.stopSample != nil {
		r.stopSample()
	}
	close(r.stopFlush)
	<-r.flushDone
	bg := context.Background()
	code := ExitCode(ctx, err, r.isUsage)
	if code == ExitUsage && !r.queuedID {
		// Refused input is not a job, and leaves nothing behind: a store
		// this command created for it goes again.
		if derr := r.store.Discard(bg, r.job.ID); derr != nil {
			r.warn(derr)
		}
		if r.created {
			if left, lerr := r.store.List(bg, 1); lerr == nil && len(left) == 0 {
				path := r.store.Path()
				_ = r.store.Close()
				for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
					_ = os.Remove(path + suffix)
				}
				return err
			}
		}
		_ = r.store.Close()
		return err
	}
	defer r.store.Close()
	switch code {
	case ExitOK, ExitFailedTx, ExitThreshold:
		// A run with failed transactions or a missed threshold measured to
		// its end: its result is complete, and its error says what failed.
		r.job.Status = jobs.Completed
	case ExitInterrupted:
		r.job.Status = jobs.Interrupted
	default:
		r.job.Status = jobs.Failed
	}
	var silent Silent
	if err != nil && !errors.As(err, &silent) {
		msg := jobs.Scrub(oneLine(err.Error()), r.secrets)
		r.job.Error = msg
		r.addLine("sledge: " + msg) // as Main prints it
	}
	r.flush()
	r.job.Ended = time.Now()
	if ferr := r.store.Finish(bg, &r.job, r.hists); ferr != nil {
		r.warn(ferr)
	}
	if len(r.outs) > 0 {
		res := Result{JobID: r.job.ID, Code: code, JSON: r.job.Summary, Err: r.job.Error}
		for _, o := range r.outs {
			o.End(r.job.ID, res)
		}
	}
	return err
}

func (r *JobRun) flushLoop() {
	defer close(r.flushDone)
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-r.stopFlush:
			return
		case <-t.C:
			r.flush()
		}
	}
}

// flush appends what was sampled and logged since the last flush, in one
// short transaction.
func (r *JobRun) flush() {
	r.mu.Lock()
	b := jobs.Batch{Samples: r.samples, System: r.system, Lines: r.lines}
	r.samples, r.system, r.lines = nil, nil, nil
	r.mu.Unlock()
	if err := r.store.AppendBatch(context.Background(), r.job.ID, b); err != nil {
		r.warn(err)
	}
}

func (r *JobRun) addLine(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nLine++
	r.lines = append(r.lines, jobs.LogLine{Seq: r.nLine, ElapsedMs: time.Since(r.start).Milliseconds(),
		Line: jobs.Scrub(line, r.secrets)})
}

// logTee copies what the command writes on stderr to the job's log, line
// by line. A carriage return starts the line over, so a progress bar's
// redraws leave nothing behind.
type logTee struct {
	w   io.Writer
	r   *JobRun
	mu  sync.Mutex
	buf []byte
}

// maxLogLine bounds one stored line.
const maxLogLine = 4096

var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

func (t *logTee) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range p {
		switch c {
		case '\n':
			if line := strings.TrimRight(ansiEscape.ReplaceAllString(string(t.buf), ""), " \t"); line != "" {
				t.r.addLine(line)
			}
			t.buf = t.buf[:0]
		case '\r':
			t.buf = t.buf[:0]
		default:
			if len(t.buf) < maxLogLine {
				t.buf = append(t.buf, c)
			}
		}
	}
	return t.w.Write(p)
}
