//go:build cgo

package duckdb_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/cli"
	"github.com/sledge-bench/sledge/internal/db"
)

// sledge runs the CLI in-process with its job store in home.
func sledge(t testing.TB, home string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := cli.Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "HOME" || k == "XDG_DATA_HOME" {
			return home
		}
		return ""
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	code = cli.Main(ctx, args, env)
	return code, out.String(), errb.String()
}

// summary is the part of run's --json contract these tests read.
type summary struct {
	Mode                  string `json:"mode"`
	Transport             string `json:"transport"`
	Failed                int64  `json:"failed"`
	SerializationFailures int64  `json:"serialization_failures"`
	Total                 struct {
		Count, Errors, Retries int64
	} `json:"total"`
}

// builds are the two OLTP workloads at their smallest, built once per
// test binary and copied for each test that needs one (a build of TPC-C
// takes seconds).
var builds = map[string][]string{
	"tpcc": {"--warehouses", "1"},
	"tpcb": {"--scale", "1"},
}

var built = map[string]string{}

// fresh is a copy of a built database of workload w, in a file of its own.
func fresh(t *testing.T, w string) string {
	t.Helper()
	if built[w] == "" {
		dir, err := os.MkdirTemp("", "sledge-duckdb-e2e-")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, w+".duckdb")
		args := append([]string{"build", w, "--db", "duckdb://" + path}, builds[w]...)
		if code, _, errs := sledge(t, t.TempDir(), args...); code != 0 {
			t.Fatalf("build %s: exit %d: %s", w, code, errs)
		}
		built[w] = path
	}
	path := filepath.Join(t.TempDir(), w+".duckdb")
	copyFile(t, built[w], path)
	return path
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestMain(m *testing.M) {
	if path := os.Getenv("SLEDGE_DUCKDB_HOLD"); path != "" {
		// TestSecondProcess's holder: open the file, say so, hold it
		// until stdin closes.
		d, err := db.Open(context.Background(), "duckdb://"+path)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("holding")
		_, _ = io.ReadAll(os.Stdin)
		d.Close()
		os.Exit(0)
	}
	code := m.Run()
	for _, p := range built {
		os.RemoveAll(filepath.Dir(p))
	}
	os.Exit(code)
}

// On each OLTP workload: every supported mode runs (two VUs: conflicts
// are retried), the consistency checks hold afterwards, the other modes
// are refused with one line (exit 2), drop removes the schema.
func TestRunEveryMode(t *testing.T) {
	for _, w := range []string{"tpcc", "tpcb"} {
		t.Run(w, func(t *testing.T) {
			home := t.TempDir()
			u := "duckdb://" + fresh(t, w)
			modes := []string{"client", "prepared", "batched"}
			if w == "tpcb" {
				modes = modes[:2] // tpcb has no batched form anywhere
			}
			for _, m := range modes {
				code, out, errs := sledge(t, home, "run", w, "--db", u, "--mode", m, "--vus", "2",
					"--iterations", "60", "--seed", "5", "--json")
				var s summary
				if err := json.Unmarshal([]byte(out), &s); err != nil {
					t.Fatalf("%s: exit %d: %v: %s", m, code, err, errs)
				}
				// Two VUs may meet on a row more often than the retries
				// allow: such a transaction fails (exit 3) as a
				// serialization failure, never as anything else.
				if (code != 0 && code != 3) || s.Mode != m || s.Transport != "embedded" ||
					s.Total.Count+s.Failed != 120 || s.Failed != s.SerializationFailures {
					t.Errorf("%s: exit %d, %+v: %s", m, code, s, errs)
				}
			}
			if code, out, errs := sledge(t, home, "check", w, "--db", u); code != 0 {
				t.Errorf("check: exit %d: %s%s", code, out, errs)
			}
			refused := []string{"procedure", "block", "pipeline"}
			if w == "tpcb" {
				refused = append(refused, "batched")
			}
			for _, m := range refused {
				code, _, errs := sledge(t, home, "run", w, "--db", u, "--mode", m, "--iterations", "1")
				// DuckDB's refusal, or the workload's own (tpcb has no
				// batched form anywhere): one line that says what to use.
				if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "use ") {
					t.Errorf("--mode %s: exit %d: %q, want exit 2 and one line", m, code, errs)
				}
			}
			if code, _, errs := sledge(t, home, "drop", w, "--db", u); code != 0 {
				t.Fatalf("drop: exit %d: %s", code, errs)
			}
			code, _, errs := sledge(t, home, "run", w, "--db", u, "--iterations", "1")
			if code != 1 || !strings.Contains(errs, "no "+w+" schema") {
				t.Errorf("run after drop: exit %d: %s", code, errs)
			}
		})
	}
}

