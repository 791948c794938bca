package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// --threshold judges the result (issue 14, k6's thresholds): met ones exit
// 0, a missed one exits 99 with the whole result printed and each
// threshold's value and verdict in it; bad ones are refused before the run.
func TestThresholds(t *testing.T) {
	path := builtDB(t)
	home := t.TempDir()
	db := "sqlite://" + path
	type verdict struct {
		Threshold string   `json:"threshold"`
		Value     *float64 `json:"value"`
		Unit      string   `json:"unit"`
		OK        bool     `json:"ok"`
	}
	for _, tc := range []struct {
		name       string
		thresholds []string
		code       int
		ok         []bool
	}{
		{"met", []string{"nopm>=1", "p95(new_order)<60s", "error_rate<0.01", "failed==0", "tps>0"}, ExitOK, []bool{true, true, true, true, true}},
		{"one missed", []string{"nopm>=1", "p99(new_order)<1us", "max<3600s"}, ExitThreshold, []bool{true, false, true}},
		{"by type name", []string{"mean(neword)>0", "nopm>1000000000000"}, ExitThreshold, []bool{true, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"run", "--db", db, "-t", "40", "--json", "--no-job"}
			for _, th := range tc.thresholds {
				args = append(args, "--threshold", th)
			}
			stdout, stderr, code := runCLI(t, home, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			var r struct {
				NOPM       *float64  `json:"nopm"`
				Thresholds []verdict `json:"thresholds"`
			}
			if err := json.Unmarshal([]byte(stdout), &r); err != nil || r.NOPM == nil {
				t.Fatalf("result not printed whole: %v\n%s", err, stdout)
			}
			if len(r.Thresholds) != len(tc.thresholds) {
				t.Fatalf("%d thresholds in the result, want %d: %+v", len(r.Thresholds), len(tc.thresholds), r.Thresholds)
			}
			for i, v := range r.Thresholds {
				if v.Threshold != tc.thresholds[i] || v.OK != tc.ok[i] || v.Value == nil {
					t.Errorf("threshold %d: %+v, want %q ok=%v with its value", i, v, tc.thresholds[i], tc.ok[i])
				}
				if strings.HasPrefix(v.Threshold, "nopm") && *v.Value != *r.NOPM {
					t.Errorf("%s judged on %v, the result's NOPM is %v", v.Threshold, *v.Value, *r.NOPM)
				}
				if isLatency := strings.Contains(v.Threshold, "("); isLatency && v.Unit != "ms" {
					t.Errorf("%s: unit %q, want ms", v.Threshold, v.Unit)
				}
			}
			if tc.code == ExitThreshold && (!strings.Contains(stderr, "missed") || strings.Count(strings.TrimSpace(stderr), "\n") != 0) {
				t.Errorf("stderr %q: want one line naming the missed threshold", stderr)
			}
		})
	}
	// The text summary lists them too.
	stdout, _, code := runCLI(t, home, "run", "--db", db, "-t", "20", "--no-job", "--threshold", "p95<1us")
	if code != ExitThreshold || !strings.Contains(stdout, "MISSED p95<1us (") || !strings.Contains(stdout, " ms)") {
		t.Errorf("text summary: exit %d, want %d and the missed threshold with its value in ms:\n%s", code, ExitThreshold, stdout)
	}
	for _, bad := range []struct{ arg, want string }{
		{"fast", "want FIGURE OP NUMBER"},
		{"p95(nothing)<5ms", `tpcc has no transaction type "nothing"`},
		{"tpm(neword)>5", "tpm is a figure of the whole run"},
		{"p42<5", `unknown figure "p42"`},
	} {
		_, stderr, code := runCLI(t, home, "run", "--db", db, "-t", "5", "--no-job", "--threshold", bad.arg)
		if code != ExitUsage || !strings.Contains(stderr, bad.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("--threshold %q: exit %d, %q; want exit 2 and one line saying %q", bad.arg, code, stderr, bad.want)
		}
	}
	_, stderr, code := runCLI(t, home, "run", "tpcb", "--db", "sqlite://"+t.TempDir()+"/b.db", "-t", "5", "--no-job", "--threshold", "nopm>5")
	if code != ExitUsage || !strings.Contains(stderr, "tpcb counts no new orders") {
		t.Errorf("nopm threshold on tpcb: exit %d, %q", code, stderr)
	}
}
