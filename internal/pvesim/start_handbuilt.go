package pvesim

import "errors"

// applyHandBuilt turns the cluster state into the lab built by hand
// (StartHandBuilt). Start calls it with s.mu held, after newState and
// before any listener starts. Placeholder: another change builds it.
func (s *Sim) applyHandBuilt(lab *Lab) error {
	return errors.New("hand-built start state not built yet")
}
