package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/testdb"
	"github.com/sledge-bench/sledge/internal/workload"
)

// A block-mode New-Order is one round trip, the first one included: the
// block is one query, and nothing is prepared.
func TestBlockNewOrderRoundTrips(t *testing.T) {
	s := server(t)
	d := open(t, tcpURL(s, freshDB(t)))
	ex, err := testdb.NewOrders(context.Background(), d, workload.ModeBlock, 42, 6)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range ex {
		if e.Calls != 1 || e.Wire.RoundTrips != 1 {
			t.Errorf("New-Order %d: %d calls, %d round trips, want 1 and 1", i, e.Calls, e.Wire.RoundTrips)
		}
		if e.Wire.BytesSent < 2000 {
			t.Errorf("New-Order %d: %d bytes sent: the block's text did not travel", i, e.Wire.BytesSent)
		}
	}
	t.Logf("%+v", ex)
}

// Block mode runs no stored routine: it runs, and passes the checks, on a
// database whose functions and procedures were dropped; the server sees
// the DO block as the session's statement; an invalid item rolls the
// whole block back and is the workload's 1% rollback.
func TestBlockWithoutRoutines(t *testing.T) {
	s := server(t)
	name := freshDB(t)
	execIn(t, name, `DO $$DECLARE r regprocedure;
BEGIN
    FOR r IN SELECT oid::regprocedure FROM pg_proc WHERE proname IN ('neword','payment','delivery','slev','ostat') LOOP
        EXECUTE 'DROP ROUTINE ' || r;
    END LOOP;
END$$`)
	ctx := context.Background()
	ctl, err := pgx.Connect(ctx, tcpURL(s, name))
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close(ctx)
	var left int
	if err := ctl.QueryRow(ctx, "SELECT count(*) FROM pg_proc WHERE proname IN ('neword','payment','delivery','slev','ostat')").Scan(&left); err != nil || left != 0 {
		t.Fatalf("routines left: %d (%v)", left, err)
	}

	// routines= is irrelevant to block mode. (check is left out: it
	// connects in the default mode, procedure, which needs the routines.)
	u := tcpURL(s, name) + "?routines=procedures"
	code, out, stderr := sledge(t, "run", "--db", u, "--mode", "block", "--vus", "2", "--iterations", "150", "--json")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	var res runJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Mode != "block" || res.NOPM == nil || *res.NOPM <= 0 || res.Total.Count != 300 || res.Total.Errors != 0 {
		t.Errorf("mode %q nopm %v count %d errors %d %s", res.Mode, res.NOPM, res.Total.Count, res.Total.Errors, res.Errors)
	}
	if code, _, stderr := sledge(t, "run", "--db", u, "--mode", "procedure", "--iterations", "1"); code == 0 || !strings.Contains(stderr, "function neword") {
		t.Errorf("procedure mode on the same database: exit %d: %s", code, stderr)
	}

	d := open(t, tcpURL(s, name))
	c := connect(t, d, workload.ModeBlock)
	var low int64
	if err := c.QueryRow(ctx, "slev.call", int64(1), int64(1), int64(15)).Scan(&low); err != nil {
		t.Fatal(err)
	}
	var pid int
	var query string
	err = ctl.QueryRow(ctx, `SELECT pid, query FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND query LIKE 'DO %'`).Scan(&pid, &query)
	if err != nil {
		t.Fatalf("the block session's last statement: %v", err)
	}
	if !strings.HasPrefix(query, "DO $sledge$\nDECLARE\np_w_id INTEGER := 1;\np_d_id INTEGER := 1;\np_threshold INTEGER := 15;") ||
		!strings.HasSuffix(query, "SELECT current_setting('sledge.result')::INTEGER") {
		t.Errorf("pid %d ran:\n%s", pid, query)
	}

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
		t.Errorf("d_next_o_id moved from %d to %d: the block did not roll back", before, after)
	}
	// The session is usable after the error, and the result is the routine's.
	if err := c.QueryRow(ctx, "neword.call", int64(1), int64(1), int64(1), int64(2), "5,6", "1,1", "3,4").Scan(&oID); err != nil {
		t.Fatal(err)
	}
	var next int64
	if err := ctl.QueryRow(ctx, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1").Scan(&next); err != nil || oID != next-1 {
		t.Errorf("neword block returned o_id %d; d_next_o_id is now %d (%v)", oID, next, err)
	}
}
