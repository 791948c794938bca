package sqlite

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sledge-bench/sledge/internal/db"
	"github.com/sledge-bench/sledge/internal/workload"
)

// testFiles is the SQL of the test workload "kv" (testdata/sql/kv).
var testFiles = db.SQLFiles{FS: os.DirFS("testdata")}

// openTest opens a fresh database in a temporary directory with the test
// workload's SQL; query overrides tuning as in a URL.
func openTest(t testing.TB, query string) *DB {
	t.Helper()
	u := &url.URL{Scheme: "sqlite", Path: filepath.Join(t.TempDir(), "test.db"), RawQuery: query}
	path, set, err := parseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	d, err := open(context.Background(), path, set, testFiles)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	return d
}

// openBuilt is openTest plus the kv tables and indexes.
func openBuilt(t testing.TB, query string) *DB {
	t.Helper()
	d := openTest(t, query)
	for _, s := range []string{"tables", "indexes"} {
		if err := d.Script(context.Background(), "kv", s); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// runModes runs f once per mode SQLite supports, as subtests named by mode.
func runModes(t *testing.T, f func(t *testing.T, m workload.Mode)) {
	t.Helper()
	for _, m := range []workload.Mode{workload.ModeClient, workload.ModePrepared, workload.ModeBatched} {
		t.Run(m.String(), func(t *testing.T) { f(t, m) })
	}
}

func TestParseURL(t *testing.T) {
	tests := []struct {
		url      string
		wantPath string
		wantSet  map[string]string // settings that must have this value
		wantErr  string
	}{
		{url: "sqlite:///abs/path/file.db", wantPath: "/abs/path/file.db"},
		{url: "sqlite:relative/file.db", wantPath: "relative/file.db"},
		{url: "sqlite3:file.db", wantPath: "file.db"},
		{url: "sqlite://./rel.db", wantPath: "./rel.db"},
		{url: "sqlite://data/x.db", wantPath: "data/x.db"},
		{url: "sqlite:///with%20space.db", wantPath: "/with space.db"},
		{url: "sqlite:with%20space.db", wantPath: "with space.db"},
		{url: "sqlite:///x.db", wantSet: map[string]string{"journal_mode": "WAL", "synchronous": "NORMAL", "busy_timeout": "60000", "page_size": ""}},
		{url: "sqlite:///x.db?synchronous=FULL&cache_size=-200000", wantPath: "/x.db", wantSet: map[string]string{"synchronous": "FULL", "cache_size": "-200000", "journal_mode": "WAL"}},
		{url: "sqlite:x.db?page_size=8192", wantSet: map[string]string{"page_size": "8192"}},
		{url: "sqlite:", wantErr: "sqlite URL has no file path: use sqlite:///path/to/file.db"},
		{url: "sqlite://", wantErr: "sqlite URL has no file path: use sqlite:///path/to/file.db"},
		{url: "sqlite:?synchronous=FULL", wantErr: "sqlite URL has no file path"},
		{url: "sqlite::memory:", wantErr: "is not a file"},
		{url: "sqlite:///x.db?sync=FULL&foo=1", wantErr: "sqlite URL: unknown parameter foo, sync: known are busy_timeout, cache_size,"},
		{url: "sqlite:///x.db?synchronous=FULL;DROP", wantErr: "bad query"},
		{url: "sqlite:///x.db?synchronous=FULL%3BDROP", wantErr: `bad value "FULL;DROP" for synchronous: use one of OFF, NORMAL, FULL, EXTRA`},
		{url: "sqlite:///x.db?synchronous=", wantErr: "bad value"},
		{url: "sqlite:///x.db?synchronous=fast", wantErr: "bad value"},
		{url: "sqlite:///x.db?cache_size=64MB", wantErr: `bad value "64MB" for cache_size: use an integer`},
		{url: "sqlite:///x.db?JOURNAL_MODE=delete", wantSet: map[string]string{"journal_mode": "delete"}},
		{url: "sqlite:///x.db?synchronous=FULL&synchronous=OFF", wantErr: "bad value"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			path, set, err := parseURL(u)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantPath != "" && path != tt.wantPath {
				t.Errorf("path = %q, want %q", path, tt.wantPath)
			}
			for k, v := range tt.wantSet {
				found := false
				for _, s := range set {
					if s.name == k {
						found = true
						if s.value != v {
							t.Errorf("%s = %q, want %q", k, s.value, v)
						}
					}
				}
				if !found {
					t.Errorf("no setting %s", k)
				}
			}
		})
	}
}

func TestOpenUnwritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	roFile := filepath.Join(dir, "ro.db")
	if err := os.WriteFile(roFile, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, wantErr string
		skipRoot            bool
	}{
		{name: "missing dir", path: filepath.Join(dir, "nope", "x.db"), wantErr: "sqlite: directory " + filepath.Join(dir, "nope") + " does not exist"},
		{name: "path is a dir", path: dir, wantErr: "sqlite: " + dir + " is a directory"},
		{name: "parent is a file", path: filepath.Join(file, "x.db"), wantErr: "sqlite: " + file + " is not a directory"},
		{name: "not a database", path: file, wantErr: "not a database"},
		// Root writes through permission bits, so this case cannot fail as root.
		{name: "read-only dir", path: filepath.Join(ro, "x.db"), wantErr: "sqlite: directory " + ro + " is not writable", skipRoot: true},
		{name: "read-only file", path: roFile, wantErr: "sqlite: " + roFile + " is not writable", skipRoot: true},
	}
	if err := os.WriteFile(file, []byte(strings.Repeat("not sqlite ", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skipRoot && os.Geteuid() == 0 {
				t.Skip("running as root: permission bits do not stop root from writing")
			}
			d, err := db.Open(context.Background(), "sqlite://"+tt.path)
			if err == nil {
				d.Close()
				t.Fatalf("opened %s", tt.path)
			}
			if !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %q, want one line with %q", err, tt.wantErr)
			}
		})
	}
}

