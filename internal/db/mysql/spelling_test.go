package mysql

import "testing"

func TestMySQLSpelling(t *testing.T) {
	cases := map[string]string{
		"END;":                "COMMIT",
		" end transaction ; ": "COMMIT",
		"End Work":            "COMMIT",
		"ABORT;":              "ROLLBACK",
		"BEGIN TRANSACTION;":  "START TRANSACTION",
		"BEGIN;":              "BEGIN;",
		"END IF":              "END IF",
		"UPDATE t SET a = 1;": "UPDATE t SET a = 1;",
		"ENDPOINT":            "ENDPOINT",
		"SELECT 'END';":       "SELECT 'END';",
	}
	for in, want := range cases {
		if got := mysqlSpelling(in); got != want {
			t.Errorf("mysqlSpelling(%q) = %q, want %q", in, got, want)
		}
	}
}
