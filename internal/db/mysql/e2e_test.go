package mysql_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/sledge-bench/sledge/internal/cli"
	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/testdb"
	"github.com/sledge-bench/sledge/internal/workload"
)

// One private server for the whole test binary; each test group gets its
// own database.
var (
	server   *testdb.Server
	startErr error
)

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	server, startErr = testdb.StartMariaDB(ctx)
	cancel()
	code := m.Run()
	if server != nil {
		if err := server.Stop(); err != nil && code == 0 {
			fmt.Fprintln(os.Stderr, "stop MariaDB:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func need(t *testing.T) *testdb.Server {
	t.Helper()
	return testdb.Need(t, server, startErr)
}

// tcpURL and unixURL name database name on the test server.
func tcpURL(s *testdb.Server, user, pass, name string) string {
	u := url.URL{Scheme: "mysql", User: url.UserPassword(user, pass), Host: s.Host + ":" + strconv.Itoa(s.Port), Path: "/" + name}
	return u.String()
}

func unixURL(s *testdb.Server, name string) string {
	u := url.URL{Scheme: "mysql", User: url.UserPassword(s.User, s.Password), Path: "/" + name,
		RawQuery: url.Values{"socket": {s.Socket}}.Encode()}
	return u.String()
}

// admin runs statements as root on the server, without a database.
func admin(t *testing.T, s *testdb.Server, stmts ...string) {
	t.Helper()
	c := gomysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr = s.User, s.Password, "unix", s.Socket
	d, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, q := range stmts {
		if _, err := d.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// freshDB drops and creates database name and returns its TCP URL.
func freshDB(t *testing.T, s *testdb.Server, name string) string {
	t.Helper()
	admin(t, s, "DROP DATABASE IF EXISTS "+name, "CREATE DATABASE "+name)
	return tcpURL(s, s.User, s.Password, name)
}

// sledge runs the CLI in-process and returns its output and exit status.
func sledge(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	home := t.TempDir()
	env := cli.Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "XDG_DATA_HOME" || k == "HOME" {
			return home
		}
		return ""
	}}
	code = cli.Main(context.Background(), args, env)
	return out.String(), errb.String(), code
}

// cloneDB makes database to a copy of database from (testdb's
// CopyDatabase: MariaDB has no CREATE DATABASE … TEMPLATE) and returns
// to's TCP URL.
func cloneDB(t *testing.T, s *testdb.Server, from, to string) string {
	t.Helper()
	s.CopyDatabase(t, from, to)
	return tcpURL(s, s.User, s.Password, to)
}

func build(t *testing.T, dbURL string, seed int) {
	t.Helper()
	if _, stderr, code := sledge(t, "build", "--db", dbURL, "--warehouses", "1", "--build-vus", "2", "--seed", strconv.Itoa(seed), "--json"); code != 0 {
		t.Fatalf("build %s: exit %d: %s", db.Redact(dbURL), code, stderr)
	}
}

var (
	sharedOnce sync.Once
	sharedErr  error
)

// shared is a built one-warehouse database for tests that only run
// transactions against it.
func shared(t *testing.T) string {
	s := need(t)
	name := "sledge_shared"
	sharedOnce.Do(func() {
		admin(t, s, "DROP DATABASE IF EXISTS "+name)
		if _, stderr, code := sledge(t, "build", "--db", tcpURL(s, s.User, s.Password, name), "--warehouses", "1", "--build-vus", "2", "--seed", "3", "--json"); code != 0 {
			sharedErr = errors.New(stderr)
		}
	})
	if sharedErr != nil {
		t.Fatalf("build: %v", sharedErr)
	}
	return name
}

var modes = []workload.Mode{workload.ModeProcedure, workload.ModeClient, workload.ModePrepared, workload.ModeBatched, workload.ModeBlock}

// runModes runs f once per supported mode, as subtests named by mode.
func runModes(t *testing.T, f func(t *testing.T, m workload.Mode)) {
	t.Helper()
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) { f(t, m) })
	}
}

