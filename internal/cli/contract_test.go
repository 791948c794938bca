package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/spf13/cobra"
)

// The "Contract" sections of issues 2, 4, 5 and 6 (docs/contracts.md):
// commands, flags, JSON keys and exit codes that scripts outside the
// repository rely on. A rename must fail here, not in a user's script.
// Keys are checked for presence and JSON type, not for values.

// kind is the JSON type a contract key must have.
type kind string

const (
	jNumber  kind = "number"
	jString  kind = "string"
	jBool    kind = "bool"
	jObject  kind = "object"
	jArray   kind = "array"
	jNumNil  kind = "number or null" // e.g. nopm where a workload has no meter
	jObjNil  kind = "object or null" // e.g. server_waits where nothing was sampled
	jBoolNil kind = "bool or null"   // e.g. tpch's verified where answers were not checked
)

// pinKeys asserts that every path in keys is in the JSON document out with
// its type. A path is dot-separated; "x[]" descends into every element of
// array x, which must not be empty.
func pinKeys(t *testing.T, what, out string, keys map[string]kind) {
	t.Helper()
	var doc any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, out)
	}
	for path, k := range keys {
		for _, v := range lookupPath(t, what, doc, strings.Split(path, ".")) {
			if !isKind(v, k) {
				t.Errorf("%s: %s is %T (%v), want a %s", what, path, v, v, k)
			}
		}
	}
}

// lookupPath returns the values at path in doc; it fails the test when a
// key is missing.
func lookupPath(t *testing.T, what string, doc any, path []string) []any {
	t.Helper()
	cur := []any{doc}
	for i, p := range path {
		name, each := strings.CutSuffix(p, "[]")
		var next []any
		for _, c := range cur {
			m, ok := c.(map[string]any)
			if !ok {
				t.Errorf("%s: %s is not an object", what, strings.Join(path[:i], "."))
				return nil
			}
			v, ok := m[name]
			if !ok {
				t.Errorf("%s: no key %q (contract path %s)", what, name, strings.Join(path, "."))
				return nil
			}
			if !each {
				next = append(next, v)
				continue
			}
			a, ok := v.([]any)
			if !ok || len(a) == 0 {
				t.Errorf("%s: %s is %v, want a non-empty array", what, strings.Join(path[:i+1], "."), v)
				return nil
			}
			next = append(next, a...)
		}
		cur = next
	}
	return cur
}

func isKind(v any, k kind) bool {
	switch k {
	case jNumber:
		_, ok := v.(float64)
		return ok
	case jNumNil:
		_, ok := v.(float64)
		return ok || v == nil
	case jString:
		_, ok := v.(string)
		return ok
	case jBool:
		_, ok := v.(bool)
		return ok
	case jObject:
		_, ok := v.(map[string]any)
		return ok
	case jArray:
		_, ok := v.([]any)
		return ok
	case jObjNil:
		_, ok := v.(map[string]any)
		return ok || v == nil
	case jBoolNil:
		_, ok := v.(bool)
		return ok || v == nil
	}
	return false
}

// Issue 13: the server's side of the cost per transaction (docs/cost.md,
// "Server side"); server_waits' keys are pinned on real servers by
// TestServerCost in internal/db/postgres and internal/db/mysql.
var serverPerTxnKeys = []string{"bytes_sent", "bytes_received", "cpu_user_us", "cpu_sys_us", "context_switches",
	"statements", "parses", "plans"}

// Issue 4: the cost per transaction, overall and inside each type.
var perTxnKeys = []string{"round_trips", "bytes_sent", "bytes_received", "client_cpu_us", "context_switches"}

