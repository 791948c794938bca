package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/cli"
)

// The service's contract (docs/serve.md, issue 14): statuses, keys and
// codes that scripts rely on, on a real service over embedded SQLite.

func TestServeAuth(t *testing.T) {
	s := startService(t, "")
	for _, c := range []struct {
		name, auth, method, path string
		want                     int
	}{
		{"no token", "", "GET", "/api/jobs", 401},
		{"wrong token", "nope", "GET", "/api/jobs", 401},
		{"no token, post", "", "POST", "/api/jobs", 401},
		{"no token, events", "", "GET", "/api/jobs/1/events", 401},
		{"no token, metrics", "", "GET", "/metrics", 401},
		{"token", testToken, "GET", "/api/jobs", 200},
		{"metrics not wired", testToken, "GET", "/metrics", 404},
		{"unknown endpoint", testToken, "GET", "/api/nope", 404},
		{"page needs no token", "", "GET", "/", 200},
		{"uPlot is embedded", "", "GET", "/vendor/uplot/uPlot.iife.min.js", 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, b := call(t, s.url, c.auth, c.method, c.path, nil)
			if code != c.want {
				t.Fatalf("%d, want %d: %s", code, c.want, b)
			}
			if code >= 400 {
				var e struct{ Error string }
				if err := json.Unmarshal(b, &e); err != nil || e.Error == "" {
					t.Errorf("error body is not {\"error\": …}: %s", b)
				}
			}
		})
	}
}

// Bad specs: 400 naming the field, nothing queued.
func TestServeBadSpecs(t *testing.T) {
	s := startService(t, "")
	for _, c := range []struct {
		name  string
		body  map[string]any
		field string
		says  string // the message names this, where the field is "options"
	}{
		{"kind", map[string]any{"kind": "bench"}, "kind", ""},
		{"unknown option", map[string]any{"kind": "run", "options": map[string]any{"vuz": 4}}, "options.vuz", ""},
		{"option of another command", map[string]any{"kind": "check", "options": map[string]any{"vus": 4}}, "options.vus", ""},
		{"value type", map[string]any{"kind": "run", "options": map[string]any{"vus": "four"}}, "options.vus", ""},
		{"duration", map[string]any{"kind": "run", "options": map[string]any{"duration": "forever"}}, "options.duration", ""},
		{"null", map[string]any{"kind": "run", "options": map[string]any{"vus": nil}}, "options.vus", ""},
		{"set by the service", map[string]any{"kind": "run", "options": map[string]any{"jobs-db": "/tmp/x"}}, "options.jobs-db", ""},
		{"workload", map[string]any{"kind": "run", "workload": "tpcx"}, "workload", ""},
		{"db", map[string]any{"kind": "run", "db": "nosuch://x"}, "db", ""},
		{"unknown key", map[string]any{"kind": "run", "option": map[string]any{}}, "option", ""},
		{"concurrent", map[string]any{"kind": "run", "concurrent": "yes"}, "concurrent", ""},
		// The options together, as the command checks them before it opens
		// anything: a 400 rather than a failed job.
		{"no virtual users", map[string]any{"kind": "run", "options": map[string]any{"vus": 0}}, "options", "--vus"},
		{"duration and iterations", map[string]any{"kind": "run", "options": map[string]any{"duration": "5s", "iterations": 10}}, "options", "--iterations"},
		{"bad threshold", map[string]any{"kind": "run", "options": map[string]any{"threshold": []any{"nopm>>1"}}}, "options", "threshold"},
		{"bad mode", map[string]any{"kind": "run", "options": map[string]any{"mode": "fast"}}, "options", "fast"},
		{"build without build VUs", map[string]any{"kind": "build", "options": map[string]any{"build-vus": 0}}, "options", "--build-vus"},
		{"compare VU list", map[string]any{"kind": "compare", "options": map[string]any{"vus": "1,x"}}, "options", "--vus"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, b := s.do(t, "POST", "/api/jobs", c.body)
			var e struct{ Error, Field string }
			_ = json.Unmarshal(b, &e)
			if code != 400 || e.Field != c.field || !strings.HasPrefix(e.Error, c.field+":") || !strings.Contains(e.Error, c.says) {
				t.Fatalf("%d %s, want 400 naming %s %s", code, b, c.field, c.says)
			}
		})
	}
	if _, b := s.do(t, "GET", "/api/jobs", nil); !bytes.Contains(b, []byte(`"jobs":[]`)) {
		t.Errorf("bad specs left jobs: %s", b)
	}
}

