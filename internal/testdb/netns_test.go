package testdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// A namespace of the test's own: PostgreSQL and MariaDB inside it answer
// on the namespace's address from the host, over the veth pair, and see
// the client at the host's end; the cleanup deletes the namespace and the veth pair
// and stops the servers. Where namespaces cannot be made the test says why
// and is skipped (the end-to-end tests then use loopback).
func TestNetnsServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	var name, link string
	t.Run("inside", func(t *testing.T) {
		ns, err := NewNetns(t)
		if errors.Is(err, ErrNoNetns) {
			t.Skipf("%v: loopback only", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		name, link = ns.Name, ns.Link
		if !strings.HasPrefix(ns.Addr, "10.213.") || !strings.HasPrefix(ns.HostAddr, "10.213.") {
			t.Fatalf("addresses %s, %s: want 10.213.0.0/16", ns.HostAddr, ns.Addr)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		pg, err := ns.StartPostgres(ctx)
		pg = Need(t, pg, err)
		maria, err := ns.StartMariaDB(ctx)
		maria = Need(t, maria, err)

		for _, srv := range []*Server{pg, maria} {
			if srv.Host != ns.Addr {
				t.Errorf("%s host %s, want %s", srv.Kind, srv.Host, ns.Addr)
			}
		}
		u := fmt.Sprintf("postgres://%s:%s@%s:%d/postgres", pg.User, pg.Password, pg.Host, pg.Port)
		c, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatalf("postgres over the veth pair: %v", err)
		}
		var addr string
		if err := c.QueryRow(ctx, "SELECT host(inet_client_addr())").Scan(&addr); err != nil {
			t.Fatal(err)
		}
		c.Close(ctx)
		if addr != ns.HostAddr {
			t.Errorf("postgres saw the client at %s, want the host's end %s", addr, ns.HostAddr)
		}

		mc := mysql.NewConfig()
		mc.User, mc.Passwd, mc.Net, mc.Addr = maria.User, maria.Password, "tcp", net.JoinHostPort(maria.Host, strconv.Itoa(maria.Port))
		db, err := sql.Open("mysql", mc.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var user string
		if err := db.QueryRowContext(ctx, "SELECT USER()").Scan(&user); err != nil {
			t.Fatalf("mariadb over the veth pair: %v", err)
		}
		if user != "root@"+ns.HostAddr {
			t.Errorf("mariadb user %s, want root@%s", user, ns.HostAddr)
		}
	})
	if name == "" {
		return
	}
	if out, _ := ipCmd("netns", "list"); strings.Contains(out, name+" ") || strings.Contains(out, name+"\n") {
		t.Errorf("namespace %s still there after the test:\n%s", name, out)
	}
	if out, _ := ipCmd("-o", "link", "show"); strings.Contains(out, " "+link+"@") || strings.Contains(out, " "+link+":") {
		t.Errorf("veth %s still there after the test", link)
	}
}