// TestRunAndCheck: runs over TCP and the unix socket in every mode, with
// the summary's figures coming from the database, then the consistency
// check.
func TestRunAndCheck(t *testing.T) {
	s := need(t)
	name := shared(t)
	urls := map[string]string{"tcp": tcpURL(s, s.User, s.Password, name), "unix": unixURL(s, name)}
	runModes(t, func(t *testing.T, m workload.Mode) {
		for _, transport := range []string{"tcp", "unix"} {
			t.Run(transport, func(t *testing.T) {
				u := urls[transport]
				stdout, stderr, code := sledge(t, "run", "--db", u, "--mode", m.String(), "--vus", "2",
					"--iterations", "150", "--seed", "11", "--json")
				if code != 0 {
					t.Fatalf("run: exit %d: %s", code, stderr)
				}
				var sum struct {
					Transport string   `json:"transport"`
					Mode      string   `json:"mode"`
					TPMSource string   `json:"tpm_source"`
					TPMNote   string   `json:"tpm_note"`
					NOPM      *float64 `json:"nopm"`
					Total     struct {
						Count, Errors, Rollbacks, Retries int64
					} `json:"total"`
					Types []struct {
						Name      string `json:"name"`
						Rollbacks int64  `json:"rollbacks"`
					} `json:"types"`
				}
				if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
					t.Fatalf("summary: %v: %s", err, stdout)
				}
				// Retried attempts (a deadlock between the two VUs) are rollbacks
				// to the database: then sledge's own count is the headline, and
				// the note says why.
				retried := sum.TPMSource == "client" && sum.Total.Retries > 0 && strings.Contains(sum.TPMNote, "retried attempts")
				if sum.Transport != transport || sum.Mode != m.String() || (sum.TPMSource != "database" && !retried) {
					t.Errorf("transport %q mode %q tpm_source %q (%s)", sum.Transport, sum.Mode, sum.TPMSource, sum.TPMNote)
				}
				if sum.NOPM == nil || *sum.NOPM <= 0 {
					t.Errorf("nopm = %v, want > 0", sum.NOPM)
				}
				if sum.Total.Count != 300 || sum.Total.Errors != 0 {
					t.Errorf("count %d errors %d, want 300 and 0", sum.Total.Count, sum.Total.Errors)
				}
				if strings.Contains(stdout+stderr, s.Password) {
					t.Error("the password appears in the output")
				}
			})
		}
		if _, stderr, code := sledge(t, "check", "--db", urls["tcp"]); code != 0 {
			t.Fatalf("check after %s: exit %d: %s", m, code, stderr)
		}
	})
}

// tableHashes digests every table's rows in key order, without the
// columns that hold the server's clock.
func tableHashes(t *testing.T, s *testdb.Server, name string) map[string]string {
	t.Helper()
	c := gomysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = s.User, s.Password, "unix", s.Socket, name
	d, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	queries := map[string]string{
		"warehouse":  "SELECT * FROM warehouse ORDER BY w_id",
		"district":   "SELECT * FROM district ORDER BY d_w_id, d_id",
		"customer":   "SELECT c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data FROM customer ORDER BY c_w_id, c_d_id, c_id",
		"history":    "SELECT h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_amount, h_data FROM history ORDER BY 1, 2, 3, 4, 5, 6, 7",
		"orders":     "SELECT o_id, o_d_id, o_w_id, o_c_id, o_carrier_id, o_ol_cnt, o_all_local FROM orders ORDER BY o_w_id, o_d_id, o_id",
		"new_order":  "SELECT * FROM new_order ORDER BY no_w_id, no_d_id, no_o_id",
		"order_line": "SELECT ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d IS NULL, ol_quantity, ol_amount, ol_dist_info FROM order_line ORDER BY ol_w_id, ol_d_id, ol_o_id, ol_number",
		"item":       "SELECT * FROM item ORDER BY i_id",
		"stock":      "SELECT * FROM stock ORDER BY s_w_id, s_i_id",
	}
	// Hashed on the server, as a multiset of rows: each row's values
	// joined (NULL written as such), and a sum and an exclusive or of two
	// hashes of that text, in no order (reading every row into the test,
	// or sorting them, took a visible share of the suite's CPU).
	out := map[string]string{}
	for table, q := range queries {
		rows, err := d.Query(q + " LIMIT 0")
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		cols, err := rows.Columns()
		rows.Close()
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]string, len(cols))
		for i, c := range cols {
			vals[i] = "COALESCE(q.`" + c + "`, '\\0NULL')"
		}
		row := "CONCAT_WS(0x1f, " + strings.Join(vals, ", ") + ")"
		var n int64
		var sum, xor string
		err = d.QueryRow("SELECT COUNT(*), CAST(COALESCE(SUM(CRC32("+row+")), 0) AS CHAR), "+
			"CAST(COALESCE(BIT_XOR(CONV(LEFT(MD5("+row+"), 16), 16, 10)), 0) AS CHAR) FROM ("+q+") q").Scan(&n, &sum, &xor)
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		out[table] = fmt.Sprintf("%d rows %s/%s", n, sum, xor)
	}
	return out
}