// A run from submission to its end: 201, 409 for a second job on the
// database, the events stream, the result, the time series, the list's
// filters; then a long run stopped, and deletes.
func TestServeRunSQLite(t *testing.T) {
	s := startService(t, "")
	u := sqliteDB(t)
	id := submit(t, s.url, testToken, map[string]any{"kind": "run", "db": u,
		"options": map[string]any{"vus": 2, "duration": "3s", "rampup": "0s"}})

	code, b := s.do(t, "POST", "/api/jobs", map[string]any{"kind": "run", "db": u, "options": map[string]any{"duration": "1s"}})
	if code != http.StatusConflict || !bytes.Contains(b, []byte(`"error"`)) {
		t.Errorf("second run on the database: %d %s, want 409", code, b)
	}
	// "concurrent": true runs beside it (a check: short, and reads only).
	chk := submit(t, s.url, testToken, map[string]any{"kind": "check", "db": u, "concurrent": true})

	evs := readEvents(t, s.url, testToken, id, 30*time.Second)
	ticks := 0
	for _, e := range evs {
		if e.event == "tick" {
			var tk map[string]any
			if err := json.Unmarshal([]byte(e.data), &tk); err != nil {
				t.Fatalf("tick: %v: %s", err, e.data)
			}
			for _, k := range []string{"t", "tpm", "nopm", "phase", "completed", "errors", "by_type", "mean_ms"} {
				if _, ok := tk[k]; !ok {
					t.Errorf("tick has no %q: %s", k, e.data)
				}
			}
			// A second with transactions has their mean latency, > 0.
			if c, _ := tk["completed"].(float64); c > 0 {
				if m, _ := tk["mean_ms"].(float64); m <= 0 {
					t.Errorf("a tick of %v transactions with mean_ms %v", c, tk["mean_ms"])
				}
			}
			ticks++
		}
	}
	last := evs[len(evs)-1]
	var done map[string]any
	if err := json.Unmarshal([]byte(last.data), &done); err != nil || done["tpm"] == nil {
		t.Errorf("done is not the run's result: %v %s", err, last.data)
	}
	if ticks < 1 {
		t.Errorf("no tick before done: %v", evs)
	}

	j := waitStatus(t, s.url, testToken, id, 10*time.Second, "completed")
	var res map[string]any
	if err := json.Unmarshal(j.Result, &res); err != nil || res["tpm"] == nil || res["transactions"] == nil {
		t.Errorf("result is not --json's: %v %s", err, j.Result)
	}
	var spec map[string]any
	if err := json.Unmarshal(j.Spec, &spec); err != nil || spec["kind"] != "run" {
		t.Errorf("spec: %v %s", err, j.Spec)
	}
	if j.DB.Driver != "sqlite" || len(j.TxTypes) != 5 {
		t.Errorf("db settings %+v, tx_types %v", j.DB, j.TxTypes)
	}
	// A finished job's stream says done at once.
	if evs := readEvents(t, s.url, testToken, id, 5*time.Second); len(evs) != 1 || evs[0].event != "done" {
		t.Errorf("events of a finished job: %v", evs)
	}

	_, b = s.do(t, "GET", fmt.Sprintf("/api/jobs/%d/timeseries", id), nil)
	var ts struct {
		TxTypes []string         `json:"tx_types"`
		Samples []map[string]any `json:"samples"`
	}
	if err := json.Unmarshal(b, &ts); err != nil || len(ts.Samples) < 2 || len(ts.TxTypes) != 5 {
		t.Fatalf("timeseries: %v %s", err, b)
	}
	for _, k := range []string{"seq", "elapsed_ms", "span_ms", "phase", "completed", "measured", "errors", "by_type", "tpm", "nopm",
		"rollbacks", "latency_us", "mean_ms"} {
		if _, ok := ts.Samples[1][k]; !ok {
			t.Errorf("sample has no %q", k)
		}
	}

	waitStatus(t, s.url, testToken, chk, 30*time.Second, "completed", "failed")
	for _, c := range []struct {
		query string
		want  []int64
	}{
		{"", []int64{chk, id}},
		{"?status=completed&kind=run", []int64{id}},
		{"?kind=check", []int64{chk}},
		{"?workload=tpcc&limit=1", []int64{chk}},
		{"?db=" + u, []int64{chk, id}},
		{"?database=sqlite:///elsewhere.db", nil},
		{"?status=running", nil},
	} {
		code, b := s.do(t, "GET", "/api/jobs"+c.query, nil)
		var l struct{ Jobs []jobJSON }
		if err := json.Unmarshal(b, &l); code != 200 || err != nil {
			t.Fatalf("list %s: %d %v %s", c.query, code, err, b)
		}
		var got []int64
		for _, j := range l.Jobs {
			got = append(got, j.ID)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("list %s: %v, want %v", c.query, got, c.want)
		}
	}
	if code, _ := s.do(t, "GET", "/api/jobs?status=done", nil); code != 400 {
		t.Errorf("status=done: %d, want 400", code)
	}

	// Stop: a long run ends stopped with what it measured; it cannot be
	// deleted while it runs.
	long := submit(t, s.url, testToken, map[string]any{"kind": "run", "db": u,
		"options": map[string]any{"vus": 1, "duration": "5m", "rampup": "0s"}})
	waitStatus(t, s.url, testToken, long, 20*time.Second, "running")
	if code, b := s.do(t, "DELETE", fmt.Sprintf("/api/jobs/%d", long), nil); code != http.StatusConflict {
		t.Errorf("delete a running job: %d %s, want 409", code, b)
	}
	time.Sleep(1500 * time.Millisecond) // a measured second or so
	code, b = s.do(t, "POST", fmt.Sprintf("/api/jobs/%d/stop", long), nil)
	var stopped jobJSON
	_ = json.Unmarshal(b, &stopped)
	if code != 200 || stopped.Status != "stopped" {
		t.Fatalf("stop: %d %s, want 200 and stopped", code, b)
	}
	if len(stopped.Result) < 10 {
		t.Errorf("a stopped run keeps what it measured: result %s", stopped.Result)
	}
	if code, _ := s.do(t, "POST", fmt.Sprintf("/api/jobs/%d/stop", long), nil); code != http.StatusConflict {
		t.Errorf("stop a stopped job: %d, want 409", code)
	}

	for _, c := range []struct {
		id   int64
		want int
	}{{long, 204}, {long, 404}, {chk, 204}} {
		if code, b := s.do(t, "DELETE", fmt.Sprintf("/api/jobs/%d", c.id), nil); code != c.want {
			t.Errorf("delete %d: %d %s, want %d", c.id, code, b, c.want)
		}
	}
	if code, _ := s.do(t, "GET", fmt.Sprintf("/api/jobs/%d", long), nil); code != 404 {
		t.Errorf("a deleted job: %d, want 404", code)
	}

	// The command line's jobs on the same store are the service's too.
	var stderr bytes.Buffer
	if c := cli.Main(context.Background(), []string{"run", "--db", u, "-t", "10", "--json", "--jobs-db", s.store},
		cli.Env{Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }}); c != 0 {
		t.Fatalf("sledge run: exit %d: %s", c, stderr.String())
	}
	_, b = s.do(t, "GET", "/api/jobs?kind=run&limit=1", nil)
	var l struct{ Jobs []jobJSON }
	if err := json.Unmarshal(b, &l); err != nil || len(l.Jobs) != 1 || l.Jobs[0].ID <= long || l.Jobs[0].Status != "completed" {
		t.Errorf("the command line's run is not listed: %v %s", err, b)
	}

	_, b = s.do(t, "GET", "/api/databases", nil)
	var dbs struct {
		Databases []struct {
			URL     string `json:"url"`
			Default bool   `json:"default"`
			Jobs    int    `json:"jobs"`
		} `json:"databases"`
	}
	if err := json.Unmarshal(b, &dbs); err != nil {
		t.Fatalf("databases: %v %s", err, b)
	}
	var def, ours bool
	for _, d := range dbs.Databases {
		def = def || d.Default && strings.HasSuffix(d.URL, "/tpcc.db")
		ours = ours || d.URL == u && d.Jobs == 2
	}
	if !def || !ours {
		t.Errorf("databases: want the default and %s with 2 jobs: %s", u, b)
	}
}

