package metrics

import (
	"testing"
	"time"
)

// A reset interval set is empty and records afresh: what it holds after
// is only what came after.
func TestSetReset(t *testing.T) {
	s := NewSet(2)
	s[0].Record(5 * time.Millisecond)
	s[0].Commits, s[1].Errors, s[1].Retries = 1, 2, 3
	s.Reset()
	if got := s.Total().Summarize("t"); got != (Summary{Name: "t"}) {
		t.Fatalf("after Reset: %+v", got)
	}
	s[0].Record(7 * time.Millisecond)
	s[0].Commits++
	want := NewSet(2)
	want[0].Record(7 * time.Millisecond)
	want[0].Commits++
	if g, w := s[0].Summarize("x"), want[0].Summarize("x"); g != w {
		t.Errorf("after Reset and one more: %+v, want %+v", g, w)
	}
	var empty TxStats
	empty.Reset() // no histogram yet: nothing to keep
	if empty.Latencies() != 0 {
		t.Error("an empty record has latencies after Reset")
	}
}
