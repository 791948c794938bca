package mysql_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/sledge-bench/sledge/internal/testdb"
)

// globalStatus reads the server's Com_* statement counters.
func globalStatus(t *testing.T, s *testdb.Server) map[string]int64 {
	t.Helper()
	c := gomysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr = s.User, s.Password, "unix", s.Socket
	d, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rows, err := d.Query("SHOW GLOBAL STATUS LIKE 'Com\\_%'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Block mode calls no stored procedure: it runs on a database whose
// procedures were dropped, and the server counts no CALL but one compound
// statement (Com_compound_sql: BEGIN NOT ATOMIC) per transaction.
func TestBlockWithoutProcedures(t *testing.T) {
	s := need(t)
	name := "sledge_block_noprocs"
	u := freshDB(t, s, name)
	build(t, u, 1)
	var drops []string
	for _, p := range []string{"neword", "payment", "delivery", "slev", "ostat"} {
		drops = append(drops, "DROP PROCEDURE "+name+"."+p)
	}
	admin(t, s, drops...)
	t.Cleanup(func() { admin(t, s, "DROP DATABASE IF EXISTS "+name) })

	before := globalStatus(t, s)
	stdout, stderr, code := sledge(t, "run", "--db", u, "--mode", "block", "--vus", "1", "--iterations", "200", "--seed", "3", "--json")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	after := globalStatus(t, s)
	var sum struct {
		Mode  string `json:"mode"`
		Total struct {
			Count  int64 `json:"count"`
			Errors int64 `json:"errors"`
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Mode != "block" || sum.Total.Count != 200 || sum.Total.Errors != 0 {
		t.Errorf("mode %q, %d transactions, %d errors", sum.Mode, sum.Total.Count, sum.Total.Errors)
	}
	var changed []string
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			changed = append(changed, fmt.Sprintf("%s=%d", k, d))
		}
	}
	t.Logf("Com_* counters moved: %s", strings.Join(changed, " "))
	if d := after["Com_call_procedure"] - before["Com_call_procedure"]; d != 0 {
		t.Errorf("%d CALLs during a block run", d)
	}
	if d := after["Com_compound_sql"] - before["Com_compound_sql"]; d != sum.Total.Count {
		t.Errorf("%d compound statements for %d transactions", d, sum.Total.Count)
	}
}