// A password in a submitted URL never shows: not in an answer, not in
// the events, not in the job store's bytes.
func TestServeNoPassword(t *testing.T) {
	const pw = "s3cretpw"
	s := startService(t, "")
	u := "postgres://u:" + pw + "@127.0.0.1:1/x"
	id := submit(t, s.url, testToken, map[string]any{"kind": "run", "db": u, "options": map[string]any{"vus": 1}})
	j := waitStatus(t, s.url, testToken, id, 20*time.Second, "failed")
	if j.Error == "" {
		t.Error("a failed job says why")
	}
	var seen bytes.Buffer
	for _, p := range []string{"/api/jobs", fmt.Sprintf("/api/jobs/%d", id), fmt.Sprintf("/api/jobs/%d/timeseries", id),
		"/api/databases", "/api/jobs?db=" + u} {
		_, b := s.do(t, "GET", p, nil)
		seen.Write(b)
	}
	for _, body := range []map[string]any{
		{"kind": "run", "db": u}, // 201: the failed one has ended
		{"kind": "run", "db": u, "options": map[string]any{"vuz": 1}},      // 400
		{"kind": "run", "db": "postgres://u:" + pw + "@127.0.0.1:99999/x"}, // 400: bad port
	} {
		_, b := s.do(t, "POST", "/api/jobs", body)
		seen.Write(b)
	}
	for _, e := range readEvents(t, s.url, testToken, id, 5*time.Second) {
		seen.WriteString(e.data)
	}
	if bytes.Contains(seen.Bytes(), []byte(pw)) {
		t.Errorf("an answer shows the password:\n%s", seen.String())
	}
	if !bytes.Contains(seen.Bytes(), []byte("u:REDACTED@127.0.0.1:1/x")) {
		t.Errorf("the redacted URL is not shown:\n%s", seen.String())
	}
	// Let the second job end before reading the store.
	_, b := s.do(t, "GET", "/api/jobs?status=running", nil)
	for i := 0; i < 100 && bytes.Contains(b, []byte(`"id"`)); i++ {
		time.Sleep(100 * time.Millisecond)
		_, b = s.do(t, "GET", "/api/jobs?status=running", nil)
	}
	for _, suffix := range []string{"", "-wal"} {
		if b, err := os.ReadFile(s.store + suffix); err == nil && bytes.Contains(b, []byte(pw)) {
			t.Errorf("the job store (%s) holds the password", filepath.Base(s.store+suffix))
		}
	}
}

