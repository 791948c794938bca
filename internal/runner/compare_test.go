package runner

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/pflag"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
	_ "github.com/sledge-bench/sledge/internal/workload/all" // tpcb

	_ "github.com/sledge-bench/sledge/internal/db/mysql"    // mysql:, mariadb:
	_ "github.com/sledge-bench/sledge/internal/db/postgres" // postgres:, postgresql:
	_ "github.com/sledge-bench/sledge/internal/db/sqlite"   // sqlite:, sqlite3:
)

// Transports derived from one URL, each way.
func TestTransportURLs(t *testing.T) {
	cases := []struct {
		name                         string
		db, transports, socket, host string
		port                         int
		want                         map[string]string
	}{
		{"postgres tcp to unix", "postgres://u:p@127.0.0.1:5433/tpcc?sslmode=disable", "tcp,unix", "/run/pg", "", 0,
			map[string]string{"tcp": "postgres://u:p@127.0.0.1:5433/tpcc?sslmode=disable", "unix": "postgres://u:p@/tpcc?host=%2Frun%2Fpg&port=5433&sslmode=disable"}},
		{"postgres unix to tcp", "postgres://u:p@/tpcc?host=/run/pg&port=5433", "unix,tcp", "", "127.0.0.1", 0,
			map[string]string{"tcp": "postgres://u:p@127.0.0.1:5433/tpcc"}},
		{"postgres unix to tcp, port given", "postgres://u@/tpcc?host=/run/pg", "tcp", "", "10.0.0.2", 6000,
			map[string]string{"tcp": "postgres://u@10.0.0.2:6000/tpcc"}},
		{"mysql tcp to unix", "mysql://root:p@127.0.0.1:3307/tpcc?isolation=read-committed", "unix", "/run/mysqld/mysqld.sock", "", 0,
			map[string]string{"unix": "mysql://root:p@/tpcc?isolation=read-committed&socket=%2Frun%2Fmysqld%2Fmysqld.sock"}},
		{"mysql unix to tcp", "mysql://root:p@/tpcc?socket=/tmp/m.sock", "tcp", "", "127.0.0.1", 0,
			map[string]string{"tcp": "mysql://root:p@127.0.0.1:3306/tpcc"}},
		{"sqlite default", "sqlite:///tmp/x.db", "", "", "", 0, map[string]string{"embedded": "sqlite:///tmp/x.db"}},
		// The driver, not a list of schemes in compare, knows its URLs: the
		// mariadb:// alias derives transports as mysql:// does.
		{"mariadb scheme tcp to unix", "mariadb://root:p@127.0.0.1:3307/tpcc", "tcp,unix", "/run/m.sock", "", 0,
			map[string]string{"tcp": "mariadb://root:p@127.0.0.1:3307/tpcc", "unix": "mariadb://root:p@/tpcc?socket=%2Frun%2Fm.sock"}},
		{"postgresql scheme unix to tcp", "postgresql://u@/tpcc?host=/run/pg", "tcp", "", "::1", 0,
			map[string]string{"tcp": "postgresql://u@[::1]:5432/tpcc"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := TransportURLs(c.db, &CompareOptions{Transports: c.transports, Socket: c.socket, Host: c.host, Port: c.port})
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range got {
				w, ok := c.want[g.Transport]
				if ok && g.URL != w {
					t.Errorf("%s: %s, want %s", g.Transport, g.URL, w)
				}
				if _, err := url.Parse(g.URL); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// Compare runs every cell through Execute and shows the compare only
// through its hooks, in order; a bad matrix is refused before any cell.
func TestCompareHooks(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	getenv := func(k string) string {
		if k == "HOME" || k == "XDG_DATA_HOME" {
			return home
		}
		return ""
	}
	url := "sqlite://" + filepath.Join(home, "tpcb.db")
	if r := Execute(ctx, Spec{Version: SpecVersion, Kind: "build", Workload: "tpcb", DB: url, Options: map[string]any{"scale": 1}},
		Exec{Getenv: getenv, NoJob: true}); r.Code != ExitOK {
		t.Fatalf("build: exit %d: %s", r.Code, r.Err)
	}
	m, err := workload.Lookup("tpcb")
	if err != nil {
		t.Fatal(err)
	}
	newW := m.Flags("run", pflag.NewFlagSet("tpcb", pflag.ContinueOnError))
	var events []string
	env := CompareEnv{Stderr: io.Discard, Getenv: getenv,
		Header: func(w workload.Workload, _ string, _ db.Info, cells int, seed uint64) {
			events = append(events, fmt.Sprintf("header %s %d cells seed %d", w.Name(), cells, seed))
		},
		Cell: func(c *CompareCell) func() {
			events = append(events, c.What)
			return func() { events = append(events, "stop") }
		},
		CellDone: func(c *CompareCell) {
			events = append(events, fmt.Sprintf("done %s %v", c.Mode, c.TPM > 0))
		},
		Result: func(c *CompareJSON) error {
			events = append(events, fmt.Sprintf("result %d cells %d pairs", len(c.Cells), len(c.Pairs)))
			return nil
		},
	}
	w, err := newW(7)
	if err != nil {
		t.Fatal(err)
	}
	o := &CompareOptions{Modes: "client,prepared", VUs: "1", Iterations: 3, Host: "127.0.0.1", Seed: 7, SeedSet: true, Explicit: true}
	out, err := Compare(ctx, env, o, w, url)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"header tpcb 2 cells seed 7",
		"cell 1/2: client · embedded · 1 VU", "stop", "done client true",
		"cell 2/2: prepared · embedded · 1 VU", "stop", "done prepared true",
		"result 2 cells 1 pairs"}
	if !slices.Equal(events, want) {
		t.Errorf("hooks:\n%q\nwant\n%q", events, want)
	}
	if out.Seed != 7 || out.Interrupted || len(out.Cells) != 2 || out.Cells[0].Transactions != 3 || out.Cells[0].JobID != nil {
		t.Errorf("result %+v", out)
	}

	events = nil
	o = &CompareOptions{Modes: "procedure", VUs: "1", Iterations: 3, Host: "127.0.0.1", Explicit: true}
	if out, err := Compare(ctx, env, o, w, url); ExitCode(ctx, err) != ExitUsage || out != nil || len(events) > 0 {
		t.Errorf("a bad matrix: %v, exit %d, result %v, hooks %q; want exit 2 before any cell", err, ExitCode(ctx, err), out, events)
	}
}
