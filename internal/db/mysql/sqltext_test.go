package mysql_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/db/sqltexttest"
	"github.com/sledge-bench/sledge/internal/workload"
)

// sqlDB opens a new empty database name on the test server.
func sqlDB(t *testing.T, name string) db.SQLDB {
	t.Helper()
	d := scriptDB(t, name).(db.SQLDB)
	if d.Dialect() != "mysql" {
		t.Errorf("Dialect() = %q", d.Dialect())
	}
	return d
}

func TestSQLConn(t *testing.T) {
	sqltexttest.Run(t, sqltexttest.Dialect{
		DB:      sqlDB(t, "sqltext"),
		Long:    "SELECT sleep(10)",
		Analyze: "ANALYZE TABLE sqlt",
		Rows: [][]any{
			{"1", "12.50", "one", "1998-09-02", nil},
			{"2", "-3.00", "it's two", "1992-01-01", "x"},
			{"3", nil, nil, nil, nil},
		},
		Terminate: "KILL %d",
		Sum:       []any{"3", "9.50"},
	})
}

// A cancelled statement stops on the server too: the driver closes the
// connection, and the session KILLs it, so sleep(10) does not run on.
func TestSQLConnCancelKills(t *testing.T) {
	d := sqlDB(t, "sqltext_kill")
	c := sqltexttest.Connect(t, d)
	id, err := c.(interface {
		ServerSession(context.Context) (int64, error)
	}).ServerSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, _, err := sqltexttest.Query(ctx, c, "SELECT sleep(10) AS cancelled_sleep"); err == nil {
		t.Fatal("no error")
	}
	if !c.(workload.Breakable).Broken() {
		t.Error("the session is not Broken after its connection was closed")
	}
	probe := sqltexttest.Connect(t, d)
	q := "SELECT count(*) FROM information_schema.processlist WHERE id = " + itoa(id)
	deadline := time.Now().Add(2 * time.Second)
	for {
		got := sqltexttest.MustQuery(t, probe, q)
		if got[0][0] == "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("connection %d still on the server: %q", id, sqltexttest.MustQuery(t, probe, "SELECT id, command, info FROM information_schema.processlist"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func itoa(n int64) string { return fmt.Sprint(n) }
