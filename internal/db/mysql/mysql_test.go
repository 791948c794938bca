package mysql

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
	"github.com/sledge-bench/sledge/internal/workload/tpcc"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		url                         string
		net, addr, user, pass, name string
		transport, err              string
	}{
		{url: "mysql://root:pass@127.0.0.1:3306/tpcc", net: "tcp", addr: "127.0.0.1:3306", user: "root", pass: "pass", name: "tpcc", transport: "tcp"},
		{url: "mariadb://u@db.example:3307/x", net: "tcp", addr: "db.example:3307", user: "u", name: "x", transport: "tcp"},
		{url: "mysql://root@/tpcc?socket=/run/mysqld/mysqld.sock", net: "unix", addr: "/run/mysqld/mysqld.sock", user: "root", name: "tpcc", transport: "unix"},
		{url: "mysql://root:p%40ss@[::1]/tpcc", net: "tcp", addr: "[::1]:3306", user: "root", pass: "p@ss", name: "tpcc", transport: "tcp"},
		{url: "mysql://", net: "tcp", addr: "127.0.0.1:3306", user: "root", name: "tpcc", transport: "tcp"},
		{url: "mysql://root@h/tpcc?timeout=1s&tls=preferred&isolation=read-committed&load=insert", net: "tcp", addr: "h:3306", user: "root", name: "tpcc", transport: "tcp"},
		{url: "mysql://root@h/tpcc?parseTime=true", err: "unknown parameter parseTime"},
		{url: "mysql://root@h/tpcc?bogus=1", err: "unknown parameter bogus"},
		{url: "mysql://root@h/tpcc?timeout=soon", err: "mysql URL"},
		{url: "mysql://root@h/tpcc?isolation=snapshot", err: "bad isolation"},
		{url: "mysql://root@h/tpcc?socket=/tmp/s", err: "not both"},
		{url: "mysql://root@h:99999/tpcc", err: "bad port"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			u, err := url.Parse(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			c, err := parseURL(u)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := []string{c.drv.Net, c.drv.Addr, c.drv.User, c.drv.Passwd, c.drv.DBName, c.transport}
			want := []string{tc.net, tc.addr, tc.user, tc.pass, tc.name, tc.transport}
			if !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
			if !c.drv.InterpolateParams || c.drv.ParseTime || c.drv.MultiStatements || c.drv.Timeout == 0 {
				t.Errorf("driver settings: interpolate %v parseTime %v multi %v timeout %v",
					c.drv.InterpolateParams, c.drv.ParseTime, c.drv.MultiStatements, c.drv.Timeout)
			}
		})
	}
}

// TestStatements checks, without a server, that the SQL files define
// exactly the statements tpcc uses in every mode, both as read for MySQL
// and with the MariaDB overlay.
func TestStatements(t *testing.T) {
	w := tpcc.New(tpcc.Config{Warehouses: 1})
	var want []string
	for _, m := range []workload.Mode{workload.ModeProcedure, workload.ModeClient, workload.ModePrepared, workload.ModeBatched} {
		for _, s := range w.Statements(m) {
			if !slices.Contains(want, s) {
				want = append(want, s)
			}
		}
	}
	sort.Strings(want)
	for _, dirs := range [][]string{{"sql"}, {"sql/mariadb", "sql"}} {
		t.Run(strings.Join(dirs, ","), func(t *testing.T) {
			named, err := db.SQLFiles{FS: sqlFS, Dirs: dirs}.Named("tpcc")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for name, text := range named {
				got = append(got, name)
				if n := strings.Count(text, "?"); strings.HasSuffix(name, ".call") && n == 0 {
					t.Errorf("%s has no arguments", name)
				}
			}
			sort.Strings(got)
			if !slices.Equal(got, want) {
				t.Errorf("statements differ:\n got %q\nwant %q", got, want)
			}
			for _, s := range []string{"tables", "indexes", "procedures", "drop"} {
				stmts, ok, err := db.SQLFiles{FS: sqlFS, Dirs: dirs}.Script("tpcc", s)
				if err != nil || !ok || len(stmts) == 0 {
					t.Errorf("%s.sql: ok=%v err=%v", s, ok, err)
				}
			}
		})
	}
	// Every procedure a .call statement names is created and dropped.
	procs, _, _ := db.SQLFiles{FS: sqlFS}.Script("tpcc", "procedures")
	drop, _, _ := db.SQLFiles{FS: sqlFS}.Script("tpcc", "drop")
	for _, name := range []string{"neword", "payment", "delivery", "slev", "ostat"} {
		if !slices.ContainsFunc(procs, func(s string) bool { return strings.HasPrefix(s, "CREATE PROCEDURE "+name+"(") }) {
			t.Errorf("procedures.sql does not create %s", name)
		}
		if !slices.Contains(drop, "DROP PROCEDURE IF EXISTS "+name) {
			t.Errorf("drop.sql does not drop %s", name)
		}
	}
	if _, err := fs.Stat(sqlFS, "sql/tpcc/statements.sql"); err != nil {
		t.Fatal(err)
	}
}

func TestKind(t *testing.T) {
	for _, tc := range []struct {
		number uint16
		want   error
	}{
		{erLockDeadlock, workload.ErrRetry},
		{erLockWaitTimeout, workload.ErrRetry},
		{erDeliveredConcurrently, workload.ErrRetry},
		{erNoSuchTable, workload.ErrNoSchema},
		{erItemNotValid, workload.ErrUserAbort},
		{1062, nil},
	} {
		t.Run(fmt.Sprint(tc.number), func(t *testing.T) {
			err := &db.OpError{DB: "mysql", Op: "exec", Stmt: "x", Err: &mysql.MySQLError{Number: tc.number, Message: "m"}}
			err.Kind = kind(err.Err)
			if tc.want == nil {
				if err.Kind != nil {
					t.Fatalf("kind = %v, want none", err.Kind)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("errors.Is(%v, %v) = false", err, tc.want)
			}
		})
	}
}

func TestWriteField(t *testing.T) {
	var b strings.Builder
	for _, v := range []any{int64(3), 1.5, "a\tb\\c\nd", nil, 12.34} {
		var buf bytes.Buffer
		if err := writeField(&buf, v); err != nil {
			t.Fatal(err)
		}
		b.WriteString(buf.String())
		b.WriteByte('|')
	}
	if got, want := b.String(), `3|1.5|a\tb\\c\nd|\N|12.34|`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