// TestModesSameContents: one VU, the same seeds and iterations, on
// databases built alike, leave identical tables in every mode, with the
// VU's own connection or a shared one (--connections 1): the procedures,
// and the blocks made of their bodies, do what the client does.
//
// The variants run in chains of three (testdb.Chains), each chain on a
// copy of one build, its k-th run with seed 77+k, and must leave the tables
// the client chain leaves. Copying and hashing the database, not the runs,
// was most of this test's time (3.1 s and 2.3 s a variant against 0.7 s).
func TestModesSameContents(t *testing.T) {
	s := need(t)
	// Each mode with the VU's own connection, and taking the one shared
	// connection for each transaction (--connections 1, the pooled path).
	type variant struct {
		name  string
		mode  workload.Mode
		extra []string
		loop  bool   // io=loop: the VU a coroutine of an event loop
		wait  string // the loops' wait (loopwait=), "": the default
	}
	client := variant{"client", workload.ModeClient, nil, false, ""}
	var variants []variant
	for _, m := range append(modes, workload.ModePipeline) {
		if m != workload.ModeClient {
			variants = append(variants, variant{m.String(), m, nil, false, ""})
		}
		variants = append(variants,
			variant{m.String() + "_pooled", m, []string{"--connections", "1"}, false, ""},
			variant{m.String() + "_loop", m, nil, true, ""})
		// Pooled on loops (a shared connection moving between loops) in
		// the two modes on sledge's own wire: every mode pooled and every
		// mode on loops are above, and the suite's time is tight.
		if m == workload.ModeProcedure || m == workload.ModePrepared {
			variants = append(variants, variant{m.String() + "_pooled_loop", m, []string{"--connections", "1"}, true, ""})
		}
	}
	// The io_uring wait in one representative mode (the suite's time is
	// tight; the loop's tests cover both waits).
	variants = append(variants, variant{"procedure_loop_io_uring", workload.ModeProcedure, nil, true, "io_uring"})
	chains := testdb.Chains(client, variants, 3)
	chainName := func(c []variant) string { return testdb.ChainName(c, func(v variant) string { return v.name }) }
	// One build, copied for each chain (cloneDB).
	var (
		tmplOnce sync.Once
		tmpl     string
	)
	template := func(t *testing.T) string {
		tmplOnce.Do(func() {
			const name = "sledge_same_template"
			build(t, freshDB(t, s, name), 5)
			tmpl = name // only once built: a failed build fails every chain
		})
		if tmpl == "" || t.Failed() {
			t.FailNow()
		}
		return tmpl
	}
	hashes := map[string]map[string]string{}
	var mu sync.Mutex
	// Each chain on a database of its own, side by side: one VU waits on
	// the server far more than it computes. No run here reads the
	// server-wide TPM counters the others would disturb.
	t.Run("runs", func(t *testing.T) {
		for i, c := range chains {
			t.Run(chainName(c), func(t *testing.T) {
				t.Parallel()
				name := fmt.Sprintf("sledge_same_%d", i)
				base := cloneDB(t, s, template(t), name)
				for k, v := range c {
					u := base
					if v.loop {
						q := "io=loop"
						if v.wait != "" {
							q += "&loopwait=" + v.wait
						}
						if strings.Contains(u, "?") {
							u += "&" + q
						} else {
							u += "?" + q
						}
					}
					stdout, stderr, code := sledge(t, append([]string{"run", "--db", u, "--mode", v.mode.String(), "--vus", "1",
						"--iterations", "300", "--seed", strconv.Itoa(77 + k), "--json"}, v.extra...)...)
					if code != 0 {
						t.Fatalf("run %s: exit %d: %s", v.name, code, stderr)
					}
					if v.wait != "" && !strings.Contains(stdout, `"loop_wait": "`+v.wait+`"`) {
						t.Errorf("run %s: not on a %s wait: %.300s", v.name, v.wait, stdout)
					}
				}
				h := tableHashes(t, s, name)
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
	for table, want := range hashes[ref] {
		for _, c := range chains[1:] {
			if got := hashes[chainName(c)][table]; got != want {
				t.Errorf("%s differs after %s: %s, after %s %s", table, chainName(c), got, ref, want)
			}
		}
	}
	// The hashes see the runs' writes: the tables the transactions change
	// differ from the built database's, the item table does not.
	before := tableHashes(t, s, tmpl)
	for _, table := range []string{"orders", "order_line", "new_order", "stock", "customer", "district", "history"} {
		if before[table] == hashes[ref][table] {
			t.Errorf("%s: the same hash before and after 900 transactions: %s", table, before[table])
		}
	}
	if before["item"] != hashes[ref]["item"] {
		t.Errorf("item changed: %s, built %s", hashes[ref]["item"], before["item"])
	}
}

// TestBadInput: each mistake is one clear line and a non-zero exit.
func TestBadInput(t *testing.T) {
	s := need(t)
	port, err := testdb.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	admin(t, s,
		"DROP USER IF EXISTS 'weak'@'127.0.0.1'",
		"CREATE USER 'weak'@'127.0.0.1' IDENTIFIED BY 'weakpw'",
		"DROP DATABASE IF EXISTS sledge_nocreate")
	empty := freshDB(t, s, "sledge_empty")
	noProcs := freshDB(t, s, "sledge_noprocs")
	build(t, noProcs, 1)
	admin(t, s, "DROP PROCEDURE sledge_noprocs.neword")

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"wrong password", []string{"run", "--db", tcpURL(s, s.User, "wrong-secret", "sledge_empty")},
			"refused user root: wrong password or unknown user"},
		{"unreachable port", []string{"run", "--db", fmt.Sprintf("mysql://root:pw@127.0.0.1:%d/tpcc", port)},
			fmt.Sprintf("cannot reach MariaDB/MySQL at 127.0.0.1:%d: connection refused", port)},
		{"no create privilege", []string{"build", "--db", tcpURL(s, "weak", "weakpw", "sledge_nocreate")},
			"user weak may not create database sledge_nocreate: create it as an administrator or GRANT CREATE"},
		{"no schema", []string{"run", "--db", empty, "--iterations", "1"},
			"no tpcc schema in"},
		{"procedures dropped", []string{"run", "--db", noProcs, "--mode", "procedure", "--iterations", "1"},
			"the tpcc procedures are missing in sledge_noprocs: run `sledge drop` and `sledge build` again"},
		{"unknown parameter", []string{"run", "--db", empty + "?fast=1"},
			"mysql URL: unknown parameter fast"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := sledge(t, tc.args...)
			if code == 0 {
				t.Fatalf("exit 0; stdout %s", stdout)
			}
			line := strings.TrimSpace(stderr)
			if strings.Count(line, "\n") != 0 || !strings.Contains(line, tc.want) {
				t.Errorf("stderr %q, want one line with %q", stderr, tc.want)
			}
			for _, secret := range []string{s.Password, "wrong-secret", "weakpw"} {
				if strings.Contains(stdout+stderr, secret) {
					t.Errorf("output shows a password: %s", stderr)
				}
			}
			t.Logf("exit %d: %s", code, line)
		})
	}
}

var errSurvived = errors.New("survived the deadlock")

// TestErrorMapping: a real deadlock is ErrRetry; New-Order's invalid item
// in procedure and block modes is ErrUserAbort and rolls the whole call
// back.
func TestErrorMapping(t *testing.T) {
	s := need(t)
	name := shared(t)
	ctx := context.Background()
	d, err := db.Open(ctx, tcpURL(s, s.User, s.Password, name))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	runModes(t, func(t *testing.T, m workload.Mode) {
		if m.ProcedureLike() {
			c, err := d.Connect(ctx, "tpcc", m)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			var before, after, oID int64
			if err := c.QueryRow(ctx, "tpcc.nopm").Scan(&before); err != nil {
				t.Fatal(err)
			}
			err = c.QueryRow(ctx, "neword.call", int64(1), int64(1), int64(1), int64(2), "5,100001", "1,1", "3,4").Scan(&oID)
			if !errors.Is(err, workload.ErrUserAbort) {
				t.Fatalf("invalid item: %v, want ErrUserAbort", err)
			}
			if err := c.QueryRow(ctx, "tpcc.nopm").Scan(&after); err != nil {
				t.Fatal(err)
			}
			if after != before {
				t.Errorf("d_next_o_id moved from %d to %d: the call did not roll back", before, after)
			}
			return
		}
		// Two sessions update the same two rows in opposite orders.
		a, err := d.Connect(ctx, "tpcc", m)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close(ctx)
		b, err := d.Connect(ctx, "tpcc", m)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close(ctx)
		aHas, bHas := make(chan struct{}), make(chan struct{})
		tx := func(c workload.Conn, first, second int64, mine, theirs chan struct{}) error {
			return c.InTx(ctx, workload.TxOptions{}, func(ctx context.Context) error {
				if _, err := c.Exec(ctx, "payment.district_update", 1.0, int64(1), first); err != nil {
					return err
				}
				close(mine)
				<-theirs
				if _, err := c.Exec(ctx, "payment.district_update", 1.0, int64(1), second); err != nil {
					return err
				}
				return errSurvived // roll back: the shared database stays consistent
			})
		}
		errs := make(chan error, 2)
		go func() { errs <- tx(a, 1, 2, aHas, bHas) }()
		go func() { errs <- tx(b, 2, 1, bHas, aHas) }()
		e1, e2 := <-errs, <-errs
		if errors.Is(e1, errSurvived) == errors.Is(e2, errSurvived) {
			t.Fatalf("want exactly one survivor: %v, %v", e1, e2)
		}
		if err := errors.Join(e1, e2); !errors.Is(err, workload.ErrRetry) {
			t.Fatalf("deadlock: %v, want ErrRetry", err)
		}
	})
}
