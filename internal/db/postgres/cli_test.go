package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/testdb"
	"github.com/sledge-bench/sledge/internal/workload"
)

type runJSON struct {
	Transport string   `json:"transport"`
	Mode      string   `json:"mode"`
	TPMSource string   `json:"tpm_source"`
	TPMNote   string   `json:"tpm_note"`
	NOPM      *float64 `json:"nopm"`
	Total     struct {
		Count   int64 `json:"count"`
		Errors  int64 `json:"errors"`
		Retries int64 `json:"retries"`
	} `json:"total"`
	Errors   []json.RawMessage `json:"errors"`
	Settings map[string]string `json:"db_settings"`
}

// build, run and check through the CLI, in every mode, over TCP and the
// unix socket, and with routines=procedures.
func TestCLIRunAndCheck(t *testing.T) {
	s := server(t)
	urls := map[string]func(*testdb.Server, string) string{"tcp": tcpURL, "unix": unixURL}
	// Every run on a database of its own: they wait on the server more
	// than they compute, so they run side by side.
	for _, transport := range []string{"tcp", "unix"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			runModes(t, func(t *testing.T, m workload.Mode) {
				t.Parallel()
				u := urls[transport](s, freshDB(t))
				runAndCheck(t, u, m, transport)
			})
		})
	}
	t.Run("pipeline", func(t *testing.T) {
		t.Parallel()
		runAndCheck(t, tcpURL(s, freshDB(t)), workload.ModePipeline, "tcp")
	})
	t.Run("routines=procedures", func(t *testing.T) {
		t.Parallel()
		u := tcpURL(s, freshDB(t)) + "?routines=procedures"
		res := runAndCheck(t, u, workload.ModeProcedure, "tcp")
		if res.Settings["routines"] != "procedures" {
			t.Errorf("db_settings routines = %q", res.Settings["routines"])
		}
	})
}

func runAndCheck(t *testing.T, u string, m workload.Mode, transport string) runJSON {
	t.Helper()
	code, out, stderr := sledge(t, "run", "--db", u, "--mode", m.String(), "--vus", "2", "--iterations", "150", "--json")
	if code != 0 {
		var res struct{ Errors json.RawMessage }
		_ = json.Unmarshal([]byte(out), &res)
		t.Fatalf("run: exit %d: %s (errors: %s)", code, stderr, res.Errors)
	}
	var res runJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("run --json: %v\n%s", err, out)
	}
	// The database's count is the headline unless retried attempts (a
	// deadlock or serialization failure between the two VUs, retried by
	// sledge) make it larger: the database counts each as a rollback, and
	// sledge then says so and gives its own count.
	retried := res.TPMSource == "client" && res.Total.Retries > 0 && strings.Contains(res.TPMNote, "retried attempts")
	// Likewise when the database counted more than the run's own (autovacuum
	// and autoanalyze on the fresh database commit there too, more of them
	// on a busy machine): sledge says so and gives its own count.
	retried = retried || (res.TPMSource == "client" && strings.Contains(res.TPMNote, "other sessions were busy"))
	if res.Transport != transport || res.Mode != m.String() || (res.TPMSource != "database" && !retried) {
		t.Errorf("transport %q mode %q tpm_source %q (%s)", res.Transport, res.Mode, res.TPMSource, res.TPMNote)
	}
	if res.NOPM == nil || *res.NOPM <= 0 || res.Total.Count != 300 || res.Total.Errors != 0 || len(res.Errors) != 0 {
		t.Errorf("nopm %v, count %d, errors %d %s", res.NOPM, res.Total.Count, res.Total.Errors, res.Errors)
	}
	if code, out, stderr := sledge(t, "check", "--db", u); code != 0 {
		t.Errorf("check after a %s run: exit %d: %s%s", m, code, out, stderr)
	}
	return res
}

// A fresh build over TCP (the template is built over the socket) passes
// every check, condition 11 included, and a second build refuses.
func TestCLIBuildTCP(t *testing.T) {
	s := server(t)
	u := tcpURL(s, "built_tcp")
	t.Cleanup(func() { _ = tryExec(s, "DROP DATABASE IF EXISTS built_tcp WITH (FORCE)") })
	if code, _, stderr := sledge(t, "build", "--db", u, "--warehouses", "1", "--build-vus", "2"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	code, out, stderr := sledge(t, "check", "--db", u, "--json")
	if code != 0 || strings.Contains(out, "skipped") {
		t.Errorf("check after build: exit %d: %s%s", code, out, stderr)
	}
	code, _, stderr = sledge(t, "build", "--db", u)
	if code == 0 {
		t.Error("second build succeeded")
	}
	oneLine(t, stderr, "already exists")
	if code, _, stderr := sledge(t, "drop", "--db", u); code != 0 {
		t.Fatalf("drop: exit %d: %s", code, stderr)
	}
	// drop removes the routines too.
	ctx := context.Background()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_proc WHERE proname IN ('neword','payment','delivery','slev','ostat')").Scan(&n); err != nil || n != 0 {
		t.Errorf("routines left after drop: %d (%v)", n, err)
	}
}

