package faults

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/testdb"
)

// warehouses of every test database: two, so that four virtual users
// share them as in a small real run.
const warehouses = "2"

// A target is one server kind as the tests use it.
type target struct {
	name string
	srv  func(t *testing.T) *testdb.Server
	// fresh returns the URL of a new database holding a built TPC-C
	// schema, for one test.
	fresh func(t *testing.T, name string) string
	// killOne kills one virtual user's connection (a server-side kill, as
	// an administrator would) and returns what it killed.
	killOne func(t *testing.T, dbName string) string
	// lockDistrict holds an exclusive lock on district in an open
	// transaction of a session of its own until release is called.
	lockDistrict func(t *testing.T, dbName string) (release func())
}

var targets = []target{
	{name: "postgres", srv: pgServer, fresh: pgFresh, killOne: pgKillOne, lockDistrict: pgLockDistrict},
	{name: "mariadb", srv: myServ, fresh: myFresh, killOne: myKillOne, lockDistrict: myLockDistrict},
}

// forEach runs fn for each server kind, as subtests.
func forEach(t *testing.T, fn func(t *testing.T, tg target)) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) { fn(t, tg) })
	}
}

func pgServer(t *testing.T) *testdb.Server {
	t.Helper()
	return testdb.Need(t, pgSrv, pgErr)
}

func myServ(t *testing.T) *testdb.Server {
	t.Helper()
	return testdb.Need(t, myServer, myErr)
}

// ---- PostgreSQL ----

func pgURL(s *testdb.Server, name string) string {
	return fmt.Sprintf("postgres://%s:%s@%s:%d/%s", s.User, url.QueryEscape(s.Password), s.Host, s.Port, name)
}

// pgAdmin opens a superuser connection to database name.
func pgAdmin(t *testing.T, name string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, pgURL(pgServer(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func pgExec(t *testing.T, stmt string) error {
	t.Helper()
	c := pgAdmin(t, "postgres")
	defer c.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.Exec(ctx, stmt)
	return err
}

var (
	pgTplOnce sync.Once
	pgTplErr  error
)

// pgFresh copies a template built once (CREATE DATABASE … TEMPLATE).
func pgFresh(t *testing.T, name string) string {
	t.Helper()
	s := pgServer(t)
	bin(t) // fails here, not inside the Once
	pgTplOnce.Do(func() {
		jobs := filepath.Join(t.TempDir(), "jobs.db")
		if _, stderr, code := sledge(t, jobs, "build", "--db", pgURL(s, "tpl"), "--warehouses", warehouses, "--build-vus", "2", "--seed", "7"); code != 0 {
			pgTplErr = fmt.Errorf("build the template: exit %d: %s", code, stderr)
		}
	})
	if pgTplErr != nil {
		t.Fatal(pgTplErr)
	}
	s.CopyDatabase(t, "tpl", name)
	return pgURL(s, name)
}

// pgKillOne terminates the backend of one virtual user: a session on the
// database whose last statement called a TPC-C routine (sledge's control
// connection, which reads the counters, never does).
func pgKillOne(t *testing.T, dbName string) string {
	t.Helper()
	c := pgAdmin(t, "postgres")
	defer c.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		var pid int32
		var query string
		err := c.QueryRow(ctx, `SELECT pid, query FROM pg_stat_activity
WHERE datname = $1 AND pid <> pg_backend_pid() AND query ~ '^(SELECT|CALL) (neword|payment|delivery|slev|ostat)\('
ORDER BY pid LIMIT 1`, dbName).Scan(&pid, &query)
		if err == nil {
			var ok bool
			if err := c.QueryRow(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&ok); err != nil || !ok {
				t.Fatalf("pg_terminate_backend(%d): %v %v", pid, ok, err)
			}
			return fmt.Sprintf("backend %d (%s)", pid, query)
		}
		if ctx.Err() != nil {
			t.Fatalf("no virtual user's backend on %s: %v", dbName, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func pgLockDistrict(t *testing.T, dbName string) func() {
	t.Helper()
	c := pgAdmin(t, dbName)
	ctx := context.Background()
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "LOCK TABLE district IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			_, _ = c.Exec(ctx, "ROLLBACK")
			_ = c.Close(ctx)
		})
	}
	t.Cleanup(release)
	return release
}

// ---- MariaDB ----

func myURL(s *testdb.Server, name string) string {
	u := url.URL{Scheme: "mysql", User: url.UserPassword(s.User, s.Password), Host: s.Host + ":" + strconv.Itoa(s.Port), Path: "/" + name}
	return u.String()
}

// myAdmin is root over the unix socket, on database name ("" for none).
func myAdmin(t *testing.T, name string) *sql.DB {
	t.Helper()
	s := myServ(t)
	c := gomysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = s.User, s.Password, "unix", s.Socket, name
	c.Timeout = 5 * time.Second
	d, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var (
	myTplOnce sync.Once
	myTplErr  error
)

// myFresh copies a template built once (testdb's CopyDatabase: MariaDB
// has no template databases, and a build takes many seconds).
func myFresh(t *testing.T, name string) string {
	t.Helper()
	s := myServ(t)
	bin(t) // fails here, not inside the Once
	myTplOnce.Do(func() {
		jobs := filepath.Join(t.TempDir(), "jobs.db")
		if _, stderr, code := sledge(t, jobs, "build", "--db", myURL(s, "tpl"), "--warehouses", warehouses, "--build-vus", "2", "--seed", "7"); code != 0 {
			myTplErr = fmt.Errorf("build the template: exit %d: %s", code, stderr)
		}
	})
	if myTplErr != nil {
		t.Fatal(myTplErr)
	}
	s.CopyDatabase(t, "tpl", name)
	return myURL(s, name)
}

// myKillOne kills one virtual user's connection: a session on the database
// running a CALL (sledge's control connection never calls a procedure).
func myKillOne(t *testing.T, dbName string) string {
	t.Helper()
	d := myAdmin(t, "")
	defer d.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		var id int64
		var info string
		err := d.QueryRowContext(ctx, `SELECT id, info FROM information_schema.processlist
WHERE db = ? AND id <> CONNECTION_ID() AND info LIKE 'CALL %' ORDER BY id LIMIT 1`, dbName).Scan(&id, &info)
		if err == nil {
			if _, err := d.ExecContext(ctx, fmt.Sprintf("KILL %d", id)); err != nil {
				t.Fatalf("KILL %d: %v", id, err)
			}
			return fmt.Sprintf("connection %d (%.40s)", id, info)
		}
		if ctx.Err() != nil {
			t.Fatalf("no virtual user's connection on %s: %v", dbName, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func myLockDistrict(t *testing.T, dbName string) func() {
	t.Helper()
	d := myAdmin(t, dbName)
	ctx := context.Background()
	c, err := d.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"SET autocommit = 0", "LOCK TABLES district WRITE"} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			_, _ = c.ExecContext(ctx, "UNLOCK TABLES")
			_ = c.Close()
			_ = d.Close()
		})
	}
	t.Cleanup(release)
	return release
}
