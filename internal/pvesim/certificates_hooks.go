package pvesim

// ServedFingerprint returns the SHA-256 fingerprint of the certificate the
// node's listener presents now, for tests.
func (s *Sim) ServedFingerprint(node string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.st.Nodes[node]
	if ns == nil {
		return ""
	}
	return ns.servedFingerprint()
}
