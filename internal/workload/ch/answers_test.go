package ch

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The committed answers are what scripts/ch-answers computes now: the
// generated rows (loaded at refLoad) in DuckDB 1.5.5, with the script's
// own query texts. Needs a venv with duckdb==1.5.5 named by CH_VENV.
func TestDuckDBReproduces(t *testing.T) {
	venv := os.Getenv("CH_VENV")
	if venv == "" {
		t.Skip("CH_VENV is not set: no DuckDB venv to recompute the answers with (scripts/ch-answers)")
	}
	if err := exec.Command(filepath.Join(venv, "bin", "python"), "-c", "import duckdb").Run(); err != nil {
		t.Skipf("CH_VENV=%s lacks duckdb: %v", venv, err)
	}
	out := t.TempDir()
	cmd := exec.Command("../../../scripts/ch-answers")
	cmd.Env = append(os.Environ(), "CH_ANSWERS_OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	for q := 1; q <= numQueries; q++ {
		name := fmt.Sprintf("q%02d.txt", q)
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := answerFiles.ReadFile("answers/w1/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what DuckDB computes now", name)
		}
	}
}

// canonical and Digest agree with the script's digest of a reference
// (its canonical form: cents for decimals, no "-0.00", text without
// trailing blanks, rows sorted).
func TestCanonical(t *testing.T) {
	for _, c := range []struct {
		kind byte
		in   []byte
		want string
	}{
		{'s', []byte("86366.43000000001"), "86366.43"},
		{'s', []byte("-0.000000001"), "0.00"},
		{'s', []byte("5"), "5.00"},
		{'i', []byte("2020"), "2020"},
		{'i', []byte("7.0"), "7"},
		{'t', []byte("Germany    "), "Germany"},
		{'d', []byte("2020-06-15 12:00:00+00"), "2020-06-15"},
		{'t', nil, "NULL"},
	} {
		if got := canonical(c.kind, c.in); got != c.want {
			t.Errorf("canonical(%c, %q) = %q, want %q", c.kind, c.in, got, c.want)
		}
	}
	// sha256 of "a\nb\n": the rows sorted, each ended by a newline.
	if got, want := Digest([]string{"b", "a"}), "911169ddaaf146aff539f58c26c489af3b892dff0fe283c1c264c65ae5aa59a2"; got != want {
		t.Errorf("Digest(b, a) = %s, want %s", got, want)
	}
}
