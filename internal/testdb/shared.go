package testdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// Shared servers: `make test` starts one private PostgreSQL and one
// MariaDB for the whole run (internal/testdb/shared) and names them in
// these environment variables, so that test packages do not each pay for
// an initdb and a mariadb-install-db. Only LazyPostgres and LazyMariaDB
// use them; tests that restart, pause or kill a server, change its
// settings or read its server-wide counters start their own with
// StartPostgres / StartMariaDB. Without the variables (go test of one
// package) every Lazy starts its own server, as before.
const (
	SharedPostgresEnv = "SLEDGE_TEST_SHARED_POSTGRES"
	SharedMariaDBEnv  = "SLEDGE_TEST_SHARED_MARIADB"
)

// sharedServer is a server's address and superuser in the environment.
type sharedServer struct {
	Kind     string `json:"kind"`
	Version  string `json:"version"`
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Socket   string `json:"socket"`
	User     string `json:"user"`
	Password string `json:"password"`
}

// SharedEnv is the environment variable's value naming s, for the tests
// that the shared-server runner starts.
func SharedEnv(s *Server) (string, error) {
	b, err := json.Marshal(sharedServer{Kind: s.Kind, Version: s.Version, Host: s.Host, Port: s.Port,
		Socket: s.Socket, User: s.User, Password: s.Password})
	if err != nil {
		return "", fmt.Errorf("testdb: shared server: %w", err)
	}
	return string(b), nil
}

// sharedFrom returns the shared server named in env, or nil when the
// variable is unset. The Server has no stop, restart or pid: Stop leaves
// it running (the runner stops it) and fault injection refuses it.
func sharedFrom(env, kind string) (*Server, error) {
	v := os.Getenv(env)
	if v == "" {
		return nil, nil
	}
	var s sharedServer
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		return nil, fmt.Errorf("testdb: %s: %w", env, err)
	}
	if s.Kind != kind || s.Port == 0 {
		return nil, fmt.Errorf("testdb: %s names no %s server", env, kind)
	}
	return &Server{Kind: s.Kind, Version: s.Version, Host: s.Host, Port: s.Port, Socket: s.Socket,
		User: s.User, Password: s.Password}, nil
}

// DropAtEnd drops database name on s when the test ends (its sessions
// ended first), so that on a server the whole run shares a package's
// databases do not outlive its tests. A failure to drop is logged.
func (s *Server) DropAtEnd(t testing.TB, name string) {
	t.Helper()
	t.Cleanup(func() {
		if err := s.dropDatabase(name); err != nil {
			t.Logf("drop database %s: %v", name, err)
		}
	})
}

// CopyDatabase creates database name on server s as a copy of database
// template, far cheaper than building it again, and drops it when t ends:
// on PostgreSQL CREATE DATABASE … TEMPLATE, on MariaDB (no templates) its
// tables' files and its routines (copyMariaDB).
func (s *Server) CopyDatabase(t testing.TB, template, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var err error
	switch s.Kind {
	case "postgres":
		err = s.copyPostgres(ctx, template, name)
	case "mariadb":
		err = s.copyMariaDB(ctx, template, name)
	default:
		err = fmt.Errorf("no databases on a %q server", s.Kind)
	}
	if err != nil {
		t.Fatalf("testdb: copy %s to %s: %v", template, name, err)
	}
	s.DropAtEnd(t, name)
}

// copyPostgres: the template's last sessions may still be closing, and
// other tests copy it at the same time: it retries for up to 30 s.
func (s *Server) copyPostgres(ctx context.Context, template, name string) error {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(s.User, s.Password),
		Host: net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), Path: "/postgres"}
	c, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	q := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	major, _, _ := strings.Cut(s.Version, ".")
	if v, _ := strconv.Atoi(major); v >= 15 {
		// PostgreSQL 15's default copies every block through the WAL
		// (WAL_LOG): a 1-warehouse TPC-C copy is 130 MB of WAL and dirty
		// buffers. A file copy costs a checkpoint, nothing on a server
		// without fsync: db/postgres's tests took 20% less CPU (issue 24).
		q += " STRATEGY FILE_COPY"
	}
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err = c.Exec(ctx, q); err == nil || time.Now().After(end) {
			return err
		}
	}
}

// DropDatabase drops database name on s if it exists (its sessions are
// ended first).
func (s *Server) DropDatabase(name string) error { return s.dropDatabase(name) }

func (s *Server) dropDatabase(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	switch s.Kind {
	case "postgres":
		u := url.URL{Scheme: "postgres", User: url.UserPassword(s.User, s.Password),
			Host: net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), Path: "/postgres"}
		c, err := pgx.Connect(ctx, u.String())
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
		return err
	case "mariadb":
		c := mysql.NewConfig()
		c.User, c.Passwd, c.Net, c.Addr = s.User, s.Password, "tcp", net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
		d, err := sql.Open("mysql", c.FormatDSN())
		if err != nil {
			return err
		}
		defer d.Close()
		_, err = d.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+strings.ReplaceAll(name, "`", "``")+"`")
		return err
	}
	return fmt.Errorf("testdb: no databases on a %q server", s.Kind)
}
