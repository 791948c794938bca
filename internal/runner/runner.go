// Package runner is what a job is, apart from how it was asked for: a
// typed, versioned Spec (the command line, the service's API and a stored
// job all produce one), the Result a job ends with, and the Outputs that
// follow a job while it runs (the service's live stream, Prometheus).
//
// It also runs them: Run drives a workload from typed RunOptions and
// returns the typed RunSummary (summarize, thresholds, the server's side
// of the cost), JobRun records a job in the job store while it runs, and
// Session is an opened database with its control connection. Compare runs
// a matrix of runs (each through Execute) from typed CompareOptions and
// returns the typed CompareJSON. The command line parses flags into
// options, hooks its progress display and printing into RunEnv and
// CompareEnv, and prints the result; runner never imports it.
//
// An Executor runs a Spec. Execute is the one sledge has for builds,
// runs, checks and compares, without the command line; cli.Execute is
// it. The service is a shell over cli.Execute, and `sledge jobs rerun`
// runs a stored Spec again through the command line itself.
package runner

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/engine"
	"github.com/sledge-bench/sledge/internal/jobs"
)

// SpecVersion is the version of Spec this sledge writes. A stored spec
// without one was written before specs were versioned (version 0: the
// same keys, "command" and "database" only); a newer one is refused.
const SpecVersion = 1

// Kinds are the commands a Spec can name.
var Kinds = []string{"build", "run", "check", "compare"}

// Spec is one job as asked: the command, the workload, the database and
// the options by the command line's long flag names ("vus": 4,
// "duration": "30s"). Set lists the options that were given rather than
// defaulted: running a Spec again passes only those (and the resolved
// seed and mode), so that per-workload defaults still apply.
type Spec struct {
	Version  int            `json:"version"`
	Kind     string         `json:"kind"`
	Workload string         `json:"workload,omitempty"`
	DB       string         `json:"db,omitempty"`
	Options  map[string]any `json:"options,omitempty"`
	Set      []string       `json:"set,omitempty"`
}

// MarshalJSON writes the spec with the keys stored jobs have always had
// ("command", "database") beside the versioned ones: scripts read both.
func (s Spec) MarshalJSON() ([]byte, error) {
	opts := s.Options
	if opts == nil {
		opts = map[string]any{}
	}
	set := s.Set
	if set == nil {
		set = []string{}
	}
	return json.Marshal(struct {
		Version  int            `json:"version"`
		Kind     string         `json:"kind"`
		Command  string         `json:"command"`
		Workload string         `json:"workload"`
		DB       string         `json:"db"`
		Database string         `json:"database"`
		Options  map[string]any `json:"options"`
		Set      []string       `json:"set"`
	}{s.Version, s.Kind, s.Kind, s.Workload, s.DB, s.DB, opts, set})
}

