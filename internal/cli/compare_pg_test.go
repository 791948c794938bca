package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compare on a private PostgreSQL server: procedure against client, over
// TCP and (derived with --socket) the unix socket, producing the table and
// the HTML report.
func TestComparePostgres(t *testing.T) {
	srv := pgLazy.Get(t)
	u := ownDB(t, srv, "compare")
	home := t.TempDir()
	if _, stderr, code := runCLI(t, home, "build", "--db", u, "--warehouses", "1", "--no-job"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	html := filepath.Join(home, "pg.html")
	args := []string{"compare", "--db", u, "--modes", "procedure,client", "--transports", "tcp,unix", "--socket", srv.Socket,
		"--vus", "1,2", "--iterations", "40", "--html", html}
	stdout, stderr, code := runCLI(t, home, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout+stderr, srv.Password) {
		t.Error("output shows the password")
	}
	var out compareOut
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("bad JSON %v: %s", err, stdout)
	}
	if len(out.Cells) != 8 {
		t.Fatalf("%d cells, want 8: %s", len(out.Cells), stdout)
	}
	i := 0
	for _, mode := range []string{"procedure", "client"} {
		for _, tr := range []string{"tcp", "unix"} {
			for _, vus := range []int{1, 2} {
				c := out.Cells[i]
				i++
				if c.Mode != mode || c.Transport != tr || c.VUs != vus {
					t.Errorf("cell %d is %s/%s/%d, want %s/%s/%d", i, c.Mode, c.Transport, c.VUs, mode, tr, vus)
				}
				if c.NOPM == nil || *c.NOPM <= 0 || c.Errors != 0 || c.JobID == nil || c.Ratio == nil {
					t.Errorf("cell %d: %+v", i, c)
				}
			}
		}
	}
	if out.Settings["shared_buffers"] == "" {
		t.Errorf("no database settings: %v", out.Settings)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"procedure · tcp", "client · unix", "shared_buffers", "<polyline"} {
		if !strings.Contains(string(b), s) {
			t.Errorf("report lacks %q", s)
		}
	}
	if strings.Contains(string(b), srv.Password) {
		t.Error("report shows the password")
	}

	// The same matrix as a table, on one transport.
	stdout, stderr, code = runCLI(t, home, "compare", "--db", u, "--modes", "procedure,client", "--vus", "1", "--iterations", "40")
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	for _, s := range []string{"procedure", "client", "tcp", "db", "1.00"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("table lacks %q:\n%s", s, stdout)
		}
	}
	t.Logf("\n%s", stdout)
}