func TestContractRunTPCC(t *testing.T) {
	path := builtDB(t)
	u := "sqlite://" + path
	keys := map[string]kind{
		// issue 2
		"workload": jString, "database": jString, "mode": jString, "transport": jString,
		"vus": jNumber, "warehouses": jNumber, "rampup_s": jNumber, "duration_s": jNumber,
		"nopm": jNumNil, "tpm": jNumber, "tpm_source": jString,
		// issue 6
		"reconnects": jNumber, "outage_s": jNumber, "stuck_vus": jArray,
		// issue 11: the client's count always beside the headline
		"tpm_client": jNumber,
		// issue 12: the connections that served the VUs (= vus without
		// --connections)
		"connections": jNumber,
		// issue 24: the job that records the run
		"job_id": jNumber,
		// issue 24: TPC-C's NOPM ceiling for the warehouses, and why the
		// run is no TPC-C result (these runs have no keying or thinking)
		"nopm_ceiling": jNumber, "tpmc_note": jString,
	}
	for _, ty := range []string{"new_order", "payment", "delivery", "order_status", "stock_level"} {
		for _, f := range []string{"count", "rollbacks", "errors", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms"} {
			keys["transactions."+ty+"."+f] = jNumber
		}
		for _, f := range perTxnKeys {
			// Per type, CPU is measured with --per-type-cpu only: null
			// (not measured) otherwise, never a made-up 0.
			k := jNumber
			if f == "client_cpu_us" || f == "context_switches" {
				k = jNumNil
			}
			keys["transactions."+ty+".per_txn."+f] = k
		}
	}
	for _, f := range perTxnKeys {
		keys["per_txn."+f] = jNumber
	}
	// Issue 13: the server's side, null where not measured (SQLite is
	// embedded: every server figure is null and "missing" says why).
	for _, f := range serverPerTxnKeys {
		keys["server_per_txn."+f] = jNumNil
	}
	keys["server_per_txn.missing"] = jObject
	keys["server_waits"] = jObjNil
	for _, c := range []struct {
		name string
		args []string
	}{
		// 100 transactions per VU: a whole deck, every type at least once.
		{"--db", []string{"run", "--db", u, "-c", "2", "-t", "100", "--json"}},
		{"positional URL", []string{"run", u, "--vus", "2", "--iterations", "40", "--json"}},
		{"workload and positional URL", []string{"run", "tpcc", u, "-c", "2", "--rampup", "0", "-T", "1s", "--json"}},
		{"--connections", []string{"run", "--db", u, "-c", "3", "--connections", "2", "-t", "40", "--json"}},
		// Issue 14: thresholds judged in the result.
		{"--threshold", []string{"run", "--db", u, "-c", "2", "-t", "40", "--json", "--threshold", "nopm>=0", "--threshold", "p95(new_order)<3600s"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, t.TempDir(), c.args...)
			if c.name == "--threshold" {
				pinKeys(t, "run --threshold", stdout, map[string]kind{"thresholds[].threshold": jString,
					"thresholds[].value": jNumNil, "thresholds[].ok": jBool})
			}
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			// A type that ran no transaction has no cost to report (a
			// VU's deck of 100 cards holds every type, so -t 100 runs
			// them all; shorter runs may not).
			var counts struct {
				Transactions map[string]struct {
					Count int64 `json:"count"`
				} `json:"transactions"`
			}
			_ = json.Unmarshal([]byte(stdout), &counts)
			want := map[string]kind{}
			for k, v := range keys {
				ty, rest, _ := strings.Cut(strings.TrimPrefix(k, "transactions."), ".")
				if strings.HasPrefix(k, "transactions.") && strings.HasPrefix(rest, "per_txn.") && counts.Transactions[ty].Count == 0 {
					if c.name == "--db" {
						t.Errorf("no %s in a whole deck", ty)
					}
					continue
				}
				want[k] = v
			}
			if c.name == "--connections" {
				// issue 12: the wait for a shared connection.
				want["connection_wait.mean_ms"], want["connection_wait.max_ms"], want["connection_wait.count"] = jNumber, jNumber, jNumber
			}
			pinKeys(t, "run --json", stdout, want)
		})
	}
}

