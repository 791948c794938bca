package answers

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The committed answers are what scripts/tpch-answers computes now: the
// generator's data in DuckDB 1.5.5. Needs a venv with duckdb==1.5.5 and
// duckdb-extension-tpch==1.5.5 (docs/tpch.md part 12) named by TPCH_VENV.
func TestDuckDBReproduces(t *testing.T) {
	venv := os.Getenv("TPCH_VENV")
	if venv == "" {
		t.Skip("TPCH_VENV is not set: no DuckDB venv to recompute the answers with (scripts/tpch-answers)")
	}
	if err := exec.Command(filepath.Join(venv, "bin", "python"), "-c", "import duckdb, duckdb_extension_tpch").Run(); err != nil {
		t.Skipf("TPCH_VENV=%s lacks duckdb or duckdb_extension_tpch: %v", venv, err)
	}
	out := t.TempDir()
	sfs := []string{"0.01", "0.1"}
	if !testing.Short() {
		sfs = append(sfs, "1")
	}
	cmd := exec.Command("../../../../scripts/tpch-answers", sfs...)
	cmd.Env = append(os.Environ(), "TPCH_ANSWERS_OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	for _, sf := range sfs {
		for q := 1; q <= Queries; q++ {
			name := fmt.Sprintf("sf%s/q%02d.txt", sf, q)
			got, err := os.ReadFile(filepath.Join(out, name))
			if err != nil {
				t.Fatal(err)
			}
			want, err := files.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from what DuckDB computes now", name)
			}
		}
	}
}
