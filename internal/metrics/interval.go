package metrics

// Reset empties s, keeping its histogram's memory: an interval set is
// reset every second.
func (s *TxStats) Reset() {
	h := s.hist
	*s = TxStats{hist: h}
	if h != nil {
		h.Reset()
	}
}

// Reset empties every type of s.
func (s Set) Reset() {
	for i := range s {
		s[i].Reset()
	}
}

// SetHistogram replaces s's histogram by that of h (DecodeHistogram's),
// keeping s's counts: a worker's report carries both.
func (s *TxStats) SetHistogram(h *TxStats) {
	if h == nil {
		s.hist = nil
		return
	}
	s.hist = h.hist
}