func TestContractCheck(t *testing.T) {
	path := builtDB(t)
	keys := map[string]kind{"ok": jBool, "checks[].name": jString, "checks[].ok": jBool, "checks[].detail": jString,
		"job_id": jNumber} // issue 24
	stdout, stderr, code := runCLI(t, t.TempDir(), "check", "--db", "sqlite://"+path, "--json")
	if code != ExitOK {
		t.Fatalf("check: exit %d: %s", code, stderr)
	}
	pinKeys(t, "check --json", stdout, keys)
	if !strings.Contains(stdout, `"ok": true`) {
		t.Errorf("check of a fresh build is not ok: %s", stdout)
	}

	// A failed condition: exit 1, ok false, and the failed check says so.
	broken := filepath.Join(t.TempDir(), "broken.db")
	copyFile(t, path, broken)
	breakData(t, broken, "UPDATE warehouse SET w_ytd = w_ytd + 1")
	stdout, _, code = runCLI(t, t.TempDir(), "check", "sqlite://"+broken, "--json")
	if code != ExitFailure {
		t.Errorf("check of broken data: exit %d, want %d", code, ExitFailure)
	}
	pinKeys(t, "check --json (failed)", stdout, keys)
	var res struct {
		OK     bool `json:"ok"`
		Checks []struct {
			Name   string `json:"name"`
			OK     bool   `json:"ok"`
			Detail string `json:"detail"`
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, c := range res.Checks {
		if !c.OK {
			failed++
			if !strings.Contains(c.Detail, "violation") {
				t.Errorf("failed check %s: detail %q does not give the violations", c.Name, c.Detail)
			}
		}
	}
	if res.OK || failed == 0 {
		t.Errorf("ok %v with %d failed checks: %s", res.OK, failed, stdout)
	}
}

func TestContractBuild(t *testing.T) {
	home := t.TempDir()
	for _, c := range []struct {
		args []string
	}{
		{[]string{"build", "--db", "sqlite://" + filepath.Join(home, "c.db"), "--warehouses", "1", "--json"}},
		{[]string{"build", "tpcb", "--db", "sqlite://" + filepath.Join(home, "b.db"), "--scale", "1", "--json"}},
	} {
		stdout, stderr, code := runCLI(t, home, c.args...)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", c.args, code, stderr)
		}
		pinKeys(t, strings.Join(c.args[:2], " ")+" --json", stdout, map[string]kind{
			"workload": jString, "database": jString, "scale": jString, "seed": jNumber, "build_vus": jNumber,
			"rows": jNumber, "load_s": jNumber, "indexes_s": jNumber, "total_s": jNumber, "rows_per_s": jNumber,
			"completed": jBool, "job_id": jNumber, // job_id: issue 24
		})
	}
}

// Issue 15: compare tpch across databases (--db repeated): each
// database's composite figures and queries, and each query's seconds by
// database (docs/contracts.md, docs/compare.md).
func TestContractCompareTPCH(t *testing.T) {
	home := t.TempDir()
	a, b := "sqlite://"+tpchDB(t), "sqlite://"+tpchDB(t)
	html := filepath.Join(home, "tpch.html")
	stdout, stderr, code := runCLI(t, home, "compare", "tpch", "--db", a, "--db", b, "--test", "power", "--no-refresh",
		"--params", "validation", "--json", "--html", html)
	if code != ExitOK {
		t.Fatalf("compare tpch: exit %d: %s", code, stderr)
	}
	pinKeys(t, "compare tpch --json", stdout, map[string]kind{
		"workload": jString, "seed": jNumber, "query_seconds_from": jString,
		"cells[].database": jString, "cells[].driver": jString, "cells[].db_version": jString, "cells[].job_id": jNumber,
		"cells[].power": jNumNil, "cells[].throughput": jNumNil, "cells[].qphh": jNumNil, "cells[].throughput_seconds": jNumNil,
		"cells[].verified": jBoolNil, "cells[].ratio": jNumNil, "cells[].queries[].query": jNumber, "cells[].queries[].seconds": jNumber,
		"queries[].query": jNumber, "queries[].seconds": jObject,
		"job_id": jNumber, // issue 24: the compare's own job, beside each cell's
	})
	var out struct {
		Cells []struct {
			Verified *bool `json:"verified"`
		} `json:"cells"`
		Queries []struct {
			Seconds map[string]float64 `json:"seconds"`
		} `json:"queries"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || len(out.Cells) != 2 || len(out.Queries) != 22 {
		t.Fatalf("compare tpch: %v %s", err, stdout)
	}
	for i, c := range out.Cells {
		if c.Verified == nil || !*c.Verified {
			t.Errorf("cell %d: answers not verified with --params validation", i)
		}
	}
	if s := out.Queries[0].Seconds; len(s) != 2 || s[a] <= 0 || s[b] <= 0 {
		t.Errorf("queries[0].seconds = %v, want a positive number by each --db", s)
	}
	if fi, err := os.Stat(html); err != nil || fi.Size() == 0 {
		t.Errorf("compare tpch --html wrote no report: %v", err)
	}
}

// Issue 15: the TPC-H-derived workload's commands and --json keys
// (tpch.md part 9.1, docs/contracts.md).
func TestContractTPCH(t *testing.T) {
	home := t.TempDir()
	u := "sqlite://" + filepath.Join(home, "tpch.db")
	stdout, stderr, code := runCLI(t, home, "build", "tpch", "--db", u, "--scale", "0.01", "--json")
	if code != ExitOK {
		t.Fatalf("build tpch: exit %d: %s", code, stderr)
	}
	pinKeys(t, "build tpch --json", stdout, map[string]kind{
		"workload": jString, "database": jString, "scale": jString, "rows": jNumber, "load_s": jNumber, "total_s": jNumber, "completed": jBool,
		"job_id": jNumber,
	})
	runKeys := map[string]kind{
		"workload": jString, "scale": jNumber, "streams": jNumber, "power": jNumNil, "throughput": jNumNil, "qphh": jNumNil,
		"throughput_seconds": jNumNil, "queries[].stream": jNumber, "queries[].query": jNumber, "queries[].seconds": jNumber,
		"queries[].rows": jNumber, "refresh[].stream": jNumber, "refresh[].function": jString, "refresh[].seconds": jNumber,
		"job_id": jNumber,
	}
	stdout, stderr, code = runCLI(t, home, "run", "tpch", "--db", u, "--streams", "2", "--json")
	if code != ExitOK {
		t.Fatalf("run tpch: exit %d: %s", code, stderr)
	}
	pinKeys(t, "run tpch --json", stdout, runKeys)
	var both struct {
		Workload   string   `json:"workload"`
		Power      *float64 `json:"power"`
		Throughput *float64 `json:"throughput"`
		QphH       *float64 `json:"qphh"`
	}
	if err := json.Unmarshal([]byte(stdout), &both); err != nil || both.Workload != "tpch" || both.Power == nil || both.Throughput == nil || both.QphH == nil {
		t.Errorf("run tpch (both tests): %v %s", err, stdout)
	}
	// One test alone: the other figure and qphh are null.
	stdout, stderr, code = runCLI(t, home, "run", "tpch", "--db", u, "--test", "power", "--json")
	if code != ExitOK {
		t.Fatalf("run tpch --test power: exit %d: %s", code, stderr)
	}
	for _, k := range []string{`"throughput": null`, `"qphh": null`, `"throughput_seconds": null`} {
		if !strings.Contains(stdout, k) {
			t.Errorf("run tpch --test power: no %s in %s", k, stdout)
		}
	}
	stdout, stderr, code = runCLI(t, home, "check", "tpch", "--db", u, "--json")
	if code != ExitOK {
		t.Fatalf("check tpch: exit %d: %s", code, stderr)
	}
	pinKeys(t, "check tpch --json", stdout, map[string]kind{"ok": jBool, "checks[].name": jString, "checks[].ok": jBool, "checks[].detail": jString,
		"job_id": jNumber})
	// Issue 24: jobs list gives a tpch run's query streams.
	stdout, stderr, code = runCLI(t, home, "jobs", "list", "--json")
	var list struct {
		Jobs []map[string]any `json:"jobs"`
	}
	if code != ExitOK || json.Unmarshal([]byte(stdout), &list) != nil {
		t.Fatalf("jobs list: exit %d: %s %s", code, stdout, stderr)
	}
	runs := 0
	for _, j := range list.Jobs {
		if j["kind"] == "run" {
			runs++
			if _, ok := j["streams"].(float64); !ok {
				t.Errorf("jobs list --json: a tpch run's streams is %T (%v), want a number", j["streams"], j["streams"])
			}
		}
	}
	if runs != 2 {
		t.Errorf("jobs list --json: %d tpch runs, want 2: %s", runs, stdout)
	}
	stdout, stderr, code = runCLI(t, home, "drop", "tpch", "--db", u, "--json")
	if code != ExitOK || !strings.Contains(stdout, `"dropped": true`) {
		t.Fatalf("drop tpch: exit %d: %s %s", code, stdout, stderr)
	}
}

// Issue 5: pgbench's workloads and options.
func TestContractTPCBAndScripts(t *testing.T) {
	home := t.TempDir()
	u := "sqlite://" + filepath.Join(home, "tpcb.db")
	if _, stderr, code := runCLI(t, home, "build", "tpcb", "--db", u, "--scale", "1"); code != ExitOK {
		t.Fatalf("build tpcb: exit %d: %s", code, stderr)
	}
	script := filepath.Join(home, "s.sql")
	if err := os.WriteFile(script, []byte("\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid + :offset - :offset;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	keys := map[string]kind{
		"workload": jString, "tps": jNumber, "transactions": jNumber, "failed": jNumber, "retried": jNumber, "initial_connection_ms": jNumber,
		"serialization_failures": jNumber, "deadlock_failures": jNumber, // issue 16
		"latency_avg_ms": jNumber, "latency_stddev_ms": jNumber, "p50_ms": jNumber, "p99_ms": jNumber,
		"per_txn": jObject,
		"job_id":  jNumber, // issue 24
	}
	runs := [][]string{
		{"run", "tpcb", "--db", u, "--json", "-c", "2", "-t", "10"},
		{"run", "tpcb", "--db", u, "--builtin", "tpcb-like", "--mode", "client", "-c", "2", "-T", "1s", "--json"},
		{"run", "tpcb", "--db", u, "--builtin", "simple-update", "--mode", "prepared", "-c", "2", "-t", "10", "--json"},
		{"run", "tpcb", "--db", u, "--builtin", "select-only", "-c", "1", "-t", "10", "--json"},
		{"run", "tpcb", "--db", u, "-C", "-c", "2", "-t", "5", "--failures-detailed", "--verbose-errors", "--json"},
	}
	for _, p := range []string{"simple", "extended", "prepared"} {
		runs = append(runs,
			[]string{"run", "--db", u, "-f", script + "@2", "-f", script, "--protocol", p, "-D", "offset=3", "-c", "2", "-t", "10", "--json"},
			[]string{"run", "--db", u, "-f", script, "-M", p, "-D", "offset=3", "-c", "1", "-t", "10", "--json"})
	}
	for _, args := range runs {
		stdout, stderr, code := runCLI(t, home, args...)
		if code != ExitOK {
			t.Errorf("%s: exit %d: %s", args, code, stderr)
			continue
		}
		pinKeys(t, strings.Join(args[1:], " "), stdout, keys)
		if slices.Contains(args, "-C") {
			pinKeys(t, strings.Join(args[1:], " "), stdout, map[string]kind{"connection_avg_ms": jNumber})
		}
		for _, f := range perTxnKeys {
			pinKeys(t, strings.Join(args[1:], " "), stdout, map[string]kind{"per_txn." + f: jNumber})
		}
	}
}

// Issue 4: compare's matrix as data, and the HTML report.
func TestContractCompare(t *testing.T) {
	path := builtDB(t)
	home := t.TempDir()
	html := filepath.Join(home, "report.html")
	stdout, stderr, code := runCLI(t, home, "compare", "--db", "sqlite://"+path, "--modes", "client,prepared",
		"--transports", "embedded", "--vus", "1,2", "-t", "10", "--json", "--html", html)
	if code != ExitOK {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	keys := map[string]kind{"cells[].mode": jString, "cells[].transport": jString, "cells[].vus": jNumber,
		"cells[].nopm": jNumNil, "cells[].tpm": jNumber, "cells[].per_txn": jObject, "cells[].job_id": jNumber,
		"job_id": jNumber} // issue 24: the compare's own job, beside each cell's
	for _, f := range perTxnKeys {
		keys["cells[].per_txn."+f] = jNumber
	}
	// Issue 13: what the report's split of a transaction's time needs.
	keys["cells[].latency_avg_ms"] = jNumber
	keys["cells[].server_per_txn"] = jObject
	for _, f := range serverPerTxnKeys {
		keys["cells[].server_per_txn."+f] = jNumNil
	}
	// Issue 13: every two cells that differ only in mode, side by side.
	for k, v := range map[string]kind{"mode_pairs[].from": jString, "mode_pairs[].to": jString, "mode_pairs[].transport": jString,
		"mode_pairs[].vus": jNumber, "mode_pairs[].ratio": jNumNil, "mode_pairs[].round_trips_delta": jNumNil,
		"mode_pairs[].client_cpu_us_delta": jNumNil, "mode_pairs[].server_cpu_us_delta": jNumNil} {
		keys[k] = v
	}
	pinKeys(t, "compare --json", stdout, keys)
	var pairs struct {
		Pairs []modePairJSON `json:"mode_pairs"`
	}
	if err := json.Unmarshal([]byte(stdout), &pairs); err != nil || len(pairs.Pairs) != 2 {
		t.Errorf("compare --json: %d mode pairs (%v), want 2: client against prepared at 1 and at 2 VUs", len(pairs.Pairs), err)
	}
	for _, p := range pairs.Pairs {
		if p.From != "client" || p.To != "prepared" || p.Ratio == nil || p.ClientCPUUsDelta == nil || p.ServerCPUUsDelta != nil {
			t.Errorf("pair %+v: want client → prepared with a ratio and a client CPU change, no server CPU (embedded)", p)
		}
	}
	if fi, err := os.Stat(html); err != nil || fi.Size() == 0 {
		t.Errorf("compare --html wrote no report: %v", err)
	}
}

// Issue 4: the job store's commands, on the store --jobs-db names.
func TestContractJobs(t *testing.T) {
	path := builtDB(t)
	home := t.TempDir()
	store := filepath.Join(home, "my-jobs.db")
	var ids []string
	for i := 0; i < 2; i++ {
		stdout, stderr, code := runCLI(t, home, "run", "--db", "sqlite://"+path, "-t", "10", "--json", "--jobs-db", store)
		if code != ExitOK {
			t.Fatalf("run: exit %d: %s", code, stderr)
		}
		_ = stdout
	}
	if _, err := os.Stat(store); err != nil {
		t.Fatalf("--jobs-db: %v", err)
	}
	stdout, stderr, code := runCLI(t, home, "jobs", "list", "--json", "--jobs-db", store)
	if code != ExitOK {
		t.Fatalf("jobs list: exit %d: %s", code, stderr)
	}
	pinKeys(t, "jobs list --json", stdout, map[string]kind{"jobs[].id": jNumber, "jobs[].kind": jString, "jobs[].status": jString})
	var list struct {
		Jobs []struct {
			ID int64 `json:"id"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(stdout), &list); err != nil || len(list.Jobs) != 2 {
		t.Fatalf("jobs list: %v, %d jobs, want 2: %s", err, len(list.Jobs), stdout)
	}
	for _, j := range list.Jobs {
		ids = append(ids, strconv.FormatInt(j.ID, 10))
	}
	for _, c := range []struct {
		args  []string
		check func(t *testing.T, out string)
	}{
		{[]string{"jobs", "show", ids[0]}, func(t *testing.T, out string) {
			if !strings.Contains(out, "NOPM") {
				t.Errorf("jobs show: no summary:\n%s", out)
			}
		}},
		{[]string{"jobs", "diff", ids[1], ids[0], "--json"}, func(t *testing.T, out string) {
			pinKeys(t, "jobs diff --json", out, map[string]kind{"figures[].name": jString})
		}},
		{[]string{"jobs", "export", ids[0], "--format", "json"}, func(t *testing.T, out string) {
			pinKeys(t, "jobs export --format json", out, map[string]kind{"id": jNumber, "kind": jString, "status": jString,
				"spec": jObject, "summary": jObject, "samples": jArray, "sledge_version": jString,
				// The versioned spec (issue 14) beside the keys it always had.
				"spec.version": jNumber, "spec.kind": jString, "spec.db": jString, "spec.command": jString,
				"spec.database": jString, "spec.options": jObject, "spec.set": jArray})
		}},
		{[]string{"jobs", "rerun", ids[0], "--json"}, func(t *testing.T, out string) {
			pinKeys(t, "jobs rerun --json", out, map[string]kind{"nopm": jNumber, "tpm": jNumber})
		}},
		{[]string{"jobs", "export", ids[0], "--format", "csv"}, func(t *testing.T, out string) {
			if !strings.HasPrefix(out, "seq,elapsed_s,") {
				t.Errorf("jobs export --format csv: header %q", strings.SplitN(out, "\n", 2)[0])
			}
		}},
		{[]string{"jobs", "delete", ids[1]}, func(*testing.T, string) {}},
	} {
		stdout, stderr, code := runCLI(t, home, append(c.args, "--jobs-db", store)...)
		if code != ExitOK {
			t.Errorf("%s: exit %d: %s", c.args, code, stderr)
			continue
		}
		c.check(t, stdout)
	}
	if _, _, code := runCLI(t, home, "jobs", "show", ids[1], "--jobs-db", store); code == ExitOK {
		t.Error("jobs show of a deleted job succeeded")
	}
	// Issue 24: a diff of jobs with nothing to compare (a run and a
	// check) says why in no_figures.
	stdout, stderr, code = runCLI(t, home, "check", "--db", "sqlite://"+path, "--json", "--jobs-db", store)
	var check struct {
		JobID int64 `json:"job_id"`
	}
	if code != ExitOK || json.Unmarshal([]byte(stdout), &check) != nil || check.JobID == 0 {
		t.Fatalf("check: exit %d, job %d: %s", code, check.JobID, stderr)
	}
	stdout, stderr, code = runCLI(t, home, "jobs", "diff", ids[0], strconv.FormatInt(check.JobID, 10), "--json", "--jobs-db", store)
	if code != ExitOK {
		t.Fatalf("jobs diff of a run and a check: exit %d: %s", code, stderr)
	}
	pinKeys(t, "jobs diff --json (nothing to compare)", stdout, map[string]kind{"no_figures": jString})
}

// Issue 14: the series `run --metrics` (and the service's /metrics) serve,
// with their types, which dashboards and scripts rely on
// (docs/metrics.md). TestRunMetrics scrapes a real run for each of them.
var metricNames = map[string]dto.MetricType{
	"sledge_transactions_total":           dto.MetricType_COUNTER,
	"sledge_rollbacks_total":              dto.MetricType_COUNTER,
	"sledge_errors_total":                 dto.MetricType_COUNTER,
	"sledge_retries_total":                dto.MetricType_COUNTER,
	"sledge_transaction_duration_seconds": dto.MetricType_HISTOGRAM,
	"sledge_reconnects_total":             dto.MetricType_COUNTER,
	"sledge_measured_transactions_total":  dto.MetricType_COUNTER,
	"sledge_vus":                          dto.MetricType_GAUGE,
	"sledge_phase":                        dto.MetricType_GAUGE,
}

// The commands and flags the contracts name, with pgbench's short options.
func TestContractFlags(t *testing.T) {
	root := newRoot(t.Context(), &Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: func(string) string { return "" }})
	find := func(path ...string) *cobra.Command {
		c, rest, err := root.Find(path)
		if err != nil || len(rest) > 0 || c.Name() != path[len(path)-1] {
			t.Fatalf("no command %q", strings.Join(path, " "))
		}
		return c
	}
	long := map[string][]string{
		"build": {"db", "json", "scale", "warehouses", "jobs-db", "no-job"},
		"run": {"db", "json", "builtin", "mode", "vus", "connections", "duration", "iterations", "file", "protocol", "define", "stop-timeout", "rampup", "seed", "jobs-db", "threshold", "metrics", "metrics-linger", "log", "log-prefix", "aggregate-interval", "sampling-rate",
			"connect", "failures-detailed", "verbose-errors", "progress-timestamp", // issue 16
			"test", "streams", "params", "no-refresh", "queries", "explain"}, // the last six: tpch (issue 15)
		"check": {"db", "json", "jobs-db"},
		"drop":  {"db", "json"},
		"compare": {"db", "json", "modes", "transports", "vus", "connections", "html", "duration", "rampup", "iterations",
			"test", "streams", "params", "no-refresh", "queries"}, // the last five: compare tpch (issue 15)
	}
	for cmd, flags := range long {
		c := find(cmd)
		for _, f := range flags {
			if c.Flag(f) == nil {
				t.Errorf("%s has no --%s", cmd, f)
			}
		}
	}
	// pgbench's short options, as pgbench means them (issue 5).
	short := map[string]string{"c": "vus", "T": "duration", "t": "iterations", "f": "file", "D": "define",
		"M": "protocol", "P": "progress", "R": "rate", "L": "latency-limit", "r": "report-per-command", "C": "connect"}
	run := find("run")
	for s, name := range short {
		f := run.Flags().ShorthandLookup(s)
		if f == nil || f.Name != name {
			t.Errorf("run -%s is %v, want --%s", s, f, name)
		}
	}
	for _, s := range []string{"c", "T", "t", "P"} {
		if f := find("compare").Flags().ShorthandLookup(s); f == nil || f.Name != short[s] {
			t.Errorf("compare -%s is %v, want --%s as in run", s, f, short[s])
		}
	}
	for _, sub := range []string{"list", "show", "diff", "export", "delete", "rerun"} {
		find("jobs", sub)
	}
	if find("jobs", "rerun").Flags().Lookup("db") == nil {
		t.Error("jobs rerun has no --db")
	}
	if find("jobs", "export").Flags().Lookup("format") == nil {
		t.Error("jobs export has no --format")
	}
}

