package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/runner"
)

// Issue 25: GET /api/jobs/{id}/system's keys (docs/serve.md, docs/contracts.md),
// behind the token; a job without a sampler has an empty list.
func TestServeSystemContract(t *testing.T) {
	s := startService(t, "")
	ctx := context.Background()
	job, _, err := runner.StartJob(ctx, runner.JobStart{Kind: "run", Workload: "tpcc", RawURL: "postgres://u@db1/tpcc",
		Spec: runner.Spec{Options: map[string]any{}}, Path: s.store, Record: true, Stderr: io.Discard, Version: "test"})
	if err != nil || job == nil {
		t.Fatalf("start a job: %v", err)
	}
	for _, sec := range serverSecond(1) {
		job.System(sec)
	}
	if err := job.End(ctx, nil); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/api/jobs/%d/system", job.ID())
	if code, _ := call(t, s.url, "", "GET", path, nil); code != 401 {
		t.Errorf("without the token: %d, want 401", code)
	}
	code, b := call(t, s.url, testToken, "GET", path, nil)
	if code != 200 {
		t.Fatalf("GET %s: %d %s", path, code, b)
	}
	var body struct {
		ID      int64            `json:"id"`
		Status  string           `json:"status"`
		Samples []map[string]any `json:"samples"`
	}
	if err := json.Unmarshal(b, &body); err != nil || body.ID != job.ID() || body.Status != "completed" || len(body.Samples) != 2 {
		t.Fatalf("body %s (%v)", b, err)
	}
	for _, k := range []string{"t", "source", "phase", "cpu_user", "cpu_sys", "switches", "states", "threads", "host", "other_cores"} {
		if _, ok := body.Samples[0][k]; !ok {
			t.Errorf("a server sample has no %q: %v", k, body.Samples[0])
		}
	}
	states, _ := body.Samples[0]["states"].(map[string]any)
	for _, k := range []string{"cpu", "runnable", "network", "lock", "io", "idle"} {
		if _, ok := states[k].(float64); !ok {
			t.Errorf("states has no %q: %v", k, states)
		}
	}
	host, _ := body.Samples[1]["host"].(map[string]any)
	for _, k := range []string{"usr", "nice", "sys", "iowait", "irq", "softirq", "steal", "idle"} {
		if _, ok := host[k].(float64); !ok {
			t.Errorf("host has no %q: %v", k, host)
		}
	}
	// A job without a sampler: no samples, an empty list.
	other, _, err := runner.StartJob(ctx, runner.JobStart{Kind: "run", Workload: "tpcc", RawURL: "sqlite:///x",
		Spec: runner.Spec{Options: map[string]any{}}, Path: s.store, Record: true, Stderr: io.Discard, Version: "test"})
	if err != nil || other == nil {
		t.Fatal(err)
	}
	_ = other.End(ctx, nil)
	if code, b := call(t, s.url, testToken, "GET", fmt.Sprintf("/api/jobs/%d/system", other.ID()), nil); code != 200 ||
		!strings.Contains(string(b), `"samples":[]`) {
		t.Errorf("a job without a sampler: %d %s", code, b)
	}
}

// A run of the service on the private PostgreSQL server (local: read
// in-process, as the agent reads it): its stream carries the server's
// seconds as "system" events while it runs, and /system has them after.
func TestServeSystemEventsPostgres(t *testing.T) {
	srv := pgServer.Get(t)
	srv.DropAtEnd(t, "service_system")
	u := fmt.Sprintf("postgres://%s:%s@%s:%d/service_system", srv.User, srv.Password, srv.Host, srv.Port)
	s := startService(t, "")
	b := submit(t, s.url, testToken, map[string]any{"kind": "build", "workload": "tpcb", "db": u, "options": map[string]any{"scale": 1}})
	if j := waitStatus(t, s.url, testToken, b, 60*time.Second, "completed", "failed"); j.Status != "completed" {
		t.Fatalf("build: %s: %s", j.Status, j.Error)
	}
	id := submit(t, s.url, testToken, map[string]any{"kind": "run", "workload": "tpcb", "db": u,
		"options": map[string]any{"vus": 2, "duration": "4s", "rampup": "0s"}})
	evs := readEvents(t, s.url, testToken, id, 60*time.Second)
	var server, client int
	for _, e := range evs {
		if e.event != "system" {
			continue
		}
		var p struct {
			Source  string             `json:"source"`
			CPUUser *float64           `json:"cpu_user"`
			States  map[string]float64 `json:"states"`
		}
		if err := json.Unmarshal([]byte(e.data), &p); err != nil {
			t.Fatalf("system event %s: %v", e.data, err)
		}
		switch p.Source {
		case "server":
			server++
			if p.CPUUser == nil || p.States == nil {
				t.Errorf("a server second without CPU or states: %s", e.data)
			}
		case "client_host":
			client++
		}
	}
	if server == 0 || client == 0 {
		t.Errorf("%d server and %d client_host system events of %d, want some of each", server, client, len(evs))
	}
	code, body := call(t, s.url, testToken, "GET", fmt.Sprintf("/api/jobs/%d/system", id), nil)
	var sys struct {
		Samples []struct {
			Source string `json:"source"`
		} `json:"samples"`
	}
	if err := json.Unmarshal(body, &sys); code != 200 || err != nil || len(sys.Samples) < server+client {
		t.Errorf("/system after the run: %d, %d samples (%v), want at least the %d streamed", code, len(sys.Samples), err, server+client)
	}
	if strings.Contains(string(body), srv.Password) {
		t.Error("/system shows the password")
	}
}
