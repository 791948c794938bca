package runner

import (
	"net/url"
	"testing"

	_ "github.com/sledge-bench/sledge/internal/db/all" // the drivers know their URLs
)

// Transports derived from one URL, each way.
func TestTransportURLs(t *testing.T) {
	cases := []struct {
		name                         string
		db, transports, socket, host string
		port                         int
		want                         map[string]string
	}{
		{"postgres tcp to unix", "postgres://u:p@127.0.0.1:5433/tpcc?sslmode=disable", "tcp,unix", "/run/pg", "", 0,
			map[string]string{"tcp": "postgres://u:p@127.0.0.1:5433/tpcc?sslmode=disable", "unix": "postgres://u:p@/tpcc?host=%2Frun%2Fpg&port=5433&sslmode=disable"}},
		{"postgres unix to tcp", "postgres://u:p@/tpcc?host=/run/pg&port=5433", "unix,tcp", "", "127.0.0.1", 0,
			map[string]string{"tcp": "postgres://u:p@127.0.0.1:5433/tpcc"}},
		{"postgres unix to tcp, port given", "postgres://u@/tpcc?host=/run/pg", "tcp", "", "10.0.0.2", 6000,
			map[string]string{"tcp": "postgres://u@10.0.0.2:6000/tpcc"}},
		{"mysql tcp to unix", "mysql://root:p@127.0.0.1:3307/tpcc?isolation=read-committed", "unix", "/run/mysqld/mysqld.sock", "", 0,
			map[string]string{"unix": "mysql://root:p@/tpcc?isolation=read-committed&socket=%2Frun%2Fmysqld%2Fmysqld.sock"}},
		{"mysql unix to tcp", "mysql://root:p@/tpcc?socket=/tmp/m.sock", "tcp", "", "127.0.0.1", 0,
			map[string]string{"tcp": "mysql://root:p@127.0.0.1:3306/tpcc"}},
		{"sqlite default", "sqlite:///tmp/x.db", "", "", "", 0, map[string]string{"embedded": "sqlite:///tmp/x.db"}},
		// The driver, not a list of schemes in compare, knows its URLs: the
		// mariadb:// alias derives transports as mysql:// does.
		{"mariadb scheme tcp to unix", "mariadb://root:p@127.0.0.1:3307/tpcc", "tcp,unix", "/run/m.sock", "", 0,
			map[string]string{"tcp": "mariadb://root:p@127.0.0.1:3307/tpcc", "unix": "mariadb://root:p@/tpcc?socket=%2Frun%2Fm.sock"}},
		{"postgresql scheme unix to tcp", "postgresql://u@/tpcc?host=/run/pg", "tcp", "", "::1", 0,
			map[string]string{"tcp": "postgresql://u@[::1]:5432/tpcc"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := TransportURLs(c.db, &CompareOptions{Transports: c.transports, Socket: c.socket, Host: c.host, Port: c.port})
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range got {
				w, ok := c.want[g.Transport]
				if ok && g.URL != w {
					t.Errorf("%s: %s, want %s", g.Transport, g.URL, w)
				}
				if _, err := url.Parse(g.URL); err != nil {
					t.Error(err)
				}
			}
		})
	}
}
