package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/cli"
	"github.com/sledge-bench/sledge/internal/testdb"
	"github.com/sledge-bench/sledge/internal/workload"
)

// One private server for the package; each test gets its own databases,
// copied from a template built once (CREATE DATABASE … TEMPLATE).
var (
	srv      *testdb.Server
	startErr error

	tplOnce sync.Once
	tplErr  error
	dbSeq   atomic.Int64
)

const (
	template   = "tpl"
	buildSeed  = "11"
	warehouses = "1"
)

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	srv, startErr = testdb.StartPostgres(ctx)
	cancel()
	code := m.Run()
	if srv != nil {
		if err := srv.Stop(); err != nil && code == 0 {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

func server(t *testing.T) *testdb.Server {
	t.Helper()
	return testdb.Need(t, srv, startErr)
}

// tcpURL and unixURL name database name as the superuser (or user:pass).
func tcpURL(s *testdb.Server, name string) string {
	return fmt.Sprintf("postgres://%s:%s@%s:%d/%s", s.User, s.Password, s.Host, s.Port, name)
}

func unixURL(s *testdb.Server, name string) string {
	return fmt.Sprintf("postgres://%s:%s@/%s?host=%s&port=%d", s.User, s.Password, name, url.QueryEscape(s.Socket), s.Port)
}

// admin runs statements on the postgres database as the superuser.
func admin(t *testing.T, stmts ...string) {
	t.Helper()
	execIn(t, "postgres", stmts...)
}

func execIn(t *testing.T, database string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, tcpURL(server(t), database))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// sledge runs the CLI in-process and returns its exit code and output.
func sledge(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The job store goes to a throwaway HOME.
	home := t.TempDir()
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	code = cli.Main(ctx, args, cli.Env{Stdout: &out, Stderr: &errb, Getenv: getenv})
	return code, out.String(), errb.String()
}

// freshDB returns the name of a new database holding a copy of the built
// template schema (1 warehouse, seed buildSeed), dropped at the end.
func freshDB(t *testing.T) string {
	t.Helper()
	s := server(t)
	tplOnce.Do(func() {
		code, _, stderr := sledge(t, "build", "--db", unixURL(s, template), "--warehouses", warehouses,
			"--seed", buildSeed, "--build-vus", "2", "--json")
		if code != 0 {
			tplErr = fmt.Errorf("build template: exit %d: %s", code, stderr)
		}
	})
	if tplErr != nil {
		t.Fatal(tplErr)
	}
	name := fmt.Sprintf("t%d", dbSeq.Add(1))
	s.CopyDatabase(t, template, name) // retries while the template's last sessions end
	return name
}

func tryExec(s *testdb.Server, stmt string) error {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, tcpURL(s, "postgres"))
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, stmt)
	return err
}

// modes are the modes PostgreSQL supports.
var modes = []workload.Mode{workload.ModeProcedure, workload.ModeClient, workload.ModePrepared, workload.ModeBatched, workload.ModeBlock}

// runModes runs fn once per mode PostgreSQL supports, as subtests.
func runModes(t *testing.T, fn func(t *testing.T, m workload.Mode)) {
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) { fn(t, m) })
	}
}

// oneLine fails unless msg is a single line mentioning every want.
func oneLine(t *testing.T, msg string, want ...string) {
	t.Helper()
	msg = strings.TrimRight(msg, "\n")
	if strings.Contains(msg, "\n") {
		t.Errorf("message is not one line:\n%s", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q does not say %q", msg, w)
		}
	}
}
