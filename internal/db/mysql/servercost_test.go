package mysql_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// A run on the local MariaDB reports the server process's CPU and context
// switches from /proc, statements and parses from the global status, and
// where the sessions waited from the processlist (I/O not told apart).
func TestServerCost(t *testing.T) {
	s := need(t)
	name := shared(t)
	for _, c := range []struct {
		mode, url    string
		minSt, maxSt float64 // statements per transaction
	}{
		// One CALL per transaction (statements inside it are not
		// Questions); the control session's few readings add a little.
		{"procedure", unixURL(s, name), 0.95, 1.3},
		{"prepared", tcpURL(s, s.User, s.Password, name), 10, 60},
		{"client", tcpURL(s, s.User, s.Password, name), 10, 60},
	} {
		t.Run(c.mode, func(t *testing.T) {
			stdout, stderr, code := sledge(t, "run", "--db", c.url, "--mode", c.mode, "-c", "2", "--rampup", "1", "-T", "3", "-R", "300", "--json")
			if code != 0 {
				t.Fatalf("run: exit %d: %s", code, stderr)
			}
			var r struct {
				Server *struct {
					CPUUserUs       *float64          `json:"cpu_user_us"`
					CPUSysUs        *float64          `json:"cpu_sys_us"`
					ContextSwitches *float64          `json:"context_switches"`
					Statements      *float64          `json:"statements"`
					Parses          *float64          `json:"parses"`
					Plans           *float64          `json:"plans"`
					BytesSent       *float64          `json:"bytes_sent"`
					Source          map[string]string `json:"source"`
					Missing         map[string]string `json:"missing"`
				} `json:"server_per_txn"`
				Waits *struct {
					Samples                  int
					CPU, Client, Lock, Other float64
					IO                       *float64
					Note                     string
				} `json:"server_waits"`
			}
			if err := json.Unmarshal([]byte(stdout), &r); err != nil {
				t.Fatal(err)
			}
			v := r.Server
			if v == nil || v.CPUUserUs == nil || v.CPUSysUs == nil || v.ContextSwitches == nil {
				t.Fatalf("no server CPU: %s\nstderr: %s", stdout, stderr)
			}
			cpu := *v.CPUUserUs + *v.CPUSysUs
			if cpu <= 0 || cpu > 50_000 || *v.ContextSwitches <= 0 {
				t.Errorf("server CPU %.1f µs, %.2f context switches per transaction", cpu, *v.ContextSwitches)
			}
			if !strings.Contains(v.Source["cpu"], "1 server process") {
				t.Errorf("cpu source %q", v.Source["cpu"])
			}
			if v.Statements == nil || *v.Statements < c.minSt || *v.Statements > c.maxSt {
				t.Fatalf("statements per transaction %v, want %.2f…%.2f", v.Statements, c.minSt, c.maxSt)
			}
			if v.Parses == nil || v.Plans != nil || v.BytesSent == nil {
				t.Fatalf("parses %v plans %v bytes %v", v.Parses, v.Plans, v.BytesSent)
			}
			// Prepared statements are parsed once per session (procedure
			// mode's CALL too, on sledge's own wire); text is parsed every
			// time.
			switch c.mode {
			case "prepared", "procedure":
				if *v.Parses > *v.Statements/2 {
					t.Errorf("%s: %.2f parses for %.2f statements", c.mode, *v.Parses, *v.Statements)
				}
			default:
				if math.Abs(*v.Parses-*v.Statements) > 0.01**v.Statements {
					t.Errorf("%s: %.2f parses for %.2f statements", c.mode, *v.Parses, *v.Statements)
				}
			}
			w := r.Waits
			if w == nil || w.Samples < 5 || w.IO != nil || !strings.Contains(w.Note, "I/O") {
				t.Fatalf("server_waits %+v", w)
			}
			if sum := w.CPU + w.Client + w.Lock + w.Other; math.Abs(sum-1) > 1e-9 {
				t.Errorf("wait shares sum to %v", sum)
			}
			t.Logf("%s: server CPU %.1f µs, %.2f switches, %.2f statements, %.2f parses; waits %+v",
				c.mode, cpu, *v.ContextSwitches, *v.Statements, *v.Parses, *w)
		})
	}
}
