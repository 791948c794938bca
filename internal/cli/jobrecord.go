package cli

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

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/jobs"
	"github.com/sledge-bench/sledge/internal/runner"
	"github.com/sledge-bench/sledge/internal/workload"
)

// flushEvery is how often a running job's time series and log are appended
// to the store: what a SIGKILL can lose at most, and how late `sledge
// serve` sees the counter of a job that runs in another process. One short
// WAL transaction a second costs the run nothing it could measure.
const flushEvery = time.Second

// jobsPath is --jobs-db, else $SLEDGE_JOBS_DB, else
// $XDG_DATA_HOME/sledge/jobs.db (~/.local/share/sledge/jobs.db), whose
// directory it creates.
func jobsPath(cmd *cobra.Command, env *Env) (string, error) {
	p := ""
	if f := cmd.Flag("jobs-db"); f != nil {
		p = f.Value.String()
	}
	if p == "" {
		p = env.Getenv("SLEDGE_JOBS_DB")
	}
	if p != "" {
		return p, nil
	}
	return dataFile(env, "jobs.db", "the job store", "--jobs-db PATH")
}

// jobRun records one build, run or check in the job store while it runs.
// A nil *jobRun (--no-job, or a store that cannot be opened) records
// nothing: every method is a no-op on it.
type jobRun struct {
	warnTo  io.Writer // the real stderr: store warnings are not part of the log
	store   *jobs.Store
	created bool // this command created the store's file
	job     jobs.Job
	spec    runner.Spec
	secrets []string
	outs    []runner.Output // who follows the job live (the service)
	meter   string          // the business counter's name (NOPM) and the type it counts
	meterK  int
	start   time.Time

	mu      sync.Mutex
	samples []jobs.Sample // not yet in the store
	lines   []jobs.LogLine
	nSample int
	nLine   int
	warned  bool
	hists   []jobs.Histogram

	queuedID bool // the job was queued by the service and claimed here

	stopSample func()
	stopFlush  chan struct{}
	flushDone  chan struct{}
}

// startJob records a running job of the given kind, unless --no-job, and
// returns the environment the command must use: its stderr is copied to
// the job's log.
func startJob(cmd *cobra.Command, env *Env, kind string, w workload.Workload, rawURL string) (*jobRun, *Env, error) {
	if f := cmd.Flag("no-job"); f != nil && f.Value.String() == "true" {
		return nil, env, nil
	}
	ctx := context.WithoutCancel(cmd.Context())
	path, err := jobsPath(cmd, env)
	var st *jobs.Store
	created := false
	if err == nil {
		_, serr := os.Stat(path)
		created = os.IsNotExist(serr)
		st, err = jobs.Open(ctx, path)
	}
	if err != nil {
		// The benchmark matters more than its record: warn and go on.
		fmt.Fprintf(env.Stderr, "sledge: warning: this %s is not recorded: %s (--no-job skips the job store)\n", kind, oneLine(err.Error()))
		return nil, env, nil
	}
	r := &jobRun{warnTo: env.Stderr, store: st, secrets: jobs.Secrets(rawURL), start: time.Now(), created: created,
		outs: env.Outputs, meterK: -1}
	r.spec = specOf(cmd, kind, w.Name(), rawURL)
	r.job = jobs.Job{ID: env.JobID, Kind: kind, Workload: w.Name(), Database: db.Redact(rawURL), Version: Version(),
		Host: jobs.ThisHost(), Started: r.start, Spec: r.specJSON()}
	record := st.Create
	if env.JobID != 0 {
		record = st.Claim // the service queued it: run as that job
	}
	if err := record(ctx, &r.job); err != nil {
		if env.JobID != 0 {
			// A job the service queued and then stopped or deleted: it
			// must not run unrecorded.
			_ = st.Close()
			return nil, env, fmt.Errorf("the job was stopped or deleted before it started: %w", err)
		}
		fmt.Fprintf(env.Stderr, "sledge: warning: this %s is not recorded: %s (--no-job skips the job store)\n", kind, oneLine(err.Error()))
		_ = st.Close()
		return nil, env, nil
	}
	r.queuedID = env.JobID != 0
	r.stopFlush, r.flushDone = make(chan struct{}), make(chan struct{})
	go r.flushLoop()
	jenv := *env
	jenv.Stderr = &logTee{w: env.Stderr, r: r}
	return r, &jenv, nil
}

// specOf is the command as a spec: every option with its value (the ones
// given and the defaults), with the database URL redacted.
func specOf(cmd *cobra.Command, kind, wl, rawURL string) runner.Spec {
	opts := map[string]any{}
	var set []string
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" {
			return
		}
		v := f.Value.String()
		if f.Name == "db" {
			v = db.Redact(v)
		}
		opts[f.Name] = typedValue(f.Value.Type(), v)
		if f.Changed {
			set = append(set, f.Name)
		}
	})
	if set == nil {
		set = []string{}
	}
	return runner.Spec{Version: runner.SpecVersion, Kind: kind, Workload: wl, DB: db.Redact(rawURL), Options: opts, Set: set}
}

// typedValue keeps numbers and booleans as JSON numbers and booleans.
func typedValue(typ, v string) any {
	switch {
	case typ == "bool":
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	case strings.HasPrefix(typ, "int") || strings.HasPrefix(typ, "uint") || strings.HasPrefix(typ, "float"):
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return json.Number(v)
		}
	}
	return v
}

func (r *jobRun) specJSON() json.RawMessage {
	b, err := json.Marshal(r.spec)
	if err != nil {
		return json.RawMessage("{}")
	}
	return json.RawMessage(jobs.Scrub(string(b), r.secrets))
}