// The exit codes the contracts rely on: 0, 1 (the command ran and failed,
// TestContractCheck), 2 (bad input), 3 (transactions failed,
// TestEveryTransactionFailsExits3), 130 (interrupted,
// TestInterruptPrintsSummaryAndExits130).
func TestContractExitCodes(t *testing.T) {
	if ExitOK != 0 || ExitFailure != 1 || ExitUsage != 2 || ExitFailedTx != 3 || ExitInternal != 70 || ExitInterrupted != 130 || ExitThreshold != 99 {
		t.Fatalf("exit codes %d %d %d %d %d %d %d, want 0 1 2 3 70 130 99", ExitOK, ExitFailure, ExitUsage, ExitFailedTx, ExitInternal, ExitInterrupted, ExitThreshold)
	}
	for _, args := range [][]string{
		{"run", "--vus", "0"},
		{"run", "--no-such-flag"},
		{"run", "-T", "forever"},
		{"build", "--db", "sqlite:///tmp/x.db", "--warehouses", "-1"},
	} {
		_, stderr, code := runCLI(t, t.TempDir(), args...)
		if code != ExitUsage {
			t.Errorf("%s: exit %d, want %d: %s", args, code, ExitUsage, stderr)
		}
		if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 {
			t.Errorf("%s: %d lines on stderr, want one:\n%s", args, n+1, stderr)
		}
	}
}

