package db

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

func TestParseNamed(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		want    map[string]string
		wantErr string
	}{
		{
			name: "two sections",
			src: `-- leading comment
-- name: a.one
SELECT 1
FROM t;

-- name: b.two
-- what it does
UPDATE t SET x = ?1 ;
`,
			want: map[string]string{"a.one": "SELECT 1\nFROM t", "b.two": "UPDATE t SET x = ?1"},
		},
		{
			name: "tight spacing and CRLF",
			src:  "--name:x\r\nSELECT 1;\r\n",
			want: map[string]string{"x": "SELECT 1"},
		},
		{
			name: "only one trailing semicolon removed",
			src:  "-- name: x\nSELECT ';';;",
			want: map[string]string{"x": "SELECT ';';"},
		},
		{name: "empty file", src: "", want: map[string]string{}},
		{name: "comments only", src: "-- hello\n\n", want: map[string]string{}},
		{name: "duplicate", src: "-- name: x\nSELECT 1;\n-- name: x\nSELECT 2;", wantErr: `line 3: statement "x" defined twice`},
		{name: "empty section", src: "-- name: x\n-- nothing\n;\n-- name: y\nSELECT 1", wantErr: `line 1: statement "x" is empty`},
		{name: "empty last section", src: "-- name: x\nSELECT 1\n-- name: y\n", wantErr: `line 3: statement "y" is empty`},
		{name: "text before first name", src: "-- ok\nSELECT 1;\n-- name: x\nSELECT 2", wantErr: `line 2: SQL before the first "-- name:" line`},
		{name: "no name", src: "-- name:\nSELECT 1", wantErr: "line 1: bad section name"},
		{name: "name with space", src: "-- name: a b\nSELECT 1", wantErr: "line 1: bad section name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseNamed(tt.src)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSplitScript(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		want    []string
		wantErr string
	}{
		{name: "simple", src: "CREATE TABLE a (x int);\nCREATE TABLE b (y int);", want: []string{"CREATE TABLE a (x int)", "CREATE TABLE b (y int)"}},
		{name: "no trailing semicolon", src: "SELECT 1; SELECT 2", want: []string{"SELECT 1", "SELECT 2"}},
		{name: "empty statements dropped", src: ";;\n ; SELECT 1;;  ;\n", want: []string{"SELECT 1"}},
		{name: "empty script", src: "", want: nil},
		{name: "comments only", src: "-- a;\n/* b; */\n", want: nil},
		{name: "single quotes", src: "INSERT INTO t VALUES ('a;b', 'it''s;');SELECT 2", want: []string{"INSERT INTO t VALUES ('a;b', 'it''s;')", "SELECT 2"}},
		{name: "double quotes", src: `SELECT "a;b" FROM t; SELECT 2`, want: []string{`SELECT "a;b" FROM t`, "SELECT 2"}},
		{name: "backquotes", src: "SELECT `a;b` FROM t; SELECT 2", want: []string{"SELECT `a;b` FROM t", "SELECT 2"}},
		{name: "line comment", src: "SELECT 1 -- not; here\n; SELECT 2", want: []string{"SELECT 1 -- not; here", "SELECT 2"}},
		{name: "leading comment dropped", src: "-- make a\nCREATE TABLE a (x int);", want: []string{"CREATE TABLE a (x int)"}},
		{name: "block comment", src: "SELECT /* a; b */ 1; SELECT 2", want: []string{"SELECT /* a; b */ 1", "SELECT 2"}},
		{name: "minus is not a comment", src: "SELECT 1-2; SELECT 3", want: []string{"SELECT 1-2", "SELECT 3"}},
		{
			name: "dollar quote",
			src:  "CREATE FUNCTION f() RETURNS int AS $$ BEGIN; RETURN 1; END $$ LANGUAGE plpgsql;\nSELECT 2;",
			want: []string{"CREATE FUNCTION f() RETURNS int AS $$ BEGIN; RETURN 1; END $$ LANGUAGE plpgsql", "SELECT 2"},
		},
		{
			name: "tagged dollar quote containing $$",
			src:  "DO $body$ SELECT '$$;'; $$ x; $$ $body$; SELECT 2",
			want: []string{"DO $body$ SELECT '$$;'; $$ x; $$ $body$", "SELECT 2"},
		},
		{name: "parameter is not a dollar quote", src: "SELECT $1; SELECT $2", want: []string{"SELECT $1", "SELECT $2"}},
		{name: "dollar inside identifier", src: "SELECT a$b$c; SELECT 2", want: []string{"SELECT a$b$c", "SELECT 2"}},
		{
			name: "DELIMITER",
			src: `DROP PROCEDURE IF EXISTS p;
DELIMITER //
CREATE PROCEDURE p()
BEGIN
  SELECT 1;
  SELECT ';//';
END //
delimiter ;
SELECT 3;`,
			want: []string{"DROP PROCEDURE IF EXISTS p", "CREATE PROCEDURE p()\nBEGIN\n  SELECT 1;\n  SELECT ';//';\nEND", "SELECT 3"},
		},
		{
			name: "DELIMITER $$",
			src:  "DELIMITER $$\nCREATE PROCEDURE p() BEGIN SELECT 1; END$$\nDELIMITER ;\nSELECT 2;",
			want: []string{"CREATE PROCEDURE p() BEGIN SELECT 1; END", "SELECT 2"},
		},
		{name: "delimiter word inside a statement", src: "SELECT a,\ndelimiter FROM t; SELECT 2", want: []string{"SELECT a,\ndelimiter FROM t", "SELECT 2"}},
		{name: "DELIMITER without value", src: "DELIMITER\nSELECT 1", wantErr: "line 1: DELIMITER needs a value"},
		{name: "unterminated quote", src: "SELECT 1;\nSELECT 'abc", wantErr: "line 2: unterminated ' quote"},
		{name: "unterminated comment", src: "SELECT 1; /* abc", wantErr: "line 1: unterminated /* comment"},
		{name: "unterminated dollar quote", src: "\n\nDO $x$ abc $y$;", wantErr: "line 3: unterminated $x$ quote"},
		{name: "line numbers after quotes", src: "SELECT 'a\nb';\n\nSELECT \"x", wantErr: "line 4: unterminated \" quote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SplitScript(tt.src)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func FuzzSplitScript(f *testing.F) {
	for _, s := range []string{
		"SELECT 1; SELECT 2",
		"SELECT 'a;b' -- c\n; /* d; */ SELECT \"e\"",
		"DO $$ x; $$; DO $t$ y $t$;",
		"DELIMITER //\nCREATE PROCEDURE p() BEGIN SELECT 1; END //\nDELIMITER ;\n",
		"SELECT `a;b`; $1; a$b",
		"DELIMITER",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		stmts, err := SplitScript(src)
		if err != nil {
			return
		}
		for _, s := range stmts {
			if strings.TrimSpace(s) == "" {
				t.Fatalf("empty statement in %q", stmts)
			}
		}
	})
}

func TestSQLFiles(t *testing.T) {
	fsys := fstest.MapFS{
		"sql/w/statements.sql":         {Data: []byte("-- name: a\nSELECT 'generic a'\n-- name: b\nSELECT 'generic b'")},
		"sql/w/checks.sql":             {Data: []byte("-- name: check.1\nSELECT 0")},
		"sql/w/tables.sql":             {Data: []byte("CREATE TABLE t (x int); CREATE TABLE u (y int);")},
		"sql/w/indexes.sql":            {Data: []byte("CREATE INDEX i ON t (x);")},
		"sql/mariadb/w/statements.sql": {Data: []byte("-- name: b\nSELECT 'maria b'")},
		"sql/mariadb/w/tables.sql":     {Data: []byte("CREATE TABLE t (x int) ENGINE=InnoDB;")},
		"sql/dup/statements.sql":       {Data: []byte("-- name: a\nSELECT 1")},
		"sql/dup/checks.sql":           {Data: []byte("-- name: a\nSELECT 2")},
		"sql/bad/statements.sql":       {Data: []byte("SELECT 1")},
		"sql/bad/tables.sql":           {Data: []byte("SELECT 'x")},
	}
	generic := SQLFiles{FS: fsys}
	overlay := SQLFiles{FS: fsys, Dirs: []string{"sql/mariadb", "sql"}}

	t.Run("named/generic", func(t *testing.T) {
		got, err := generic.Named("w")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"a": "SELECT 'generic a'", "b": "SELECT 'generic b'", "check.1": "SELECT 0"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
	t.Run("named/overlay", func(t *testing.T) {
		got, err := overlay.Named("w")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"a": "SELECT 'generic a'", "b": "SELECT 'maria b'", "check.1": "SELECT 0"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
	t.Run("named/missing workload", func(t *testing.T) {
		got, err := generic.Named("nope")
		if err != nil || len(got) != 0 {
			t.Fatalf("got %q, %v; want empty, nil", got, err)
		}
	})
	t.Run("named/duplicate across files", func(t *testing.T) {
		_, err := generic.Named("dup")
		if err == nil || !strings.Contains(err.Error(), `sql/dup/checks.sql: statement "a"`) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("named/parse error names the file", func(t *testing.T) {
		_, err := generic.Named("bad")
		if err == nil || !strings.HasPrefix(err.Error(), "sql/bad/statements.sql: line 1:") {
			t.Fatalf("err = %v", err)
		}
	})

	scripts := []struct {
		name   string
		files  SQLFiles
		script string
		want   []string
		ok     bool
	}{
		{"generic tables", generic, "tables", []string{"CREATE TABLE t (x int)", "CREATE TABLE u (y int)"}, true},
		{"overlay tables", overlay, "tables", []string{"CREATE TABLE t (x int) ENGINE=InnoDB"}, true},
		{"overlay falls back", overlay, "indexes", []string{"CREATE INDEX i ON t (x)"}, true},
		{"missing", overlay, "procedures", nil, false},
	}
	for _, tt := range scripts {
		t.Run("script/"+tt.name, func(t *testing.T) {
			got, ok, err := tt.files.Script("w", tt.script)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tt.ok || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
	t.Run("script/split error names the file", func(t *testing.T) {
		_, _, err := generic.Script("bad", "tables")
		if err == nil || !strings.HasPrefix(err.Error(), "sql/bad/tables.sql: line 1:") {
			t.Fatalf("err = %v", err)
		}
	})
}
