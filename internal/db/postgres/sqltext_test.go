package postgres_test

import (
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/db/sqltexttest"
)

func TestSQLConn(t *testing.T) {
	d, _ := scriptDB(t) // a database of its own
	s := d.(db.SQLDB)
	if s.Dialect() != "postgres" {
		t.Errorf("Dialect() = %q", s.Dialect())
	}
	sqltexttest.Run(t, sqltexttest.Dialect{
		DB:          s,
		Long:        "SELECT pg_sleep(10)",
		CancelKeeps: true,
		Rows: [][]any{
			{"1", "12.50", "one", "1998-09-02", nil},
			{"2", "-3.00", "it's two", "1992-01-01", "x"},
			{"3", nil, nil, nil, nil},
		},
		Terminate: "SELECT pg_terminate_backend(%d)",
		Sum:       []any{"3", "9.50"},
	})
}

// The session's dates are ISO even where the database's default
// DateStyle is not.
func TestSQLConnDateStyle(t *testing.T) {
	d, u := scriptDB(t)
	name := u[strings.LastIndexByte(u, '/')+1:]
	admin(t, "ALTER DATABASE "+name+" SET DateStyle = 'SQL, DMY'")
	c := sqltexttest.Connect(t, d.(db.SQLDB))
	got := sqltexttest.MustQuery(t, c, "SELECT date '1998-12-01' - 90")
	if len(got) != 1 || got[0][0] != "1998-09-02" {
		t.Errorf("got %q, want [[1998-09-02]]", got)
	}
}