// ParseSpec reads a spec from JSON: the API's body or a stored job's.
// Numbers stay as written (a seed does not fit a float64).
func ParseSpec(b []byte) (Spec, error) {
	var raw struct {
		Version  *int           `json:"version"`
		Kind     string         `json:"kind"`
		Command  string         `json:"command"`
		Workload string         `json:"workload"`
		DB       string         `json:"db"`
		Database string         `json:"database"`
		Options  map[string]any `json:"options"`
		Set      []string       `json:"set"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return Spec{}, fmt.Errorf("spec: %w", err)
	}
	s := Spec{Kind: raw.Kind, Workload: raw.Workload, DB: raw.DB, Options: raw.Options, Set: raw.Set}
	if raw.Version != nil {
		s.Version = *raw.Version
	}
	if s.Kind == "" {
		s.Kind = raw.Command
	}
	if s.DB == "" {
		s.DB = raw.Database
	}
	if s.Version > SpecVersion {
		return s, fmt.Errorf("spec version %d is newer than this sledge's (%d): upgrade sledge", s.Version, SpecVersion)
	}
	if s.Version == 0 {
		unlistRepeated(s.Options)
	}
	s.Version = SpecVersion
	return s, s.Check()
}

// repeatedFlags are the options a command takes more than once. A spec
// stored before version 1 kept them as pflag prints them ("[a,b]", CSV).
var repeatedFlags = []string{"threshold", "file", "define", "builtin"}

// unlistRepeated turns the repeated options of a version 0 spec into the
// lists version 1 keeps, so that running it again passes each value.
func unlistRepeated(opts map[string]any) {
	for _, n := range repeatedFlags {
		v, ok := opts[n].(string)
		if !ok || !strings.HasPrefix(v, "[") || !strings.HasSuffix(v, "]") {
			continue
		}
		list := []any{}
		if inner := v[1 : len(v)-1]; inner != "" {
			rec, err := csv.NewReader(strings.NewReader(inner)).Read()
			if err != nil {
				continue // not pflag's form: leave it as it was
			}
			for _, e := range rec {
				list = append(list, e)
			}
		}
		opts[n] = list
	}
}

// Check refuses a spec whose fields cannot name a job, naming the field.
func (s Spec) Check() error {
	ok := false
	for _, k := range Kinds {
		ok = ok || s.Kind == k
	}
	switch {
	case !ok:
		return &FieldError{Field: "kind", Msg: fmt.Sprintf("%q: want one of %s", s.Kind, strings.Join(Kinds, ", "))}
	case strings.HasPrefix(s.Workload, "-"):
		return &FieldError{Field: "workload", Msg: fmt.Sprintf("%q is not a workload name", s.Workload)}
	}
	for name, v := range s.Options {
		if name == "" || strings.HasPrefix(name, "-") || strings.ContainsAny(name, "= ") {
			return &FieldError{Field: "options", Msg: fmt.Sprintf("%q is not an option name: use the command line's long flag names, such as \"vus\"", name)}
		}
		if _, err := optionValues(v); err != nil {
			return &FieldError{Field: "options." + name, Msg: err.Error()}
		}
	}
	return nil
}

// FieldError is a spec refused for one field.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// notPassed are the options a spec never hands back to a command: where
// the job is recorded and how it prints belong to whoever runs it again.
// A job's live metrics are the runner's to serve (the service's /metrics),
// not a port each rerun opens.
var notPassed = map[string]bool{"db": true, "json": true, "jobs-db": true, "no-job": true, "cpuprofile": true, "help": true,
	"metrics": true, "metrics-linger": true}

// Args is the command line that runs the spec: the command, the
// workload, --db, then each option. With only, it passes the options in
// Set and those a run resolved (seed, mode); otherwise all of Options.
func (s Spec) Args(only bool) ([]string, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	args := []string{s.Kind}
	if s.Workload != "" {
		args = append(args, s.Workload)
	}
	if s.DB != "" {
		args = append(args, "--db", s.DB)
		// compare tpch: the other databases, recorded redacted; their
		// passwords come from the variables the drivers read.
		if l, ok := s.Options["db"].([]any); ok && len(l) > 1 && s.Kind == "compare" {
			for _, u := range l[1:] {
				p, _ := db.Pasteable(fmt.Sprint(u))
				args = append(args, "--db", strings.ReplaceAll(p, ":REDACTED@", "@"))
			}
		}
	}
	pass := map[string]bool{}
	if only {
		for _, n := range s.Set {
			pass[n] = true
		}
		pass["seed"], pass["mode"] = true, true
	}
	names := make([]string, 0, len(s.Options))
	for n := range s.Options {
		if !notPassed[n] && (!only || pass[n]) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		vs, _ := optionValues(s.Options[n])
		for _, v := range vs {
			if only && v == "" {
				continue // a resolved value that is empty: nothing to repeat
			}
			args = append(args, "--"+n+"="+v)
		}
	}
	return args, nil
}

// optionValues is an option's JSON value as flag values: a list repeats
// the flag (--threshold), a whole number stays whole.
func optionValues(v any) ([]string, error) {
	switch x := v.(type) {
	case string:
		return []string{x}, nil
	case bool:
		return []string{strconv.FormatBool(x)}, nil
	case json.Number:
		return []string{x.String()}, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, errors.New("not a number")
		}
		return []string{strconv.FormatFloat(x, 'f', -1, 64)}, nil
	case int:
		return []string{strconv.Itoa(x)}, nil
	case int64:
		return []string{strconv.FormatInt(x, 10)}, nil
	case []string:
		return x, nil
	case []any:
		var out []string
		for _, e := range x {
			vs, err := optionValues(e)
			if err != nil {
				return nil, err
			}
			if len(vs) != 1 {
				return nil, errors.New("a list holds strings, numbers or booleans")
			}
			out = append(out, vs[0])
		}
		return out, nil
	case nil:
		return nil, errors.New("null: give a value or leave the option out")
	}
	return nil, fmt.Errorf("want a string, number, boolean or list, not %T", v)
}

// Result is how a job ended.
type Result struct {
	JobID int64 // 0: not recorded (--no-job, or the store failed)
	Code  int   // the exit status the command line gives it
	// JSON is what --json prints for the command (the summary), if it
	// printed anything.
	JSON json.RawMessage
	Err  string // the one-line error, if any
}

// Exec is how an Executor runs a spec.
type Exec struct {
	JobsDB  string // the job store; "" the default
	JobID   int64  // a queued job to run as (the service creates it first); 0 a new job
	Outputs []Output
	Stderr  io.Writer // what the command prints on stderr; nil discards it
	Getenv  func(string) string
	// Only passes only the options Set names (and the resolved seed and
	// mode): a stored spec run again.
	Only bool
	// NoJob records nothing (--no-job): a compare's cells when the
	// compare itself is not recorded.
	NoJob bool
	// DryRun checks the spec's options as the command does before it
	// opens anything (values, combinations, thresholds, the compare
	// matrix's lists) and stops there: nothing is recorded, opened or
	// run. Result.Code is 0, or the command's refusal (2) with its line.
	DryRun bool
	// Progress receives an analytic run's step lines as they come ("stream
	// 0  Q14  0.0120 s  1 row"), though the run prints nothing but its
	// --json: compare tpch shows them in its progress line. Nil: none.
	Progress func(line string)
}

// Executor runs one spec to its end (or until ctx is cancelled, which
// stops it as Ctrl-C does) and says how it ended.
type Executor func(ctx context.Context, s Spec, x Exec) Result

// Job is what an output learns when a job starts running.
type Job struct {
	ID        int64
	Kind      string
	Workload  string
	DB        string   // redacted
	TxTypes   []string // in the order of Tick.ByType
	MeterName string   // the business counter (NOPM), "" if none
	MeterKind int      // the type whose completions it counts; -1 if none
	Live      *engine.Live
}

// Tick is one second of a running job.
type Tick struct {
	T         float64 // seconds since the job started, at the end of the interval
	Span      float64 // seconds the interval lasted
	Phase     string
	Completed int64 // transactions completed in the interval, all types
	Measured  int64 // of those, completed in the measured interval
	Errors    int64
	ByType    []int64 // per type, in Job.TxTypes order
	TPM       float64 // Completed per minute over the interval (client count)
	// Meter is the business counter per minute over the interval (NOPM:
	// New-Orders), 0 where the workload has none.
	Meter float64
	// MeanMs is the mean latency of the interval's transactions, all
	// types (0 when none completed or the sample predates latencies);
	// MeanMsByType per type, nil when not known.
	MeanMs       float64
	MeanMsByType []float64
}

// Output follows jobs while they run. Methods are called from the job's
// goroutines and must not block.
type Output interface {
	Start(j Job)
	Tick(id int64, t Tick)
	End(id int64, r Result)
}

// TickOf is a stored sample as a tick: rates per minute over its span,
// the business counter's from the completions of its type (meterKind)
// that did not roll back, as NOPM counts New-Orders.
func TickOf(s jobs.Sample, meterKind int) Tick {
	t := Tick{T: float64(s.ElapsedMs) / 1000, Span: float64(s.SpanMs) / 1000, Phase: s.Phase,
		Completed: s.Completed, Measured: s.Measured, Errors: s.Errors, ByType: s.ByType}
	if t.Span > 0 {
		t.TPM = float64(s.Completed) * 60 / t.Span
		if meterKind >= 0 && meterKind < len(s.ByType) {
			n := s.ByType[meterKind]
			if meterKind < len(s.Rollbacks) {
				n -= s.Rollbacks[meterKind]
			}
			t.Meter = float64(n) * 60 / t.Span
		}
	}
	if len(s.LatencyUs) == len(s.ByType) && len(s.ByType) > 0 {
		var sum, n int64
		t.MeanMsByType = make([]float64, len(s.ByType))
		for i, c := range s.ByType {
			if c > 0 {
				t.MeanMsByType[i] = float64(s.LatencyUs[i]) / 1000 / float64(c)
			}
			sum, n = sum+s.LatencyUs[i], n+c
		}
		if n > 0 {
			t.MeanMs = float64(sum) / 1000 / float64(n)
		}
	}
	return t
}
