package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/db/sqlite"
	"github.com/sledge-bench/sledge/internal/sysprobe"
)

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	j := &Job{Kind: "run", Workload: "tpcc", Database: "postgres://u:pw-secret@h/db", Version: "dev",
		Spec: json.RawMessage(`{"command":"run","options":{"vus":4}}`), Host: ThisHost(),
		TxTypes: []string{"neword", "payment"}}
	if err := s.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	if j.ID != 1 || j.Status != Running || j.Database != "postgres://u:REDACTED@h/db" {
		t.Fatalf("created %+v", j)
	}
	samples := []Sample{
		{Seq: 1, ElapsedMs: 1000, SpanMs: 1000, Phase: "ramp-up", Completed: 10, ByType: []int64{6, 4}},
		{Seq: 2, ElapsedMs: 2000, SpanMs: 1000, Phase: "measure", Completed: 12, Measured: 11, Errors: 1, ByType: []int64{7, 5}},
	}
	lines := []LogLine{{Seq: 1, ElapsedMs: 3, Line: "running tpcc"}}
	if err := s.Append(ctx, j.ID, samples, lines); err != nil {
		t.Fatal(err)
	}
	j.Mode, j.VUs, j.Status = "prepared", 4, Completed
	j.DB = DBInfo{Driver: "sqlite", Version: "3.50", Transport: "embedded", Settings: map[string]string{"journal_mode": "wal"}}
	j.Summary = json.RawMessage(`{"tpm":123.5}`)
	hists := []Histogram{{TxType: "payment", Unit: "us", HDR: "HISTFAAA"}, {TxType: "neword", Unit: "us", HDR: "HISTFBBB"}}
	if err := s.Finish(ctx, j, hists); err != nil {
		t.Fatal(err)
	}
	r, err := s.Get(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != Completed || r.Mode != "prepared" || r.VUs != 4 || r.DB.Settings["journal_mode"] != "wal" ||
		r.Host.CPUs == 0 || string(r.Summary) != `{"tpm":123.5}` || r.Ended.IsZero() || r.PID == 0 {
		t.Errorf("job read back: %+v", r.Job)
	}
	if !reflect.DeepEqual(r.Samples, samples) || !reflect.DeepEqual(r.Log, lines) {
		t.Errorf("samples %+v log %+v", r.Samples, r.Log)
	}
	if len(r.Histograms) != 2 || r.Histograms[0].TxType != "neword" {
		t.Errorf("histograms not in mix order: %+v", r.Histograms)
	}
	list, err := s.List(ctx, 10)
	if err != nil || len(list) != 1 || list[0].ID != j.ID {
		t.Fatalf("list %v %v", list, err)
	}
	if err := s.Delete(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{s.Delete(ctx, j.ID), func() error { _, err := s.Get(ctx, j.ID); return err }()} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("after delete: %v, want ErrNotFound", err)
		}
	}
	// Ids are never reused, so a deleted job's id cannot name another.
	k := &Job{Kind: "check", Workload: "tpcc", Database: "sqlite:///x.db"}
	if err := s.Create(ctx, k); err != nil || k.ID != 2 {
		t.Errorf("next id %d, %v", k.ID, err)
	}
}

// A running job whose process is gone is incomplete; a live one stays
// running.
func TestDeadProcessMakesIncomplete(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	cases := []struct {
		name     string
		pid      string
		identity string
		want     Status
	}{
		{"this process", "", "", Running},
		{"pid reused by another process", "", "bogus-boot/1", Incomplete},
		{"no such pid", "999999999", "", Incomplete},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := &Job{Kind: "run", Workload: "tpcc", Database: "sqlite:///x.db", Host: ThisHost()}
			if err := s.Create(ctx, j); err != nil {
				t.Fatal(err)
			}
			if err := s.Append(ctx, j.ID, []Sample{{Seq: 1, ElapsedMs: 1500, ByType: []int64{}}}, nil); err != nil {
				t.Fatal(err)
			}
			if c.pid != "" {
				exec(t, s, "UPDATE jobs SET pid = "+c.pid+" WHERE id = ?", j.ID)
			}
			if c.identity != "" {
				exec(t, s, "UPDATE jobs SET proc_start = '"+c.identity+"' WHERE id = ?", j.ID)
			}
			r, err := s.Get(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != c.want {
				t.Errorf("status %s, want %s", r.Status, c.want)
			}
			if c.want == Incomplete && r.Ended.Sub(r.Started) != 1500*time.Millisecond {
				t.Errorf("ends %s after its start, want at its last sample (1.5s)", r.Ended.Sub(r.Started))
			}
		})
	}
}

