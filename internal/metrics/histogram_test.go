package metrics

import (
	"testing"
	"time"
)

// A stored histogram gives back the same percentiles.
func TestHistogramEncodeDecode(t *testing.T) {
	var s TxStats
	if b, err := s.EncodeHistogram(); b != nil || err != nil {
		t.Errorf("empty: %q %v, want nothing", b, err)
	}
	for i := 1; i <= 1000; i++ {
		s.Record(time.Duration(i) * 37 * time.Microsecond)
	}
	b, err := s.EncodeHistogram()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeHistogram(b)
	if err != nil {
		t.Fatal(err)
	}
	want, got := s.Summarize("x"), back.Summarize("x")
	if got.P50 != want.P50 || got.P99 != want.P99 || got.Max != want.Max || back.Latencies() != 1000 {
		t.Errorf("decoded %+v, want the latencies of %+v", got, want)
	}
	if _, err := DecodeHistogram([]byte("not a histogram")); err == nil {
		t.Error("decoded garbage")
	}
}
