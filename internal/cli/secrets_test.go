package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/sledge-bench/sledge/internal/pgbench"
	"github.com/sledge-bench/sledge/internal/testdb"
)

// The secrets canary (issue 6, item 6): on a private PostgreSQL and a
// private MariaDB, a user whose password is a unique canary runs every
// command with a URL carrying it: build (tpcc and tpcb), run (tpcc, tpcb
// and a script; text and --json; -P 1; -r), check, compare, jobs list,
// show, diff and export, drop, over TCP and the unix socket, and through
// $SLEDGE_DB; then the failures: a wrong password (itself a canary), a
// database that does not exist, a port nobody listens on, options the
// driver refuses. The canary never appears in stdout, stderr, the job
// store's bytes (database, WAL and shared-memory files), or any file
// sledge wrote under its data home (the compare report included).
//
// Passwords are found by their random hex part, which no escaping changes:
// one of them is full of characters URLs escape (@ : / % ? # & +).
func TestSecretsNeverLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and MariaDB and builds schemas")
	}
	for _, kind := range []string{"postgres", "mariadb"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel() // each its own server and data homes
			var srv *testdb.Server
			var err error
			if kind == "postgres" {
				srv, err = testdb.StartPostgres(context.Background())
			} else {
				srv, err = testdb.StartMariaDB(context.Background())
			}
			srv = testdb.Need(t, srv, err)
			t.Cleanup(func() {
				if err := srv.Stop(); err != nil {
					t.Log(err)
				}
			})
			secretsCanary(t, kind, srv)
		})
	}
}

// canary is a password whose token (random hex) must never show.
type canary struct{ token, password string }

func newCanary(t *testing.T, decorate string) canary {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	tok := hex.EncodeToString(b)
	return canary{token: tok, password: "canary-" + tok + decorate}
}

