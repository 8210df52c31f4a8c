package pvesim

import "errors"

// applyHandBuilt turns the cluster state into the lab built by hand
// (StartHandBuilt). Start calls it with s.mu held, after newState built
// the clustered fresh-install nodes (lab_start.go) and before any listener
// starts; the state is saved after it. prepareLabOptions set
// s.opts.CephNotInstalled, so Ceph is absent until this sets the nodes'
// CephPkgs. Placeholder: another change builds it.
func (s *Sim) applyHandBuilt(lab *Lab) error {
	return errors.New("hand-built start state not built yet")
}