// warn reports the first store failure once; the command goes on.
func (r *jobRun) warn(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.warned {
		r.warned = true
		fmt.Fprintf(r.warnTo, "sledge: warning: job %d may be incomplete: %s\n", r.job.ID, oneLine(err.Error()))
	}
}

func (r *jobRun) update() {
	if err := r.store.Update(context.Background(), &r.job); err != nil {
		r.warn(err)
	}
}

// setDB records the database a build or check works on.
func (r *jobRun) setDB(ctx context.Context, s *session, vus int) {
	if r == nil {
		return
	}
	if info, err := s.db.Info(ctx); err == nil {
		r.job.DB = dbInfo(info)
	}
	if r.job.Kind == "check" {
		r.job.Mode = s.mode.String()
	}
	r.job.VUs = vus
	r.update()
}

func dbInfo(i db.Info) jobs.DBInfo {
	return jobs.DBInfo{Driver: i.Driver, Version: i.Version, Transport: i.Transport, Settings: i.Settings}
}

// setRun records what a run resolved: database, mode, VUs, the seed it
// really uses (so the spec repeats the run) and the transaction types.
func (r *jobRun) setRun(info db.Info, mode workload.Mode, vus int, seed uint64, mix []workload.TxType) {
	if r == nil {
		return
	}
	r.job.DB = dbInfo(info)
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

// setSeed records the seed a command resolved (one it picked when --seed
// was not given), so that the spec repeats it.
func (r *jobRun) setSeed(seed uint64) {
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
func (r *jobRun) specSeed(seed uint64) {
	r.spec.Options["seed"] = json.Number(strconv.FormatUint(seed, 10))
	kept := []string{}
	for _, n := range r.spec.Set {
		if n != "random-seed" {
			kept = append(kept, n)
		}
	}
	r.spec.Set = kept
}

// setMeter names the business counter (NOPM) and the type whose
// completions it counts, for the outputs' ticks.
func (r *jobRun) setMeter(name string, kind int) {
	if r != nil {
		r.meter, r.meterK = name, kind
	}
}

// sample starts the once-a-second transaction counter of a run.
func (r *jobRun) sample(live *engine.Live) {
	if r == nil {
		return
	}
	for _, o := range r.outs {
		o.Start(runner.Job{ID: r.job.ID, Kind: r.job.Kind, Workload: r.job.Workload, DB: r.job.Database,
			TxTypes: r.job.TxTypes, MeterName: r.meter, MeterKind: r.meterK, Live: live})
	}
	r.stopSample = engine.Sample(live, time.Second, func(t engine.Tick) {
		r.mu.Lock()
		r.nSample++
		s := jobs.Sample{Seq: r.nSample, ElapsedMs: t.At.Sub(r.start).Milliseconds(),
			SpanMs: t.Span.Milliseconds(), Phase: t.Phase.String(), Completed: t.Completed(),
			Measured: t.Measured, Errors: t.Errors, ByType: t.ByType}
		r.samples = append(r.samples, s)
		r.mu.Unlock()
		if len(r.outs) > 0 {
			tick := tickOf(s, r.meterK)
			for _, o := range r.outs {
				o.Tick(r.job.ID, tick)
			}
		}
	})
}

// tickOf is a stored sample as the outputs see it: rates per minute over
// its interval, the business counter's (NOPM) from the type it counts.
func tickOf(s jobs.Sample, meterKind int) runner.Tick {
	t := runner.Tick{T: float64(s.ElapsedMs) / 1000, Span: float64(s.SpanMs) / 1000, Phase: s.Phase,
		Completed: s.Completed, Measured: s.Measured, Errors: s.Errors, ByType: s.ByType}
	if t.Span > 0 {
		t.TPM = float64(s.Completed) * 60 / t.Span
		if meterKind >= 0 && meterKind < len(s.ByType) {
			t.Meter = float64(s.ByType[meterKind]) * 60 / t.Span
		}
	}
	return t
}

// runDone stops the counter as soon as the run returns and keeps the
// latency histograms of the measured interval.
func (r *jobRun) runDone(res *engine.Result, mix []workload.TxType) {
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

// setSummary keeps the command's result: the object --json prints.
func (r *jobRun) setSummary(v any) {
	if r == nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		r.warn(fmt.Errorf("summary: %w", err))
		return
	}
	r.job.Summary = json.RawMessage(jobs.Scrub(string(b), r.secrets))
}

// end records how the command ended and returns its error unchanged. A
// usage error (exit 2) removes the job: a mistyped option is not a job.
func (r *jobRun) end(ctx context.Context, err error) error {
	if r == nil {
		return err
	}
	if r.stopSample != nil {
		r.stopSample()
	}
	close(r.stopFlush)
	<-r.flushDone
	bg := context.Background()
	code := exitCode(ctx, err)
	if code == ExitUsage && !r.queuedID {
		// Refused input is not a job, and leaves nothing behind: a store
		// this command created for it goes again.
		if derr := r.store.Delete(bg, r.job.ID); derr != nil {
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
	var silent runner.Silent
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
		res := runner.Result{JobID: r.job.ID, Code: code, JSON: r.job.Summary, Err: r.job.Error}
		for _, o := range r.outs {
			o.End(r.job.ID, res)
		}
	}
	return err
}

// exitCode is the status Main gives err.
func exitCode(ctx context.Context, err error) int { return runner.ExitCode(ctx, err, isUsage) }

func (r *jobRun) flushLoop() {
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
func (r *jobRun) flush() {
	r.mu.Lock()
	samples, lines := r.samples, r.lines
	r.samples, r.lines = nil, nil
	r.mu.Unlock()
	if err := r.store.Append(context.Background(), r.job.ID, samples, lines); err != nil {
		r.warn(err)
	}
}

func (r *jobRun) addLine(line string) {
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
	r   *jobRun
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
