// Package jobs keeps every build, run and check as a job in a local SQLite
// file: what was asked (the spec, secrets redacted), where and on what it
// ran (database, settings, host), how it ended, its summary, latency
// histograms, once-a-second transaction counter, once-a-second samples of
// the server and of sledge's own host, and log.
//
// The store is written while the job runs: the row first (status running,
// with the process id), then the time series and the log in short
// transactions, then the end. A process that dies leaves its row running;
// readers see that its process is gone and report the job as incomplete.
// WAL mode and transactions keep the file consistent whatever happens to a
// writer.
package jobs

import (
	"context"
	"database/sql"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/db/sqlite" // the Go SQLite driver of this build
	"github.com/sledge-bench/sledge/internal/sysprobe"
)

//go:embed schema.sql
var schemaSQL string

// schemaVersion is the PRAGMA user_version schema.sql creates. A store
// written by a newer sledge is refused rather than misread.
const schemaVersion = 4

// Status is where a job is.
type Status string

const (
	Running     Status = "running"     // its process is working on it
	Completed   Status = "completed"   // ended normally
	Interrupted Status = "interrupted" // stopped by Ctrl-C or SIGTERM; what was measured is kept
	Failed      Status = "failed"      // ended with an error
	Incomplete  Status = "incomplete"  // its process died (SIGKILL, crash, power loss) while running
	Queued      Status = "queued"      // the service accepted it and has not started it yet
	Stopped     Status = "stopped"     // stopped on request (the service's stop): what was measured is kept
)

// ErrNotFound is returned for a job id the store does not hold.
var ErrNotFound = errors.New("no such job")

// DBInfo is the database a job ran against.
type DBInfo struct {
	Driver    string            `json:"driver,omitempty"`
	Version   string            `json:"version,omitempty"`
	Transport string            `json:"transport,omitempty"`
	Settings  map[string]string `json:"settings,omitempty"`
}

// Job is one job's row: everything but its time series, histograms and log.
type Job struct {
	ID       int64           `json:"id"`
	Kind     string          `json:"kind"` // build, run, check
	Workload string          `json:"workload"`
	Database string          `json:"database"` // URL, password redacted
	Mode     string          `json:"mode,omitempty"`
	VUs      int             `json:"vus,omitempty"`
	Status   Status          `json:"status"`
	Error    string          `json:"error,omitempty"`
	Started  time.Time       `json:"started"`
	Ended    time.Time       `json:"ended,omitzero"`
	PID      int             `json:"pid"`
	Version  string          `json:"sledge_version"`
	Spec     json.RawMessage `json:"spec"`
	DB       DBInfo          `json:"db"`
	Host     Host            `json:"host"`
	TxTypes  []string        `json:"tx_types"`
	Summary  json.RawMessage `json:"summary,omitempty"`

	procStart string
}

// Duration is how long the job ran (so far, while running).
func (j *Job) Duration() time.Duration {
	if j.Ended.IsZero() {
		return time.Since(j.Started)
	}
	return j.Ended.Sub(j.Started)
}

// Sample is one interval of the transaction counter.
type Sample struct {
	Seq       int     `json:"seq"`
	ElapsedMs int64   `json:"elapsed_ms"` // since the job started, at the end of the interval
	SpanMs    int64   `json:"span_ms"`    // length of the interval
	Phase     string  `json:"phase"`
	Completed int64   `json:"completed"` // commits and rollbacks, all types
	Measured  int64   `json:"measured"`  // of those, completed in the measured interval
	Errors    int64   `json:"errors"`
	ByType    []int64 `json:"by_type"` // completed per type, in TxTypes order
	// Rollbacks are the ByType that rolled back on purpose, per type
	// (TPC-C's 1% of New-Orders): NOPM leaves them out. Empty in samples
	// of a store older than schema version 2.
	Rollbacks []int64 `json:"rollbacks,omitempty"`
	// LatencyUs is the sum of the latencies of ByType's transactions, per
	// type, in microseconds: with ByType, the second's mean latency. Empty
	// in samples of a store older than schema version 3.
	LatencyUs []int64 `json:"latency_us,omitempty"`
}

// SystemSample is one second of a sampler during a run (issue 25): the
// server's processes and host (Source "server", through sledge agent or
// read in-process) or sledge's own host ("client_host").
type SystemSample struct {
	Seq       int    `json:"seq"` // 1, 2, … in the order received, all sources
	Source    string `json:"source"`
	ElapsedMs int64  `json:"elapsed_ms"` // since the job started, at the end of the second
	Phase     string `json:"phase"`
	// Interval is the second's counters as deltas and gauges at its end
	// (sysprobe's wire format).
	Interval sysprobe.Interval `json:"interval"`
}

