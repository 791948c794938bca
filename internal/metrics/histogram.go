package metrics

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// EncodeHistogram returns s's latency histogram (microseconds) in the
// HdrHistogram V2 compressed, base64 form that every HdrHistogram library
// reads, so a stored job's percentiles can be recomputed later; nil when
// nothing was recorded.
func (s *TxStats) EncodeHistogram() ([]byte, error) {
	if s.hist == nil || s.hist.TotalCount() == 0 {
		return nil, nil
	}
	b, err := s.hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, fmt.Errorf("encode histogram: %w", err)
	}
	return b, nil
}

// DecodeHistogram reads a histogram written by EncodeHistogram into a
// TxStats whose summary gives the same latencies (the counts of outcomes are
// not part of a histogram).
func DecodeHistogram(b []byte) (*TxStats, error) {
	h, err := hdrhistogram.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return &TxStats{hist: h}, nil
}

// Latencies is the number of latencies in the histogram.
func (s *TxStats) Latencies() int64 {
	if s.hist == nil {
		return 0
	}
	return s.hist.TotalCount()
}
