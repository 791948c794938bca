// Package testbin gives tests a sledge binary to run as a process.
//
// `make unit` builds cmd/sledge once before its test groups start and
// names the binary in SLEDGE_TEST_BIN (SLEDGE_TEST_BIN_MODERNC for the
// sqlite_modernc build): a dozen test processes each linking the same
// 40 MB binary cost the suite about half a minute of its two cores. A
// test run outside make (go test alone) builds its own.
package testbin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Tags is the build tag of the modernc.org/sqlite driver, the one build
// tag that changes the binary.
const Tags = "sqlite_modernc"

// EnvVar names the variable that holds a prebuilt binary built with tags
// ("" or Tags).
func EnvVar(tags string) string {
	if tags == Tags {
		return "SLEDGE_TEST_BIN_MODERNC"
	}
	return "SLEDGE_TEST_BIN"
}

// Sledge returns the path of a sledge binary built with tags ("" or
// Tags), and what removes it when the caller is done (nothing, for the
// prebuilt one). A prebuilt binary that is named but missing is an error,
// not a reason to build: it means make's set-up went wrong.
func Sledge(ctx context.Context, tags string) (string, func(), error) {
	if p := os.Getenv(EnvVar(tags)); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", func() {}, fmt.Errorf("prebuilt sledge (%s): %w", EnvVar(tags), err)
		}
		return p, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "sledge-bin-")
	if err != nil {
		return "", func() {}, fmt.Errorf("build sledge: %w", err)
	}
	cleanup := func() { os.RemoveAll(dir) }
	path := filepath.Join(dir, "sledge")
	args := []string{"build", "-o", path}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	// The import path, so that it builds from any package's directory.
	args = append(args, "github.com/sledge-bench/sledge/cmd/sledge")
	if out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput(); err != nil {
		cleanup()
		return "", func() {}, fmt.Errorf("go build sledge: %w\n%s", err, out)
	}
	return path, cleanup, nil
}