// One virtual user, one seed, the same iterations: every mode (and CALLed
// procedures) leaves identical table contents, timestamps aside. The
// variants run in chains of three on one copy each (testdb.Chains), the
// k-th run of a chain with seed 7+k, each chain against the client chain:
// hashing the tables was most of this test's time.
func TestSameContentsInEveryMode(t *testing.T) {
	s := server(t)
	type variant struct {
		name, query string
		mode        workload.Mode
		extra       []string
	}
	variants := []variant{
		{"procedure", "", workload.ModeProcedure, nil},
		{"client", "", workload.ModeClient, nil},
		{"prepared", "", workload.ModePrepared, nil},
		{"batched", "", workload.ModeBatched, nil},
		{"procedure-calls", "?routines=procedures", workload.ModeProcedure, nil},
		{"block", "", workload.ModeBlock, nil},
		{"pipeline", "", workload.ModePipeline, nil},
	}
	// The same with the VU taking the one shared connection for each
	// transaction (--connections 1): the pooled path, in every mode.
	for _, v := range variants {
		variants = append(variants, variant{v.name + "-pooled", v.query, v.mode, []string{"--connections", "1"}})
	}
	// And on event loops (io=loop): two VUs' worth of loops for one VU is
	// one loop; pooled, the shared connection moves between them (pooled
	// on loops in the two modes on sledge's own wire only: every mode
	// pooled and every mode on loops are there, and the suite's time is
	// tight).
	for _, v := range variants {
		if v.extra != nil && v.mode != workload.ModeProcedure && v.mode != workload.ModePrepared {
			continue
		}
		q := "?io=loop"
		if v.query != "" {
			q = v.query + "&io=loop"
		}
		variants = append(variants, variant{v.name + "-loop", q, v.mode, v.extra})
	}
	// The io_uring wait in one representative mode (the suite's time is
	// tight; the loop's tests cover both waits).
	variants = append(variants, variant{"procedure-loop-io_uring", "?io=loop&loopwait=io_uring", workload.ModeProcedure, nil})
	var client variant
	var others []variant
	for _, v := range variants {
		if v.name == "client" {
			client = v
		} else {
			others = append(others, v)
		}
	}
	chains := testdb.Chains(client, others, 3)
	chainName := func(c []variant) string { return testdb.ChainName(c, func(v variant) string { return v.name }) }
	hashes := map[string]map[string]string{}
	var mu sync.Mutex
	// Each chain on a database of its own, side by side: one VU waits on
	// the server far more than it computes.
	t.Run("runs", func(t *testing.T) {
		for _, c := range chains {
			t.Run(chainName(c), func(t *testing.T) {
				t.Parallel()
				name := freshDB(t)
				for k, v := range c {
					u := tcpURL(s, name) + v.query
					code, stdout, stderr := sledge(t, append([]string{"run", "--db", u, "--mode", v.mode.String(), "--vus", "1",
						"--iterations", "300", "--seed", strconv.Itoa(7 + k), "--json"}, v.extra...)...)
					if code != 0 {
						t.Fatalf("%s: exit %d: %s", v.name, code, stderr)
					}
					if w, ok := strings.CutPrefix(v.query, "?io=loop&loopwait="); ok && !strings.Contains(stdout, `"loop_wait": "`+w+`"`) {
						t.Errorf("%s: not on a %s wait: %.300s", v.name, w, stdout)
					}
				}
				h := tableHashes(t, name)
				mu.Lock()
				hashes[chainName(c)] = h
				mu.Unlock()
			})
		}
	})
	if t.Failed() {
		return
	}
	ref := chainName(chains[0])
	base := hashes[ref]
	for _, c := range chains[1:] {
		for table, h := range hashes[chainName(c)] {
			if h != base[table] {
				t.Errorf("table %s after %s is %s, after %s %s", table, chainName(c), h, ref, base[table])
			}
		}
	}
	if base["orders"] == "" || strings.HasPrefix(base["orders"], "30000 ") {
		t.Errorf("no new orders were written: %v", base)
	}
	// The hashes see the runs' writes: each table the transactions change
	// hashes differently in an untouched copy of the built database.
	before := tableHashes(t, freshDB(t))
	for _, table := range []string{"warehouse", "district", "customer", "history", "orders", "new_order", "order_line", "stock"} {
		if before[table] == base[table] {
			t.Errorf("%s: the same hash before and after 900 transactions: %s", table, before[table])
		}
	}
}

