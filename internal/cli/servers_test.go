package cli

import (
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"

	"github.com/sledge-bench/sledge/internal/testdb"
)

// The package's servers, started the first time a test needs one and
// stopped in TestMain; under make test, the run's shared servers (testdb).
// Tests that read server-wide counters (MariaDB's TPM) or change a server
// start their own.
var (
	pgLazy    = testdb.LazyPostgres()
	mariaLazy = testdb.LazyMariaDB()
	ownDBSeq  atomic.Int64
)

// ownDB returns the URL of a database of the test's own on srv, as the
// superuser, named prefix_<pid>_<n>: other shards of this package and other
// packages use the same server at the same time. The test creates it (sledge
// build does); it is dropped at the end.
func ownDB(t *testing.T, srv *testdb.Server, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), ownDBSeq.Add(1))
	scheme := map[string]string{"postgres": "postgres", "mariadb": "mysql"}[srv.Kind]
	u := url.URL{Scheme: scheme, User: url.UserPassword(srv.User, srv.Password),
		Host: fmt.Sprintf("%s:%d", srv.Host, srv.Port), Path: "/" + name}
	srv.DropAtEnd(t, name)
	return u.String()
}