func secretsCanary(t *testing.T, kind string, srv *testdb.Server) {
	ctx := context.Background()
	plain := newCanary(t, "")
	special := newCanary(t, "-p@ss:w/rd%?#&+ x")
	wrong := newCanary(t, "")
	tokens := []string{plain.token, special.token, wrong.token}
	const user, user2 = "sledge_canary", "sledge_canary2"
	createUser(t, kind, srv, user, plain.password)
	createUser(t, kind, srv, user2, special.password)

	scheme := map[string]string{"postgres": "postgres", "mariadb": "mysql"}[kind]
	tcp := func(u, pw, dbName, query string) string {
		x := url.URL{Scheme: scheme, User: url.UserPassword(u, pw), Host: fmt.Sprintf("%s:%d", srv.Host, srv.Port), Path: "/" + dbName, RawQuery: query}
		return x.String()
	}
	sock := func(u, pw, dbName string) string {
		x := url.URL{Scheme: scheme, User: url.UserPassword(u, pw), Path: "/" + dbName}
		if kind == "postgres" {
			x.RawQuery = "host=" + url.QueryEscape(srv.Socket) + "&port=" + strconv.Itoa(srv.Port)
		} else {
			x.RawQuery = "socket=" + url.QueryEscape(srv.Socket)
		}
		return x.String()
	}
	port, err := testdb.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	tpcc := tcp(user, plain.password, "canary_tpcc", "")
	tpcb := tcp(user, plain.password, "canary_tpcb", "")
	tpcbSpecial := tcp(user2, special.password, "canary_tpcb", "")
	tpcbSocket := sock(user, plain.password, "canary_tpcb")
	if strings.Contains(tpcbSpecial, special.password) {
		t.Fatalf("the special password is not escaped in %s: the test would not cover escaping", tpcbSpecial)
	}

	scripts := t.TempDir()
	script := filepath.Join(scripts, "canary.sql")
	// pgbench's tpcb-like as a user's file: check still holds after it.
	if err := os.WriteFile(script, []byte(pgbench.BuiltinText("tpcb-like")), 0o644); err != nil {
		t.Fatal(err)
	}
	var outputs []string // of the commands run so far in the current data home
	type step struct {
		args []string
		vars map[string]string
		ok   bool // must succeed
	}
	mainHome := t.TempDir()
	home := mainHome
	exec := func(s step) (string, string, int) {
		t.Helper()
		start := time.Now()
		stdout, stderr, code := runCLIEnv(t, ctx, home, s.vars, s.args...)
		if el := time.Since(start); el > 3*time.Second {
			t.Logf("%.1fs: %s", el.Seconds(), redactTokens(strings.Join(s.args, " "), tokens))
		}
		outputs = append(outputs, stdout, stderr)
		if s.ok && code != 0 {
			t.Errorf("%s: exit %d: %s", redactTokens(strings.Join(s.args, " "), tokens), code, redactTokens(stderr, tokens))
		}
		if !s.ok && code == 0 {
			t.Errorf("%s: exit 0, want a failure", redactTokens(strings.Join(s.args, " "), tokens))
		}
		if !s.ok && code != 0 {
			if l := failureLines(stderr); len(l) != 1 {
				t.Errorf("%s: stderr is not one 'sledge: ' line: %s", redactTokens(strings.Join(s.args, " "), tokens), redactTokens(stderr, tokens))
			}
		}
		return stdout, stderr, code
	}
	steps := []step{
		{args: []string{"build", "--db", tpcc, "--warehouses", "1", "--build-vus", "2"}, ok: true},
		{args: []string{"build", "tpcb", "--db", tpcb, "--scale", "1", "--json"}, ok: true},
		{args: []string{"run", "--db", tpcc, "--vus", "2", "--rampup", "0s", "--duration", "2s", "-P", "1", "-R", "100"}, ok: true},
		{args: []string{"run", "tpcc", "--db", tpcc, "--iterations", "20", "-r", "--json", "--mode", "client"}, ok: true},
		{args: []string{"run", "tpcb", "--db", tpcb, "-c", "2", "-T", "2", "-P", "1", "-r", "-R", "200"}, ok: true},
		{args: []string{"run", "tpcb", "--db", tpcbSpecial, "-t", "50", "--json", "--builtin", "select-only"}, ok: true},
		{args: []string{"run", "--db", tpcb, "-f", script, "-t", "20", "-M", "prepared", "--json", "-r"}, ok: true},
		{args: []string{"run", "--db", tpcbSocket, "-f", script + "@2", "-b", "simple-update", "-t", "20", "-P", "1"}, ok: true},
		{args: []string{"check", "--db", tpcc}, ok: true},
		{args: []string{"check", "tpcb", "--json"}, vars: map[string]string{"SLEDGE_DB": tpcb}, ok: true},
		{args: []string{"run", "tpcb", "-t", "10"}, vars: map[string]string{"SLEDGE_DB": tpcbSpecial}, ok: true},
		{args: []string{"compare", "--db", tpcc, "--modes", "client", "--vus", "1", "--duration", "1s", "--rampup", "0s",
			"--html", filepath.Join(mainHome, "compare.html")}, ok: true},
		{args: []string{"compare", "--db", tpcc, "--modes", "client", "--vus", "1", "--iterations", "5", "--json"}, ok: true},

		// Failures.
		{args: []string{"run", "--db", tcp(user, wrong.password, "canary_tpcc", ""), "-t", "1"}},
		{args: []string{"build", "--db", tcp(user, wrong.password, "canary_other", "")}},
		{args: []string{"check", "tpcb"}, vars: map[string]string{"SLEDGE_DB": tcp(user2, wrong.password, "canary_tpcb", "")}},
		{args: []string{"run", "tpcb", "--db", tcp(user, plain.password, "canary_nosuch", ""), "-t", "1"}},
		{args: []string{"check", "--db", tcp(user2, special.password, "canary_nosuch", "")}},
		{args: []string{"run", "--db", fmt.Sprintf("%s://%s:%s@127.0.0.1:%d/canary_tpcc", scheme, user, plain.password, port), "-t", "1"}},
		{args: []string{"build", "tpcb", "--db", strings.Replace(tpcbSpecial, strconv.Itoa(srv.Port), strconv.Itoa(port), 1)}},
		{args: []string{"run", "--db", sock(user, wrong.password, "canary_tpcc"), "-t", "1"}},
	}
	// Leaks found by this test and fixed (230364f): connection strings in
	// the drivers' own forms, which are not URLs, and a password with a
	// bare % (not escaped) in the query. They run in a data home of their
	// own, so that a known leak (secretsKnownBug) can be skipped while the
	// rest is checked strictly.
	var leaky []step
	if kind == "postgres" {
		leaky = append(leaky, step{args: []string{"check"}, vars: map[string]string{"SLEDGE_DB": fmt.Sprintf(
			"host=%s port=%d user=%s password=%s dbname=canary_tpcc", srv.Host, srv.Port, user, plain.password)}})
	} else {
		leaky = append(leaky, step{args: []string{"check", "--db", fmt.Sprintf("%s:%s@tcp(%s:%d)/canary_tpcc", user, plain.password, srv.Host, srv.Port)}})
	}
	leaky = append(leaky, step{args: []string{"run", "--db", fmt.Sprintf("%s://%s@%s:%d/canary_tpcc?password=%s%%", scheme, user, srv.Host, srv.Port, plain.password), "-t", "1"}})
	if kind == "postgres" {
		steps = append(steps,
			step{args: []string{"run", "--db", tcp(user, plain.password, "canary_tpcc", "sslmode=bogus"), "-t", "1"}},
			step{args: []string{"run", "--db", tcp(user, plain.password, "canary_tpcc", "connect_timeout=abc"), "-t", "1"}},
			step{args: []string{"run", "--db", tcp(user, plain.password, "canary_tpcc", "options=-c%20nosuch.setting%3Dx%20-c%20work_mem%3Dbogus"), "-t", "1"}},
			step{args: []string{"run", "--db", tcp(user, plain.password, "canary_tpcc", "sslmode=require"), "-t", "1"}},
			// The password as a query parameter instead of in the user info.
			step{args: []string{"check", "tpcb", "--db", fmt.Sprintf("postgres://%s@%s:%d/canary_tpcb?password=%s", user, srv.Host, srv.Port, url.QueryEscape(plain.password))}, ok: true},
			step{args: []string{"check", "--db", fmt.Sprintf("postgres://%s@%s:%d/canary_tpcc?password=%s", user, srv.Host, srv.Port, url.QueryEscape(wrong.password))}},
		)
	} else {
		steps = append(steps,
			step{args: []string{"run", "--db", tcp(user, plain.password, "canary_tpcc", "tls=bogus"), "-t", "1"}},
			step{args: []string{"run", "--db", tcp(user, plain.password, "canary_tpcc", "timeout=abc"), "-t", "1"}},
			step{args: []string{"run", "--db", tcp(user, plain.password, "canary_tpcc", "tls=true"), "-t", "1"}},
			step{args: []string{"run", "--db", tcp(user, plain.password, "canary_tpcc", "isolation=bogus"), "-t", "1"}},
		)
	}
	// audit runs steps in a fresh data home, then every jobs command on
	// every job they recorded, and returns where a password showed: in an
	// output, or in a file under the data home.
	audit := func(in string, steps []step, drop bool) (problems []string) {
		home = in
		outputs = nil
		jobbed := 0 // refused input (exit 2) is not a job
		for _, s := range steps {
			if _, _, code := exec(s); code != ExitUsage {
				jobbed++
			}
		}
		jobsEverywhere(t, func(args []string, ok bool) (string, string, int) { return exec(step{args: args, ok: ok}) }, jobbed)
		if drop {
			exec(step{args: []string{"drop", "tpcb", "--db", tpcbSpecial}, ok: true})
			exec(step{args: []string{"drop", "--db", tpcc, "--json"}, ok: true})
			exec(step{args: []string{"drop", "--db", tcp(user, wrong.password, "canary_tpcc", "")}})
		}
		for i, o := range outputs {
			for _, tok := range tokens {
				if strings.Contains(o, tok) {
					problems = append(problems, fmt.Sprintf("output %d shows a password:\n%s", i, redactTokens(o, tokens)))
				}
			}
		}
		problems = append(problems, filesWith(t, home, tokens)...)
		return problems
	}
	for _, p := range audit(mainHome, steps, true) {
		t.Error(p)
	}
	var files []string
	_ = filepath.WalkDir(mainHome, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if !containsSuffix(files, "jobs.db") || !containsSuffix(files, "compare.html") {
		t.Errorf("files under the data home: %v; want the job store and the report", files)
	}
	leaks := audit(t.TempDir(), leaky, false)
	switch {
	case len(leaks) > 0 && secretsKnownBug != "":
		t.Skipf("bug: %s:\n%s", secretsKnownBug, strings.Join(leaks, "\n"))
	case len(leaks) > 0:
		for _, p := range leaks {
			t.Error(p)
		}
	}
}

// secretsKnownBug names the known leaks, reported and not fixed yet, that
// TestSecretsNeverLeak skips instead of failing (after everything else was
// checked); "" once they are fixed.
var secretsKnownBug = ""

// jobsEverywhere runs every jobs command on every job in the store.
func jobsEverywhere(t *testing.T, exec func(args []string, ok bool) (string, string, int), commands int) {
	t.Helper()
	stdout, _, _ := exec([]string{"jobs", "list", "--json", "--limit", "0"}, true)
	var l struct {
		Jobs []storedJob `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(stdout), &l); err != nil {
		t.Fatalf("jobs list --json: %v", err)
	}
	if len(l.Jobs) < commands {
		t.Errorf("%d jobs for %d commands", len(l.Jobs), commands)
	}
	exec([]string{"jobs", "list", "--limit", "0"}, true)
	var prev string
	for _, j := range l.Jobs {
		id := strconv.FormatInt(j.ID, 10)
		for _, args := range [][]string{{"jobs", "show", id}, {"jobs", "show", id, "--json"},
			{"jobs", "export", id, "--format", "json"}, {"jobs", "export", id, "--format", "csv"},
			{"jobs", "export", id, "--format", "csv", "--table", "types"}} {
			exec(args, true)
		}
		if prev != "" {
			exec([]string{"jobs", "diff", prev, id}, true)
			exec([]string{"jobs", "diff", prev, id, "--json"}, true)
		}
		prev = id
	}
}

// filesWith lists the files under dir that hold one of the tokens.
func filesWith(t *testing.T, dir string, tokens []string) (problems []string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, rerr := os.ReadFile(p)
		if rerr != nil {
			problems = append(problems, fmt.Sprintf("read %s: %v", p, rerr))
			return nil
		}
		for _, tok := range tokens {
			if bytes.Contains(b, []byte(tok)) {
				problems = append(problems, p+" holds a password")
			}
		}
		return nil
	})
	return problems
}

// createUser makes a user that may build: PostgreSQL superuser, MariaDB
// all privileges (over TCP from 127.0.0.1 and the socket).
func createUser(t *testing.T, kind string, srv *testdb.Server, user, password string) {
	t.Helper()
	ctx := context.Background()
	if kind == "postgres" {
		admin := url.URL{Scheme: "postgres", User: url.UserPassword(srv.User, srv.Password), Host: fmt.Sprintf("%s:%d", srv.Host, srv.Port), Path: "/postgres"}
		c, err := pgx.Connect(ctx, admin.String())
		if err != nil {
			t.Fatalf("postgres admin connection: %v", err)
		}
		defer c.Close(ctx)
		q := fmt.Sprintf("CREATE ROLE %s LOGIN SUPERUSER PASSWORD '%s'", user, strings.ReplaceAll(password, "'", "''"))
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("create role: %v", err)
		}
		return
	}
	d, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s:%d)/", srv.User, srv.Password, srv.Host, srv.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	pw := strings.ReplaceAll(strings.ReplaceAll(password, `\`, `\\`), "'", "''")
	for _, host := range []string{"127.0.0.1", "localhost"} {
		for _, q := range []string{
			fmt.Sprintf("CREATE USER '%s'@'%s' IDENTIFIED BY '%s'", user, host, pw),
			fmt.Sprintf("GRANT ALL PRIVILEGES ON *.* TO '%s'@'%s' WITH GRANT OPTION", user, host),
		} {
			if _, err := d.ExecContext(ctx, q); err != nil {
				t.Fatalf("mariadb: %v", err)
			}
		}
	}
}

func redactTokens(s string, tokens []string) string {
	for _, tok := range tokens {
		s = strings.ReplaceAll(s, tok, "<CANARY>")
	}
	return s
}

func containsSuffix(list []string, suffix string) bool {
	for _, s := range list {
		if strings.HasSuffix(s, suffix) {
			return true
		}
	}
	return false
}
