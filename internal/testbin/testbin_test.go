package testbin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A prebuilt binary named in the environment is used as it is (and never
// removed); one named but missing is an error, not a silent build.
func TestSledgePrebuilt(t *testing.T) {
	dir := t.TempDir()
	have := filepath.Join(dir, "sledge")
	if err := os.WriteFile(have, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, tags, env, path, err string
	}{
		{"plain", "", "SLEDGE_TEST_BIN", have, ""},
		{"modernc", Tags, "SLEDGE_TEST_BIN_MODERNC", have, ""},
		{"missing", "", "SLEDGE_TEST_BIN", filepath.Join(dir, "gone"), "prebuilt sledge (SLEDGE_TEST_BIN)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if EnvVar(tc.tags) != tc.env {
				t.Fatalf("EnvVar(%q) = %s, want %s", tc.tags, EnvVar(tc.tags), tc.env)
			}
			t.Setenv(tc.env, tc.path)
			got, cleanup, err := Sledge(context.Background(), tc.tags)
			cleanup()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.path {
				t.Fatalf("Sledge = %q, %v; want %q", got, err, tc.path)
			}
			if _, err := os.Stat(have); err != nil {
				t.Fatalf("the prebuilt binary was removed: %v", err)
			}
		})
	}
}
