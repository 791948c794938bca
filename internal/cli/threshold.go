package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// printThresholds prints each threshold with its value and verdict.
func printThresholds(out io.Writer, ts []thresholdJSON) {
	if len(ts) == 0 {
		return
	}
	fmt.Fprintln(out, "\nthresholds")
	for _, t := range ts {
		mark, v := "ok    ", "not measured"
		if !t.OK {
			mark = "MISSED"
		}
		if t.Value != nil {
			v = strconv.FormatFloat(*t.Value, 'f', -1, 64)
			if i := strings.IndexByte(v, '.'); i >= 0 && len(v) > i+4 {
				v = v[:i+4]
			}
			if t.Unit != "" {
				v += " " + t.Unit
			}
		}
		fmt.Fprintf(out, "  %s %s (%s)\n", mark, t.Threshold, v)
	}
}
