package testdb

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// checkPaused asserts that Pause stopped the main process and only its
// children, each in state T (stopped).
func checkPaused(t *testing.T, srv *Server) {
	t.Helper()
	pid, err := srv.PID()
	if err != nil {
		t.Fatal(err)
	}
	paused := srv.Paused()
	if len(paused) == 0 || paused[0] != pid {
		t.Fatalf("paused %v, want the main process %d first", paused, pid)
	}
	for _, p := range paused {
		if p != pid {
			if pp, err := parentOf(p); err != nil || pp != pid {
				t.Errorf("paused process %d is not a child of %d (parent %d, %v)", p, pid, pp, err)
			}
		}
		// The stop is delivered asynchronously: wait for it, briefly.
		st := procState(p)
		for end := time.Now().Add(2 * time.Second); st != "T" && time.Now().Before(end); st = procState(p) {
			time.Sleep(10 * time.Millisecond)
		}
		// A child that exited just as the main process stopped stays a
		// zombie (Z) until it is resumed to reap it: it answers nothing
		// either.
		if st != "T" && !(st == "Z" && p != pid) {
			t.Errorf("process %d is in state %q, want T (stopped)", p, st)
		}
	}
	kids, _ := children(pid)
	for _, k := range kids {
		if !slices.Contains(paused, k) {
			t.Errorf("child %d of %d was not paused", k, pid)
		}
	}
}

// procState is the state letter in /proc/PID/stat ("pid (comm) S …").
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// A restart keeps the port and the socket and drops every connection; a
// paused server answers nothing until it is resumed; Stop resumes a paused
// server before it stops it.
func TestPostgresRestartPause(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := StartPostgres(ctx)
	srv = Need(t, srv, err)
	stopped := false
	defer func() {
		if !stopped {
			_ = srv.Stop()
		}
	}()
	u := fmt.Sprintf("postgres://%s:%s@%s:%d/postgres?connect_timeout=2", srv.User, srv.Password, srv.Host, srv.Port)
	query := func(c *pgx.Conn, d time.Duration) error {
		qctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		var one int
		return c.QueryRow(qctx, "SELECT 1").Scan(&one)
	}
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	pid1, err := srv.PID()
	if err != nil {
		t.Fatal(err)
	}

	t0 := time.Now()
	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("restart took %v", time.Since(t0).Round(time.Millisecond))
	pid2, err := srv.PID()
	if err != nil || pid2 == pid1 {
		t.Fatalf("postmaster %d after restart (before %d): %v", pid2, pid1, err)
	}
	if err := query(c, 5*time.Second); err == nil {
		t.Fatal("a connection survived the restart")
	}
	c.Close(ctx)
	c, err = pgx.Connect(ctx, u)
	if err != nil {
		t.Fatalf("same URL after the restart: %v", err)
	}
	defer c.Close(context.Background())
	if err := query(c, 5*time.Second); err != nil {
		t.Fatal(err)
	}

	// Down for a second: connections are refused meanwhile.
	restarted := make(chan error, 1)
	go func() { restarted <- srv.RestartAfter(ctx, time.Second) }()
	time.Sleep(500 * time.Millisecond)
	if c3, err := pgx.Connect(ctx, u); err == nil {
		c3.Close(ctx)
		t.Error("connected to a server that is down")
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	if c, err = pgx.Connect(ctx, u); err != nil {
		t.Fatalf("after RestartAfter: %v", err)
	}
	if err := query(c, 5*time.Second); err != nil {
		t.Fatal(err)
	}

	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	checkPaused(t, srv)
	if len(srv.Paused()) < 3 {
		t.Errorf("paused %v: want the postmaster, the backend and the auxiliary processes", srv.Paused())
	}
	if err := query(c, time.Second); err == nil {
		t.Fatal("a paused server answered")
	}
	if _, err := pgx.Connect(ctx, u); err == nil {
		t.Fatal("a paused server accepted a connection")
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	if len(srv.Paused()) != 0 {
		t.Errorf("still paused after Resume: %v", srv.Paused())
	}
	c2, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatalf("after Resume: %v", err)
	}
	if err := query(c2, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	c2.Close(ctx)

	// Stop a paused server: it is resumed first.
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	stopped = true
	if err := srv.Stop(); err != nil {
		t.Fatalf("stop a paused server: %v", err)
	}
	if d := time.Since(t0); d > 15*time.Second {
		t.Errorf("stopping a paused server took %v", d)
	}
}

func TestMariaDBRestartPause(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := StartMariaDB(ctx)
	srv = Need(t, srv, err)
	stopped := false
	defer func() {
		if !stopped {
			_ = srv.Stop()
		}
	}()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = srv.User, srv.Password, "tcp", srv.Host+":"+strconv.Itoa(srv.Port)
	cfg.Timeout = 2 * time.Second
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	query := func(c *sql.Conn, d time.Duration) error {
		qctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		var one int
		return c.QueryRowContext(qctx, "SELECT 1").Scan(&one)
	}
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := query(c, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	pid1, err := srv.PID()
	if err != nil {
		t.Fatal(err)
	}
	if n, err := pidFileFirst(srv.Dir + "/mysqld.pid"); err != nil || n != pid1 {
		t.Errorf("PID %d, pid file %d (%v)", pid1, n, err)
	}

	t0 := time.Now()
	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("restart took %v", time.Since(t0).Round(time.Millisecond))
	pid2, err := srv.PID()
	if err != nil || pid2 == pid1 {
		t.Fatalf("mariadbd %d after restart (before %d): %v", pid2, pid1, err)
	}
	if err := query(c, 5*time.Second); err == nil {
		t.Fatal("a connection survived the restart")
	}
	c.Close()
	// The same address and the same socket, with the password.
	for _, addr := range []struct{ net, addr string }{{"tcp", cfg.Addr}, {"unix", srv.Socket}} {
		cfg.Net, cfg.Addr = addr.net, addr.addr
		d, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		if err := d.PingContext(ctx); err != nil {
			t.Errorf("over %s after the restart: %v", addr.net, err)
		}
		d.Close()
	}
	// Down for a second: connections are refused meanwhile.
	restarted := make(chan error, 1)
	go func() { restarted <- srv.RestartAfter(ctx, time.Second) }()
	time.Sleep(500 * time.Millisecond)
	if err := db.PingContext(ctx); err == nil {
		t.Error("connected to a server that is down")
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	c, err = db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := query(c, 5*time.Second); err != nil {
		t.Fatal(err)
	}

	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	checkPaused(t, srv)
	if err := query(c, time.Second); err == nil {
		t.Fatal("a paused server answered")
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	c2, err := db.Conn(ctx)
	if err != nil {
		t.Fatalf("after Resume: %v", err)
	}
	if err := query(c2, 5*time.Second); err != nil {
		t.Fatalf("after Resume: %v", err)
	}
	c2.Close()

	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	stopped = true
	if err := srv.Stop(); err != nil {
		t.Fatalf("stop a paused server: %v", err)
	}
	if d := time.Since(t0); d > 20*time.Second {
		t.Errorf("stopping a paused server took %v", d)
	}
}