// Issue 14: `sledge serve`'s command line (docs/serve.md). The API's
// contract is pinned by internal/service/contract_test.go (auth, status
// codes, keys, events) and process_test.go (kill, restart, stop).
func TestContractServe(t *testing.T) {
	root := newRoot(t.Context(), &Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: func(string) string { return "" }})
	serve, _, err := root.Find([]string{"serve"})
	if err != nil || serve.Name() != "serve" {
		t.Fatal("no command serve")
	}
	for _, f := range []string{"listen", "token-file", "jobs-db"} {
		if serve.Flag(f) == nil {
			t.Errorf("serve has no --%s", f)
		}
	}
	if f := serve.Flag("listen"); f == nil || f.DefValue != "127.0.0.1:8080" {
		t.Errorf("--listen defaults to %v, want 127.0.0.1:8080", f)
	}

	// Beyond loopback without --token-file: refused, one line, exit 2.
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0"} {
		_, stderr, code := runCLI(t, t.TempDir(), "serve", "--listen", addr)
		if code != ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "--token-file") {
			t.Errorf("serve --listen %s: exit %d, want 2 and one line naming --token-file: %q", addr, code, stderr)
		}
	}

	// No --token-file: a token made on the first start (0600, next to the
	// job store), printed once with the URL, reused later.
	home := t.TempDir()
	first := serveOnce(t, home)
	tokenFile := filepath.Join(home, "sledge", "serve.token")
	fi, err := os.Stat(tokenFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("serve.token: %v %v, want mode 0600", err, fi)
	}
	b, _ := os.ReadFile(tokenFile)
	token := strings.TrimSpace(string(b))
	if !strings.Contains(first.stderr, first.url+"#token="+token) || first.status("", "/api/jobs") != 401 {
		t.Errorf("first start: want http://ADDR/#token=TOKEN on stderr:\n%s", first.stderr)
	}
	if first.status(token, "/api/jobs") != 200 {
		t.Error("the printed token is refused")
	}
	first.stop(t)
	second := serveOnce(t, home)
	if strings.Contains(second.stderr, token) {
		t.Errorf("a later start prints the token again:\n%s", second.stderr)
	}
	if second.status(token, "/api/jobs") != 200 {
		t.Error("a later start does not reuse the token")
	}
	second.stop(t)

	// --token-file: its content is the token.
	own := filepath.Join(t.TempDir(), "tok")
	if err := os.WriteFile(own, []byte("my-own-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	third := serveOnce(t, home, "--token-file", own)
	if third.status("my-own-token", "/api/jobs") != 200 || third.status(token, "/api/jobs") != 401 {
		t.Error("--token-file's token is not the one")
	}
	third.stop(t)
	if _, stderr, code := runCLI(t, home, "serve", "--listen", "127.0.0.1:0", "--token-file", filepath.Join(home, "missing")); code != ExitUsage {
		t.Errorf("a missing --token-file: exit %d, want 2: %s", code, stderr)
	}
}

// servedCLI is `sledge serve` running in-process on a free loopback port.
type servedCLI struct {
	url    string
	stderr string
	cancel context.CancelFunc
	code   chan int
}

func serveOnce(t *testing.T, home string, extra ...string) *servedCLI {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errb := &syncBuffer{}
	env := Env{Stdout: io.Discard, Stderr: errb, Getenv: func(k string) string {
		if k == "XDG_DATA_HOME" || k == "HOME" {
			return home
		}
		return ""
	}}
	s := &servedCLI{cancel: cancel, code: make(chan int, 1)}
	go func() { s.code <- Main(ctx, append([]string{"serve", "--listen", "127.0.0.1:0"}, extra...), env) }()
	deadline := time.Now().Add(10 * time.Second)
	for s.url == "" {
		if _, after, ok := strings.Cut(errb.String(), "listening on "); ok {
			s.url = strings.Fields(after)[0]
			break
		}
		select {
		case c := <-s.code:
			t.Fatalf("serve: exit %d: %s", c, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve printed no address: %s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.stderr = errb.String()
	t.Cleanup(cancel)
	return s
}

func (s *servedCLI) status(token, path string) int {
	req, _ := http.NewRequest("GET", strings.TrimSuffix(s.url, "/")+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// stop cancels serve as Ctrl-C does: exit 0.
func (s *servedCLI) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	select {
	case c := <-s.code:
		if c != ExitOK {
			t.Errorf("serve stopped: exit %d, want 0", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The contract of `sledge agent` (docs/contracts.md, "sledge agent"): its
// flags, exit codes (0 on a signal, 1 port in use, 2 bad input), the
// token header, and the JSON keys of /v1/info, a watch, a snapshot and a
// second, read from a real agent watching a real process (this one).
func TestContractAgent(t *testing.T) {
	root := newRoot(t.Context(), &Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: func(string) string { return "" }})
	cmd, _, err := root.Find([]string{"agent"})
	if err != nil || cmd.Name() != "agent" {
		t.Fatal("no command agent")
	}
	for _, f := range []string{"listen", "token-file", "tls-cert", "tls-key", "allow-stacks"} {
		if cmd.Flag(f) == nil {
			t.Errorf("agent has no --%s", f)
		}
	}
	if f := cmd.Flag("listen"); f == nil || f.DefValue != "127.0.0.1:7078" {
		t.Errorf("--listen defaults to %v, want 127.0.0.1:7078", f)
	}
	if _, stderr, code := runCLI(t, t.TempDir(), "agent", "--listen", "0.0.0.0:7078"); code != ExitUsage || !strings.Contains(stderr, "--token-file") {
		t.Errorf("beyond loopback without a token: exit %d %q, want 2", code, stderr)
	}
	if _, stderr, code := runCLI(t, t.TempDir(), "agent", "--token-file", filepath.Join(t.TempDir(), "none")); code != ExitUsage {
		t.Errorf("a missing token file: exit %d %q, want 2", code, stderr)
	}

	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("contract-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errb := &syncBuffer{}
	code := make(chan int, 1)
	go func() {
		code <- Main(ctx, []string{"agent", "--listen", "127.0.0.1:0", "--token-file", tokenFile}, Env{Stdout: io.Discard, Stderr: errb})
	}()
	var addr string
	for end := time.Now().Add(10 * time.Second); addr == ""; time.Sleep(20 * time.Millisecond) {
		if m := agentListening.FindStringSubmatch(errb.String()); m != nil {
			addr = m[1]
		}
		if time.Now().After(end) {
			t.Fatalf("sledge agent printed no address: %s", errb.String())
		}
	}
	get := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer contract-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if c, _, _ := strings.Cut(addr, ":"); c != "127.0.0.1" {
		t.Fatalf("address %s", addr)
	}
	// The run side of this contract: the token header.
	req, _ := http.NewRequest("GET", "http://"+addr+"/v1/info", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no Authorization header: %v %v, want 401", resp, err)
	} else {
		resp.Body.Close()
	}

	c, info := get("GET", "/v1/info", "")
	if c != http.StatusOK {
		t.Fatalf("/v1/info: %d %s", c, info)
	}
	pinKeys(t, "/v1/info", info, map[string]kind{"agent": jString, "version": jString, "api": jNumber, "apis": jArray,
		"hostname": jString, "cpus": jNumber, "stacks.allowed": jBool, "stacks.perf": jBool,
		"watches": jNumber, "max_watches": jNumber})

	_, port, _ := net.SplitHostPort(addr)
	c, watch := get("POST", "/v1/watches", `{"target":{"port":`+port+`},"stacks":false}`)
	if c != http.StatusCreated {
		t.Fatalf("POST /v1/watches: %d %s", c, watch)
	}
	pinKeys(t, "a watch", watch, map[string]kind{"id": jString, "found[].pid": jNumber, "found[].comm": jString,
		"found[].threads": jNumber, "state_hz": jNumber, "stacks.allowed": jBool, "stacks.perf": jBool})
	var w struct{ ID string }
	_ = json.Unmarshal([]byte(watch), &w)

	c, snap := get("GET", "/v1/watches/"+w.ID+"/snapshot", "")
	if c != http.StatusOK {
		t.Fatalf("snapshot: %d %s", c, snap)
	}
	snapKeys := map[string]kind{"at": jString}
	for _, k := range agentHostKeys {
		snapKeys["host."+k] = agentKeyKind(k)
	}
	for _, k := range agentServerKeys {
		snapKeys["server."+k] = jNumber
	}
	// The port's traffic, where inet_diag answers (else "missing" says why).
	var missing struct{ Missing map[string]string }
	_ = json.Unmarshal([]byte(snap), &missing)
	if _, ok := missing.Missing["port"]; !ok {
		for _, k := range []string{"port", "bytes_in", "bytes_out", "connections", "closed_lost"} {
			snapKeys["server.port."+k] = jNumber
		}
	}
	pinKeys(t, "a snapshot", snap, snapKeys)

	var secs string
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if c, secs = get("GET", "/v1/watches/"+w.ID+"/seconds?after=0", ""); c != http.StatusOK {
			t.Fatalf("seconds: %d %s", c, secs)
		}
		if strings.HasPrefix(secs, "[{") || time.Now().After(end) {
			break
		}
	}
	secKeys := map[string]kind{"seq": jNumber, "at": jString, "interval.seconds": jNumber}
	for _, k := range agentHostKeys {
		secKeys["interval.host."+k] = agentKeyKind(k)
	}
	for _, k := range agentServerKeys {
		secKeys["interval.server."+k] = jNumber
	}
	var arr []json.RawMessage
	if err := json.Unmarshal([]byte(secs), &arr); err != nil || len(arr) == 0 {
		t.Fatalf("seconds: %v %s", err, secs)
	}
	pinKeys(t, "a second", string(arr[0]), secKeys)

	c, other := get("GET", "/v2/info", "")
	if c != http.StatusNotFound {
		t.Errorf("/v2/info: %d, want 404", c)
	}
	pinKeys(t, "another API version", other, map[string]kind{"error": jString, "apis": jArray})
	if c, _ := get("DELETE", "/v1/watches/"+w.ID, ""); c != http.StatusNoContent {
		t.Errorf("DELETE a watch: %d, want 204", c)
	}

	// A port in use: 1.
	if _, stderr, code := runCLI(t, t.TempDir(), "agent", "--listen", addr, "--token-file", tokenFile); code != ExitFailure || !strings.Contains(stderr, "in use") {
		t.Errorf("a port in use: exit %d %q, want 1", code, stderr)
	}
	cancel()
	select {
	case c := <-code:
		if c != ExitOK {
			t.Errorf("stopped: exit %d, want 0", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("sledge agent did not stop")
	}
	if strings.Contains(errb.String(), "contract-token") {
		t.Errorf("the token is in the agent's output: %s", errb.String())
	}
}

// The keys of a snapshot's (and a second's) host and server.
var (
	agentHostKeys = []string{"cpus", "cpu.user_ns", "cpu.nice_ns", "cpu.system_ns", "cpu.idle_ns", "cpu.iowait_ns",
		"cpu.irq_ns", "cpu.softirq_ns", "cpu.steal_ns", "per_cpu[].user_ns", "per_cpu[].idle_ns", "context_switches",
		"interrupts", "procs_running", "procs_blocked", "net", "disk", "mem_total_bytes", "mem_available_bytes", "other_cpu_ns"}
	agentServerKeys = []string{"processes", "threads", "cpu_user_ns", "cpu_sys_ns", "voluntary_switches", "involuntary_switches",
		"run_delay_ns", "syscall_read_bytes", "syscall_write_bytes", "syscalls_read", "syscalls_write", "states.cpu",
		"states.runnable", "states.network", "states.lock", "states.io", "states.idle", "state_hz"}
)

func agentKeyKind(k string) kind {
	if k == "net" || k == "disk" {
		return jObject
	}
	return jNumber
}