func exec(t *testing.T, s *Store, q string, args ...any) {
	t.Helper()
	if _, err := s.db.Exec(q, args...); err != nil {
		t.Fatal(err)
	}
}

func TestSchemaVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := s.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || !strings.EqualFold(mode, "wal") {
		t.Errorf("journal_mode %q %v, want wal", mode, err)
	}
	s.Close()
	// Opening again leaves it alone.
	if s, err = Open(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	s.Close()
	d, err := sql.Open(sqlite.SQLDriverName, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, err := Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "newer sledge") {
		t.Errorf("open a newer store: %v", err)
	}
}

func TestSecrets(t *testing.T) {
	cases := []struct {
		url, text, want string
	}{
		{"postgres://u:CANARY-PW-123@h:1/x", "dial postgres://u:CANARY-PW-123@h:1/x failed", "dial postgres://u:REDACTED@h:1/x failed"},
		{"mysql://root:p%40ss@h/x", "bad p@ss and p%40ss", "bad REDACTED and REDACTED"},
		{"sqlite:///x.db?password=hunter22", "param hunter22", "param REDACTED"},
		{"sqlite:///x.db", "nothing to hide", "nothing to hide"},
	}
	for _, c := range cases {
		if got := Scrub(c.text, Secrets(c.url)); got != c.want {
			t.Errorf("Scrub(%q) with secrets of %s = %q, want %q", c.text, c.url, got, c.want)
		}
	}
}

func TestThisHost(t *testing.T) {
	h := ThisHost()
	if h.CPUs < 1 || h.GoVersion == "" || h.OS == "" {
		t.Errorf("host %+v", h)
	}
	if procAvailable() && (h.MemoryBytes == 0 || h.Kernel == "") {
		t.Errorf("host on Linux without memory or kernel: %+v", h)
	}
}

