package cli

import (
	"bufio"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/db/sqlite"
)

// tableHashes returns a digest of every table's rows in key order, without
// the columns that hold the database clock's time.
func tableHashes(t *testing.T, path string) map[string]string {
	t.Helper()
	d, err := sql.Open(sqlite.SQLDriverName, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
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
	out := map[string]string{}
	for table, q := range queries {
		rows, err := d.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		h := sha256.New()
		n := 0
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(h, vals...)
			n++
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		out[table] = fmt.Sprintf("%d rows %s", n, hex.EncodeToString(h.Sum(nil))[:16])
	}
	return out
}

func breakData(t *testing.T, path, stmt string) {
	t.Helper()
	d, err := sql.Open(sqlite.SQLDriverName, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Exec(stmt); err != nil {
		t.Fatal(err)
	}
}

// The transaction logic is written once: with one VU and the same seed,
// every mode SQLite runs (client, prepared, batched) must leave the same
// table contents, with the VU's own connection or taking the one shared
// connection per transaction (--connections 1).
func TestModesLeaveTheSameContents(t *testing.T) {
	var want map[string]string
	for _, run := range [][]string{
		{"--mode", "client"}, {"--mode", "prepared"}, {"--mode", "batched"},
		{"--mode", "client", "--connections", "1"}, {"--mode", "prepared", "--connections", "1"},
		{"--mode", "batched", "--connections", "1"},
	} {
		path := builtDB(t)
		args := append([]string{"run", "--db", "sqlite://" + path, "--vus", "1", "--iterations", "400", "--seed", "42", "--json"}, run...)
		_, stderr, code := runCLI(t, t.TempDir(), args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", run, code, stderr)
		}
		got := tableHashes(t, path)
		if want == nil {
			want = got
			continue
		}
		for table := range want {
			if got[table] != want[table] {
				t.Errorf("%s: %s after client, %s after %s", table, want[table], got[table], run)
			}
		}
	}
	// A different seed must change them, or the test proves nothing.
	path := builtDB(t)
	if _, stderr, code := runCLI(t, t.TempDir(), "run", "--db", "sqlite://"+path, "--vus", "1",
		"--iterations", "400", "--seed", "43", "--json"); code != 0 {
		t.Fatal(stderr)
	}
	if other := tableHashes(t, path); other["order_line"] == want["order_line"] {
		t.Error("seed 43 left the same order lines as seed 42")
	}
}

// Ctrl-C: no new transactions, the ones in flight finish, the summary of
// what was measured is printed, exit status 130. Needs a real process.
// Throttled (-R 100): the 4 s before the signal need not keep both cores busy.
func TestInterruptPrintsSummaryAndExits130(t *testing.T) {
	bin := sledgeBinary(t)
	path := builtDB(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "run", "--db", "sqlite://"+path, "--vus", "2", "--rampup", "1s", "--duration", "5m", "-R", "100")
			home := t.TempDir() // the job store, away from the real home
			cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+home, "SLEDGE_JOBS_DB=")
			var stdout strings.Builder
			cmd.Stdout = &stdout
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Wait until the run is under way, then measure a little.
			sc := bufio.NewScanner(stderr)
			var errText strings.Builder
			for sc.Scan() {
				errText.WriteString(sc.Text() + "\n")
				if strings.HasPrefix(sc.Text(), "running tpcc") {
					break
				}
			}
			time.Sleep(3 * time.Second)
			sent := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			for sc.Scan() {
				errText.WriteString(sc.Text() + "\n")
			}
			err = cmd.Wait()
			if took := time.Since(sent); took > 10*time.Second {
				t.Errorf("took %s to stop", took)
			}
			if code := cmd.ProcessState.ExitCode(); code != ExitInterrupted {
				t.Errorf("exit %d (%v), want 130; stderr:\n%s", code, err, errText.String())
			}
			out := stdout.String()
			if !strings.Contains(out, "(interrupted)") || !strings.Contains(out, "NOPM") || !strings.Contains(out, "neword") {
				t.Errorf("no summary of the measured part:\n%s", out)
			}
			if strings.Contains(errText.String(), "goroutine ") {
				t.Errorf("stack trace:\n%s", errText.String())
			}
			if l := listJobs(t, home); len(l.Jobs) != 1 || l.Jobs[0].Status != "interrupted" || l.Jobs[0].NOPM == nil {
				t.Errorf("job after %s: %+v", sig, l.Jobs)
			}
		})
	}
}
