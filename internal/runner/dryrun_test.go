package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A dry run checks the options together and opens nothing: no database
// file, no job store; a refused combination is exit 2 with the command's
// own line.
func TestDryRun(t *testing.T) {
	home := t.TempDir()
	dbPath := filepath.Join(home, "none.db")
	getenv := func(k string) string {
		if k == "HOME" || k == "XDG_DATA_HOME" {
			return home
		}
		return ""
	}
	for _, c := range []struct {
		spec, err string
	}{
		{`{"kind":"run","db":"sqlite://` + dbPath + `","options":{"vus":2,"duration":"5s","threshold":["nopm>=1"]}}`, ""},
		{`{"kind":"build","db":"sqlite://` + dbPath + `"}`, ""},
		{`{"kind":"compare","db":"sqlite://` + dbPath + `","options":{"modes":"client,prepared","vus":"1,2"}}`, ""},
		{`{"kind":"check","db":"sqlite://` + dbPath + `"}`, ""},
		{`{"kind":"run","db":"sqlite://` + dbPath + `","options":{"vus":0}}`, "--vus must be at least 1"},
		{`{"kind":"run","db":"sqlite://` + dbPath + `","options":{"connections":4,"vus":2}}`, "--connections 4 is more than --vus 2"},
		{`{"kind":"run","db":"sqlite://` + dbPath + `","options":{"threshold":["p95(nosuch)<5ms"]}}`, "nosuch"},
		{`{"kind":"compare","db":"sqlite://` + dbPath + `","options":{"vus":"0"}}`, "--vus"},
		// issue 16
		{`{"kind":"run","db":"sqlite://` + dbPath + `","options":{"vus":2,"iterations":3,"connect":true,"failures-detailed":true,"verbose-errors":true}}`, ""},
		{`{"kind":"run","db":"sqlite://` + dbPath + `","options":{"vus":2,"connections":1,"connect":true}}`, "not both"},
		{`{"kind":"run","db":"sqlite://` + dbPath + `","options":{"progress-timestamp":true}}`, "allowed only under --progress"},
	} {
		s, err := ParseSpec([]byte(c.spec))
		if err != nil {
			t.Fatal(err)
		}
		r := Execute(context.Background(), s, Exec{DryRun: true, NoJob: true, Getenv: getenv})
		switch {
		case c.err == "" && r.Code != ExitOK:
			t.Errorf("%s: exit %d %q", c.spec, r.Code, r.Err)
		case c.err != "" && (r.Code != ExitUsage || !strings.Contains(r.Err, c.err)):
			t.Errorf("%s: exit %d %q, want 2 with %q", c.spec, r.Code, r.Err, c.err)
		}
		if r.JobID != 0 || len(r.JSON) != 0 {
			t.Errorf("%s: a dry run made job %d or printed %s", c.spec, r.JobID, r.JSON)
		}
	}
	for _, p := range []string{dbPath, filepath.Join(home, "sledge", "jobs.db")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("a dry run left %s (%v)", p, err)
		}
	}
}