// A store of schema version 1 (samples without rollbacks and latencies)
// opens, gains the columns, and keeps its samples, which read back with
// none; new samples keep theirs.
func TestUpgradeFromVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	d, err := sql.Open(sqlite.SQLDriverName, path)
	if err != nil {
		t.Fatal(err)
	}
	v1 := schemaSQL
	for _, col := range []string{"rollbacks ", "latency_us "} {
		i := strings.Index(v1, "    "+col)
		if i < 0 {
			t.Fatalf("the version 1 schema could not be derived: no %s line", col)
		}
		v1 = v1[:i] + v1[i+strings.Index(v1[i:], "\n")+1:]
	}
	stmts := withoutTable(t, v1, "system_samples")
	for _, st := range append(stmts, "PRAGMA user_version = 1",
		`INSERT INTO jobs (kind, workload, database, status, started_at, pid, sledge_version) VALUES ('run', 'tpcc', 'sqlite:///x', 'completed', '2026-01-01T00:00:00.000Z', 1, 'old')`,
		`INSERT INTO samples (job_id, seq, elapsed_ms, span_ms, phase, completed, measured, errors, by_type) VALUES (1, 1, 1000, 1000, 'measure', 10, 10, 0, '[4,4,1,1,0]')`) {
		if _, err := d.Exec(st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	d.Close()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != schemaVersion {
		t.Fatalf("user_version %d %v, want %d", v, err, schemaVersion)
	}
	ctx := context.Background()
	if err := s.Append(ctx, 1, []Sample{{Seq: 2, ElapsedMs: 2000, SpanMs: 1000, Phase: "measure", Completed: 10, Measured: 10,
		ByType: []int64{4, 4, 1, 1, 0}, Rollbacks: []int64{1, 0, 0, 0, 0}, LatencyUs: []int64{8000, 4000, 500, 700, 0}}}, nil); err != nil {
		t.Fatal(err)
	}
	r, err := s.Get(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Samples) != 2 || len(r.Samples[0].Rollbacks) != 0 || len(r.Samples[0].LatencyUs) != 0 ||
		!reflect.DeepEqual(r.Samples[1].Rollbacks, []int64{1, 0, 0, 0, 0}) || !reflect.DeepEqual(r.Samples[1].LatencyUs, []int64{8000, 4000, 500, 700, 0}) {
		t.Errorf("samples after the upgrade: %+v", r.Samples)
	}
}

// withoutTable is the statements of schema less table's CREATE TABLE: an
// older version's schema.
func withoutTable(t *testing.T, schema, table string) []string {
	t.Helper()
	stmts, err := db.SplitScript(schema)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, st := range stmts {
		if !strings.Contains(st, "CREATE TABLE IF NOT EXISTS "+table+" (") {
			out = append(out, st)
		}
	}
	if len(out) != len(stmts)-1 {
		t.Fatalf("the older schema could not be derived: no table %s", table)
	}
	return out
}

// A store of schema version 3 (no system samples) opens, gains the table,
// keeps its jobs (which read back with no system samples), and records the
// seconds of a new run; deleting the job removes them.
func TestUpgradeFromVersion3(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	d, err := sql.Open(sqlite.SQLDriverName, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range append(withoutTable(t, schemaSQL, "system_samples"), "PRAGMA user_version = 3",
		`INSERT INTO jobs (kind, workload, database, status, started_at, pid, sledge_version) VALUES ('run', 'tpcc', 'sqlite:///x', 'completed', '2026-01-01T00:00:00.000Z', 1, 'old')`) {
		if _, err := d.Exec(st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	d.Close()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != 4 || schemaVersion != 4 {
		t.Fatalf("user_version %d %v, want 4", v, err)
	}
	ctx := context.Background()
	old, err := s.Get(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if old.System == nil || len(old.System) != 0 {
		t.Errorf("an old job's system samples: %#v, want an empty list", old.System)
	}
	j := &Job{Kind: "run", Workload: "tpcc", Database: "sqlite:///y", Version: "dev"}
	if err := s.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	srv := &sysprobe.Server{Threads: 12, UserNs: 300e6, SysNs: 100e6, Voluntary: 900, Involuntary: 40, RunDelayNs: 5e6,
		States: sysprobe.States{CPU: 40, Runnable: 5, Network: 700, Lock: 20, IO: 0, Idle: 435}, StateHz: 100,
		Port: &sysprobe.Port{Port: 5432, BytesIn: 64000, BytesOut: 128000, Connections: 4}}
	sys := []SystemSample{
		{Seq: 1, Source: "server", ElapsedMs: 1000, Phase: "measure", Interval: sysprobe.Interval{Seconds: 1,
			Host: sysprobe.Host{CPUs: 2, CPU: sysprobe.CPUTimes{User: 500e6, System: 200e6, Idle: 1300e6}}, Server: srv}},
		{Seq: 2, Source: "client_host", ElapsedMs: 1001, Phase: "measure", Interval: sysprobe.Interval{Seconds: 1,
			Host:    sysprobe.Host{CPUs: 2, CPU: sysprobe.CPUTimes{User: 100e6, Idle: 1900e6}, OtherCPU: 250e6},
			Missing: []string{"port"}}},
	}
	if err := s.AppendBatch(ctx, j.ID, Batch{System: sys, Samples: []Sample{{Seq: 1, ElapsedMs: 1000, SpanMs: 1000,
		Phase: "measure", Completed: 5, ByType: []int64{5}}}}); err != nil {
		t.Fatal(err)
	}
	r, err := s.Get(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.System, sys) || len(r.Samples) != 1 {
		t.Errorf("system samples read back:\n%+v\nwant\n%+v", r.System, sys)
	}
	// The data column is the interval as compact JSON.
	var data string
	if err := s.db.QueryRow("SELECT data FROM system_samples WHERE job_id = ? AND seq = 1", j.ID).Scan(&data); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(data, "\n ") || !strings.Contains(data, `"cpu_user_ns":300000000`) {
		t.Errorf("stored data %s, want compact JSON of the interval", data)
	}
	if err := s.Delete(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.db.QueryRow("SELECT count(*) FROM system_samples").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d system samples left after delete (%v)", n, err)
	}
}