func TestOpenCreatesFileAndInfo(t *testing.T) {
	tests := []struct {
		query string
		want  map[string]string
	}{
		{"", map[string]string{"journal_mode": "WAL", "synchronous": "NORMAL", "busy_timeout": "60000",
			"cache_size": "-65536", "mmap_size": "1073741824", "temp_store": "MEMORY", "foreign_keys": "0",
			"wal_autocheckpoint": "1000", "page_size": "4096"}},
		{"synchronous=FULL&cache_size=-2000&page_size=8192", map[string]string{"synchronous": "FULL", "cache_size": "-2000", "page_size": "8192"}},
		{"journal_mode=delete&temp_store=FILE", map[string]string{"journal_mode": "DELETE", "temp_store": "FILE"}},
	}
	for _, tt := range tests {
		t.Run("query="+tt.query, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "new.db")
			d, err := db.Open(context.Background(), "sqlite://"+path+"?"+tt.query)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if _, err := os.Stat(path); err != nil {
				t.Fatal(err)
			}
			info, err := d.Info(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if info.Driver != "sqlite" || info.Transport != "embedded" ||
				!strings.HasPrefix(info.Version, "3.") || !strings.Contains(info.Version, goDriver) ||
				!strings.HasPrefix(info.Settings["driver"], goDriver) {
				t.Errorf("info = %+v", info)
			}
			for k, v := range tt.want {
				if info.Settings[k] != v {
					t.Errorf("%s = %q, want %q", k, info.Settings[k], v)
				}
			}
			if _, ok, err := d.Counters(context.Background()); ok || err != nil {
				t.Errorf("Counters ok=%v err=%v; want false, nil", ok, err)
			}
		})
	}
}

func TestSupports(t *testing.T) {
	d := openTest(t, "")
	tests := []struct {
		m    workload.Mode
		want string
	}{
		{workload.ModeClient, ""},
		{workload.ModePrepared, ""},
		{workload.ModeBatched, ""},
		{workload.ModeProcedure, "sqlite has no stored procedures; use --mode client or prepared"},
		{workload.ModePipeline, "sqlite has no pipeline mode: in-process SQL has no round trips to save; use --mode client or prepared"},
		{workload.ModeBlock, "sqlite has no block mode: it has no procedural language to run an anonymous block in; use --mode client or prepared"},
	}
	for _, tt := range tests {
		t.Run(tt.m.String(), func(t *testing.T) {
			err := d.Supports("kv", tt.m)
			if got := errString(err); got != tt.want {
				t.Fatalf("Supports = %q, want %q", got, tt.want)
			}
			c, err := d.Connect(context.Background(), "kv", tt.m)
			if got := errString(err); got != tt.want {
				t.Fatalf("Connect err = %q, want %q", got, tt.want)
			}
			if c != nil {
				c.Close(context.Background())
			}
		})
	}
	if d.DefaultMode() != workload.ModePrepared {
		t.Errorf("DefaultMode = %v", d.DefaultMode())
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestScript(t *testing.T) {
	ctx := context.Background()
	d := openTest(t, "")
	for _, s := range []string{"tables", "indexes", "procedures"} { // no procedures.sql: nothing to do
		if err := d.Script(ctx, "kv", s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	// The trigger from indexes.sql (a DELIMITER block) is installed and fires.
	c, err := d.Connect(ctx, "kv", workload.ModePrepared)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "counter.set", int64(5)); err != nil {
		t.Fatal(err)
	}
	var changed int64
	if err := c.QueryRow(ctx, "counter.changed").Scan(&changed); err != nil || changed != 1 {
		t.Fatalf("changed = %d, %v; want 1", changed, err)
	}
	// A failing statement names the file, the statement and the cause.
	err = d.Script(ctx, "kv", "tables")
	if err == nil || !strings.Contains(err.Error(), "sqlite: kv/tables.sql statement 1 (CREATE TABLE item (…): ") ||
		!strings.Contains(err.Error(), "already exists") {
		t.Fatalf("err = %v", err)
	}
	if err := d.Script(ctx, "kv", "drop"); err != nil {
		t.Fatal(err)
	}
	if err := d.Script(ctx, "kv", "tables"); err != nil {
		t.Fatalf("tables after drop: %v", err)
	}
	if err := d.Script(ctx, "nope", "tables"); err != nil {
		t.Fatalf("unknown workload: %v", err)
	}
}

func TestEmbeddedSQL(t *testing.T) {
	// The package's own sql folder is embedded; whatever workloads it holds
	// must parse.
	files := db.SQLFiles{FS: sqlFS}
	entries, err := sqlFS.ReadDir("sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		w := e.Name()
		t.Run(w, func(t *testing.T) {
			if _, err := files.Named(w); err != nil {
				t.Error(err)
			}
			for _, s := range []string{"tables", "indexes", "drop"} {
				if _, _, err := files.Script(w, s); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	err := wrap("exec", "x", errors.New("boom"))
	if err.Error() != "sqlite: exec x: boom" || errors.Is(err, workload.ErrRetry) {
		t.Fatal(err)
	}
}
