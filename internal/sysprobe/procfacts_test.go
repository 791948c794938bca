package sysprobe

import (
	"os"
	"path/filepath"
	"testing"
)

// The small facts other packages read, from a /proc of the test's own.
func TestProcFacts(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A name with a space and a parenthesis: fields count from the last ')'.
	write("42/stat", "42 (my (proc) x) S 7 42 42 0 -1 4194560 100 0 0 0 11 22 0 0 20 0 1 0 123456 1000 10 18446744073709551615\n")
	write("42/comm", "my (proc) x\n")
	write("sys/kernel/random/boot_id", "abc-def\n")
	write("sys/kernel/osrelease", "6.1.0-test\n")
	write("meminfo", "MemTotal:       2048 kB\nMemAvailable:    1024 kB\n")
	write("cpuinfo", "processor\t: 0\nmodel name\t: Test CPU @ 1GHz\n")
	if c, err := ProcComm(root, 42); err != nil || c != "my (proc) x" {
		t.Errorf("ProcComm %q %v", c, err)
	}
	if s, err := ProcStartTicks(root, 42); err != nil || s != 123456 {
		t.Errorf("ProcStartTicks %d %v", s, err)
	}
	if p, err := ProcParent(root, 42); err != nil || p != 7 {
		t.Errorf("ProcParent %d %v", p, err)
	}
	if _, err := ProcParent(root, 43); err == nil {
		t.Error("ProcParent of a missing process: no error")
	}
	if b := BootID(root); b != "abc-def" {
		t.Errorf("BootID %q", b)
	}
	m := Machine(root)
	if m != (MachineFacts{CPUModel: "Test CPU @ 1GHz", MemoryBytes: 2048 * 1024, Kernel: "6.1.0-test"}) {
		t.Errorf("Machine %+v", m)
	}
	// This process, for real.
	if s, err := ProcStartTicks("/proc", os.Getpid()); err != nil || s <= 0 {
		t.Errorf("own start %d %v", s, err)
	}
}
