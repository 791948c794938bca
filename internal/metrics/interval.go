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