// tableHashes digests every TPC-C table's rows in key order, without the
// columns that hold the database clock's time.
func tableHashes(t *testing.T, path string) map[string]string {
	t.Helper()
	ctx := context.Background()
	d, err := db.Open(ctx, "duckdb://"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c, err := d.(db.SQLDB).ConnectSQL(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	queries := map[string]string{
		"warehouse":  "SELECT w_id, w_ytd FROM warehouse ORDER BY 1",
		"district":   "SELECT d_w_id, d_id, d_ytd, d_next_o_id FROM district ORDER BY 1, 2",
		"customer":   "SELECT c_w_id, c_d_id, c_id, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data FROM customer ORDER BY 1, 2, 3",
		"history":    "SELECT h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_amount, h_data FROM history ORDER BY 1, 2, 3, 4, 5, 6, 7",
		"orders":     "SELECT o_w_id, o_d_id, o_id, o_c_id, o_carrier_id, o_ol_cnt, o_all_local FROM orders ORDER BY 1, 2, 3",
		"new_order":  "SELECT no_w_id, no_d_id, no_o_id FROM new_order ORDER BY 1, 2, 3",
		"order_line": "SELECT ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d IS NULL, ol_quantity, ol_amount, ol_dist_info FROM order_line ORDER BY 1, 2, 3, 4",
		"stock":      "SELECT s_w_id, s_i_id, s_quantity, s_ytd, s_order_cnt, s_remote_cnt FROM stock ORDER BY 1, 2",
		"item":       "SELECT * FROM item ORDER BY i_id",
	}
	out := map[string]string{}
	for table, q := range queries {
		h := sha256.New()
		n, err := c.QuerySQL(ctx, q, func(vals [][]byte) error {
			for _, v := range vals {
				if v == nil {
					v = []byte("\x00NULL")
				}
				h.Write(v)
				h.Write([]byte{0x1f})
			}
			h.Write([]byte{'\n'})
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		out[table] = fmt.Sprintf("%d rows %s", n, hex.EncodeToString(h.Sum(nil))[:16])
	}
	return out
}

// The transaction logic is written once: with one VU and the same seed,
// client, prepared and batched leave the same table contents, alone or
// taking the one shared connection per transaction (--connections 1);
// another seed changes them, and the item table stays as built.
func TestModesSameContents(t *testing.T) {
	home := t.TempDir()
	base := fresh(t, "tpcc")
	before := tableHashes(t, base)
	hashes := map[string]map[string]string{}
	for _, v := range [][]string{
		{"--mode", "client"}, {"--mode", "prepared"}, {"--mode", "batched"},
		{"--mode", "client", "--connections", "1"}, {"--mode", "prepared", "--connections", "1"},
		{"--mode", "prepared", "--seed", "78"},
	} {
		path := fresh(t, "tpcc")
		args := append([]string{"run", "tpcc", "--db", "duckdb://" + path, "--vus", "1", "--iterations", "100", "--seed", "77", "--json"}, v...)
		if code, _, errs := sledge(t, home, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", v, code, errs)
		}
		hashes[strings.Join(v, " ")] = tableHashes(t, path)
	}
	want := hashes["--mode client"]
	for name, got := range hashes {
		for table := range want {
			switch {
			case strings.Contains(name, "--seed"):
				if table == "order_line" && got[table] == want[table] {
					t.Errorf("seed 78 left the same order lines as seed 77")
				}
			case got[table] != want[table]:
				t.Errorf("%s: %s after --mode client, %s after %s", table, want[table], got[table], name)
			}
		}
	}
	for _, table := range []string{"orders", "order_line", "new_order", "stock", "customer", "district", "history"} {
		if before[table] == want[table] {
			t.Errorf("%s: the same hash before and after 100 transactions: %s", table, before[table])
		}
	}
	if before["item"] != want["item"] {
		t.Errorf("item changed: %s, built %s", want["item"], before["item"])
	}
}

// duckdb::memory: starts empty in every process: run builds what it
// needs first and says so; build and check refuse it with one line.
func TestInMemory(t *testing.T) {
	home := t.TempDir()
	code, out, errs := sledge(t, home, "run", "tpcb", "--db", "duckdb::memory:", "--vus", "1", "--iterations", "20", "--json")
	var s summary
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil || s.Total.Count != 20 || !strings.Contains(errs, "building one first") {
		t.Errorf("run: exit %d, %+v: %s", code, s, errs)
	}
	for _, cmd := range []string{"build", "check"} {
		code, _, errs := sledge(t, home, cmd, "tpcb", "--db", "duckdb::memory:")
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "memory only") {
			t.Errorf("%s: exit %d: %q, want exit 2 and one line", cmd, code, errs)
		}
	}
}

// Bad URLs are one line and exit 2.
func TestBadURLs(t *testing.T) {
	home := t.TempDir()
	for _, u := range []string{"duckdb:", "duckdb::mem:", "duckdb:///x.db?bogus=1", "duckdb://" + filepath.Join(t.TempDir(), "x.db") + "?threads=abc"} {
		code, _, errs := sledge(t, home, "run", "tpcb", "--db", u, "--iterations", "1")
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%s: exit %d: %q, want exit 2 and one line", u, code, errs)
		}
	}
}
