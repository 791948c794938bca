package service_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/cli"
	_ "github.com/sledge-bench/sledge/internal/db/postgres" // the databases these tests run on
	_ "github.com/sledge-bench/sledge/internal/db/sqlite"
	"github.com/sledge-bench/sledge/internal/service"
	"github.com/sledge-bench/sledge/internal/testbin"
	"github.com/sledge-bench/sledge/internal/testdb"
)

// The tests drive real services (httptest on loopback, or the sledge
// binary as a child) over real job stores and real databases: a TPC-C
// SQLite file built once here, and the private PostgreSQL of testdb.

var (
	builtDB string // a one-warehouse TPC-C SQLite file: copy it, never run on it
	binPath string // the sledge binary, for the tests that kill it
	tmpRoot string
	// pgServer is PostgreSQL for the tests that need one: under make test
	// the run's shared server.
	pgServer = testdb.LazyPostgres()
)

func TestMain(m *testing.M) {
	code := func() int {
		var err error
		tmpRoot, err = os.MkdirTemp("", "sledge-service-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(tmpRoot)
		builtDB = filepath.Join(tmpRoot, "tpcc.db")
		var stderr bytes.Buffer
		if c := cli.Main(context.Background(), []string{"build", "--db", "sqlite://" + builtDB, "--no-job", "--seed", "7"},
			cli.Env{Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }}); c != 0 {
			fmt.Fprintf(os.Stderr, "build: exit %d: %s", c, stderr.String())
			return 1
		}
		var cleanup func()
		binPath, cleanup, err = testbin.Sledge(context.Background(), "")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer cleanup()
		code := m.Run()
		if err := pgServer.Stop(); err != nil && code == 0 {
			fmt.Fprintln(os.Stderr, "stop postgres:", err)
			code = 1
		}
		return code
	}()
	os.Exit(code)
}

// sqliteDB returns a fresh copy of the built database as a URL.
func sqliteDB(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(builtDB)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "tpcc.db")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return "sqlite://" + p
}

const testToken = "t0ken-for-tests"

// svc is a service under test on a loopback port.
type svc struct {
	*service.Service
	url, store, home string
}

func startService(t *testing.T, store string) *svc {
	t.Helper()
	home := t.TempDir()
	if store == "" {
		store = filepath.Join(home, "jobs.db")
	}
	getenv := func(k string) string {
		if k == "XDG_DATA_HOME" || k == "HOME" {
			return home
		}
		return ""
	}
	s, err := service.New(context.Background(), service.Config{JobsDB: store, Token: testToken, Execute: cli.Execute,
		Check: cli.CheckSpec, Getenv: getenv, Version: "test",
		DefaultDB: func(wl string) string { return "sqlite://" + filepath.Join(home, "sledge", wl+".db") }})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return &svc{Service: s, url: hs.URL, store: store, home: home}
}

// call sends a request with the token (auth "" sends none) and returns
// the status and body.
func call(t *testing.T, base, auth, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func (s *svc) do(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	return call(t, s.url, testToken, method, path, body)
}

// jobJSON is GET /api/jobs/{id}.
type jobJSON struct {
	ID          int64           `json:"id"`
	Kind        string          `json:"kind"`
	Status      string          `json:"status"`
	StoreStatus string          `json:"store_status"`
	Spec        json.RawMessage `json:"spec"`
	Result      json.RawMessage `json:"result"`
	Database    string          `json:"database"`
	Error       string          `json:"error"`
	DB          struct {
		Driver string `json:"driver"`
	} `json:"db"`
	TxTypes []string `json:"tx_types"`
}

func getJob(t *testing.T, base, auth string, id int64) jobJSON {
	t.Helper()
	code, b := call(t, base, auth, "GET", fmt.Sprintf("/api/jobs/%d", id), nil)
	if code != http.StatusOK {
		t.Fatalf("GET job %d: %d %s", id, code, b)
	}
	var j jobJSON
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatalf("job %d: %v: %s", id, err, b)
	}
	return j
}

// submit posts a job and returns its id, failing unless 201.
func submit(t *testing.T, base, auth string, body map[string]any) int64 {
	t.Helper()
	code, b := call(t, base, auth, "POST", "/api/jobs", body)
	if code != http.StatusCreated {
		t.Fatalf("POST /api/jobs %v: %d %s", body, code, b)
	}
	var r struct{ ID int64 }
	if err := json.Unmarshal(b, &r); err != nil || r.ID == 0 {
		t.Fatalf("POST /api/jobs: %v %s", err, b)
	}
	return r.ID
}

// waitStatus polls the job until its status is one of want.
func waitStatus(t *testing.T, base, auth string, id int64, within time.Duration, want ...string) jobJSON {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		j := getJob(t, base, auth, id)
		for _, w := range want {
			if j.Status == w {
				return j
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d is %s after %s, want %s (error %q)", id, j.Status, within, strings.Join(want, " or "), j.Error)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sse is one Server-Sent Event.
type sse struct{ event, data string }

// readEvents reads the job's event stream until done (or the timeout).
func readEvents(t *testing.T, base, auth string, id int64, within time.Duration) []sse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/api/jobs/%d/events", base, id), nil)
	req.Header.Set("Authorization", "Bearer "+auth)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, ct)
	}
	var out []sse
	var cur sse
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data += strings.TrimPrefix(line, "data: ")
		case line == "":
			out = append(out, cur)
			if cur.event == "done" {
				return out
			}
			cur = sse{}
		}
	}
	t.Fatalf("events of job %d ended without done after %d events (%v)", id, len(out), sc.Err())
	return nil
}