// Batch is what a running job appends in one short transaction.
type Batch struct {
	Samples []Sample
	System  []SystemSample
	Lines   []LogLine
}

// LogLine is one line the command printed on stderr.
type LogLine struct {
	Seq       int    `json:"seq"`
	ElapsedMs int64  `json:"elapsed_ms"`
	Line      string `json:"line"`
}

// Histogram is one transaction type's latency histogram.
type Histogram struct {
	TxType string `json:"tx_type"`
	Unit   string `json:"unit"` // "us"
	HDR    string `json:"hdr"`  // HdrHistogram V2 compressed, base64
}

// Record is a whole job.
type Record struct {
	Job
	Samples []Sample `json:"samples"`
	// System is the server's and sledge's own host's seconds, in the
	// order received; empty for jobs before schema version 4 or without
	// a sampler.
	System     []SystemSample `json:"system_samples"`
	Histograms []Histogram    `json:"histograms"`
	Log        []LogLine      `json:"log"`
}

// Store is an open job store. Its methods are safe for concurrent use.
type Store struct {
	db   *sql.DB
	path string
}

// Path is the store's file.
func (s *Store) Path() string { return s.path }

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// pragmas run on every connection: wait for other sledge processes instead
// of failing with SQLITE_BUSY; the write-ahead log, so that a writer killed
// mid-transaction leaves the last committed state (NORMAL sync is safe from
// corruption in WAL mode and loses at most the last commits on power loss).
var pragmas = []string{
	"PRAGMA busy_timeout = 10000",
	"PRAGMA journal_mode = WAL",
	"PRAGMA synchronous = NORMAL",
	"PRAGMA foreign_keys = ON",
}

// Open opens the store at path, creating the file and its schema when
// missing. The directory must exist.
func Open(ctx context.Context, path string) (*Store, error) {
	d := sqlite.OpenFile(path, pragmas...)
	// One connection: writes of this process queue in Go, and the busy
	// timeout only has to cover other processes.
	d.SetMaxOpenConns(1)
	s := &Store{db: d, path: path}
	if err := s.migrate(ctx); err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("job store %s: %w", path, err)
	}
	return s, nil
}

func (s *Store) migrate(ctx context.Context) error {
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	switch {
	case v == schemaVersion:
		return nil
	case v > schemaVersion:
		return fmt.Errorf("written by a newer sledge (schema version %d, this one knows %d): use that sledge or another --jobs-db", v, schemaVersion)
	case v >= 1 && v <= 3:
		// Version 2 keeps each sample's rollbacks per type, version 3 its
		// latency per type, version 4 the system samples. Another sledge
		// may upgrade at the same moment: a duplicate column is done work,
		// and the table is created only if missing.
		return s.tx(ctx, func(tx *sql.Tx) error {
			for _, col := range []string{"rollbacks", "latency_us"} {
				if _, err := tx.ExecContext(ctx, `ALTER TABLE samples ADD COLUMN `+col+` TEXT NOT NULL DEFAULT '[]'`); err != nil &&
					!strings.Contains(err.Error(), "duplicate column") {
					return fmt.Errorf("upgrade to schema version %d: %w", schemaVersion, err)
				}
			}
			if err := createFromSchema(ctx, tx, "system_samples"); err != nil {
				return fmt.Errorf("upgrade to schema version %d: %w", schemaVersion, err)
			}
			_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion))
			return err
		})
	}
	stmts, err := db.SplitScript(schemaSQL)
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, st := range stmts {
			if _, err := tx.ExecContext(ctx, st); err != nil {
				return fmt.Errorf("create schema: %w", err)
			}
		}
		_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion))
		return err
	})
}

// createFromSchema runs schema.sql's CREATE TABLE of table: one definition
// for new stores and upgraded ones.
func createFromSchema(ctx context.Context, tx *sql.Tx, table string) error {
	stmts, err := db.SplitScript(schemaSQL)
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	for _, st := range stmts {
		if strings.Contains(st, "CREATE TABLE IF NOT EXISTS "+table+" (") {
			_, err := tx.ExecContext(ctx, st)
			return err
		}
	}
	return fmt.Errorf("schema: no table %s", table)
}

func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

const timeLayout = "2006-01-02T15:04:05.000Z07:00"

