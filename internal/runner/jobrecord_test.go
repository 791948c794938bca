package runner

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The progress bar's redraws stay out of the log; the lines around it do not.
func TestLogTeeDropsRedraws(t *testing.T) {
	var out bytes.Buffer
	r := &JobRun{start: time.Now()}
	tee := &logTee{w: &out, r: r}
	for _, s := range []string{"building tpcc\n", "\r\x1b[K[##..] 10% loading", "\r\x1b[K[###.] 20% load",
		"ing\r\x1b[K", "loaded 5 rows\n", "\n", "a\r\nb\n"} {
		if _, err := tee.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, l := range r.lines {
		got = append(got, l.Line)
	}
	if strings.Join(got, "|") != "building tpcc|loaded 5 rows|b" {
		t.Errorf("log lines %q", got)
	}
	if !strings.Contains(out.String(), "20% loading") {
		t.Errorf("the terminal did not get everything: %q", out.String())
	}
}
