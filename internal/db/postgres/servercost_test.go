package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/testdb"
)

// serverJSON is the server's side of a run's --json.
type serverJSON struct {
	Total struct {
		Count int64 `json:"count"`
	} `json:"total"`
	PerTxn struct {
		ClientCPUUs float64 `json:"client_cpu_us"`
	} `json:"per_txn"`
	Server *struct {
		CPUUserUs       *float64           `json:"cpu_user_us"`
		CPUSysUs        *float64           `json:"cpu_sys_us"`
		ContextSwitches *float64           `json:"context_switches"`
		Statements      *float64           `json:"statements"`
		Parses          *float64           `json:"parses"`
		Plans           *float64           `json:"plans"`
		Counters        map[string]float64 `json:"db_counters"`
		Source          map[string]string  `json:"source"`
		Missing         map[string]string  `json:"missing"`
	} `json:"server_per_txn"`
	Waits *struct {
		Samples    int      `json:"samples"`
		Sessions   int      `json:"sessions"`
		CPU        float64  `json:"cpu"`
		Client     float64  `json:"client"`
		Lock       float64  `json:"lock"`
		IO         *float64 `json:"io"`
		Other      float64  `json:"other"`
		Source     string   `json:"source"`
		IntervalMs float64  `json:"interval_ms"`
	} `json:"server_waits"`
	Threads *struct {
		Samples int64 `json:"samples"`
		Hz      int   `json:"hz"`
	} `json:"server_threads"`
}

// A run on a local server reports the server's CPU from /proc, the
// statements pg_stat_statements counted and where the sessions waited:
// about one statement per transaction in procedure mode, many in prepared
// mode.
func TestServerCost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server of its own")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	own, err := testdb.StartPostgresWith(ctx, "shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track_planning=on")
	cancel()
	own = testdb.Need(t, own, err)
	defer own.Stop()
	u := unixURL(own, "sc")
	if code, _, stderr := sledge(t, "build", "--db", u, "--warehouses", "1", "--build-vus", "2", "--json"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	if err := execOn(tcpURL(own, "sc"), "CREATE EXTENSION pg_stat_statements"); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		mode            string
		url             string
		minSt, maxSt    float64 // statements per transaction
		wantPlansAtMost float64
	}{
		// One call per transaction; the 1% rollback and retries add a few.
		{"procedure", u, 0.95, 1.2, 1.2},
		// New-Order alone sends 8 + 4 per line; the mix averages well
		// above 10 statements. Plans: pgx prepares each statement once
		// per session, and PostgreSQL plans a prepared statement again
		// until it settles on a generic plan.
		{"prepared", tcpURL(own, "sc"), 10, 60, 60},
		{"client", tcpURL(own, "sc"), 10, 60, 60},
	} {
		t.Run(c.mode, func(t *testing.T) {
			code, out, stderr := sledge(t, "run", "--db", c.url, "--mode", c.mode, "-c", "2", "--rampup", "1", "-T", "3", "-R", "300", "--json")
			if code != 0 {
				t.Fatalf("run: exit %d: %s", code, stderr)
			}
			var r serverJSON
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			s := r.Server
			if s == nil || s.CPUUserUs == nil || s.CPUSysUs == nil || s.ContextSwitches == nil {
				t.Fatalf("no server CPU: %s\nstderr: %s", out, stderr)
			}
			cpu := *s.CPUUserUs + *s.CPUSysUs
			// A TPC-C transaction on one warehouse costs the server tens
			// to a few thousand µs; 50 ms per transaction would be absurd.
			if cpu <= 0 || cpu > 50_000 {
				t.Errorf("server CPU %.1f µs per transaction", cpu)
			}
			if *s.ContextSwitches <= 0 {
				t.Errorf("server context switches %.2f per transaction", *s.ContextSwitches)
			}
			if !strings.Contains(s.Source["cpu"], "backends") || !strings.Contains(s.Source["cpu"], "background") {
				t.Errorf("cpu source %q", s.Source["cpu"])
			}
			if s.Statements == nil || *s.Statements < c.minSt || *s.Statements > c.maxSt {
				t.Errorf("statements per transaction %v, want %.2f…%.2f (missing: %q)", deref(s.Statements), c.minSt, c.maxSt, s.Missing["statements"])
			}
			if s.Plans == nil || *s.Plans < 0 || *s.Plans > c.wantPlansAtMost {
				t.Errorf("plans per transaction %v (missing: %q)", deref(s.Plans), s.Missing["plans"])
			}
			if s.Parses != nil || s.Missing["parses"] == "" {
				t.Errorf("parses %v, missing %q: PostgreSQL counts none", deref(s.Parses), s.Missing["parses"])
			}
			if commits := s.Counters["pg_stat_database.xact_commit"]; commits < 0.9 || commits > 1.2 {
				t.Errorf("pg_stat_database commits per transaction %.2f", commits)
			}
			w := r.Waits
			if w == nil || w.Samples < 5 || w.Sessions < w.Samples {
				t.Fatalf("server_waits %+v", w)
			}
			// The rates the in-process sampler keeps to (issue 26): two
			// sessions' waits every 100 ms; the server's threads at 20 Hz,
			// 5 a tick: about 300 thread samples in the 3 s measured, where
			// 1,600 a second would give thousands.
			if w.IntervalMs != 100 {
				t.Errorf("server_waits.interval_ms %v, want 100 for 2 sessions", w.IntervalMs)
			}
			if th := r.Threads; th == nil || th.Hz != 20 || th.Samples == 0 || th.Samples > 600 {
				t.Errorf("server_threads %+v", th)
			}
			sum := w.CPU + w.Client + w.Lock + w.Other
			if w.IO != nil {
				sum += *w.IO
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Errorf("wait shares sum to %v: %+v", sum, *w)
			}
			t.Logf("%s: server CPU %.1f µs (client %.1f), %.2f switches, %.2f statements, %v plans; waits cpu %.2f client %.2f lock %.2f other %.2f over %d samples",
				c.mode, cpu, r.PerTxn.ClientCPUUs, *s.ContextSwitches, *s.Statements, deref(s.Plans), w.CPU, w.Client, w.Lock, w.Other, w.Samples)
		})
	}
}

// Without pg_stat_statements the statements are absent and the summary
// says why; everything else is there.
func TestServerCostWithoutStatements(t *testing.T) {
	s := server(t)
	code, out, stderr := sledge(t, "run", "--db", tcpURL(s, freshDB(t)), "-c", "2", "-t", "30", "--json")
	if code != 0 {
		t.Fatalf("run: exit %d: %s\n%s", code, stderr, out)
	}
	var r serverJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Server == nil || r.Server.CPUUserUs == nil {
		t.Fatalf("no server CPU: %s", out)
	}
	if r.Server.Statements != nil || !strings.Contains(r.Server.Missing["statements"], "not installed") {
		t.Errorf("statements %v, missing %q", deref(r.Server.Statements), r.Server.Missing["statements"])
	}
	code, text, stderr := sledge(t, "run", "--db", tcpURL(s, freshDB(t)), "-c", "1", "--rampup", "0", "-T", "1")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"cost per transaction (server)", "pg_stat_statements is not installed", "where sessions wait: CPU"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary does not say %q:\n%s", want, text)
		}
	}
}

func execOn(u, stmt string) error {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, stmt)
	return err
}

func deref(v *float64) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%.2f", *v)
}