func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return fmtTime(t)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null" // only plain data is stored; cannot happen
	}
	return string(b)
}

func rawOr(r json.RawMessage, def string) string {
	if len(r) == 0 {
		return def
	}
	return string(r)
}

// Create records j as a new running job of this process and sets its ID,
// Status, PID and Started (when zero).
func (s *Store) Create(ctx context.Context, j *Job) error { return s.insert(ctx, j, Running) }

// insert records j as a new job of this process with status st.
func (s *Store) insert(ctx context.Context, j *Job, st Status) error {
	j.Status = st
	j.PID, j.procStart = selfProcess()
	if j.Started.IsZero() {
		j.Started = time.Now()
	}
	j.Database = db.Redact(j.Database)
	res, err := s.db.ExecContext(ctx, `INSERT INTO jobs (kind, workload, database, mode, vus, status,
		started_at, pid, proc_start, sledge_version, spec, db_info, host, tx_types, summary)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		j.Kind, j.Workload, j.Database, j.Mode, j.VUs, string(j.Status), fmtTime(j.Started),
		j.PID, j.procStart, j.Version, rawOr(j.Spec, "{}"), mustJSON(j.DB), mustJSON(j.Host),
		mustJSON(nonNil(j.TxTypes)), nullRaw(j.Summary))
	if err != nil {
		return fmt.Errorf("record job: %w", err)
	}
	j.ID, err = res.LastInsertId()
	if err != nil {
		return fmt.Errorf("record job: %w", err)
	}
	return nil
}

// Queue records j as a job this process will run later (the service's
// answer to a new job), with status queued; Claim starts it. A queued job
// whose process dies is reconciled as incomplete, as a running one is.
func (s *Store) Queue(ctx context.Context, j *Job) error { return s.insert(ctx, j, Queued) }

// Claim starts the queued job j.ID as running in this process, with j's
// row (kind, workload, spec…) replacing what was queued. It fails when the
// job is no longer queued: stopped or deleted before it started.
func (s *Store) Claim(ctx context.Context, j *Job) error {
	j.Status = Running
	j.PID, j.procStart = selfProcess()
	if j.Started.IsZero() {
		j.Started = time.Now()
	}
	j.Database = db.Redact(j.Database)
	res, err := s.db.ExecContext(ctx, `UPDATE jobs SET kind = ?, workload = ?, database = ?, mode = ?, vus = ?,
		status = 'running', started_at = ?, pid = ?, proc_start = ?, sledge_version = ?, spec = ?, db_info = ?,
		host = ?, tx_types = ? WHERE id = ? AND status = 'queued'`,
		j.Kind, j.Workload, j.Database, j.Mode, j.VUs, fmtTime(j.Started), j.PID, j.procStart, j.Version,
		rawOr(j.Spec, "{}"), mustJSON(j.DB), mustJSON(j.Host), mustJSON(nonNil(j.TxTypes)), j.ID)
	if err != nil {
		return fmt.Errorf("start job %d: %w", j.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("start job %d: it is no longer queued", j.ID)
	}
	return nil
}

// SetStatus moves job id from one status to another (a queued job
// stopped before it started; an interrupted one that was stopped on
// request), and reports whether it was in from.
func (s *Store) SetStatus(ctx context.Context, id int64, from, to Status, msg string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE jobs SET status = ?, error = CASE WHEN ? = '' THEN error ELSE ? END,
		ended_at = coalesce(ended_at, ?) WHERE id = ? AND status = ?`,
		string(to), msg, msg, fmtTime(time.Now()), id, string(from))
	if err != nil {
		return false, fmt.Errorf("job %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

func nonNilInts(s []int64) []int64 {
	if s == nil {
		return []int64{}
	}
	return s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nullRaw(r json.RawMessage) any {
	if len(r) == 0 {
		return nil
	}
	return string(r)
}

// Update rewrites what a job learns as it goes (mode, VUs, spec, database
// information, transaction types, summary), and its status, error and end.
func (s *Store) Update(ctx context.Context, j *Job) error {
	_, err := s.db.ExecContext(ctx, `UPDATE jobs SET mode = ?, vus = ?, spec = ?, db_info = ?, tx_types = ?,
		summary = ?, status = ?, error = ?, ended_at = ? WHERE id = ?`,
		j.Mode, j.VUs, rawOr(j.Spec, "{}"), mustJSON(j.DB), mustJSON(nonNil(j.TxTypes)), nullRaw(j.Summary),
		string(j.Status), j.Error, nullTime(j.Ended), j.ID)
	if err != nil {
		return fmt.Errorf("update job %d: %w", j.ID, err)
	}
	return nil
}

// Append adds samples and log lines to job id in one short transaction.
func (s *Store) Append(ctx context.Context, id int64, samples []Sample, lines []LogLine) error {
	return s.AppendBatch(ctx, id, Batch{Samples: samples, Lines: lines})
}

// AppendBatch adds samples, system samples and log lines to job id in one
// short transaction.
func (s *Store) AppendBatch(ctx context.Context, id int64, b Batch) error {
	samples, lines := b.Samples, b.Lines
	if len(samples) == 0 && len(lines) == 0 && len(b.System) == 0 {
		return nil
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for _, x := range b.System {
			if _, err := tx.ExecContext(ctx, `INSERT INTO system_samples (job_id, seq, source, elapsed_ms, phase, data)
				VALUES (?, ?, ?, ?, ?, ?)`, id, x.Seq, x.Source, x.ElapsedMs, x.Phase, mustJSON(x.Interval)); err != nil {
				return err
			}
		}
		for _, x := range samples {
			if _, err := tx.ExecContext(ctx, `INSERT INTO samples (job_id, seq, elapsed_ms, span_ms, phase,
				completed, measured, errors, by_type, rollbacks, latency_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				id, x.Seq, x.ElapsedMs, x.SpanMs, x.Phase, x.Completed, x.Measured, x.Errors, mustJSON(x.ByType),
				mustJSON(nonNilInts(x.Rollbacks)), mustJSON(nonNilInts(x.LatencyUs))); err != nil {
				return err
			}
		}
		for _, l := range lines {
			if _, err := tx.ExecContext(ctx, `INSERT INTO log (job_id, seq, elapsed_ms, line) VALUES (?, ?, ?, ?)`,
				id, l.Seq, l.ElapsedMs, l.Line); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("append to job %d: %w", id, err)
	}
	return nil
}

// Finish records j's end (status, error, end time, summary: call with them
// set) and its histograms, in one transaction.
func (s *Store) Finish(ctx context.Context, j *Job, hists []Histogram) error {
	if j.Ended.IsZero() {
		j.Ended = time.Now()
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE jobs SET mode = ?, vus = ?, spec = ?, db_info = ?, tx_types = ?,
			summary = ?, status = ?, error = ?, ended_at = ? WHERE id = ?`,
			j.Mode, j.VUs, rawOr(j.Spec, "{}"), mustJSON(j.DB), mustJSON(nonNil(j.TxTypes)), nullRaw(j.Summary),
			string(j.Status), j.Error, nullTime(j.Ended), j.ID); err != nil {
			return err
		}
		for _, h := range hists {
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO histograms (job_id, tx_type, unit, hdr)
				VALUES (?, ?, ?, ?)`, j.ID, h.TxType, h.Unit, h.HDR); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("finish job %d: %w", j.ID, err)
	}
	return nil
}

const jobColumns = `id, kind, workload, database, mode, vus, status, error, started_at, ended_at, pid,
	proc_start, sledge_version, spec, db_info, host, tx_types, summary`

func scanJob(sc interface{ Scan(...any) error }) (*Job, error) {
	var j Job
	var status, started, spec, dbInfo, host, types string
	var ended, summary sql.NullString
	if err := sc.Scan(&j.ID, &j.Kind, &j.Workload, &j.Database, &j.Mode, &j.VUs, &status, &j.Error,
		&started, &ended, &j.PID, &j.procStart, &j.Version, &spec, &dbInfo, &host, &types, &summary); err != nil {
		return nil, err
	}
	j.Status = Status(status)
	var err error
	if j.Started, err = time.Parse(timeLayout, started); err != nil {
		return nil, fmt.Errorf("job %d: start time: %w", j.ID, err)
	}
	if ended.Valid {
		if j.Ended, err = time.Parse(timeLayout, ended.String); err != nil {
			return nil, fmt.Errorf("job %d: end time: %w", j.ID, err)
		}
	}
	j.Spec = json.RawMessage(spec)
	if summary.Valid {
		j.Summary = json.RawMessage(summary.String)
	}
	for _, f := range []struct {
		what string
		src  string
		dst  any
	}{{"database info", dbInfo, &j.DB}, {"host", host, &j.Host}, {"transaction types", types, &j.TxTypes}} {
		if err := json.Unmarshal([]byte(f.src), f.dst); err != nil {
			return nil, fmt.Errorf("job %d: %s: %w", j.ID, f.what, err)
		}
	}
	return &j, nil
}

// List returns the newest jobs first, at most limit of them (all when
// limit <= 0), after marking those whose process died as incomplete.
func (s *Store) List(ctx context.Context, limit int) ([]*Job, error) {
	if err := s.reconcile(ctx, 0); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+jobColumns+` FROM jobs ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	var out []*Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return out, nil
}

// Get returns the whole job id, or ErrNotFound.
func (s *Store) Get(ctx context.Context, id int64) (*Record, error) {
	if err := s.reconcile(ctx, id); err != nil {
		return nil, err
	}
	j, err := scanJob(s.db.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("job %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read job %d: %w", id, err)
	}
	r := &Record{Job: *j, Samples: []Sample{}, System: []SystemSample{}, Histograms: []Histogram{}, Log: []LogLine{}}
	if err := s.each(ctx, `SELECT seq, elapsed_ms, span_ms, phase, completed, measured, errors, by_type, rollbacks,
		latency_us FROM samples WHERE job_id = ? ORDER BY seq`, id, func(sc func(...any) error) error {
		var x Sample
		var by, rb, lat string
		if err := sc(&x.Seq, &x.ElapsedMs, &x.SpanMs, &x.Phase, &x.Completed, &x.Measured, &x.Errors, &by, &rb, &lat); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(lat), &x.LatencyUs); err != nil {
			return fmt.Errorf("sample %d: %w", x.Seq, err)
		}
		if len(x.LatencyUs) == 0 {
			x.LatencyUs = nil
		}
		if err := json.Unmarshal([]byte(by), &x.ByType); err != nil {
			return fmt.Errorf("sample %d: %w", x.Seq, err)
		}
		if err := json.Unmarshal([]byte(rb), &x.Rollbacks); err != nil {
			return fmt.Errorf("sample %d: %w", x.Seq, err)
		}
		if len(x.Rollbacks) == 0 {
			x.Rollbacks = nil // none recorded (a version 1 sample), or none at all
		}
		r.Samples = append(r.Samples, x)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read job %d time series: %w", id, err)
	}
	if err := s.each(ctx, `SELECT seq, source, elapsed_ms, phase, data FROM system_samples WHERE job_id = ? ORDER BY seq`, id,
		func(sc func(...any) error) error {
			var x SystemSample
			var data string
			if err := sc(&x.Seq, &x.Source, &x.ElapsedMs, &x.Phase, &data); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(data), &x.Interval); err != nil {
				return fmt.Errorf("system sample %d: %w", x.Seq, err)
			}
			r.System = append(r.System, x)
			return nil
		}); err != nil {
		return nil, fmt.Errorf("read job %d system samples: %w", id, err)
	}
	if err := s.each(ctx, `SELECT tx_type, unit, hdr FROM histograms WHERE job_id = ? ORDER BY tx_type`, id,
		func(sc func(...any) error) error {
			var h Histogram
			if err := sc(&h.TxType, &h.Unit, &h.HDR); err != nil {
				return err
			}
			r.Histograms = append(r.Histograms, h)
			return nil
		}); err != nil {
		return nil, fmt.Errorf("read job %d histograms: %w", id, err)
	}
	if err := s.each(ctx, `SELECT seq, elapsed_ms, line FROM log WHERE job_id = ? ORDER BY seq`, id,
		func(sc func(...any) error) error {
			var l LogLine
			if err := sc(&l.Seq, &l.ElapsedMs, &l.Line); err != nil {
				return err
			}
			r.Log = append(r.Log, l)
			return nil
		}); err != nil {
		return nil, fmt.Errorf("read job %d log: %w", id, err)
	}
	sortHistograms(r)
	return r, nil
}

// sortHistograms puts the histograms in the mix's order.
func sortHistograms(r *Record) {
	pos := map[string]int{}
	for i, t := range r.TxTypes {
		pos[t] = i
	}
	out := make([]Histogram, 0, len(r.Histograms))
	for _, t := range r.TxTypes {
		for _, h := range r.Histograms {
			if h.TxType == t {
				out = append(out, h)
			}
		}
	}
	for _, h := range r.Histograms {
		if _, ok := pos[h.TxType]; !ok {
			out = append(out, h)
		}
	}
	r.Histograms = out
}

func (s *Store) each(ctx context.Context, q string, id int64, fn func(scan func(...any) error) error) error {
	rows, err := s.db.QueryContext(ctx, q, id)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Delete removes job id and everything recorded with it. Its id is not
// given out again.
func (s *Store) Delete(ctx context.Context, id int64) error { return s.remove(ctx, id, false) }

// Discard removes job id, a command refused as bad input (exit 2), which
// is not a job: when no later job took an id, its id is given back
// (AUTOINCREMENT's counter, sqlite_sequence, steps back), so refused
// commands use up no ids.
func (s *Store) Discard(ctx context.Context, id int64) error { return s.remove(ctx, id, true) }

func (s *Store) remove(ctx context.Context, id int64, giveBack bool) error {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		// Explicit deletes: they do not depend on foreign keys being on.
		for _, t := range []string{"samples", "system_samples", "histograms", "log"} {
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+t+" WHERE job_id = ?", id); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, "DELETE FROM jobs WHERE id = ?", id)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil || n == 0 || !giveBack {
			return err
		}
		// Only while it is the last id given out: the same transaction
		// holds the write lock, so no other process takes one meanwhile.
		_, err = tx.ExecContext(ctx, `UPDATE sqlite_sequence SET seq = ?1 - 1 WHERE name = 'jobs' AND seq = ?1`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete job %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("job %d: %w", id, ErrNotFound)
	}
	return nil
}

// reconcile marks running jobs (all, or only id) whose process is gone as
// incomplete, ending them at their last sign of life.
func (s *Store) reconcile(ctx context.Context, id int64) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id, pid, proc_start, host FROM jobs
		WHERE status IN ('running', 'queued') AND (? = 0 OR id = ?)`, id, id)
	if err != nil {
		return fmt.Errorf("read running jobs: %w", err)
	}
	var dead []int64
	for rows.Next() {
		var jid int64
		var pid int
		var start, host string
		if err := rows.Scan(&jid, &pid, &start, &host); err != nil {
			rows.Close()
			return fmt.Errorf("read running jobs: %w", err)
		}
		var h Host
		_ = json.Unmarshal([]byte(host), &h) // no host facts: assume this host
		if !alive(pid, start, h.Hostname) {
			dead = append(dead, jid)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read running jobs: %w", err)
	}
	for _, jid := range dead {
		var started string
		var last sql.NullInt64
		if err := s.db.QueryRowContext(ctx, `SELECT started_at, max(
			coalesce((SELECT max(elapsed_ms) FROM samples WHERE job_id = ?1), 0),
			coalesce((SELECT max(elapsed_ms) FROM system_samples WHERE job_id = ?1), 0),
			coalesce((SELECT max(elapsed_ms) FROM log WHERE job_id = ?1), 0)) FROM jobs WHERE id = ?1`, jid).Scan(&started, &last); err != nil {
			return fmt.Errorf("job %d: %w", jid, err)
		}
		t, err := time.Parse(timeLayout, started)
		if err != nil {
			return fmt.Errorf("job %d: start time: %w", jid, err)
		}
		end := t.Add(time.Duration(last.Int64) * time.Millisecond)
		if _, err := s.db.ExecContext(ctx, `UPDATE jobs SET status = 'incomplete', ended_at = ?,
			error = 'the sledge process ended without finishing the job (killed?)'
			WHERE id = ? AND status IN ('running', 'queued')`, fmtTime(end), jid); err != nil {
			return fmt.Errorf("mark job %d incomplete: %w", jid, err)
		}
	}
	return nil
}

// Scrub replaces every occurrence of each secret in s: a last guard for
// text (error messages, log lines) that may quote a URL as the user typed it.
func Scrub(s string, secrets []string) string {
	for _, x := range secrets {
		if x != "" {
			s = strings.ReplaceAll(s, x, "REDACTED")
		}
	}
	return s
}

// Secrets returns the passwords a database URL carries (user info and
// password query parameters), escaped and unescaped, for Scrub.
func Secrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		// Unparseable: everything between "//" and "@" may be a secret.
		if i := strings.Index(raw, "//"); i >= 0 {
			if j := strings.LastIndex(raw, "@"); j > i+2 {
				if k := strings.IndexByte(raw[i+2:j], ':'); k >= 0 {
					return []string{raw[i+2+k+1 : j]}
				}
			}
		}
		return nil
	}
	var out []string
	add := func(v string) {
		if len(v) >= 3 { // shorter strings would blank out ordinary text
			out = append(out, v, url.QueryEscape(v), url.PathEscape(v))
		}
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		}
	}
	for k, vs := range u.Query() {
		if strings.EqualFold(k, "password") || strings.EqualFold(k, "passwd") {
			for _, v := range vs {
				add(v)
			}
		}
	}
	return out
}
