package faults

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// myFresh copies a template built once. MariaDB has no template
// databases, and a build takes many seconds, so the copy moves InnoDB's
// files (transportable tablespaces: FLUSH TABLES … FOR EXPORT, copy the
// .ibd and .cfg files, ALTER TABLE … IMPORT TABLESPACE) and recreates the
// procedures from SHOW CREATE PROCEDURE.
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
	if err := myCopy(t, s, "tpl", name); err != nil {
		t.Fatalf("copy the template into %s: %v", name, err)
	}
	t.Cleanup(func() {
		d := myAdmin(t, "")
		defer d.Close()
		_, _ = d.Exec("DROP DATABASE IF EXISTS " + name)
	})
	return myURL(s, name)
}

func myCopy(t *testing.T, s *testdb.Server, from, to string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d := myAdmin(t, "")
	defer d.Close()
	var tables []string
	rows, err := d.QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_type = 'BASE TABLE'", from)
	if err != nil {
		return err
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, q := range []string{"DROP DATABASE IF EXISTS " + to, "CREATE DATABASE " + to} {
		if _, err := d.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	var export []string
	for _, tb := range tables {
		for _, q := range []string{"CREATE TABLE " + to + "." + tb + " LIKE " + from + "." + tb, "ALTER TABLE " + to + "." + tb + " DISCARD TABLESPACE"} {
			if _, err := d.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		export = append(export, from+"."+tb)
	}
	// FOR EXPORT holds the tables consistent until UNLOCK TABLES on the
	// same session.
	c, err := d.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "FLUSH TABLES "+strings.Join(export, ", ")+" FOR EXPORT"); err != nil {
		return err
	}
	data := filepath.Join(s.Dir, "data")
	for _, tb := range tables {
		for _, ext := range []string{".ibd", ".cfg"} {
			if err := copyFile(filepath.Join(data, from, tb+ext), filepath.Join(data, to, tb+ext)); err != nil {
				_, _ = c.ExecContext(ctx, "UNLOCK TABLES")
				return err
			}
		}
	}
	if _, err := c.ExecContext(ctx, "UNLOCK TABLES"); err != nil {
		return err
	}
	for _, tb := range tables {
		if _, err := d.ExecContext(ctx, "ALTER TABLE "+to+"."+tb+" IMPORT TABLESPACE"); err != nil {
			return fmt.Errorf("import %s: %w", tb, err)
		}
		_ = os.Remove(filepath.Join(data, to, tb+".cfg"))
	}
	// The routines, created in the new database with their own sql_mode.
	var procs []string
	rows, err = d.QueryContext(ctx, "SELECT routine_name FROM information_schema.routines WHERE routine_schema = ? AND routine_type = 'PROCEDURE'", from)
	if err != nil {
		return err
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		procs = append(procs, n)
	}
	rows.Close()
	if _, err := c.ExecContext(ctx, "USE "+to); err != nil {
		return err
	}
	for _, p := range procs {
		var name, mode, create, cs, coll, dbColl sql.NullString
		if err := d.QueryRowContext(ctx, "SHOW CREATE PROCEDURE "+from+"."+p).Scan(&name, &mode, &create, &cs, &coll, &dbColl); err != nil {
			return fmt.Errorf("show create procedure %s: %w", p, err)
		}
		if _, err := c.ExecContext(ctx, "SET SESSION sql_mode = ?", mode.String); err != nil {
			return err
		}
		if _, err := c.ExecContext(ctx, create.String); err != nil {
			return fmt.Errorf("create procedure %s: %w", p, err)
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
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