// A run on the private PostgreSQL server, submitted with its password.
func TestServeRunPostgres(t *testing.T) {
	srv := pgServer.Get(t)
	srv.DropAtEnd(t, "service_serve")
	u := fmt.Sprintf("postgres://%s:%s@%s:%d/service_serve", srv.User, srv.Password, srv.Host, srv.Port)
	s := startService(t, "")
	b := submit(t, s.url, testToken, map[string]any{"kind": "build", "db": u, "options": map[string]any{"warehouses": 1}})
	if j := waitStatus(t, s.url, testToken, b, 60*time.Second, "completed", "failed"); j.Status != "completed" {
		t.Fatalf("build: %s: %s", j.Status, j.Error)
	}
	id := submit(t, s.url, testToken, map[string]any{"kind": "run", "db": u,
		"options": map[string]any{"vus": 2, "duration": "3s", "rampup": "0s", "mode": "procedure"}})
	evs := readEvents(t, s.url, testToken, id, 40*time.Second)
	j := waitStatus(t, s.url, testToken, id, 10*time.Second, "completed", "failed")
	var res struct {
		NOPM *float64 `json:"nopm"`
		Mode string   `json:"mode"`
	}
	if err := json.Unmarshal(j.Result, &res); j.Status != "completed" || err != nil || res.NOPM == nil || *res.NOPM <= 0 || res.Mode != "procedure" {
		t.Fatalf("run: %s %s %v: %s", j.Status, j.Error, err, j.Result)
	}
	if len(evs) < 2 || j.DB.Driver != "postgres" {
		t.Errorf("%d events, driver %q", len(evs), j.DB.Driver)
	}
	_, all := s.do(t, "GET", fmt.Sprintf("/api/jobs/%d", id), nil)
	if bytes.Contains(all, []byte(srv.Password)) {
		t.Error("the job shows the server's password")
	}
}

// A compare job's stream carries its cells' ticks, each marked with the
// cell's job id, then done with the compare's result.
func TestServeCompareStream(t *testing.T) {
	s := startService(t, "")
	u := sqliteDB(t)
	id := submit(t, s.url, testToken, map[string]any{"kind": "compare", "db": u,
		"options": map[string]any{"modes": "client,prepared", "vus": "1", "duration": "2s", "rampup": "0s"}})
	evs := readEvents(t, s.url, testToken, id, 60*time.Second)
	cells := map[float64]bool{}
	for _, e := range evs {
		if e.event != "tick" {
			continue
		}
		var tk map[string]any
		if err := json.Unmarshal([]byte(e.data), &tk); err != nil {
			t.Fatalf("tick: %v: %s", err, e.data)
		}
		c, ok := tk["cell"].(float64)
		if !ok || c == float64(id) || tk["nopm"] == nil {
			t.Errorf("a compare tick without its cell or NOPM: %s", e.data)
			continue
		}
		cells[c] = true
	}
	if len(cells) != 2 {
		t.Errorf("ticks from %d cells, want 2 (client, prepared): %v", len(cells), evs)
	}
	var done struct {
		Cells []struct {
			Mode  string `json:"mode"`
			JobID int64  `json:"job_id"`
		} `json:"cells"`
	}
	if last := evs[len(evs)-1]; json.Unmarshal([]byte(last.data), &done) != nil || len(done.Cells) != 2 {
		t.Fatalf("done is not the compare's result: %s", last.data)
	}
	for _, c := range done.Cells {
		if !cells[float64(c.JobID)] {
			t.Errorf("cell %s (job %d) sent no tick on the compare's stream", c.Mode, c.JobID)
		}
	}
}
