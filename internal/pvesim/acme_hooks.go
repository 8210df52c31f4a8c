package pvesim

import "sort"

// RevokedACMECertificates returns the fingerprints the simulated CAs of
// node's trust domain have revoked, for tests.
func (s *Sim) RevokedACMECertificates(node string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.st.Nodes[node]
	if ns == nil {
		return nil
	}
	d := s.st.Domains[ns.Domain]
	if d.ACME == nil {
		return nil
	}
	var out []string
	for _, ca := range d.ACME.CAs {
		out = append(out, ca.Revoked...)
	}
	sort.Strings(out)
	return out
}