// tableHashes digests every table's rows in key order without the columns
// that hold the database clock's time.
func tableHashes(t *testing.T, database string) map[string]string {
	t.Helper()
	queries := map[string]string{
		"warehouse":  "SELECT w_id, w_ytd FROM warehouse ORDER BY 1",
		"district":   "SELECT d_w_id, d_id, d_ytd, d_next_o_id FROM district ORDER BY 1, 2",
		"customer":   "SELECT c_w_id, c_d_id, c_id, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data FROM customer ORDER BY 1, 2, 3",
		"history":    "SELECT h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_amount, h_data FROM history ORDER BY 1, 2, 3, 4, 5, 6, 7",
		"orders":     "SELECT o_w_id, o_d_id, o_id, o_c_id, o_carrier_id, o_ol_cnt, o_all_local FROM orders ORDER BY 1, 2, 3",
		"new_order":  "SELECT no_w_id, no_d_id, no_o_id FROM new_order ORDER BY 1, 2, 3",
		"order_line": "SELECT ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d IS NULL, ol_quantity, ol_amount, ol_dist_info FROM order_line ORDER BY 1, 2, 3, 4",
		"stock":      "SELECT s_w_id, s_i_id, s_quantity, s_ytd, s_order_cnt, s_remote_cnt FROM stock ORDER BY 1, 2",
	}
	ctx := context.Background()
	c, err := pgx.Connect(ctx, tcpURL(server(t), database))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	out := map[string]string{}
	for table, q := range queries {
		// Hashed on the server, as a multiset of the rows' text as
		// PostgreSQL prints it: a sum and an exclusive or of two 64-bit
		// hashes of each row, in no order (reading every row into the test,
		// or sorting them, took a visible share of the suite's CPU).
		var n int64
		var sum, xor string
		err := c.QueryRow(ctx, "SELECT count(*), coalesce(sum(hashtextextended(q::text, 1)::numeric), 0)::text, "+
			"coalesce(bit_xor(hashtextextended(q::text, 2)), 0)::text FROM ("+q+") q").Scan(&n, &sum, &xor)
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		out[table] = strconv.FormatInt(n, 10) + " rows " + sum + "/" + xor
	}
	return out
}

// Bad input: one clear line, a non-zero exit, never the password.
func TestCLIBadInput(t *testing.T) {
	s := server(t)
	admin(t, "DROP ROLE IF EXISTS nocreate", "CREATE ROLE nocreate LOGIN PASSWORD 'nocreatepw'",
		"DROP DATABASE IF EXISTS empty_db", "CREATE DATABASE empty_db")
	t.Cleanup(func() { _ = tryExec(s, "DROP DATABASE IF EXISTS empty_db") })
	port, err := testdb.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	noRoutines := freshDB(t)
	execIn(t, noRoutines, "DROP FUNCTION neword")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"wrong password", []string{"run", "--db", fmt.Sprintf("postgres://%s:Wr0ngSecret@%s:%d/tpl", s.User, s.Host, s.Port), "--iterations", "1"},
			[]string{fmt.Sprintf("password authentication failed for user %q", s.User)}},
		{"unreachable port", []string{"run", "--db", fmt.Sprintf("postgres://u:p@127.0.0.1:%d/tpcc", port), "--iterations", "1"},
			[]string{fmt.Sprintf("cannot reach PostgreSQL at 127.0.0.1:%d: connection refused", port)}},
		{"no CREATEDB", []string{"build", "--db", fmt.Sprintf("postgres://nocreate:nocreatepw@%s:%d/newdb", s.Host, s.Port)},
			[]string{`user "nocreate" may not create database "newdb": create it as a superuser, or grant CREATEDB`}},
		{"no schema", []string{"run", "--db", tcpURL(s, "empty_db"), "--iterations", "1"},
			[]string{"no tpcc schema", "sledge build"}},
		{"missing database", []string{"run", "--db", tcpURL(s, "no_such_db"), "--iterations", "1"},
			[]string{`database "no_such_db" does not exist`}},
		{"routines dropped", []string{"run", "--db", tcpURL(s, noRoutines), "--mode", "procedure", "--iterations", "1"},
			[]string{"function neword", "sledge drop", "sledge build"}},
		{"procedures missing their functions", []string{"run", "--db", tcpURL(s, noRoutines) + "?routines=procedures", "--iterations", "1"},
			[]string{"routines=procedures", "function neword"}},
		{"bad routines", []string{"run", "--db", tcpURL(s, noRoutines) + "?routines=both", "--iterations", "1"},
			[]string{"use functions or procedures"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := sledge(t, tt.args...)
			if code == 0 {
				t.Fatalf("exit 0: %s", out)
			}
			oneLine(t, stderr, tt.want...)
			for _, secret := range []string{s.Password, "Wr0ngSecret", "nocreatepw"} {
				if strings.Contains(stderr+out, secret) {
					t.Errorf("output shows a password: %s", stderr)
				}
			}
		})
	}
}
